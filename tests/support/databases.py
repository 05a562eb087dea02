"""The tests' databases, as pytest fixtures (a plugin of tests/conftest.py): a fresh SQLite file, a fresh database
on the session's PostgreSQL server, either one (parametrised), each at the newest migration; and ``db`` fixtures
made of them for the modules that work on a SQLAlchemy engine; ``databases``, the test's own handles.

PostgreSQL: a real server (tests/support/postgres_server.py), started once per session when a test first asks for
it; a fresh database per test through pytest-postgresql's DatabaseJanitor. Tests are skipped, loudly, where no
server can run."""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import Engine

from tests.support.postgres_server import PostgresServer, PostgresUnavailable
from topicstreams.storage import Databases, upgrade


def postgres_dbname(label: str) -> str:
    """A new database name, readable (from *label*, e.g. the test's name) and unique, within PostgreSQL's 63."""
    return f"{re.sub(r'[^a-z0-9]+', '_', label.lower()).strip('_')[:40]}_{uuid.uuid4().hex[:12]}"


def sqlite_database(folder: Path, name: str = "news.db") -> str:
    """The URL of the SQLite file *name* in *folder*, at the newest migration."""
    url = f"sqlite:///{folder / name}"
    upgrade(url)
    return url


def database_fixture(url_fixture: str):
    """A fixture: the SQLAlchemy engine of the database fixture *url_fixture* gives (``sqlite_url``, ``pg_url``, a
    module's own), its pooled connections disposed after the test.

    Assign it to the fixture's name in the module, ``db = database_fixture("pg_url")``."""

    @pytest.fixture
    def fixture(request: pytest.FixtureRequest, databases: Databases) -> Engine:
        return databases.of(request.getfixturevalue(url_fixture))

    return fixture


@pytest.fixture
def databases() -> Iterator[Databases]:
    """The test's own database handles (``databases.of(url)``), their pooled connections disposed after the test."""
    with Databases() as made:
        yield made


@pytest.fixture
def sqlite_url(tmp_path: Path) -> str:
    """A fresh SQLite file (``news.db`` in the test's folder) at the newest migration."""
    return sqlite_database(tmp_path)


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
def postgres_database(
    postgres_server: PostgresServer, databases: Databases, request: pytest.FixtureRequest
) -> Iterator[str]:
    """The name of a fresh, empty database on the session's server, dropped after the test."""
    name = postgres_dbname(request.node.name)
    janitor = postgres_server.janitor(name)
    janitor.init()
    try:
        yield name
    finally:
        databases.dispose()  # pooled connections would make the drop wait (the janitor ends stragglers anyway)
        janitor.drop()


@pytest.fixture
def postgres_url(postgres_server: PostgresServer, postgres_database: str) -> str:
    """The SQLAlchemy URL (postgresql+psycopg://…) of a fresh, empty database, dropped after the test."""
    return postgres_server.url(postgres_database)


@pytest.fixture
def pg_url(postgres_url: str) -> str:
    """A fresh PostgreSQL database at the newest migration (a test module may define its own ``pg_url``)."""
    upgrade(postgres_url)
    return postgres_url


@pytest.fixture(params=["sqlite", "postgresql"])
def feed_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A fresh database at the newest migration, once an SQLite file (``feed.db``) and once a PostgreSQL database
    (the web app's tests, and every test that must hold on both)."""
    if request.param == "sqlite":
        return sqlite_database(tmp_path, "feed.db")
    return request.getfixturevalue("pg_url")
