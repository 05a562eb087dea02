"""Cycle accounting without a browser: the window arithmetic and the counter diffs (pure), the SQL on a real SQLite
file, and the extension driven by hand on a real crawler — its clock replaced, its stats counted by the test, its
rows and INFO lines read back. The real crawl is in test_cycles_crawl.py."""

from __future__ import annotations

import asyncio
import logging
import sqlite3
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from scrapy.exceptions import NotConfigured
from sqlalchemy import insert, select

from tests.support.crawler import make_crawler
from topicstreams.crawl.runtime import Runtime
from topicstreams.extensions.cycle_accounting import (
    COUNTERS,
    CounterDiffs,
    CyclesExtension,
    CycleWindows,
    Span,
    tick_every,
)
from topicstreams.spiders.google import GoogleSpider
from topicstreams.storage import db as db_module
from topicstreams.storage import upgrade
from topicstreams.storage.models import health_windows_table, scraper_cycles_table
from topicstreams.storage.scraper_cycles import purge_older_than, save_cycle

T0 = 1_700_000_001.5
"""An open time 1.5 s past a boundary of 60 s (1_700_000_040 is 28_333_334 × 60)."""
B1 = 1_700_000_040.0
"""The first boundary after T0, for an interval of 60 s."""


def utc(seconds: float) -> datetime:
    return datetime.fromtimestamp(seconds, UTC)


# ---- the windows ------------------------------------------------------------------------------------------
def test_the_first_window_starts_at_the_open_time_and_ends_on_the_next_boundary():
    windows = CycleWindows(60, T0)
    assert windows.start == T0 and windows.end == B1
    assert windows.due(B1 - 0.001) is None
    assert windows.due(B1) == Span(T0, B1, 1)
    assert (windows.start, windows.end) == (B1, B1 + 60)


def test_windows_after_the_first_are_whole_aligned_and_consecutive():
    windows = CycleWindows(60, T0)
    closed = [
        window
        for now in (B1 + 0.4, B1 + 30, B1 + 60.7, B1 + 61, B1 + 120.2, B1 + 179.99, B1 + 180.01)
        if (window := windows.due(now)) is not None
    ]
    assert closed == [Span(T0, B1), Span(B1, B1 + 60), Span(B1 + 60, B1 + 120), Span(B1 + 120, B1 + 180)]
    assert all(later.start == earlier.end for earlier, later in zip(closed, closed[1:], strict=False))
    assert all(w.end % 60 == 0 and w.end - w.start == 60 for w in closed[1:])


def test_several_boundaries_passed_at_once_close_one_window_covering_them_all():
    windows = CycleWindows(60, T0)
    assert windows.due(B1 + 1) == Span(T0, B1, 1)
    assert windows.due(B1 + 3 * 60 + 5) == Span(B1, B1 + 180, 3)  # asleep across three boundaries
    assert windows.due(B1 + 239) is None
    assert windows.due(B1 + 241) == Span(B1 + 180, B1 + 240, 1)  # and on as usual, still aligned


def test_the_last_window_ends_at_the_close_and_never_before_its_start():
    windows = CycleWindows(60, T0)
    assert windows.last(T0 + 20) == Span(T0, T0 + 20, 0)  # a run shorter than a window: one window
    windows = CycleWindows(60, T0)
    windows.due(B1 + 2)
    assert windows.last(B1 + 30.25) == Span(B1, B1 + 30.25, 0)
    windows = CycleWindows(60, T0)
    assert windows.last(T0 - 5) == Span(T0, T0, 0)  # the clock went back


def test_an_open_time_on_a_boundary_gets_a_whole_first_window_and_small_intervals_stay_aligned():
    windows = CycleWindows(60, B1)
    assert (windows.start, windows.end) == (B1, B1 + 60)
    windows = CycleWindows(0.1, 100.05)
    ends = [window.end for now in (100.1, 100.2, 100.3) if (window := windows.due(now + 1e-9)) is not None]
    assert ends == pytest.approx([100.1, 100.2, 100.3])
    with pytest.raises(ValueError):
        CycleWindows(0, T0)


def test_the_clock_is_looked_at_at_least_four_times_a_window_and_at_least_every_second():
    assert tick_every(60) == 1.0 and tick_every(3) == 0.75 and tick_every(0.2) == 0.05


