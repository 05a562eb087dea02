"""A damaged database file is named as such everywhere (issue 33, item 3), and a passing outage stays an outage.

Real SQLite files with the project's schema, then cut short mid-page or given a garbage header
(tests/support/damaged_sqlite.py), through: the recognition (:func:`topicstreams.storage.failures.damaged_file`), the
one message (:mod:`topicstreams.storage.damage_notice`), the commands as ``scrapy`` runs them (in this process:
``db upgrade``, ``db replay``, ``health`` and ``health --json``, ``topics list``, ``nodes``), the upgrade of a
subtly damaged file, the store's writer (its journal), the schema extension and the web app. The crawl and a real
server: tests/system/test_damaged_database_processes.py.
"""

from __future__ import annotations

import logging
import sqlite3
from pathlib import Path

import pytest
from scrapy import Spider
from scrapy.cmdline import execute
from scrapy.utils.test import get_crawler
from sqlalchemy import text
from sqlalchemy.exc import OperationalError, SQLAlchemyError
from sqlalchemy.pool import NullPool

from tests.support.damaged_sqlite import DAMAGES, DamagedFile, damaged_database, sha256
from tests.support.databases import sqlite_database
from tests.support.feed_data import client
from tests.support.project import write_config
from tests.unit.test_durable_store import Stats, eventually, item
from topicstreams.crawl.runtime import Runtime
from topicstreams.extensions.schema_upgrade import SchemaExtension
from topicstreams.storage import upgrade
from topicstreams.storage.availability import Availability
from topicstreams.storage.batch_writes import Backoff
from topicstreams.storage.damage_notice import DatabaseDamaged, damage_message, damage_of
from topicstreams.storage.db import make_database, make_reader
from topicstreams.storage.durable import DurableWriter
from topicstreams.storage.failures import can_pass, damaged_file
from topicstreams.storage.journal import Journal
from topicstreams.storage.outbox import Outbox
from topicstreams.storage.writer import NewsWriter

UNREACHABLE = "postgresql+psycopg://crawler:s3cret@127.0.0.1:9/news"
"""A PostgreSQL URL where nothing listens (port 9, discard): connection refused, at once."""


@pytest.fixture(params=DAMAGES)
def damaged(request: pytest.FixtureRequest, tmp_path: Path) -> DamagedFile:
    return damaged_database(tmp_path, request.param)


def read_error(url: str, sql: str = "SELECT version_num FROM alembic_version") -> SQLAlchemyError:
    """The error of running *sql* on *url* (by default: reading the schema's revision, as every command does
    first)."""
    db = make_database(url, poolclass=NullPool)
    try:
        with pytest.raises(SQLAlchemyError) as caught, db.begin() as conn:
            conn.execute(text(sql))
    finally:
        db.dispose()
    return caught.value


# ---- what it is, what is said -------------------------------------------------------------------------------
def test_a_damaged_file_is_recognised_with_what_sqlite_said(damaged: DamagedFile) -> None:
    exc = read_error(damaged.url)
    assert damaged_file(exc) == damaged.said
    with pytest.raises(sqlite3.DatabaseError) as raw:  # the driver's own error, unwrapped
        sqlite3.connect(damaged.path).execute("SELECT count(*) FROM topics").fetchall()
    assert damaged_file(raw.value) == damaged.said
    assert damaged_file(DatabaseDamaged(damaged.url, damaged.said)) == damaged.said
    assert can_pass(exc), "the data is fine: a writer keeps it"


def test_a_passing_outage_a_lock_or_a_missing_file_is_no_damage(tmp_path: Path, caplog) -> None:
    refused = read_error(UNREACHABLE)
    assert isinstance(refused, OperationalError) and "refused" in str(refused).lower()
    path = tmp_path / "news.db"
    url = sqlite_database(tmp_path)
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        locked = read_error(f"{url}?timeout=0.05", "UPDATE topics SET active = active")
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert "database is locked" in str(locked)
    reader = make_reader(f"sqlite:///{tmp_path / 'missing.db'}")
    with pytest.raises(SQLAlchemyError) as missing, reader.connect():
        pass
    reader.dispose()
    for exc in (refused, locked, missing.value):
        assert damaged_file(exc) is None and damage_of(url, exc) is None, exc

    caplog.set_level(logging.INFO)
    availability = Availability(UNREACHABLE)
    availability.went_away("google", "OperationalError: connection refused", "2 item(s) kept", refused)
    [told] = [record for record in caplog.records if record.name == "topicstreams.storage.availability"]
    assert told.levelno == logging.WARNING and "cannot be written" in told.getMessage()
    assert "damaged" not in told.getMessage() and "s3cret" not in told.getMessage()


