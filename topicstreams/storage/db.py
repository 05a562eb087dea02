"""Database handles: SQLAlchemy Engines made with this project's settings (SQLite tuned for concurrent use), and
:class:`Databases`, the handles by URL of their owner (a crawl process's runtime, a command, the web app)."""

from __future__ import annotations

import logging
import os
import threading
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sqlalchemy import Dialect, Engine, Table, create_engine, event
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import Connection, make_url
from sqlalchemy.sql.dml import Insert

logger = logging.getLogger(__name__)

SQLITE_BUSY_TIMEOUT_MS = 30_000
"""How long an SQLite connection waits for another writer before failing with 'database is locked' (unless the URL
says ``timeout``, in seconds, as Python's sqlite3 takes it: ``sqlite:///news.db?timeout=5``)."""

SQLITE_WAL_AUTOCHECKPOINT_PAGES = 10_000
"""Checkpoint the WAL into the database file every ~40 MB instead of SQLite's 4 MB.

Batches insert random keys (hashed news ids), so each commit touches pages all over the
indexes; checkpointing less often writes each page back (and fsyncs) once for many commits.
"""

SQLITE_CACHE_KIB = 32 * 1024
"""Page cache per connection (SQLite's default is 2 MiB): index pages stay cached between batches."""

PG_CONNECT_TIMEOUT = 10
"""Seconds a new PostgreSQL connection may take (unless the URL says ``connect_timeout``)."""

BEGIN_MODE = "topicstreams_sqlite_begin"
"""Execution option naming the SQLite ``BEGIN`` mode of a connection's next transaction.

``"IMMEDIATE"`` takes the write lock at ``BEGIN``: a transaction that reads before it writes
then waits (busy_timeout) for other writers instead of failing on a stale snapshot.
Other dialects ignore it.
"""


def utcnow() -> datetime:
    """The current time as a timezone-aware UTC datetime."""
    return datetime.now(UTC)


def sqlite_path(url: str) -> Path | None:
    """The file of an SQLite URL, or None for other databases and in-memory SQLite."""
    parsed = make_url(url)
    if parsed.get_backend_name() != "sqlite":
        return None
    database = parsed.database or ""
    if database in ("", ":memory:") or database.startswith("file:"):
        return None
    return Path(database)


def ensure_sqlite_parent(url: str) -> None:
    """Create the folder of an SQLite database file if it is missing."""
    path = sqlite_path(url)
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)


def make_database(url: str, *, foreign_keys: bool = True, **kwargs: Any) -> Engine:
    """A new (uncached) Engine for *url*; SQLite connections get this project's pragmas, server connections
    are checked before each use (``pool_pre_ping``).

    ``foreign_keys=False`` is for schema migrations: SQLite's batch ALTER recreates tables,
    and with enforcement on, dropping the old table would cascade deletes into its children.
    """
    ensure_sqlite_parent(url)
    if make_url(url).get_backend_name() != "sqlite":
        # A pooled connection to a server may have died since its last use (server restart, fail-over, idle
        # timeout): test it on checkout, or the next batch would fail with it and be lost.
        kwargs.setdefault("pool_pre_ping", True)
        if make_url(url).get_backend_name() == "postgresql" and "connect_timeout" not in make_url(url).query:
            # A server behind a network that drops packets would hold a connect for minutes (the kernel's TCP
            # timeout); the writers try again later anyway.
            kwargs.setdefault("connect_args", {}).setdefault("connect_timeout", PG_CONNECT_TIMEOUT)
    db = create_engine(url, **kwargs)
    if db.dialect.name == "sqlite":
        _configure_sqlite(db, foreign_keys=foreign_keys)
    return db


class Databases:
    """Database handles by URL, each made on first use and then shared by its owner's threads: a crawl process's
    (:class:`~topicstreams.crawl.runtime.Runtime`), a command's, the web app's. Thread-safe."""

    def __init__(self) -> None:
        self._made: dict[tuple[int, str], Engine] = {}
        self._lock = threading.Lock()

    def __enter__(self) -> Databases:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.dispose()

    def of(self, url: str) -> Engine:
        """The handle of the database at *url* (a process forked from the owner's gets handles of its own: pooled
        connections are never shared across processes)."""
        if not url:
            raise ValueError("database url is empty")
        key = (os.getpid(), url)
        with self._lock:
            db = self._made.get(key)
            if db is None:
                db = self._made[key] = make_database(url)
                logger.debug("Opened database %s", db.url.render_as_string(hide_password=True))
            return db

    def dispose(self) -> None:
        """Close the pooled connections of every handle (a later use opens new ones)."""
        with self._lock:
            made = list(self._made.values())
        for db in made:
            db.dispose()