# ---- the counters -----------------------------------------------------------------------------------------
def test_counter_diffs_are_the_growth_since_the_previous_reading_and_absent_counters_are_zero():
    diffs = CounterDiffs(["topics_swept", "items_scraped", "new_events"])
    assert diffs.take({}) == {"topics_swept": 0, "items_scraped": 0, "new_events": 0}
    assert diffs.take({"topics_swept": 3, "items_scraped": 30}) == {
        "topics_swept": 3,
        "items_scraped": 30,
        "new_events": 0,
    }
    assert diffs.take({"topics_swept": 5, "items_scraped": 30, "new_events": 12, "other": 9}) == {
        "topics_swept": 2,
        "items_scraped": 0,
        "new_events": 12,
    }
    assert diffs.take({"topics_swept": 5, "items_scraped": 30, "new_events": 12}) == dict.fromkeys(
        ["topics_swept", "items_scraped", "new_events"], 0
    )


def test_counter_diffs_add_up_to_the_last_reading():
    diffs = CounterDiffs(["requests"])
    readings = [0, 4, 4, 9, 17, 17, 30]
    assert sum(diffs.take({"requests": value})["requests"] for value in readings) == 30


# ---- the SQL ----------------------------------------------------------------------------------------------
def database(databases, tmp_path: Path):
    url = f"sqlite:///{tmp_path}/x.db"
    upgrade(url)
    return databases.of(url)


def cycle_row(end: datetime, engine: str = "google", **counts) -> dict:
    return {"engine": engine, "node": "n1", "window_start": end - timedelta(minutes=1), "window_end": end, **counts}


def health_row(end: datetime) -> dict:
    return {"engine": "google", "node": "n1", "window_start": end - timedelta(minutes=5), "window_end": end}


def cycle_rows(db) -> list[dict]:
    with db.connect() as conn:
        return [
            dict(row._mapping) for row in conn.execute(select(scraper_cycles_table).order_by(scraper_cycles_table.c.id))
        ]


def test_save_cycle_keeps_every_column_and_defaults_the_counts_to_zero(tmp_path, databases):
    db = database(databases, tmp_path)
    end = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
    save_cycle(
        db,
        **cycle_row(
            end,
            topics_count=50,
            entries=312,
            new_events=47,
            requests=55,
            ok=50,
            hard_blocks=1,
            challenges=2,
            soft_blocks=1,
            errors=1,
            cooldowns=3,
        ),
    )
    save_cycle(db, **cycle_row(end + timedelta(minutes=1), engine="bing"))
    first, second = cycle_rows(db)
    assert first == {
        "id": first["id"],
        "engine": "google",
        "node": "n1",
        "window_start": end - timedelta(minutes=1),
        "window_end": end,
        "topics_count": 50,
        "entries": 312,
        "new_events": 47,
        "requests": 55,
        "ok": 50,
        "hard_blocks": 1,
        "challenges": 2,
        "soft_blocks": 1,
        "errors": 1,
        "cooldowns": 3,
    }
    assert second["engine"] == "bing" and all(second[column] == 0 for column in COUNTERS)
    assert second["window_end"].tzinfo is not None


def test_purge_deletes_what_ended_before_the_cutoff_from_both_tables_once(tmp_path, databases):
    db = database(databases, tmp_path)
    now = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
    cutoff = now - timedelta(days=30)
    for end in (cutoff - timedelta(days=3), cutoff - timedelta(seconds=1), cutoff, now):
        save_cycle(db, **cycle_row(end))
    with db.begin() as conn:
        conn.execute(insert(health_windows_table), [health_row(cutoff - timedelta(days=1)), health_row(now)])
        # a cycle row without an end goes by its start
        conn.execute(
            insert(scraper_cycles_table).values(
                engine="google", node="n1", window_end=None, window_start=cutoff - timedelta(hours=1)
            )
        )
        conn.execute(insert(scraper_cycles_table).values(engine="google", node="n1", window_end=None, window_start=now))
    assert purge_older_than(db, cutoff) == {"scraper_cycles": 3, "health_windows": 1}
    assert purge_older_than(db, cutoff) == {"scraper_cycles": 0, "health_windows": 0}  # idempotent
    assert [row["window_end"] for row in cycle_rows(db)] == [cutoff, now, None]
    with db.connect() as conn:
        assert list(conn.execute(select(health_windows_table.c.window_end)).scalars()) == [now]