def test_the_message_names_the_file_what_sqlite_said_what_not_to_do_and_what_to_do(tmp_path: Path) -> None:
    path = tmp_path / "my data" / "news.db"
    message = damage_message(f"sqlite:///{path}", "file is not a database")
    assert message.startswith(f"the database file {path} is damaged (file is not a database). ")
    assert "Do not delete it, do not write to it: stop the crawls that use it" in message
    assert "do not run `scrapy db upgrade` on it" in message
    assert "Restore it from a backup" in message
    recovered = tmp_path / "my data" / "news.recovered.db"
    assert "recover what SQLite can still read into a new file and point database.url at it: " in message
    assert f"`sqlite3 '{path}' .recover | sqlite3 '{recovered}'` (with an sqlite3 that has .recover" in message
    assert "\n" not in message
    elsewhere = str(DatabaseDamaged(UNREACHABLE, "data corrupted"))
    assert "crawler:***@127.0.0.1:9/news is damaged (data corrupted)" in elsewhere and "s3cret" not in elsewhere


# ---- the commands, as `scrapy` runs them ----------------------------------------------------------------------
def scrapy(monkeypatch: pytest.MonkeyPatch, capsys, config: Path, *argv: str) -> tuple[int, str, str]:
    """``scrapy ARGV…`` in this process, with the project's settings and *config*: (exit status, stdout, stderr)."""
    monkeypatch.setenv("SCRAPY_SETTINGS_MODULE", "topicstreams.settings")
    monkeypatch.setenv("TOPICSTREAMS_CONFIG", str(config))
    capsys.readouterr()
    with pytest.raises(SystemExit) as exited:
        execute(["scrapy", *argv])
    out, err = capsys.readouterr()
    return int(exited.value.code or 0), out, err


