"""``scrapy demo``: the main job for about a minute against the bundled fake engines, then what was stored.

It never touches the user's database or profiles: everything goes into ``.topicstreams/demo/`` (a fresh
``demo.db`` each time), and no request leaves the machine.

The fake engines serve a news world (:class:`~fake_engines.world.NewsWorld`) rather than the static catalogue:
each topic keeps publishing, and each engine shows its own, overlapping part of it, so the feed gathers the same
story from several engines into one item and grows while the demo runs. Its clock runs :data:`WORLD_SPEED` times as
fast as the real one: topics publish every five minutes or so, which at speed 1 would bring a one-minute demo less
than one new article per topic; ten times as fast, a minute of demo is ten minutes of news, about two new articles
per topic, which the crawl's later rounds pick up.

A minute is also what the demo has to show health at work, which a real crawl judges on 50 requests in ten minutes
(``health.*``): its own configuration (:data:`SCRAPER`, :data:`HEALTH`) scrapes every topic again every few seconds,
a quarter of a second apart, and judges each engine on a handful of requests in a few seconds' window, so that every
engine has a score within seconds; the demo says so before it crawls (:func:`sped_up`, against the packaged
defaults). And one engine (:func:`hostile_engine`) turns hostile partway through: the fakes play a spell of
CAPTCHAs for a few seconds (:data:`HOSTILE_STEPS`), its score falls, it turns ``degraded`` and is slowed down, and
once the CAPTCHAs have left its window it recovers — what ``/monitor`` and ``/api/health`` are for, seen live. The
health model itself is the real one, unchanged: only the configuration is the demo's.

Unless ``--no-serve``, the web app serves the demo's database while it crawls and after (until Ctrl-C or SIGTERM):
``scrapy serve`` in its own process, on a free loopback port, its URL printed before the crawl begins. A crawl
the user interrupted ends the demo after the summary, without serving on.
"""

from __future__ import annotations

import copy
import importlib.util
import json
import math
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterable
from pathlib import Path

import yaml
from scrapy.exceptions import UsageError
from sqlalchemy import func, select

from fake_engines import FakeEngines, NewsWorld
from topicstreams import ENGINES
from topicstreams.cli.configured import ConfiguredCommand, finish_reason
from topicstreams.config.loading import DB_URL_ENV, PROXY_ENV
from topicstreams.config.packaged import load_defaults
from topicstreams.storage import (
    News,
    Topic,
    TopicNews,
    TopicNewsEngine,
)


def available_engines() -> list[str]:
    """The engines whose fake pages ship with the project."""
    return [name for name in ENGINES if importlib.util.find_spec(f"fake_engines.{name}")]


DEMO_TOPICS = ["artificial intelligence", "climate change", "electric vehicles"]
WORLD_SPEED = 10.0
"""How much faster than the real clock the demo's news world runs (see the module's docstring)."""

SCRAPER = {
    "scrape_interval": 3,
    "schedule": "fixed",
    "max_pages": 2,
    "pacing": {"default_min_interval": 0.25, "per_engine": {"brave": 0.5}},
    "cooldown": {"initial": 0.5, "factor": 1, "max": 10},
}
"""The demo's pace (see the module's docstring): each topic again every few seconds (the fixed schedule: the adaptive
one never visits a topic more than once a minute), requests a quarter of a second apart, short benches that stay
short."""
HEALTH = {"window": 12, "min_requests": 6}
"""The demo's health judging: a window of a few seconds, a handful of requests to a score."""

HOSTILE_STEPS = {
    "bing": ["captcha"],
    "google": ["sorry"],
    "brave": ["pow"],
}
"""What each engine that can play the hostile part answers meanwhile (its steps in turn): a CAPTCHA."""
HOSTILE_AFTER, HOSTILE_LASTING = 8.0, 5.0
"""When the hostile engine turns (seconds into the crawl), and for how long (a crawl shorter than both has none)."""


