"""Real forward proxies on loopback for the routes' tests and benchmarks: one process each, one outgoing address each.

Each proxy is a pproxy (PyPI ``pproxy``, pure asyncio) in its own process, listening on ``127.0.0.1:<free port>``
and opening every outgoing connection from its own loopback source address (127.0.0.2, 127.0.0.3, …): the fake
engines (on 127.0.0.1) see one client address per route (``address`` in their request log; ``fakes.address(engine,
proxies.address(i), "sorry")`` challenges that route only). Kinds:

* ``"http"`` — a plain HTTP proxy (absolute-form requests and ``CONNECT``). After the first request on a client
  connection pproxy relays that connection as is to the first request's target; Chromium keeps its connections
  through a proxy per target, so they never mix (checked: google's and bing's fakes in turn through one proxy);
* ``"http-auth"`` — the same, requiring Basic credentials (:data:`USERNAME`/:data:`PASSWORD` unless given) on every
  new connection: without them, or with wrong ones, it answers ``407 Proxy Authentication Required`` (pproxy's memory of
  authenticated client IPs is turned off, so an earlier good request never lets a later bare one through);
* ``"socks5"`` — SOCKS5 without credentials (Chromium does no SOCKS authentication).

Chromium proxies loopback targets through a Playwright *context* proxy (``browser.new_context(proxy=
proxies.playwright_proxy(i))``), as topicstreams' ``route_context_options`` sets it: no launch switch is needed.
What Chromium does when a route fails (measured with the Chromium 150 headless shell, Playwright 1.65):

* an ``http-auth`` proxy without or with wrong credentials: ``page.goto`` does NOT raise; it returns a response with
  status 407 (the proxy's own, empty body) for an ``http://`` target;
* a stopped proxy (http or socks5): ``page.goto`` raises ``playwright.async_api.Error`` whose message starts with
  ``Page.goto: net::ERR_PROXY_CONNECTION_FAILED at http://…`` (also when the page's kept-alive connection to the
  proxy was the one killed);
* a proxy killed while it carries the request (any kind): ``net::ERR_EMPTY_RESPONSE``;
* a proxy that accepts but never answers (the process stopped with SIGSTOP): the navigation timeout,
  ``Page.goto: Timeout …ms exceeded.``;
* the target down behind a live proxy: ``net::ERR_EMPTY_RESPONSE`` (http) or ``net::ERR_CONNECTION_RESET``
  (socks5) — pproxy closes the client connection rather than answering 502 or a SOCKS failure code, so these two
  do not tell a dead proxy from a dead site: only ``ERR_PROXY_CONNECTION_FAILED`` and the 407 name the proxy.

    with RouteProxies(("http", "http-auth", "socks5")) as proxies:
        proxies.url(1)                # "http://route-user:route-secret-4b1e@127.0.0.1:PORT" (credentials inside)
        proxies.server(1)             # "http://127.0.0.1:PORT" (the shown form, never credentials)
        proxies.playwright_proxy(1)   # {"server": "http://127.0.0.1:PORT", "username": …, "password": …}
        proxies.address(1)            # "127.0.0.3": where the fakes see its requests come from
        proxies.stop(2)               # killed: connections to its port are refused from then on
        proxies.start(2)              # back, on the same port and address
        proxies.route_entries(("google",))  # `routes:` entries for a topicstreams config, one per proxy

A module-scoped fixture: ``proxies = running_proxies("http", "http-auth", "socks5")`` in the test module (like
:func:`tests.support.fakes_http.running_fakes`). Cleanup (``stop()``, the context's end, the fixture's teardown)
kills every process; a proxy whose parent dies without cleaning up ends by itself too (it watches its stdin, a pipe
from the parent). Cost (measured on 2 busy cores): a proxy listens about 0.1 s after its start (those of one
:meth:`start` start side by side: three in about 0.4 s), holds about 28 MiB, and adds about 3-5 % to a results page's
load in Chromium (65 ms direct, 66-68 ms through each kind, medians of 20).
"""

from __future__ import annotations

import random
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import IO, Any

import pytest

from tests.support.ports import free_port

KINDS = ("http", "http-auth", "socks5")
"""The kinds of proxy :class:`RouteProxies` starts."""
USERNAME = "route-user"
PASSWORD = "route-secret-4b1e"
"""The credentials of an ``http-auth`` proxy unless given: a password no log line, page or metric may show."""
LISTEN_HOST = "127.0.0.1"
READY_TIMEOUT = 10.0

