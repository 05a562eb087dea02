"""Shared test helpers: running the project's Scrapy commands in a scratch folder, writing configs."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from tests.postgres_server import PostgresServer, PostgresUnavailable
from tests.soak_run import MODULE as SOAK_MODULE
from tests.soak_run import BackgroundSoak

REPO = Path(__file__).resolve().parent.parent


class ScrapyRunner:
    """Runs ``scrapy …`` as users do, in its own folder, with the project's settings module."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.env = {
            k: v
            for k, v in os.environ.items()
            if k not in ("TOPICSTREAMS_CONFIG", "TOPICSTREAMS_DB_URL", "SCRAPER_PROXY")
        }
        self.env["SCRAPY_SETTINGS_MODULE"] = "topicstreams.settings"
        self.env["PYTHONPATH"] = str(REPO)

    def __call__(
        self, *args: str, timeout: float = 180, env: dict | None = None, check: bool = False
    ) -> subprocess.CompletedProcess:
        result = subprocess.run(
            [sys.executable, "-m", "scrapy", *args],
            cwd=self.folder,
            env={**self.env, **(env or {})},
            capture_output=True,
            text=True,
            timeout=timeout,
            stdin=subprocess.DEVNULL,
        )
        if check and result.returncode != 0:
            raise AssertionError(f"scrapy {' '.join(args)} exited {result.returncode}:\n{result.stderr[-4000:]}")
        return result


@pytest.fixture
def scrapy_cmd(tmp_path: Path) -> ScrapyRunner:
    return ScrapyRunner(tmp_path)


def write_config(folder: Path, data: dict, name: str = "config.yml") -> Path:
    path = folder / name
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def parsing_reader(engine: str, base_url: str, freshness: str = "hour"):
    """An engine's page reader, as a crawl builds it (the fake engines' 127.0.0.1 as a redirector host)."""
    from topicstreams.engines import engine_class
    from topicstreams.engines.reader import PageReader

    return PageReader(engine_class(engine)(base_url, freshness), {"127.0.0.1"})


def reading_of(reader, response, number: int = 0, fetched_at=None):
    """The reader's reading of a Scrapy response (as the blocks middleware makes it)."""
    from topicstreams.engines.reader import Page

    return reader.read(
        Page(response.url, response.status, response.text, response.headers.to_unicode_dict(), number), fetched_at
    )


def parsing_spider(spider_class, base_url: str, freshness: str = "hour"):
    """An engine spider ready to turn readings into items without a crawl (no profile, no browser)."""
    from scrapy.utils.test import get_crawler

    spider = spider_class()
    spider._set_crawler(get_crawler(spider_class))
    spider.reader = parsing_reader(spider.name, base_url, freshness)
    spider.engine = spider.reader.engine
    spider.max_pages = 1
    spider.page = None
    return spider


# ==== PostgreSQL fixtures ====================================================================================
# A real server (tests/postgres_server.py), started once per session when a test first asks for it; a fresh
# database per test through pytest-postgresql's DatabaseJanitor. Tests are skipped, loudly, where no server can run.


def postgres_dbname(label: str) -> str:
    """A new database name, readable (from *label*, e.g. the test's name) and unique, within PostgreSQL's 63."""
    return f"{re.sub(r'[^a-z0-9]+', '_', label.lower()).strip('_')[:40]}_{uuid.uuid4().hex[:12]}"


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    """The session's PostgreSQL server (``host``, ``port``, ``user``, ``password``, ``url(dbname)``,
    ``create_database(name)``, ``drop_database(name)``); skips the test where none can run."""
    try:
        import psycopg  # noqa: F401
    except ImportError as exc:
        pytest.skip(f"psycopg 3 is not installed (pip install 'topicstreams[postgresql]'): {exc}")
    server = PostgresServer()
    try:
        server.start()
    except PostgresUnavailable as exc:
        pytest.skip(str(exc))
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def postgres_database(postgres_server: PostgresServer, request: pytest.FixtureRequest) -> Iterator[str]:
    """The name of a fresh, empty database on the session's server, dropped after the test."""
    from topicstreams.storage import dispose_databases

    name = postgres_dbname(request.node.name)
    janitor = postgres_server.janitor(name)
    janitor.init()
    try:
        yield name
    finally:
        dispose_databases()  # pooled connections would make the drop wait (the janitor ends stragglers anyway)
        janitor.drop()


