"""``scrapy serve [--host H] [--port P]``: the web app (feed page, API, feeds, monitor, metrics, logs) on the configured
database.

Its own process, never a crawler's: uvicorn runs the app until SIGINT or SIGTERM, which end it cleanly.
"""

from __future__ import annotations

import logging
import signal
import socket

from scrapy.exceptions import UsageError

from topicstreams.cli.configured import ConfiguredCommand, report_error
from topicstreams.config.packaged import load_defaults

logger = logging.getLogger(__name__)


class Command(ConfiguredCommand):
    requires_project = True
    requires_crawler_process = False

    def syntax(self) -> str:
        return "[--host H] [--port P]"

    def short_desc(self) -> str:
        return "Serve the feed (page, API, Atom/RSS/JSON feeds) and the monitor on the configured database"

    def long_desc(self) -> str:
        return (
            "Serve the web app on the configured database until stopped (Ctrl-C or SIGTERM): the feed page "
            "at /, the JSON API under /api/, feeds at /feed.atom, /feed.rss and /feed.json; each engine's "
            "health at /monitor and /api/health, Prometheus metrics at /metrics, the crawls' logs at /logs. It "
            "only reads the database, but for a person's resume of a paused engine (web.admin_token). --host "
            "and --port override web.host and web.port."
        )

    def add_options(self, parser) -> None:
        super().add_options(parser)
        web = load_defaults()["web"]
        parser.add_argument("--host", help=f"the address to listen on (default: web.host, {web['host']})")
        parser.add_argument("--port", type=int, help=f"the port to listen on (default: web.port, {web['port']})")

    def check_arguments(self, args: list[str], opts) -> None:
        if args:
            raise UsageError(f"serve takes no positional arguments: got {' '.join(args)!r}")
        if opts.host is not None and not opts.host.strip():
            raise UsageError("--host is empty: name an address such as 127.0.0.1")
        if opts.port is not None and not 0 < opts.port < 65536:
            raise UsageError(f"--port {opts.port}: expected a port number from 1 to 65535")

    def run(self, args: list[str], opts) -> None:
        import uvicorn  # the web stack is imported by this command only, not by every scrapy command

        from topicstreams.web.app import WebSettings, create_app

        settings = WebSettings.from_config(self.config)
        overrides = {}
        if opts.host is not None:
            overrides["host"] = opts.host.strip()
        if opts.port is not None:
            overrides["port"] = opts.port
        if overrides:
            settings = WebSettings(**{**settings.__dict__, **overrides})
        logging.basicConfig(  # the crawl's line format (Scrapy's LOG_FORMAT and LOG_DATEFORMAT): one look in make run
            level=self.settings.get("LOG_LEVEL", "INFO"),
            format=self.settings.get("LOG_FORMAT"),
            datefmt=self.settings.get("LOG_DATEFORMAT"),
        )
        if not settings.loopback:
            logger.warning(
                "Listening on %s, off loopback: the feed is readable by anyone who can reach this address",
                settings.host,
            )
        try:
            listening = listen(settings.host, settings.port)
        except OSError as exc:  # the port is taken, the address is not this machine's
            report_error(self.settings, f"could not serve on {settings.url}: {exc.strerror or exc}")
            self.exitcode = 1
            return
        app = create_app(settings)
        server = uvicorn.Server(
            uvicorn.Config(
                app,
                host=settings.host,
                port=settings.port,
                log_level="info",
                server_header=False,
                proxy_headers=False,
                access_log=False,
            )
        )
        print(f"serving the feed at {settings.url}", flush=True)
        # uvicorn shuts down cleanly on SIGINT/SIGTERM, then raises the signal again for the handler that was there
        # before it: with this one, the stop ends the command quietly (exit 0, no KeyboardInterrupt traceback).
        for signum in (signal.SIGINT, signal.SIGTERM):
            signal.signal(signum, _stopped)
        with listening:
            server.run(sockets=[listening])


def listen(host: str, port: int) -> socket.socket:
    """A socket bound to *host* and *port* (bound here, so that a taken port is one clear line, not uvicorn's exit)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host.strip("[]"), port))
    except OSError:
        sock.close()
        raise
    return sock


def _stopped(signum: int, _frame: object) -> None:
    logger.info("Stopped by %s", signal.Signals(signum).name)
