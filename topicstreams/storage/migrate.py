"""Schema migrations: bring a database to the latest Alembic revision.

The migration scripts live in the package ``topicstreams.storage.migrations``. When the project
runs from a zipped egg (Scrapyd), that package is no folder Alembic could read, so its files are
copied once per process into a temporary folder and Alembic is pointed there.

Usage from a shell (developers)::

    python -m topicstreams.storage.migrate upgrade sqlite:////abs/path/topicstreams.db
    python -m topicstreams.storage.migrate current sqlite:////abs/path/topicstreams.db
    python -m topicstreams.storage.migrate revision sqlite:////abs/path/dev.db -m "add x" --autogenerate
"""

from __future__ import annotations

import argparse
import atexit
import functools
import importlib.resources
import logging
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from importlib.resources.abc import Traversable
from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Connection, Engine, text
from sqlalchemy.pool import NullPool

from topicstreams.storage.damage_notice import DatabaseDamaged
from topicstreams.storage.db import immediate, make_database

logger = logging.getLogger(__name__)

MIGRATIONS_PACKAGE = "topicstreams.storage.migrations"

PG_MIGRATION_LOCK_KEY = 0x746F7069637374  # "topicst": the advisory lock serializing upgrades
"""Key of the PostgreSQL advisory lock that serializes concurrent upgrades of one database."""


def upgrade(url: str, db: Engine | None = None) -> None:
    """Bring the database at *url* to the latest revision (creating the schema in a new one); *db*: the caller's
    handle of it, to read its revision with (default: one of its own, closed when it is done).

    Idempotent, and quick when the database is already at the latest revision. Several processes
    may call it at once on one database: the upgrade itself runs under a lock (SQLite: the write
    lock of ``BEGIN IMMEDIATE``; PostgreSQL: a transaction-level advisory lock), and whoever gets
    the lock second finds the work done. An SQLite file found damaged before a migration is left as it is
    (:class:`~topicstreams.storage.damage_notice.DatabaseDamaged`).
    """
    heads = set(script_directory().get_heads())
    if db is None:
        current = current_revisions(url)
    else:
        with db.connect() as conn:
            current = set(MigrationContext.configure(conn).get_current_heads())
    if current == heads:
        return

    logger.info("Upgrading the database schema from %s to %s", sorted(current) or "nothing", sorted(heads))
    # A separate engine, with SQLite foreign key enforcement off: batch ALTERs recreate tables,
    # and dropping a parent table with enforcement on would delete its children's rows.
    db = make_database(url, foreign_keys=False, poolclass=NullPool)
    try:
        with db.connect() as conn, _migration_lock(conn):
            if current:
                _refuse_damaged(conn, url)
            config = alembic_config()
            config.attributes["connection"] = conn
            command.upgrade(config, "head")
            _check_foreign_keys(conn)
    finally:
        db.dispose()


def current_revisions(url: str) -> set[str]:
    """The revisions the database at *url* is at (empty for a database never migrated), read through a handle of
    its own, closed before it returns."""
    if not url:
        raise ValueError("database url is empty")
    db = make_database(url, poolclass=NullPool)
    try:
        with db.connect() as conn:
            return set(MigrationContext.configure(conn).get_current_heads())
    finally:
        db.dispose()


def head_revisions() -> set[str]:
    """The latest revisions of the migration scripts."""
    return set(script_directory().get_heads())


def alembic_config() -> Config:
    """An Alembic Config without any ini file, pointing at the migration scripts."""
    config = Config()
    # Config options go through configparser interpolation: a literal % must be doubled.
    config.set_main_option("script_location", script_location().replace("%", "%%"))
    return config


@functools.cache
def script_directory() -> ScriptDirectory:
    return ScriptDirectory.from_config(alembic_config())


@functools.cache
def script_location() -> str:
    """The folder holding the migration scripts: the package itself, or an extracted copy."""
    root = importlib.resources.files(MIGRATIONS_PACKAGE)
    if isinstance(root, Path) and root.is_dir():
        return str(root)
    target = Path(tempfile.mkdtemp(prefix="topicstreams-migrations-"))
    atexit.register(shutil.rmtree, target, ignore_errors=True)
    _copy_tree(root, target)
    logger.debug("Extracted the migration scripts from %s to %s", root, target)
    return str(target)


def _copy_tree(source: Traversable, target: Path) -> None:
    for entry in source.iterdir():
        if entry.name == "__pycache__":
            continue
        if entry.is_dir():
            (target / entry.name).mkdir()
            _copy_tree(entry, target / entry.name)
        else:
            (target / entry.name).write_bytes(entry.read_bytes())


@contextmanager
def _migration_lock(conn: Connection) -> Iterator[None]:
    """Run the block in one transaction that excludes other upgrades of the same database.

    This is the hook for multi-node PostgreSQL: nodes starting at once on a fresh database
    serialize on the advisory lock; it is released when the transaction ends.
    """
    if conn.dialect.name == "sqlite":
        immediate(conn)
    with conn.begin():
        if conn.dialect.name == "postgresql":
            conn.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": PG_MIGRATION_LOCK_KEY})
        yield


def _refuse_damaged(conn: Connection, url: str) -> None:
    """Raise :class:`~topicstreams.storage.damage_notice.DatabaseDamaged` when SQLite finds the file damaged: a
    migration rewrites tables, and a damaged file written to loses more of what a ``.recover`` could still save."""
    if conn.dialect.name != "sqlite":
        return
    found = [str(row[0]) for row in conn.exec_driver_sql("PRAGMA quick_check(3)")]
    if found != ["ok"]:
        lines = [line.strip() for row in found for line in row.splitlines()]
        said = "; ".join(line for line in lines if line and not line.startswith("***"))
        raise DatabaseDamaged(url, f"PRAGMA quick_check: {said}")


def _check_foreign_keys(conn: Connection) -> None:
    if conn.dialect.name != "sqlite":
        return
    problems = conn.exec_driver_sql("PRAGMA foreign_key_check").all()
    if problems:
        raise RuntimeError(f"the migration left rows breaking foreign keys: {problems[:10]}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m topicstreams.storage.migrate", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="action", required=True)
    for name in ("upgrade", "current", "revision"):
        action = sub.add_parser(name)
        action.add_argument("url", help="SQLAlchemy database URL")
        if name == "revision":
            action.add_argument("-m", "--message", required=True)
            action.add_argument("--autogenerate", action="store_true")
            action.add_argument("--rev-id", help="revision id, e.g. 0002 (next number)")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")

    if args.action == "upgrade":
        upgrade(args.url)
    elif args.action == "current":
        print(", ".join(sorted(current_revisions(args.url))) or "(none)")
    else:
        if not isinstance(importlib.resources.files(MIGRATIONS_PACKAGE), Path):
            parser.error("revisions can only be written from a source checkout")
        config = alembic_config()
        config.set_main_option("sqlalchemy.url", args.url.replace("%", "%%"))
        command.revision(config, message=args.message, autogenerate=args.autogenerate, rev_id=args.rev_id)


if __name__ == "__main__":
    main()