# ---- the extension ----------------------------------------------------------------------------------------
class Clock:
    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


class Driven:
    """An extension on its crawler, its clock the test's; the stats counted by hand as the crawl counts them."""

    def __init__(self, crawler, clock=None, retention_days=None) -> None:
        self.crawler = crawler
        self.extension = CyclesExtension.from_crawler(crawler)
        if retention_days is not None:  # the extension's own value, which no configuration gives (days > 0)
            self.extension.retention_days = retention_days
        self.clock = self.extension.clock = clock or Clock(T0)

    def count(self, **counts: int) -> None:
        for name, value in counts.items():
            self.crawler.stats.inc_value(f"topicstreams/google/{name}", value)

    def at(self, now: float) -> None:
        """Time moves on to ``now`` and the looping call looks."""
        self.clock.now = now
        self.extension.tick()

    @property
    def url(self) -> str:
        return self.crawler.settings.get("TOPICSTREAMS_DATABASE_URL")

    @property
    def db(self):
        return Runtime.of(self.crawler).database(self.url)

    def rows(self) -> list[dict]:
        """The rows, once the extension's writes are taken (they are written off the event loop)."""
        assert Runtime.of(self.crawler).outbox(self.url).flush()
        return cycle_rows(self.db)


def run(crawler, body, clock=None, retention_days=None) -> Driven:
    """Open the extension (at T0 by default), run ``body(driven)`` (it may be a coroutine function), close it."""
    driven = Driven(crawler, clock, retention_days)

    async def main():
        crawler.stats.open_spider()
        driven.extension.spider_opened(None)
        try:
            result = body(driven)
            if asyncio.iscoroutine(result):
                await result
        finally:
            await driven.extension.spider_closed(None, "finished")

    asyncio.run(main())
    return driven


def lines(caplog) -> list[str]:
    return [
        record.getMessage()
        for record in caplog.records
        if record.name == "topicstreams.extensions.cycle_accounting" and "swept" in record.getMessage()
    ]


def test_it_follows_the_engine_spiders_only_and_can_be_turned_off(tmp_path):
    class Other(GoogleSpider):
        name = "other"

    with pytest.raises(NotConfigured):
        CyclesExtension.from_crawler(make_crawler(tmp_path, spidercls=Other))
    with pytest.raises(NotConfigured):
        CyclesExtension.from_crawler(make_crawler(tmp_path, TOPICSTREAMS_CYCLES_ENABLED=False))
    with pytest.raises(NotConfigured):
        CyclesExtension.from_crawler(make_crawler(tmp_path, TOPICSTREAMS_DATABASE_URL=""))
    extension = CyclesExtension.from_crawler(make_crawler(tmp_path, interval=45, retention_days=7))
    assert (extension.engine, extension.node, extension.interval, extension.retention_days) == ("google", "n1", 45, 7)


def test_one_row_and_one_line_per_window_with_the_windows_differences(tmp_path, caplog):
    caplog.set_level(logging.INFO, logger="topicstreams.extensions.cycle_accounting")

    def body(driven: Driven):
        driven.count(
            topics_swept=50,
            items_scraped=312,
            new_events=47,
            requests=55,
            ok=50,
            hard_blocks=1,
            challenges=2,
            soft_blocks=1,
            errors=1,
            cooldowns=3,
        )
        driven.at(B1 - 0.5)
        assert driven.rows() == []  # not over yet
        driven.at(B1 + 0.3)
        driven.count(topics_swept=1, items_scraped=10, new_events=1, requests=1, ok=1)
        driven.at(B1 + 30)
        driven.at(B1 + 60.9)
        driven.at(B1 + 119.5)  # nothing counted in this window: a row of zeros all the same
        driven.at(B1 + 120.1)
        driven.count(items_scraped=4, new_events=2)  # the final flush, before spider_closed
        driven.clock.now = B1 + 131.25

    driven = run(make_crawler(tmp_path), body)
    rows = driven.rows()
    assert [(row["window_start"], row["window_end"]) for row in rows] == [
        (utc(T0), utc(B1)),
        (utc(B1), utc(B1 + 60)),
        (utc(B1 + 60), utc(B1 + 120)),
        (utc(B1 + 120), utc(B1 + 131.25)),
    ]
    assert {(row["engine"], row["node"]) for row in rows} == {("google", "n1")}
    assert [{column: row[column] for column in COUNTERS} for row in rows] == [
        {
            "topics_count": 50,
            "entries": 312,
            "new_events": 47,
            "requests": 55,
            "ok": 50,
            "hard_blocks": 1,
            "challenges": 2,
            "soft_blocks": 1,
            "errors": 1,
            "cooldowns": 3,
        },
        {
            "topics_count": 1,
            "entries": 10,
            "new_events": 1,
            "requests": 1,
            "ok": 1,
            "hard_blocks": 0,
            "challenges": 0,
            "soft_blocks": 0,
            "errors": 0,
            "cooldowns": 0,
        },
        dict.fromkeys(COUNTERS, 0),
        {**dict.fromkeys(COUNTERS, 0), "entries": 4, "new_events": 2},
    ]
    assert lines(caplog) == [
        "[google] swept 50 topics, 312 entries, 47 new events",
        "[google] swept 1 topic, 10 entries, 1 new event",
        "[google] swept 0 topics, 0 entries, 0 new events",
        "[google] swept 0 topics, 4 entries, 2 new events",
    ]
    assert all(record.levelno == logging.INFO for record in caplog.records if "swept" in record.getMessage())


