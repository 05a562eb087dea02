"""The durable store on a full disk: the journal on a real small tmpfs that fills up, the database a real SQLite file
another connection locks. Nothing is lost without a word: the engine is held while nothing can keep its items, goes
on by itself once the journal or the database takes them, and what a closing crawl cannot keep is counted, recorded
and reported; the store's loops live through errors."""

from __future__ import annotations

import asyncio
import errno
import logging
import sqlite3
from collections import Counter
from pathlib import Path

import pytest
from sqlalchemy import create_engine

from tests.support.small_disk import fill, free, small_disk
from tests.unit.test_durable_store import Locked, Stats, count, durable, eventually, item, urls
from tests.unit.test_store_pipeline import make_pipeline, news_item
from topicstreams.health.saturation import SaturationPolicy
from topicstreams.reports.health_report import build_report
from topicstreams.storage import db as db_module
from topicstreams.storage import upgrade
from topicstreams.storage.availability import Availability
from topicstreams.storage.durable import LOST
from topicstreams.storage.journal import Journal, Unreadable, encode
from topicstreams.storage.store_losses import lost_path, recent_losses


@pytest.fixture
def database(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A migrated SQLite file whose connections give up on a lock after 0.1 s."""
    monkeypatch.setattr(db_module, "SQLITE_BUSY_TIMEOUT_MS", 100)
    path = tmp_path / "store.db"
    upgrade(f"sqlite:///{path}")
    return path


@pytest.fixture
def disk(tmp_path: Path):
    """A 64 KiB tmpfs for the journal."""
    with small_disk(tmp_path / "disk", 64) as folder:
        yield folder


def messages(caplog: pytest.LogCaptureFixture, level: int) -> list[str]:
    return [record.getMessage() for record in caplog.records if record.levelno == level]


# ---- the journal ----------------------------------------------------------------------------------------------
def test_an_append_the_disk_cannot_take_is_cut_off_and_the_journal_keeps_whole_lines(disk, caplog):
    path = disk / "google.jsonl"
    caplog.set_level(logging.WARNING)
    with Journal(path) as journal:
        journal.append([item(1)])
        fill(disk)
        with pytest.raises(OSError) as raised:
            for start in range(2, 2000, 20):  # the last page of the file takes a few batches, then none
                journal.append([item(n) for n in range(start, start + 20)])
        assert raised.value.errno == errno.ENOSPC
        appended = journal.unread_items
        assert path.stat().st_size == journal.size  # nothing of the failed append is left
        items, _ = journal.read(10_000)
        assert len(items) == appended and not any(isinstance(each, Unreadable) for each in items)
    with Journal(path) as again:
        assert again.unread_items == appended
    assert not any("cut short" in message for message in caplog.messages)


def test_a_torn_last_line_found_at_open_says_what_it_cannot_know(tmp_path, caplog):
    path = tmp_path / "google.jsonl"
    path.write_bytes(encode(item(1)) + encode(item(2))[:25])
    caplog.set_level(logging.WARNING)
    with Journal(path) as journal:
        assert journal.unread_items == 1
    [warning] = messages(caplog, logging.WARNING)
    assert "an append that did not finish (the process stopped, or the disk was full)" in warning


# ---- the writer: held, released, lost ---------------------------------------------------------------------------
def held_writer(databases, database, disk, stats, holds, caplog, **options):
    """A writer whose journal's disk is full and whose database is locked, holding 10 items in memory alone."""
    caplog.set_level(logging.INFO)
    writer = durable(databases, database, disk / "google.jsonl", stats, on_hold=holds.append, **options)
    writer.open()
    writer.submit([item(1), item(2)])
    eventually(lambda: count(database) == 2)
    fill(disk)
    lock = Locked(database)
    writer.submit([item(n) for n in range(3, 13)])  # the database fails it, the journal cannot take it
    eventually(lambda: holds and holds[-1] is not None)
    return writer, lock


def test_a_full_journal_disk_holds_the_engine_until_the_database_takes_items_again(database, disk, caplog, databases):
    stats, holds = Stats(), []
    writer, lock = held_writer(databases, database, disk, stats, holds, caplog)
    writer.submit([item(13)])  # behind them, in memory
    assert writer.in_memory_alone == 11 and writer.pending == 11
    assert "No space left on device" in holds[-1] and str(disk / "google.jsonl") in holds[-1]
    [error] = messages(caplog, logging.ERROR)
    assert str(disk / "google.jsonl") in error and "No space left on device" in error
    assert "10 item(s) wait in memory alone" in error and "takes no new topic" in error
    [away] = [message for message in messages(caplog, logging.WARNING) if "cannot be written" in message]
    assert "nothing is lost" not in away and "in memory alone" in away and "lost if the process stops" in away

    lock.release()
    eventually(lambda: count(database) == 13)
    eventually(lambda: holds[-1] is None)
    assert any("the database takes items again" in message for message in messages(caplog, logging.INFO))
    assert writer.close() == 0 and writer.lost == 0
    assert sorted(urls(database)) == sorted(item(n)["url"] for n in range(1, 14))
    assert holds.count(None) == 1 and len(messages(caplog, logging.ERROR)) == 1


def test_a_freed_journal_disk_takes_what_waited_in_memory_and_releases_the_engine(database, disk, caplog, databases):
    stats, holds = Stats(), []
    writer, lock = held_writer(databases, database, disk, stats, holds, caplog)
    free(disk)
    eventually(lambda: holds[-1] is None)  # the thread tries the journal again within retry_max (0.2 s)
    assert writer.in_memory_alone == 0 and stats["topicstreams/store/journaled"] == 10
    assert any("takes items again: what waited in memory is kept in it" in m for m in messages(caplog, logging.INFO))
    lock.release()
    eventually(lambda: count(database) == 12)
    assert writer.close() == 0 and writer.lost == 0
    assert (disk / "google.jsonl").read_bytes() == b""


def test_closing_while_held_counts_what_neither_took_as_lost(database, disk, caplog, databases):
    stats, holds = Stats(), []
    writer, lock = held_writer(databases, database, disk, stats, holds, caplog)
    try:
        assert writer.close() == 0
    finally:
        lock.release()
    assert writer.lost == 10
    assert "No space left on device" in writer.lost_why and "database is locked" in writer.lost_why
    assert count(database) == 2


def test_the_writing_thread_lives_through_an_error_it_did_not_expect(database, tmp_path, caplog, databases):
    caplog.set_level(logging.ERROR)
    calls = []

    def on_written(result):
        calls.append(result)
        if len(calls) == 1:
            raise RuntimeError("a listener's bug")

    writer = durable(databases, database, tmp_path / "google.jsonl", Stats(), on_written=on_written)
    writer.open()
    writer.submit([item(1)])
    eventually(lambda: calls)
    writer.submit([item(2)])
    writer.submit([item(3)])
    eventually(lambda: count(database) == 3 and len(calls) == 3)
    writer.close()
    [error] = messages(caplog, logging.ERROR)
    assert "did not expect" in error and "goes on" in error


# ---- the outage's words -----------------------------------------------------------------------------------------
def test_an_outage_lasts_from_its_first_failure_to_the_first_write_that_passed(caplog):
    caplog.set_level(logging.INFO)
    now = [100.0]
    outage = Availability("sqlite:////nowhere/news.db", clock=lambda: now[0])
    outage.went_away("google", "OperationalError: database is locked", "3 item(s) of google in the journal")
    now[0] = 103.0
    outage.went_away("google", "OperationalError: database is locked", "4 item(s) of google in the journal")
    now[0] = 115.0
    outage.passed()  # the first write that passed: the outage is over
    now[0] = 140.0  # catching up took long: not the outage's time
    outage.caught_up("google", Counter({"items": 4}))
    [back] = [message for message in caplog.messages if "is back after" in message]
    assert "back after 15.0 s away (from the first write that failed, at" in back

    outage.went_away("bing", "OperationalError: x", "1 item(s) of bing in the journal", at_risk=True)
    assert "nothing is lost" not in caplog.messages[-1] and "lost if the process stops" in caplog.messages[-1]
    outage.unregister("bing", lost=3)  # its crawl ended with 3 items it could not keep
    outage.went_away("outbox", "OperationalError: x", "1 write(s) of health rows kept in memory")
    assert "nothing is lost" not in caplog.messages[-1] and "3 item(s) of this process were lost" in caplog.messages[-1]


# ---- the pipeline --------------------------------------------------------------------------------------------------
def test_the_periodic_flush_goes_on_after_an_error(tmp_path, caplog):
    db = tmp_path / "db" / "store.db"
    pipeline, _ = make_pipeline(db, TOPICSTREAMS_STORE_FLUSH_SECONDS=0.05)
    seen: list[int] = []

    async def crawl() -> None:
        pipeline.open_spider()
        submit, failures = pipeline.store.submit, []

        def failing_once(batch):  # a fault no real part of this test can make: the store refusing a batch once
            if not failures:
                failures.append(batch)
                raise OSError(errno.EIO, "Input/output error")
            submit(batch)

        pipeline.store.submit = failing_once
        pipeline.process_item(news_item(1))
        await asyncio.sleep(0.3)  # the first flush fails; the next ones go on: the item waits no longer
        seen.append(sqlite3.connect(db).execute("select count(*) from news").fetchone()[0])
        pipeline.process_item(news_item(2))
        await asyncio.sleep(0.3)
        seen.append(sqlite3.connect(db).execute("select count(*) from news").fetchone()[0])
        await pipeline.close_spider()

    caplog.set_level(logging.ERROR)
    asyncio.run(crawl())
    assert seen == [1, 2]
    [error] = messages(caplog, logging.ERROR)
    assert "periodic flush failed" in error and "goes on" in error


def test_a_loss_is_counted_kept_beside_the_journal_recorded_at_the_next_start_and_reported_by_health(
    tmp_path, caplog, monkeypatch
):
    monkeypatch.setattr(db_module, "SQLITE_BUSY_TIMEOUT_MS", 100)
    db = tmp_path / "db" / "store.db"
    settings = {
        "TOPICSTREAMS_STORE_BATCH_SIZE": 5,
        "TOPICSTREAMS_STORE_FLUSH_SECONDS": 0,
        "TOPICSTREAMS_STORE_RETRY_INITIAL": 0.05,
        "TOPICSTREAMS_STORE_RETRY_MAX": 0.1,
        "TOPICSTREAMS_STORE_CLOSE_TIMEOUT": 1,
    }
    caplog.set_level(logging.WARNING)
    with small_disk(tmp_path / "db" / "journal", 64) as journal_dir:
        pipeline, stats = make_pipeline(db, **settings)
        upgrade(f"sqlite:///{db}")
        pipeline.losses.node = "node-a"

        async def crawl() -> None:
            pipeline.open_spider()  # reserves the room of a loss in its file beside the journal
            fill(journal_dir)
            lock = Locked(db)
            try:
                for n in range(5):
                    pipeline.process_item(news_item(n))
                eventually(lambda: pipeline.store.in_memory_alone == 5)
                await pipeline.close_spider()
            finally:
                lock.release()

        asyncio.run(crawl())
        assert stats.get_value(LOST) == 5
        [error] = [message for message in messages(caplog, logging.ERROR) if "item(s) lost" in message]
        assert "5 item(s) lost" in error and "No space left on device" in error
        assert f"kept in {lost_path(journal_dir, 'news')}" in error  # the database was locked: beside the journal
        assert count(db) == 0

        caplog.clear()
        again, _ = make_pipeline(db, **settings)
        again.open_spider()  # records the loss the earlier run kept
        asyncio.run(again.close_spider())
    assert any("recorded 5 item(s) an earlier run lost" in message for message in caplog.messages)
    engine = create_engine(f"sqlite:///{db}")
    try:
        lost = recent_losses(engine, db_module.utcnow())
        assert lost["node-a"].items == 5 and lost["node-a"].last_at is not None
        report = build_report(engine, node="node-a", enabled=["google"], policy=SaturationPolicy(frozenset(), 2))
        assert report.as_json()["lost"]["items"] == 5 and report.as_json()["lost"]["last_at"].endswith("Z")
        assert "lost: 5 item(s) in the last 7 days" in report.as_table()
        quiet = build_report(engine, node="node-b", enabled=["google"], policy=SaturationPolicy(frozenset(), 2))
        assert quiet.as_json()["lost"] == {"items": 0, "last_at": None}
        assert "lost" not in quiet.as_table()
    finally:
        engine.dispose()


def test_crawl_and_crawlall_exit_non_zero_naming_what_each_engine_lost(capsys):
    from types import SimpleNamespace

    from topicstreams.cli.configured import LOST_EXIT, exit_on_losses

    def crawler(name: str, lost: int | None) -> SimpleNamespace:
        stats = {} if lost is None else {LOST: lost}
        return SimpleNamespace(spidercls=SimpleNamespace(name=name), stats=SimpleNamespace(get_value=stats.get))

    command = SimpleNamespace(exitcode=0)
    command.started_crawlers = [crawler("google", None), crawler("bing", 7), crawler("brave", 2)]
    exit_on_losses(command)
    assert command.exitcode == LOST_EXIT != 0
    assert capsys.readouterr().err.startswith("items lost: 7 of bing, 2 of brave, neither stored nor journaled")

    clean = SimpleNamespace(exitcode=0)
    clean.started_crawlers = [crawler("google", None)]
    exit_on_losses(clean)
    assert clean.exitcode == 0 and capsys.readouterr().err == ""