@pytest.fixture
def postgres_url(postgres_server: PostgresServer, postgres_database: str) -> str:
    """The SQLAlchemy URL (postgresql+psycopg://…) of a fresh, empty database, dropped after the test."""
    return postgres_server.url(postgres_database)


@pytest.fixture
def pg_url(postgres_url: str) -> str:
    """A fresh PostgreSQL database at the newest migration (a test module may define its own ``pg_url``)."""
    from topicstreams.storage import upgrade

    upgrade(postgres_url)
    return postgres_url


@pytest.fixture(params=["sqlite", "postgresql"])
def feed_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A fresh database with the schema, once an SQLite file and once a PostgreSQL database (the web app's tests)."""
    from tests.feed_data import fresh_database

    if request.param == "sqlite":
        return fresh_database(f"sqlite:///{tmp_path / 'feed.db'}")
    return fresh_database(request.getfixturevalue("postgres_url"))


# ==== end of the PostgreSQL fixtures =========================================================================


# ==== pytest-playwright: the project's Chromium ==============================================================
# The web app's browser tests (tests/system/test_web_browser.py) run in the Chromium the crawler uses
# (topicstreams.browser.chromium.find_executable), launched as the crawler launches it; as root there is no sandbox.


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args: dict) -> dict:
    from topicstreams.browser.chromium import find_executable

    args = {
        **browser_type_launch_args,
        "args": [
            "--no-sandbox",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-quic",
            "--no-first-run",
            "--disable-dev-shm-usage",
        ],
    }
    executable = find_executable()
    if executable:
        args["executable_path"] = executable
    return args


PLAYWRIGHT_FIXTURES = {"playwright", "browser_type", "browser", "context", "page"}


SOAK = pytest.StashKey["BackgroundSoak"]()


def in_xdist_worker() -> bool:
    """Whether this process is one of pytest-xdist's workers (``make test`` runs the suite on two)."""
    return bool(os.environ.get("PYTEST_XDIST_WORKER"))


def pytest_collection_finish(session: pytest.Session) -> None:
    """In a serial session the short soak starts as soon as it is collected, and runs beside the other tests
    (tests/soak_run.py). Every xdist worker collects every test, so there the soak starts with its own test, which
    is the first to run (see pytest_collection_modifyitems), on whichever worker is given it."""
    from topicstreams.browser.chromium import find_executable

    if session.config.option.collectonly or in_xdist_worker():
        return
    if any(item.nodeid.startswith(SOAK_MODULE) for item in session.items) and find_executable():
        session.config.stash[SOAK] = BackgroundSoak()


def pytest_sessionfinish(session: pytest.Session) -> None:
    soak = session.config.stash.get(SOAK, None)
    if soak is not None:
        soak.close()


@pytest.fixture(scope="session")
def background_soak(pytestconfig: pytest.Config):
    """The session's short soak (started at collection in a serial session, here on an xdist worker), or a skip when
    there is no Chromium to run it."""
    from topicstreams.browser.chromium import find_executable

    soak = pytestconfig.stash.get(SOAK, None)
    if soak is None and in_xdist_worker() and find_executable():
        soak = pytestconfig.stash[SOAK] = BackgroundSoak()
    if soak is None:
        pytest.skip("no Chromium on this machine")
    return soak


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The browser tests last; the short soak's test after them in a serial session, first on xdist's workers.

    The browser tests: pytest-playwright's sync API keeps an asyncio loop running in the main thread from its first
    test to the end of the session (its Playwright is session-scoped), and every later test that runs an event loop
    of its own (asyncio.run, a Scrapy crawler) would fail with "cannot be called from a running event loop"."""
    in_browser = [item for item in items if PLAYWRIGHT_FIXTURES & set(getattr(item, "fixturenames", ()))]
    if in_browser:
        items[:] = [item for item in items if item not in in_browser] + in_browser
    # The short soak's test reads a crawl that runs beside the others. Serial, the crawl started at collection: last,
    # the test finds it long ended instead of holding the session until it ends (it runs no event loop of its own,
    # so it may follow the browser tests). On xdist's workers the test starts the crawl itself: first, its worker
    # waits for it while the other worker goes through the rest.
    soak = [item for item in items if item.nodeid.startswith(SOAK_MODULE)]
    if soak:
        rest = [item for item in items if item not in soak]
        items[:] = soak + rest if in_xdist_worker() else rest + soak


# ==== end of the pytest-playwright fixtures ==================================================================