def test_a_run_shorter_than_a_window_writes_one_row_from_open_to_close(tmp_path, caplog):
    caplog.set_level(logging.INFO, logger="topicstreams.extensions.cycle_accounting")

    def body(driven: Driven):
        driven.count(topics_swept=3, items_scraped=30, new_events=30, requests=3, ok=3)
        driven.at(T0 + 10)
        driven.clock.now = T0 + 12

    rows = run(make_crawler(tmp_path), body).rows()
    assert [(row["window_start"], row["window_end"], row["topics_count"], row["entries"]) for row in rows] == [
        (utc(T0), utc(T0 + 12), 3, 30)
    ]
    assert lines(caplog) == ["[google] swept 3 topics, 30 entries, 30 new events"]


def test_a_process_asleep_across_several_boundaries_writes_one_row_covering_them(tmp_path, caplog):
    caplog.set_level(logging.INFO, logger="topicstreams.extensions.cycle_accounting")

    def body(driven: Driven):
        driven.at(B1 + 0.5)
        driven.count(topics_swept=2, items_scraped=20)
        driven.at(B1 + 4 * 60 + 7)  # four boundaries passed unseen
        driven.at(B1 + 5 * 60 + 0.2)
        driven.clock.now = B1 + 5 * 60 + 1

    rows = run(make_crawler(tmp_path), body).rows()
    bounds = [(row["window_start"].timestamp(), row["window_end"].timestamp()) for row in rows]
    assert bounds == [(T0, B1), (B1, B1 + 240), (B1 + 240, B1 + 300), (B1 + 300, B1 + 301)]
    assert [row["topics_count"] for row in rows] == [0, 2, 0, 0]
    assert len(lines(caplog)) == 4
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1 and "passed 4 boundaries of 60 s" in warnings[0], warnings


def test_a_close_just_after_a_boundary_the_ticker_missed_closes_that_window_first(tmp_path):
    def body(driven: Driven):
        driven.count(topics_swept=1)
        driven.clock.now = B1 + 0.2  # closed before the next look

    rows = run(make_crawler(tmp_path), body).rows()
    assert [(row["window_start"].timestamp(), row["window_end"].timestamp(), row["topics_count"]) for row in rows] == [
        (T0, B1, 1),
        (B1, B1 + 0.2, 0),
    ]


def test_the_looping_call_closes_windows_on_its_own(tmp_path):
    # Windows of 0.5 s: a loaded machine (two test workers beside Chromium) can hold the event loop up for a good
    # part of a 0.2 s window, and a tick that comes after the next boundary has passed makes one window of two.
    async def body(driven: Driven):
        driven.count(topics_swept=1)
        await asyncio.sleep(1.9)

    rows = run(make_crawler(tmp_path, TOPICSTREAMS_SCRAPE_INTERVAL=0.5), body, clock=time.time).rows()
    assert 4 <= len(rows) <= 6, rows
    assert sum(row["topics_count"] for row in rows) == 1
    for earlier, later in zip(rows, rows[1:], strict=False):
        assert earlier["window_end"] == later["window_start"]
    for row in rows[1:-1]:
        assert (row["window_end"] - row["window_start"]).total_seconds() == pytest.approx(0.5, abs=1e-5)