def hostile_engine(engines: Iterable[str]) -> str | None:
    """The engine that plays the hostile part: the first of :data:`HOSTILE_STEPS` the demo runs."""
    return next((name for name in HOSTILE_STEPS if name in engines), None)


def demo_config(fakes: FakeEngines) -> dict:
    return {
        "database": {"url": "sqlite:///demo.db"},
        "topics": DEMO_TOPICS,
        "engines": {
            name: ({"enabled": True, "base_url": fakes.base_url(name)} if name in fakes.engines else {"enabled": False})
            for name in ENGINES
        },
        "scraper": copy.deepcopy(SCRAPER),
        "health": dict(HEALTH),
        "browser": {"profile_dir": "profiles"},
    }


def sped_up() -> list[str]:
    """What the demo's configuration changes against the packaged defaults (in brackets), a line each."""
    defaults = load_defaults()
    scraper, health = defaults["scraper"], defaults["health"]
    pacing, normal_pacing = SCRAPER["pacing"], scraper["pacing"]
    cooldown, normal_cooldown = SCRAPER["cooldown"], scraper["cooldown"]

    def floors(pacing: dict) -> str:
        return ", ".join(
            [f"{pacing['default_min_interval']:g} s"] + [f"{n} {v:g} s" for n, v in pacing["per_engine"].items()]
        )

    def bench(cooldown: dict) -> str:
        again = "the same each time" if cooldown["factor"] == 1 else f"×{cooldown['factor']:g} each time in a row"
        return f"{cooldown['initial']:g} s, {again}"

    return [
        "to show health within a minute, the demo runs faster than a real crawl would (the defaults in brackets):",
        f"  each engine judged on {HEALTH['min_requests']} requests or more in a {HEALTH['window']:g} s window "
        f"({health['min_requests']} in {health['window']:g} s)",
        f"  every topic scraped again every {SCRAPER['scrape_interval']:g} s ({scraper['schedule']}: each topic "
        f"every {scraper['adaptive']['min_interval']:g}-{scraper['adaptive']['max_interval']:g} s by its rate), "
        f"requests at least {floors(pacing)} apart ({floors(normal_pacing)})",
        f"  an engine benched after a block for {bench(cooldown)} ({bench(normal_cooldown)})",
    ]


def free_port() -> int:
    """A port nobody listens on, on 127.0.0.1 (never ``web.port``'s default, the user's own ``scrapy serve``'s)."""
    taken = load_defaults()["web"]["port"]
    while True:
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            port = sock.getsockname()[1]
        if port != taken:
            return port


class DemoServer:
    """``scrapy serve`` on the demo's configuration, in its own process, on a free loopback port."""

    START_SECONDS = 30.0
    """How long the web app has to answer before the demo goes on without it."""

    def __init__(self, config_path: Path) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/"
        env = {**os.environ, "TOPICSTREAMS_CONFIG": str(config_path)}
        # Its own process group: the demo alone handles Ctrl-C and stops it. Its stdout goes to stderr with the
        # other log lines: the demo's stdout is the demo's lines and the summary.
        self.process = subprocess.Popen(
            [sys.executable, "-m", "scrapy", "serve", "--host", "127.0.0.1", "--port", str(self.port)],
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=sys.stderr,
            process_group=0,
        )

    def wait_ready(self) -> str | None:
        """Poll ``/api/feed`` until it answers 200; None once it does, else what went wrong."""
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # loopback: never through a proxy
        deadline = time.monotonic() + self.START_SECONDS
        problem = "no answer"
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                return f"scrapy serve exited with status {self.process.returncode}"
            try:
                with opener.open(self.url + "api/feed?limit=1", timeout=2) as response:
                    if "items" in json.load(response):
                        return None
                    problem = "/api/feed answered without items"
            except urllib.error.HTTPError as exc:
                problem = f"/api/feed answered {exc.code}"
            except urllib.error.URLError as exc:
                problem = f"no answer ({exc.reason})"
            except (OSError, ValueError) as exc:  # a reset connection, a timeout, a body that is not JSON
                problem = f"no answer ({exc})"
            time.sleep(0.2)
        return f"{problem} within {self.START_SECONDS:g} s"

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def interrupted(crawlers: list) -> bool:
    """Whether the user stopped the crawl (Ctrl-C, SIGTERM): a spider closed on "shutdown", or never closed (a
    signal while the crawlers were still starting stops the reactor before their spiders close)."""
    return any(finish_reason(crawler) in ("shutdown", None) for crawler in crawlers)