def test_every_command_names_the_damaged_file_without_a_traceback_and_exits_non_zero(
    damaged: DamagedFile, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    config = write_config(
        tmp_path,
        {
            "database": {"url": damaged.url},
            "node": {"id": "n1"},
            "browser": {"profile_dir": "profiles"},
            "alerting": {"urls": ["json://127.0.0.1:9/"]},  # nothing listens: refused at once
        },
    )
    journal = tmp_path / "profiles" / "n1" / "journal" / "google.jsonl"
    with Journal(journal) as kept:
        kept.append([item(1), item(2)])
    journal_before = journal.read_bytes()
    message = damage_message(damaged.url, damaged.said)

    for argv, status, tail in (
        (["db", "upgrade"], 1, ""),
        (["db", "replay"], 1, "; the journals are kept as they are"),
        (["health"], 3, ""),
        (["health", "--json"], 3, ""),
        (["topics", "list"], 1, ""),
        (["nodes", "--json"], 1, ""),
        (["alerts", "list"], 1, ""),
    ):
        code, out, err = scrapy(monkeypatch, capsys, config, *argv)
        assert code == status, (argv, err)
        assert err.splitlines()[0] == message + tail, (argv, err)
        assert "Traceback" not in err and "cannot be reached" not in err, argv
        assert out == "", argv  # no report, not even an empty one
    code, out, err = scrapy(monkeypatch, capsys, config, "alerts", "test")  # the messages go out all the same
    assert err.splitlines()[0] == f"the test messages are not recorded: {message}" and "FAILED" in out
    assert damaged.unchanged() and journal.read_bytes() == journal_before


def test_an_upgrade_leaves_a_file_sqlite_finds_damaged_as_it_is(tmp_path: Path) -> None:
    """A file whose schema reads fine but whose data pages do not: the upgrade would rewrite tables in it."""
    url = sqlite_database(tmp_path)
    path = tmp_path / "news.db"
    with sqlite3.connect(path) as conn:
        conn.executemany(
            "INSERT INTO news (id, url, title, first_seen_at) VALUES (?, ?, ?, '2026-01-01')",
            [(f"{n:016x}", f"https://news.example/{n}", "x" * 400) for n in range(2000)],
        )
        conn.execute("UPDATE alembic_version SET version_num = '0007'")  # one migration to go
    conn.close()
    with path.open("r+b") as file:  # pages half-way (news rows and their index) overwritten
        file.seek(path.stat().st_size // 2 // 4096 * 4096)
        file.write(b"\xff" * 4096 * 4)
    before = sha256(path)
    with pytest.raises(DatabaseDamaged) as refused:
        upgrade(url)
    assert str(refused.value).startswith(f"the database file {path} is damaged (PRAGMA quick_check: Page ")
    assert sha256(path) == before


# ---- a crawl's parts ------------------------------------------------------------------------------------------
def test_the_store_and_the_health_writes_keep_what_they_cannot_write_and_say_once_that_the_file_is_damaged(
    damaged: DamagedFile, tmp_path: Path, caplog, databases
) -> None:
    caplog.set_level(logging.INFO)
    stats = Stats()
    availability = Availability(damaged.url)  # the process's, shared by its writers
    writer = DurableWriter(
        NewsWriter(databases.of(damaged.url)),
        Journal(tmp_path / "google.jsonl"),
        availability,
        name="google",
        inc=stats.inc,
        batch_size=3,
        buffer_items=1000,
        backoff=Backoff(0.05, 0.1),
    )
    writer.open()
    writer.submit([item(1), item(2)])
    eventually(lambda: stats["topicstreams/store/journaled"] == 2)
    writer.submit([item(3)])
    eventually(lambda: stats["topicstreams/store/journaled"] == 3)
    outbox = Outbox(damaged.url, availability, Backoff(0.05, 0.1), database=databases.of)
    outbox.save_status("google", "n1", state="running", score=90.0)
    eventually(lambda: availability.behind == {"google", outbox.name})
    assert not outbox.flush(timeout=0.2) and outbox.pending() == 1  # kept in memory
    assert writer.close() == 3  # all three wait in the journal for a mended database
    told = [record for record in caplog.records if record.name == "topicstreams.storage.availability"]
    assert [record.levelno for record in told] == [logging.ERROR], [record.getMessage() for record in told]
    assert told[0].getMessage().startswith(damage_message(damaged.url, damaged.said) + ". Until then")
    assert f"item(s) of google kept in the journal {tmp_path / 'google.jsonl'}" in told[0].getMessage()
    assert damaged.unchanged()


def test_the_schema_extension_stops_the_crawl_with_the_message(damaged: DamagedFile, caplog) -> None:
    crawler = get_crawler(Spider, {"TOPICSTREAMS_DATABASE_URL": damaged.url})
    try:
        with pytest.raises(DatabaseDamaged) as stopped:
            SchemaExtension.from_crawler(crawler)
    finally:
        Runtime.of(crawler).close()
    message = damage_message(damaged.url, damaged.said)
    assert str(stopped.value) == message
    assert [r.getMessage() for r in caplog.records if r.levelno == logging.ERROR] == [f"Not crawling: {message}"]
    assert damaged.unchanged()


# ---- the web app ---------------------------------------------------------------------------------------------
def test_the_app_answers_503_with_the_message_and_logs_it_once(damaged: DamagedFile, caplog) -> None:
    message = damage_message(damaged.url, damaged.said)
    api = client(damaged.url)
    for path in ("/api/feed", "/api/topics", "/feed.atom", "/api/health"):
        answer = api.get(path)
        assert answer.status_code == 503, path
        assert answer.json() == {"detail": message}, path
    page = api.get("/")
    assert page.status_code == 503 and "is damaged" in page.text and ".recover" in page.text
    assert ": run `scrapy db upgrade`" not in page.text  # no schema to upgrade: the hint of a missing schema
    told = [r for r in caplog.records if r.name == "topicstreams.web.app" and r.levelno >= logging.WARNING]
    assert [r.getMessage() for r in told] == [f"Answering 503 where the database is read: {message}"]
    assert damaged.unchanged()


def test_a_file_damaged_while_the_app_serves_it_is_named_too(tmp_path: Path, caplog) -> None:
    url = sqlite_database(tmp_path)
    api = client(url)
    assert api.get("/api/topics").status_code == 200
    with (tmp_path / "news.db").open("r+b") as file:
        file.write((b"not an SQLite header; " * 5)[:100])
    api.app.state.reader.db.dispose()  # the next query on a connection opened since (a WAL reader keeps its cache)
    answer = api.get("/api/topics")
    assert answer.status_code == 503
    assert answer.json()["detail"].startswith(f"the database file {tmp_path / 'news.db'} is damaged (")
    assert any(r.levelno == logging.ERROR and "is damaged" in r.getMessage() for r in caplog.records)