def test_rows_past_retention_are_purged_on_open_and_then_hourly_and_kept_within_it(tmp_path, caplog, databases):
    caplog.set_level(logging.INFO, logger="topicstreams.extensions.cycle_accounting")
    crawler = make_crawler(tmp_path, retention_days=30)
    url = crawler.settings.get("TOPICSTREAMS_DATABASE_URL")
    upgrade(url)
    db = databases.of(url)
    old, recent = utc(T0) - timedelta(days=31), utc(T0) - timedelta(days=29)
    for end in (old, recent):
        save_cycle(db, **cycle_row(end, engine="bing"))  # another process's rows
    with db.begin() as conn:
        conn.execute(insert(health_windows_table), [health_row(old), health_row(recent)])
    soon_old = utc(T0 + 1800) - timedelta(days=30, seconds=1)
    seen = {}

    def bing_ends(driven: Driven) -> list[datetime]:
        return [row["window_end"] for row in driven.rows() if row["engine"] == "bing"]

    def body(driven: Driven):
        seen["opened"] = bing_ends(driven)
        save_cycle(db, **cycle_row(soon_old, engine="bing"))  # past retention 30 minutes from now
        driven.at(T0 + 1800)
        seen["half an hour"] = bing_ends(driven)
        driven.at(T0 + 3600)
        seen["an hour"] = bing_ends(driven)

    driven = run(crawler, body)
    assert seen == {"opened": [recent], "half an hour": [recent, soon_old], "an hour": [recent]}
    assert {row["engine"] for row in driven.rows()} == {"google", "bing"}  # this run's windows, all kept
    purged = [m for m in caplog.messages if m.startswith("purged")]
    assert len(purged) == 2, purged
    assert "older than 30 days" in purged[0]
    assert purged[0].endswith("1 from scraper_cycles, 1 from health_windows")
    assert purged[1].endswith("1 from scraper_cycles, 0 from health_windows")
    with db.connect() as conn:
        assert list(conn.execute(select(health_windows_table.c.window_end)).scalars()) == [recent]


def test_without_a_retention_nothing_is_purged(tmp_path, databases):
    crawler = make_crawler(tmp_path)
    url = crawler.settings.get("TOPICSTREAMS_DATABASE_URL")
    upgrade(url)
    save_cycle(databases.of(url), **cycle_row(utc(T0) - timedelta(days=400)))
    rows = run(crawler, lambda driven: None, retention_days=0).rows()
    assert len(rows) == 2  # the old one and this run's


def test_a_row_written_while_the_database_is_locked_is_kept_and_written_once_it_is_free(tmp_path, caplog, monkeypatch):
    monkeypatch.setattr(db_module, "SQLITE_BUSY_TIMEOUT_MS", 100)  # the outbox's connection gives up in 0.1 s
    caplog.set_level(logging.INFO)
    crawler = make_crawler(tmp_path)
    path = Path(crawler.settings.get("TOPICSTREAMS_DATABASE_URL").removeprefix("sqlite:///"))
    seen = {}

    def body(driven: Driven):
        driven.count(topics_swept=1)
        locker = sqlite3.connect(path, isolation_level=None)
        locker.execute("BEGIN EXCLUSIVE")  # another process holds the write lock
        driven.at(B1 + 0.1)
        assert not Runtime.of(driven.crawler).outbox(driven.url).flush(timeout=1)  # the row cannot be written yet
        seen["while locked"] = [row["topics_count"] for row in cycle_rows(driven.db)]
        driven.count(topics_swept=2)
        driven.at(B1 + 60.1)
        assert driven.extension.ticker.running
        locker.execute("COMMIT")
        locker.close()

    rows = run(crawler, body).rows()
    assert seen["while locked"] == []
    assert [row["topics_count"] for row in rows] == [1, 2, 0]  # nothing lost, in order
    assert len(lines(caplog)) == 3
    [away] = [r for r in caplog.records if "cannot be written" in r.getMessage()]
    assert away.levelno == logging.WARNING and "database is locked" in away.getMessage()
    [back] = [r for r in caplog.records if "is back after" in r.getMessage()]
    assert back.levelno == logging.INFO
