"""The durable store on real SQLite files: the journal on disk, the writer's thread through a locked database,
items the database refuses for good, the journal of an earlier run, and replaying by hand."""

from __future__ import annotations

import json
import logging
import sqlite3
import time
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path

import pytest

from topicstreams.engines.news_urls import news_id
from topicstreams.storage import db as db_module
from topicstreams.storage import upgrade
from topicstreams.storage.availability import Availability
from topicstreams.storage.batch_writes import Backoff, replay_file
from topicstreams.storage.durable import BUFFERED, JOURNALED, REJECTED, REPLAYED, DurableWriter
from topicstreams.storage.journal import Journal, JournalInUse, decode, encode, pending_files
from topicstreams.storage.writer import NewsWriter


def item(n: int, engine: str = "google", topic: str = "climate", url: str | None = None) -> dict:
    url = url or f"https://news.example/{n}"
    return {
        "news_id": news_id(url),
        "url": url,
        "title": f"Story {n}",
        "source": "Example",
        "snippet": "…",
        "published_at": datetime(2026, 11, 30, 12, n % 60, tzinfo=UTC),
        "topic": topic,
        "engine": engine,
    }


def urls(path: Path) -> list[str]:
    with sqlite3.connect(path) as conn:
        return [url for (url,) in conn.execute("select url from news order by first_seen_at, url")]


def count(path: Path, table: str = "news") -> int:
    with sqlite3.connect(path) as conn:
        return conn.execute(f"select count(*) from {table}").fetchone()[0]