def immediate(conn: Connection) -> Connection:
    """Make *conn*'s next SQLite transaction ``BEGIN IMMEDIATE`` (a no-op elsewhere)."""
    return conn.execution_options(**{BEGIN_MODE: "IMMEDIATE"})


def dialect_insert(dialect: Dialect, table: Table) -> Insert:
    """An ``INSERT`` on *table* in *dialect*'s own flavour (which has ``ON CONFLICT``)."""
    if dialect.name == "sqlite":
        return sqlite.insert(table)
    if dialect.name == "postgresql":
        return postgresql.insert(table)
    raise NotImplementedError(f"unsupported database dialect {dialect.name!r}: use SQLite or PostgreSQL")


def insert_ignore(dialect: Dialect, table: Table, index_elements: list[str] | None = None) -> Insert:
    """``INSERT ... ON CONFLICT DO NOTHING`` on *table* for *dialect*."""
    return dialect_insert(dialect, table).on_conflict_do_nothing(index_elements=index_elements)


def upsert(
    dialect: Dialect, table: Table, index_elements: list[str], values: dict[str, Any], update: list[str]
) -> Insert:
    """``INSERT`` *values* into *table*; on a conflict over *index_elements*, update the columns *update*."""
    statement = dialect_insert(dialect, table).values(values)
    return statement.on_conflict_do_update(
        index_elements=index_elements, set_={column: statement.excluded[column] for column in update}
    )


def _configure_sqlite(db: Engine, *, foreign_keys: bool) -> None:
    url_timeout = db.url.query.get("timeout")

    @event.listens_for(db, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        # SQLAlchemy emits BEGIN itself (see _on_begin), so the driver must not.
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        busy_ms = SQLITE_BUSY_TIMEOUT_MS if url_timeout is None else round(float(url_timeout) * 1000)
        try:
            cursor.execute(f"PRAGMA busy_timeout = {busy_ms}")
            cursor.execute("PRAGMA journal_mode = WAL")
            cursor.execute("PRAGMA synchronous = NORMAL")
            cursor.execute(f"PRAGMA cache_size = -{SQLITE_CACHE_KIB}")
            cursor.execute(f"PRAGMA wal_autocheckpoint = {SQLITE_WAL_AUTOCHECKPOINT_PAGES}")
            cursor.execute(f"PRAGMA foreign_keys = {'ON' if foreign_keys else 'OFF'}")
        finally:
            cursor.close()

    @event.listens_for(db, "begin")
    def _on_begin(conn: Connection) -> None:
        mode = conn.get_execution_options().get(BEGIN_MODE, "DEFERRED")
        if mode not in ("DEFERRED", "IMMEDIATE", "EXCLUSIVE"):
            raise ValueError(f"unknown SQLite BEGIN mode {mode!r}")
        conn.exec_driver_sql(f"BEGIN {mode}")


def make_reader(url: str, **kwargs: Any) -> Engine:
    """A new Engine that only reads the database at *url* (the web app's).

    SQLite: the file opened read-only (``mode=ro``: a missing file is an error, never a new empty database), and
    ``query_only``; PostgreSQL: every transaction ``READ ONLY``. It never changes the journal mode or migrates.
    """
    parsed = make_url(url)
    if parsed.get_backend_name() != "sqlite":
        kwargs.setdefault("pool_pre_ping", True)
        # No parallel workers for the web's short queries: starting them costs more than they save (a search
        # took twice as long with them on two cores; benchmarks/feed.py).
        kwargs.setdefault("connect_args", {"options": "-c max_parallel_workers_per_gather=0"})
        return create_engine(url, **kwargs).execution_options(postgresql_readonly=True)
    path = sqlite_path(url)
    if path is None:
        raise ValueError(f"cannot read {url!r} read-only: name an SQLite file")
    reader_url = parsed.set(
        database=f"file:{path.resolve().as_uri().removeprefix('file://')}?mode=ro", query={"uri": "true"}
    )
    db = create_engine(reader_url, **kwargs)

    @event.listens_for(db, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        cursor = dbapi_connection.cursor()
        try:
            cursor.execute(f"PRAGMA busy_timeout = {SQLITE_BUSY_TIMEOUT_MS}")
            cursor.execute(f"PRAGMA cache_size = -{SQLITE_CACHE_KIB}")
            cursor.execute("PRAGMA query_only = ON")
        finally:
            cursor.close()

    return db