class Stopped(Exception):
    """SIGTERM before the crawl began (Scrapy's handlers, installed when it starts, take over from there)."""


def raise_stopped(signum: int, frame: object) -> None:
    raise Stopped(signum)


DEMO_DATABASE = "demo.db"
"""The database a demo leaves in its folder: a folder that holds files but not this one is not a demo's, and is never
emptied."""


class Command(ConfiguredCommand):
    requires_project = True
    server: DemoServer | None = None

    def syntax(self) -> str:
        return "[--seconds N] [--folder PATH] [--no-serve]"

    def short_desc(self) -> str:
        return "Crawl the bundled fake engines for about a minute, serving the feed, then print what was stored"

    def add_options(self, parser) -> None:
        super().add_options(parser)
        parser.add_argument("--seconds", type=float, default=60.0, help="how long to crawl (default 60)")
        parser.add_argument("--folder", default=".topicstreams/demo", help="where the demo keeps its files")
        parser.add_argument(
            "--no-serve",
            dest="serve",
            action="store_false",
            help="crawl and print what was stored, without serving the web app",
        )

    def check_arguments(self, args: list[str], opts) -> None:
        if args:
            raise UsageError(f"demo takes no positional arguments: got {' '.join(args)!r}")
        if not (math.isfinite(opts.seconds) and opts.seconds > 0):
            raise UsageError(f"--seconds: got {opts.seconds:g}, expected a number of seconds above 0")
        folder = Path(opts.folder)
        if not opts.folder.strip():
            raise UsageError("--folder is empty: name the folder the demo may empty and fill")
        if folder.is_dir() and any(folder.iterdir()) and not (folder / DEMO_DATABASE).exists():
            raise UsageError(  # the demo empties its folder first: never one of the user's
                f"--folder {opts.folder}: it holds files and no {DEMO_DATABASE}, so it is not an earlier demo's; "
                "the demo empties its folder first: name a new folder or an earlier demo's"
            )

    def run(self, args: list[str], opts) -> None:
        # The demo's own database, never the one the environment names for the user's runs (the add-on would let
        # TOPICSTREAMS_DB_URL win over the demo's configuration); and no proxy between it and its fake engines.
        for name in (DB_URL_ENV, PROXY_ENV):
            os.environ.pop(name, None)
        if not opts.serve:
            self.crawl_and_print(opts)
            return
        signal.signal(signal.SIGTERM, raise_stopped)  # until the crawl starts (then Scrapy's handlers take over)
        try:
            crawlers = self.crawl_and_print(opts, serve=True)
            if self.server is not None and not interrupted(crawlers):
                self.serve_until_stopped()
        except (KeyboardInterrupt, Stopped) as exc:  # before the crawl began
            print("demo: interrupted", file=sys.stderr)
            self.exitcode = 128 + (exc.args[0] if isinstance(exc, Stopped) else signal.SIGINT)
        finally:
            if self.server is not None:
                self.server.stop()

    def crawl_and_print(self, opts, serve: bool = False) -> list:
        """The demo's crawl (serving its database first when *serve*), then what was stored; the crawlers."""
        folder = Path(opts.folder).resolve()
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
        database_url = f"sqlite:///{folder / 'demo.db'}"
        with FakeEngines(engines=available_engines(), world=NewsWorld(speed=WORLD_SPEED)) as fakes:
            config_path = folder / "config.yml"
            config_path.write_text(yaml.safe_dump(demo_config(fakes), sort_keys=False))
            print(f"demo: fake engines {', '.join(f'{n} at {fakes.base_url(n)}' for n in fakes.engines)}")
            if serve:
                self.start_server(config_path, database_url)
            for line in sped_up():
                print(f"demo: {line}")
            hostile = hostile_engine(fakes.engines)
            if hostile is not None and opts.seconds > HOSTILE_AFTER + HOSTILE_LASTING:
                fakes.spell(hostile, HOSTILE_STEPS[hostile], after=HOSTILE_AFTER, lasting=HOSTILE_LASTING)
                watch = f"watch it on {self.server.url}monitor: " if self.server is not None else ""
                print(
                    f"demo: {hostile} turns hostile {HOSTILE_AFTER:g} s into the crawl, for {HOSTILE_LASTING:g} s "
                    f"(a CAPTCHA for every page): {watch}its score falls, it turns degraded and slows down, then "
                    "recovers"
                )
            print(f"demo: crawling for {opts.seconds:g} s into {folder / 'demo.db'}")
            self.settings.set("TOPICSTREAMS_CONFIG", str(config_path), priority="cmdline")
            self.settings.set("CLOSESPIDER_TIMEOUT", opts.seconds, priority="cmdline")
            crawlers = [self.crawler_process.create_crawler(name) for name in fakes.engines]
            for crawler in crawlers:
                self.crawler_process.crawl(crawler)
            self.crawler_process.start()
        self.print_stored(database_url)
        return crawlers

    def start_server(self, config_path: Path, database_url: str) -> None:
        """The web app on the demo's database, its URL printed once it answers; without it if it does not."""
        self.runtime.upgrade_once(database_url)  # the schema first: the app never answers 503 during the demo
        self.server = DemoServer(config_path)
        problem = self.server.wait_ready()
        if problem is None:
            print(f"demo: open {self.server.url} to read the feed", flush=True)
            return
        print(f"demo: could not serve the feed ({problem}); crawling without it", file=sys.stderr, flush=True)
        self.server.stop()
        self.server = None

    def serve_until_stopped(self) -> None:
        stop = threading.Event()

        def on_signal(signum: int, frame: object) -> None:
            stop.set()

        signal.signal(signal.SIGINT, on_signal)
        signal.signal(signal.SIGTERM, on_signal)
        print(f"demo: still serving the feed at {self.server.url}; Ctrl-C to stop", flush=True)
        while not stop.wait(0.5):
            if self.server.process.poll() is not None:
                print(f"demo: the web app ended (exit status {self.server.process.returncode})", file=sys.stderr)
                self.exitcode = 1
                return

    def print_stored(self, database_url: str) -> None:
        db = self.runtime.database(database_url)
        engines_of = (
            select(
                TopicNewsEngine.topic_id,
                TopicNewsEngine.news_id,
                func.group_concat(TopicNewsEngine.engine, ",").label("engines"),
            )
            .group_by(TopicNewsEngine.topic_id, TopicNewsEngine.news_id)
            .subquery()
        )
        query = (
            select(Topic.name, News.title, News.source, News.url, News.published_at, engines_of.c.engines)
            .join(TopicNews, TopicNews.topic_id == Topic.id)
            .join(News, News.id == TopicNews.news_id)
            .join(
                engines_of, (engines_of.c.topic_id == TopicNews.topic_id) & (engines_of.c.news_id == TopicNews.news_id)
            )
            .order_by(Topic.name, News.published_at.desc())
        )
        with db.connect() as conn:
            rows = conn.execute(query).all()
        current = None
        for topic, title, source, url, published, engines in rows:
            if topic != current:
                current = topic
                print(f"\n== {topic}")
            when = f"{published:%Y-%m-%d %H:%M}" if published else "?"
            print(f"  {when}  [{engines}] {title} — {source}\n      {url}")
        print(f"\ndemo: {len(rows)} articles stored in {database_url.removeprefix('sqlite:///')}")