def eventually(check, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "not within the timeout"
        time.sleep(0.02)


class Locked:
    """Another process's write lock on an SQLite file (``BEGIN EXCLUSIVE``), until released."""

    def __init__(self, path: Path) -> None:
        self.conn = sqlite3.connect(path, isolation_level=None)
        self.conn.execute("BEGIN EXCLUSIVE")

    def release(self) -> None:
        self.conn.execute("COMMIT")
        self.conn.close()


@pytest.fixture
def database(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A migrated SQLite file whose connections give up on a lock after 0.1 s (not 30 s)."""
    monkeypatch.setattr(db_module, "SQLITE_BUSY_TIMEOUT_MS", 100)
    path = tmp_path / "store.db"
    upgrade(f"sqlite:///{path}")
    return path


class Stats(Counter):
    def inc(self, key: str, count: int) -> None:
        self[key] += count


def durable(databases, path: Path, journal: Path, stats: Stats, **options) -> DurableWriter:
    url = f"sqlite:///{path}"
    options = {"batch_size": 3, "buffer_items": 1000, "backoff": Backoff(0.05, 0.2), **options}
    return DurableWriter(
        NewsWriter(databases.of(url)), Journal(journal), Availability(url), name="google", inc=stats.inc, **options
    )


# ---- the journal --------------------------------------------------------------------------------------------
def test_the_journal_keeps_items_as_they_were_and_reads_them_from_its_offset(tmp_path):
    path = tmp_path / "journal" / "google.jsonl"
    with Journal(path) as journal:
        assert journal.append([item(1), item(2), item(3)]) == 3
        first, end = journal.read(2)
        assert first == [item(1), item(2)]
        journal.advance(end, 2)
        assert journal.append([item(4)]) == 1
        rest, end = journal.read(10)
        assert rest == [item(3), item(4)]
        journal.advance(end, 2)
        assert not journal.unread and journal.unread_items == 0
        journal.clear()
    assert path.read_bytes() == b""


def test_a_line_cut_short_by_a_crash_is_dropped_and_the_journal_goes_on(tmp_path, caplog):
    path = tmp_path / "google.jsonl"
    path.write_bytes(encode(item(1)) + encode(item(2))[:25])
    caplog.set_level(logging.WARNING)
    with Journal(path) as journal:
        assert journal.unread_items == 1
        journal.append([item(3)])
        items, _ = journal.read(10)
    assert items == [item(1), item(3)]
    assert any("cut short" in message for message in caplog.messages)


def test_a_journal_is_held_by_one_process_at_a_time(tmp_path):
    path = tmp_path / "google.jsonl"
    with Journal(path), pytest.raises(JournalInUse, match="held by another process"):
        Journal(path).open()
    with Journal(path):  # released on close
        pass


def test_scraped_text_round_trips_whatever_it_holds(tmp_path):
    hostile = {**item(1), "title": 'quote " backslash \\ newline \n nul-free ünïcödé 💥', "source": None}
    assert decode(encode(hostile).rstrip(b"\n")) == hostile


# ---- the writer through a locked database ---------------------------------------------------------------
def test_a_locked_database_keeps_every_batch_in_the_journal_and_writes_them_in_order_once_free(
    database, tmp_path, caplog, databases
):
    caplog.set_level(logging.INFO)
    stats = Stats()
    writer = durable(databases, database, tmp_path / "google.jsonl", stats)
    writer.open()
    writer.submit([item(1), item(2)])
    eventually(lambda: count(database) == 2)
    lock = Locked(database)
    writer.submit([item(3), item(4)])
    eventually(lambda: stats[JOURNALED] == 2)  # the failed batch went to disk
    writer.submit([item(5)])  # while away: straight to the journal
    assert stats[JOURNALED] == 3 and stats[BUFFERED] == 3
    assert [json.loads(line)["url"] for line in (tmp_path / "google.jsonl").read_text().splitlines()] == [
        item(n)["url"] for n in (3, 4, 5)
    ]
    assert count(database) == 2
    lock.release()
    eventually(lambda: count(database) == 5)
    eventually(lambda: writer.pending == 0)
    assert writer.close() == 0
    assert stats[REPLAYED] == 3 and stats[REJECTED] == 0
    assert (tmp_path / "google.jsonl").read_bytes() == b""
    away = [r for r in caplog.records if "cannot be written" in r.getMessage()]
    back = [r for r in caplog.records if "is back after" in r.getMessage()]
    assert len(away) == 1 and away[0].levelno == logging.WARNING and "database is locked" in away[0].getMessage()
    assert len(back) == 1 and back[0].levelno == logging.INFO and "3 items" in back[0].getMessage()


def test_more_than_the_buffer_waiting_goes_to_the_journal_and_memory_stays_bounded(
    database, tmp_path, caplog, monkeypatch, databases
):
    monkeypatch.setattr(db_module, "SQLITE_BUSY_TIMEOUT_MS", 3000)  # a slow database: waits, then takes it
    databases.dispose()  # new connections, with that timeout
    caplog.set_level(logging.WARNING)
    stats = Stats()
    writer = durable(databases, database, tmp_path / "google.jsonl", stats, buffer_items=4)
    writer.open()
    lock = Locked(database)
    writer.submit([item(1), item(2)])  # taken by the thread: waits for the lock
    time.sleep(0.2)
    writer.submit([item(3), item(4)])
    writer.submit([item(5), item(6)])  # 4 wait in memory: the limit
    writer.submit([item(7)])  # past it
    assert stats[JOURNALED] == 5 and stats[BUFFERED] == 0  # nothing failed: the queue moved to disk, in order
    assert any("TOPICSTREAMS_STORE_BUFFER_ITEMS" in message for message in caplog.messages)
    lock.release()
    eventually(lambda: count(database) == 7)
    writer.close()
    assert urls(database) == [item(n)["url"] for n in range(1, 8)]


def test_closing_while_the_database_is_away_leaves_the_journal_for_the_next_start(
    database, tmp_path, caplog, databases
):
    caplog.set_level(logging.INFO)
    stats = Stats()
    journal = tmp_path / "google.jsonl"
    writer = durable(databases, database, journal, stats)
    writer.open()
    lock = Locked(database)
    writer.submit([item(1), item(2)])
    eventually(lambda: stats[JOURNALED] == 2)
    writer.submit([item(3)])
    assert writer.close() == 3
    assert any("3 item(s) wait in the journal" in message for message in caplog.messages)
    lock.release()
    assert count(database) == 0 and pending_files(tmp_path) == [(journal, 3)]

    again = Stats()
    restarted = durable(databases, database, journal, again)
    lock = Locked(database)  # held until item 4 is in: a fast replay must not be done before it comes
    restarted.open()
    restarted.submit([item(4)])  # behind what the earlier run left
    lock.release()
    eventually(lambda: count(database) == 4)
    restarted.close()
    assert urls(database) == [item(n)["url"] for n in (1, 2, 3, 4)]
    assert again[REPLAYED] == 4 and journal.read_bytes() == b""  # the new batch went through the journal too
    assert any("left in the journal" in message for message in caplog.messages)


def test_an_item_the_database_refuses_for_good_is_set_aside_and_the_rest_is_written(
    database, tmp_path, caplog, databases
):
    with sqlite3.connect(database) as conn:
        conn.execute(
            "CREATE TRIGGER refuse BEFORE INSERT ON news WHEN NEW.url LIKE '%refused%' "
            "BEGIN SELECT RAISE(ABORT, 'this article is refused'); END"
        )
    caplog.set_level(logging.ERROR)
    stats = Stats()
    journal = tmp_path / "google.jsonl"
    writer = durable(databases, database, journal, stats, batch_size=10)
    writer.open()
    bad = item(3, url="https://news.example/refused")
    writer.submit([item(1), item(2), bad, item(4), item(5)])
    writer.submit([item(6), item(7, url="https://news.example/refused-too")])
    eventually(lambda: count(database) == 5)
    writer.close()
    assert stats[REJECTED] == 2 and stats[JOURNALED] == 0
    rejects = [json.loads(line) for line in (tmp_path / "google.rejected.jsonl").read_text().splitlines()]
    assert [(reject["url"], "this article is refused" in reject["reason"]) for reject in rejects] == [
        (bad["url"], True),
        ("https://news.example/refused-too", True),
    ]
    errors = [r.getMessage() for r in caplog.records if r.levelno == logging.ERROR]
    assert len(errors) == 1 and "refused 1 item(s) for good" in errors[0]  # logged once

    # After a fix, the reject file is tried again by hand: written, and emptied.
    with sqlite3.connect(database) as conn:
        conn.execute("DROP TRIGGER refuse")
    done = replay_file(NewsWriter(databases.of(f"sqlite:///{database}")), tmp_path / "google.rejected.jsonl")
    assert (done.items, done.rejected) == (2, 0)
    assert count(database) == 7 and (tmp_path / "google.rejected.jsonl").read_bytes() == b""


def test_replaying_a_journal_by_hand_writes_it_once_and_empties_it(database, tmp_path, databases):
    path = tmp_path / "bing.jsonl"
    with Journal(path) as journal:
        journal.append([item(n, engine="bing") for n in range(5)])
        journal.append([item(0, engine="bing")])  # journaled twice (a crash between a write and the clearing)
    writer = NewsWriter(databases.of(f"sqlite:///{database}"))
    done = replay_file(writer, path, batch_size=2)
    assert (done.items, done.result.new_news.total(), done.rejected) == (6, 5, 0)
    assert path.read_bytes() == b"" and count(database, "topic_news_engines") == 5
    assert replay_file(writer, path).items == 0


def test_an_unreadable_line_is_set_aside_not_retried(database, tmp_path, databases):
    path = tmp_path / "google.jsonl"
    path.write_bytes(encode(item(1)) + b"{not json\n" + encode(item(2)))
    done = replay_file(NewsWriter(databases.of(f"sqlite:///{database}")), path)
    assert (done.items, done.rejected) == (3, 1) and count(database) == 2
    [reject] = (tmp_path / "google.rejected.jsonl").read_text().splitlines()
    assert json.loads(reject)["line"] == "{not json" and "unreadable" in json.loads(reject)["reason"]


def test_an_outage_is_over_for_the_process_when_the_writers_behind_caught_up_or_left(caplog):
    caplog.set_level(logging.INFO)
    outage = Availability("sqlite:////nowhere/news.db")
    outage.went_away("google", "OperationalError: disk I/O error", "3 item(s) of google in the journal")
    outage.went_away("bing", "OperationalError: disk I/O error", "1 item(s) of bing in the journal")
    assert outage.away
    outage.unregister("google")  # its crawl ended: what it kept waits in its journal for the next start
    assert outage.away
    outage.caught_up("bing", Counter({"items": 1}))
    assert not outage.away
    assert [r.levelname for r in caplog.records if "cannot be written" in r.getMessage()] == ["WARNING"]
    [back] = [r.getMessage() for r in caplog.records if "is back after" in r.getMessage()]
    assert back.endswith("(1 items)")

    outage.went_away("google", "OperationalError: disk I/O error", "2 item(s) of google in the journal")
    outage.unregister("google")  # the only one behind left: nobody is left to see it back
    assert not outage.away


def test_the_backoff_stays_at_its_maximum_however_long_the_failures_go_on():
    backoff = Backoff(0.05, 0.1)
    assert [backoff.next_delay() for _ in range(3)] == [0.05, 0.1, 0.1]
    backoff.failures = 5000  # a write refused every 0.1 s for over eight minutes: no overflow, the same delay
    assert backoff.next_delay() == 0.1
    backoff.reset()
    assert backoff.next_delay() == 0.05