PERSONAS = (
    {
        "user_agent": "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 "
        "Safari/537.36 route-a",
        "locale": "en-US",
        "timezone_id": "America/New_York",
        "viewport": {"width": 1280, "height": 800},
    },
    {
        "user_agent": "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) "
        "Chrome/131.0.0.0 Safari/537.36 route-b",
        "locale": "de-DE",
        "timezone_id": "Europe/Berlin",
        "viewport": {"width": 1366, "height": 768},
    },
    {
        "user_agent": "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) "
        "Chrome/131.0.0.0 Safari/537.36 route-c",
        "locale": "fr-FR",
        "timezone_id": "Europe/Paris",
        "viewport": {"width": 1440, "height": 900},
    },
)
"""Distinct personas, one per route in turn (:meth:`RouteProxies.route_entries`): each user agent ends in its own
mark, and the locales, time zones and viewports differ, so a page's script tells them apart."""

# The child: pproxy's own main, plus a thread that ends the process when its stdin (a pipe from the parent) closes.
# pproxy asks asyncio.get_event_loop() for its loop, which newer Pythons no longer create on demand: one is set first.
_CHILD = """
import asyncio, os, sys, threading
def _orphaned():
    sys.stdin.buffer.read()
    os._exit(0)
threading.Thread(target=_orphaned, daemon=True).start()
asyncio.set_event_loop(asyncio.new_event_loop())
from pproxy.server import main
main(sys.argv[1:])
"""


@dataclass
class _Proxy:
    kind: str
    port: int
    address: str
    process: subprocess.Popen[bytes] | None = None
    output: IO[bytes] | None = None


class RouteProxies:
    """Forward proxies on loopback, one process and one outgoing address each (see the module's docstring).

    ``kinds``: one of :data:`KINDS` per proxy, in order (proxy ``i`` is ``kinds[i]``). ``first_address``: the last
    byte of proxy 0's source address (127.0.0.<first_address>; proxy ``i`` has ``first_address + i``).
    """

    def __init__(
        self,
        kinds: str | Iterable[str] = ("http",),
        *,
        first_address: int = 2,
        username: str = USERNAME,
        password: str = PASSWORD,
    ) -> None:
        names = [kinds] if isinstance(kinds, str) else list(kinds)
        unknown = [kind for kind in names if kind not in KINDS]
        if unknown or not names:
            raise ValueError(f"proxy kinds: some of {', '.join(KINDS)}, not {names!r}")
        if not 2 <= first_address <= 255 - len(names):
            raise ValueError(f"first_address: 2…{255 - len(names)} (127.0.0.1 is the fakes' own), not {first_address}")
        if ":" in username or not username or not password:
            raise ValueError("username: no colon; username and password: not empty")
        self.username, self.password = username, password
        self._proxies = [_Proxy(kind, listen_port(), f"127.0.0.{first_address + i}") for i, kind in enumerate(names)]

    # -- lifecycle ------------------------------------------------------------------------------------------

    def start(self, i: int | None = None) -> RouteProxies:
        """Start proxy ``i`` (every proxy not running when None), on its port; return once each one listens."""
        chosen = [self._proxy(i)] if i is not None else self._proxies
        starting = [proxy for proxy in chosen if not self._alive(proxy)]
        for proxy in starting:
            self._spawn(proxy)
        try:
            for proxy in starting:
                self._wait_ready(proxy)
        except BaseException:
            for proxy in starting:
                self.stop(self._proxies.index(proxy))
            raise
        return self

    def stop(self, i: int | None = None) -> None:
        """Kill proxy ``i`` (every proxy when None): its open connections drop, new ones are refused."""
        for proxy in [self._proxy(i)] if i is not None else self._proxies:
            process, proxy.process = proxy.process, None
            if process is not None:
                if process.poll() is None:
                    process.kill()
                process.wait(timeout=10)
                if process.stdin is not None:
                    process.stdin.close()
            if proxy.output is not None:
                proxy.output.close()
                proxy.output = None

    close = stop

    def running(self, i: int) -> bool:
        return self._alive(self._proxy(i))

    def pid(self, i: int) -> int | None:
        """The process id of proxy ``i`` while it runs (None when stopped)."""
        proxy = self._proxy(i)
        return proxy.process.pid if self._alive(proxy) and proxy.process is not None else None

    def __enter__(self) -> RouteProxies:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    # -- addresses ------------------------------------------------------------------------------------------

    def __len__(self) -> int:
        return len(self._proxies)

    def kind(self, i: int) -> str:
        return self._proxy(i).kind

    def port(self, i: int) -> int:
        return self._proxy(i).port

    def address(self, i: int) -> str:
        """Proxy ``i``'s outgoing (source) address: the client address the fake engines log for its requests."""
        return self._proxy(i).address

    def server(self, i: int) -> str:
        """``scheme://127.0.0.1:PORT`` of proxy ``i``, without credentials (what the product shows)."""
        proxy = self._proxy(i)
        scheme = "socks5" if proxy.kind == "socks5" else "http"
        return f"{scheme}://{LISTEN_HOST}:{proxy.port}"

    def url(self, i: int) -> str:
        """Proxy ``i``'s URL for a topicstreams route: with ``user:password@`` for an ``http-auth`` proxy."""
        server = self.server(i)
        if self._proxy(i).kind != "http-auth":
            return server
        return server.replace("://", f"://{self.username}:{self.password}@", 1)

    def playwright_proxy(self, i: int) -> dict[str, str]:
        """Playwright's ``proxy`` option of a browser context through proxy ``i`` (credentials apart)."""
        option = {"server": self.server(i)}
        if self._proxy(i).kind == "http-auth":
            option.update(username=self.username, password=self.password)
        return option

    def route_entries(
        self,
        engines: Sequence[str] = (),
        names: Sequence[str] | None = None,
        personas: Sequence[Mapping[str, Any]] | None = PERSONAS,
    ) -> list[dict[str, Any]]:
        """A topicstreams ``routes:`` list, one route per proxy: ``names`` (default ``r0``, ``r1``, …), the proxy's
        :meth:`url`, ``personas[i % len(personas)]`` (None or empty: Chromium's own), ``engines`` (empty: all)."""
        names = list(names) if names is not None else [f"r{i}" for i in range(len(self))]
        if len(names) != len(self):
            raise ValueError(f"{len(self)} route names, one per proxy, not {names!r}")
        return [
            {
                "name": name,
                "proxy": self.url(i),
                "persona": dict(personas[i % len(personas)]) if personas else {},
                "engines": list(engines),
            }
            for i, name in enumerate(names)
        ]

    # -- inside -----------------------------------------------------------------------------------------------

    def _proxy(self, i: int) -> _Proxy:
        if not 0 <= i < len(self._proxies):
            raise IndexError(f"no proxy {i}: there are {len(self._proxies)} (0…{len(self._proxies) - 1})")
        return self._proxies[i]

    @staticmethod
    def _alive(proxy: _Proxy) -> bool:
        return proxy.process is not None and proxy.process.poll() is None

    def _listen_uri(self, proxy: _Proxy) -> str:
        scheme = "socks5" if proxy.kind == "socks5" else "http"
        uri = f"{scheme}://{LISTEN_HOST}:{proxy.port}/@{proxy.address}"
        return uri + (f"#{self.username}:{self.password}" if proxy.kind == "http-auth" else "")

    def _spawn(self, proxy: _Proxy) -> None:
        self.stop(self._proxies.index(proxy))  # an exited process's leftovers
        proxy.output = tempfile.TemporaryFile()  # noqa: SIM115 -- closed by stop()
        # --auth=-1: pproxy otherwise lets a client IP that once authenticated in without credentials for 30 days.
        proxy.process = subprocess.Popen(
            [sys.executable, "-W", "ignore", "-c", _CHILD, "-l", self._listen_uri(proxy), "--auth=-1"],
            stdin=subprocess.PIPE,
            stdout=proxy.output,
            stderr=subprocess.STDOUT,
        )

    def _wait_ready(self, proxy: _Proxy) -> None:
        assert proxy.process is not None and proxy.output is not None
        deadline = time.monotonic() + READY_TIMEOUT
        while True:
            proxy.output.seek(0)
            said = proxy.output.read().decode("utf-8", "replace")
            if "Serving on" in said:
                return
            failed = "Start server failed" in said or proxy.process.poll() is not None
            if failed or time.monotonic() > deadline:
                raise RuntimeError(
                    f"the {proxy.kind} proxy on {LISTEN_HOST}:{proxy.port} (source {proxy.address}) did not start"
                    f"{' in time' if not failed else ''}; pproxy said: {said.strip()[-2000:] or '(nothing)'}"
                )
            time.sleep(0.01)


def listen_port() -> int:
    """A port free on 127.0.0.1 below the kernel's ephemeral range when it can: a port the kernel hands out to
    outgoing connections could be taken by one while its proxy is stopped, and the restart on it would then fail."""
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as ports:
            ephemeral = int(ports.read().split()[0])
    except (OSError, ValueError, IndexError):
        ephemeral = 0
    choices = random.Random()
    for _ in range(50 if ephemeral > 12000 else 0):
        port = choices.randrange(10000, ephemeral)
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
            try:
                sock.bind((LISTEN_HOST, port))
            except OSError:
                continue
            return port
    return free_port(LISTEN_HOST)


def running_proxies(*kinds: str):
    """A module-scoped fixture: proxies of ``kinds`` for the whole test module, killed at its end.

    Assign it to the fixture's name in the module, ``proxies = running_proxies("http", "socks5")``. A test that stops
    one starts it again (``proxies.start()`` starts every stopped one)."""

    @pytest.fixture(scope="module")
    def fixture():
        with RouteProxies(kinds or ("http",)) as running:
            yield running

    return fixture
