"""The daily health history on real SQLite files: windows rolled up into ``health_daily`` (a year of them, through
the cycle extension's purge on an injected clock), the purge that keeps the days, late windows, the history's own
retention, several processes at once, and the monitor's two reads. PostgreSQL: tests/system/
test_health_history_postgres.py."""

from __future__ import annotations

import asyncio
import logging
import threading
from collections import defaultdict
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import pytest
from sqlalchemy import func, insert, select

from tests.support import crawler
from topicstreams.crawl.runtime import Runtime
from topicstreams.extensions.cycle_accounting import CyclesExtension
from topicstreams.storage import upgrade
from topicstreams.storage.db import make_database
from topicstreams.storage.health_history import (
    HealthDay,
    HealthHour,
    health_days,
    health_hours,
    purge_history,
    roll_up,
)
from topicstreams.storage.models import health_daily_table, health_windows_table
from topicstreams.storage.scraper_cycles import purge_older_than

ENGINES = ("google", "bing", "yahoo", "brave")
Y0 = datetime(2025, 1, 1, tzinfo=UTC)
"""The first day of the year of windows."""
COUNTS = (
    "requests",
    "ok",
    "hard_blocks",
    "challenges",
    "soft_blocks",
    "errors",
    "items",
    "valid_items",
    "result_pages",
    "yielding_pages",
)


def database(databases, tmp_path: Path, name: str = "history.db"):
    url = f"sqlite:///{tmp_path}/{name}"
    upgrade(url)
    return databases.of(url)


def window(end: datetime, engine: str = "google", node: str = "n1", minutes: int = 50, **values) -> dict:
    """A ``health_windows`` row that ended at ``end``; every column given (executemany needs the same keys)."""
    row = {
        "engine": engine,
        "node": node,
        "window_start": end - timedelta(minutes=minutes),
        "window_end": end,
        **dict.fromkeys(COUNTS, 0),
        "parse_errors": 0,
        "p95_latency_ms": None,
        "score": None,
    }
    row.update(values)
    return row


def add_windows(db, rows: list[dict]) -> None:
    with db.begin() as conn:
        conn.execute(insert(health_windows_table), rows)


def daily_rows(db, engine: str | None = None) -> list[dict]:
    query = select(health_daily_table).order_by(
        health_daily_table.c.engine, health_daily_table.c.node, health_daily_table.c.day
    )
    if engine is not None:
        query = query.where(health_daily_table.c.engine == engine)
    with db.connect() as conn:
        return [dict(row._mapping) for row in conn.execute(query)]


def window_count(db) -> int:
    with db.connect() as conn:
        return conn.execute(select(func.count()).select_from(health_windows_table)).scalar_one()


def expected_days(rows: list[dict]) -> dict[tuple[str, str, date], dict]:
    """The daily rows the windows should roll up into, computed here window by window (the test's own sums)."""
    by_day: dict[tuple[str, str, date], list[dict]] = defaultdict(list)
    for row in rows:
        by_day[(row["engine"], row["node"], row["window_end"].date())].append(row)
    expected = {}
    for key, day in by_day.items():
        scores = [row["score"] for row in day if row["score"] is not None]
        sums = {name: sum(row[name] for row in day) for name in COUNTS}
        timed = [(row["p95_latency_ms"], row["requests"]) for row in day if row["p95_latency_ms"] is not None]
        weight = sum(requests for _, requests in timed)
        p95 = (
            sum(p95 * requests for p95, requests in timed) / weight
            if weight
            else sum(p95 for p95, _ in timed) / len(timed)
            if timed
            else None
        )
        parser = None
        if sums["result_pages"]:
            pages = min(1.0, sums["yielding_pages"] / sums["result_pages"])
            valid = min(1.0, sums["valid_items"] / sums["items"]) if sums["items"] else 0.0
            parser = round(100 * pages * valid)
        expected[key] = {
            "engine": key[0],
            "node": key[1],
            "day": key[2],
            "windows": len(day),
            "score_mean": sum(scores) / len(scores) if scores else None,
            "score_min": min(scores) if scores else None,
            **sums,
            "p95_ms": p95,
            "parser_score": parser,
        }
    return expected


def assert_rows_match(actual: list[dict], expected: dict) -> None:
    assert [(row["engine"], row["node"], row["day"]) for row in actual] == sorted(expected)
    for row in actual:
        want = expected[(row["engine"], row["node"], row["day"])]
        for name, value in want.items():
            if isinstance(value, float):
                assert row[name] == pytest.approx(value), (row["day"], name)
            else:
                assert row[name] == value, (row["day"], name)


def year_of_windows(engines=ENGINES, node: str = "n1") -> list[dict]:
    """An hourly window (ending at :50) every hour of 2025 for each engine, its numbers varying hour by hour."""
    rows = []
    for offset, engine in enumerate(engines):
        for k in range(365 * 24):
            requests = (k + offset) % 5 * 3
            blocked = int(requests > 0 and k % 7 == 0)
            rows.append(
                window(
                    Y0 + timedelta(hours=k, minutes=50),
                    engine,
                    node,
                    requests=requests,
                    ok=requests - blocked,
                    hard_blocks=blocked,
                    challenges=int(requests > 0 and k % 11 == 0),
                    items=requests * 4,
                    valid_items=requests * 3 + k % 2 * (requests > 0),
                    result_pages=requests,
                    yielding_pages=max(0, requests - k % 3),
                    parse_errors=int(k % 13 == 0),
                    p95_latency_ms=300.0 + (k * 37 + offset * 11) % 500 if requests else None,
                    score=None if k % 24 == 5 else 40 + (k * 13 + offset) % 61,
                )
            )
    return rows


# ---- the cycle extension, its clock the test's ---------------------------------------------------------------
class Clock:
    def __init__(self, now: datetime) -> None:
        self.now = now.timestamp()

    def __call__(self) -> float:
        return self.now


def make_crawler(folder: Path, **options):
    """The shared crawler (tests/support/crawler.py) on ``history.db`` (where :func:`database` looks), a cycle
    every six hours."""
    return crawler.make_crawler(folder, database="history.db", interval=6 * 3600, **options)


def run_extension(crawler, now: datetime, body=None, retention_days=None) -> CyclesExtension:
    """Open the cycle extension at ``now`` (it purges then), run ``body(extension, clock)``, close it, and wait
    for its writes. ``retention_days``: the extension's own, one no configuration gives (it takes days > 0)."""
    extension = CyclesExtension.from_crawler(crawler)
    if retention_days is not None:
        extension.retention_days = retention_days
    clock = extension.clock = Clock(now)

    async def main():
        crawler.stats.open_spider()
        extension.spider_opened(None)
        try:
            if body is not None:
                body(extension, clock)
        finally:
            await extension.spider_closed(None, "finished")

    asyncio.run(main())
    assert Runtime.of(crawler).outbox(crawler.settings.get("TOPICSTREAMS_DATABASE_URL")).flush()
    return extension


# ---- rolling up -------------------------------------------------------------------------------------------------
def test_a_year_of_windows_rolls_up_into_365_daily_rows_per_engine_and_the_purge_keeps_them(
    tmp_path, caplog, databases
):
    caplog.set_level(logging.INFO, logger="topicstreams.extensions.cycle_accounting")
    crawler = make_crawler(tmp_path, retention_days=30)
    db = database(databases, tmp_path)
    rows = year_of_windows()
    add_windows(db, rows)
    now = datetime(2026, 1, 1, 10, 0, tzinfo=UTC)  # cutoff 2025-12-02 10:00: the windows of Dec 2 on are kept

    run_extension(crawler, now)

    for engine in ENGINES:
        days = daily_rows(db, engine)
        assert [row["day"] for row in days] == [date(2025, 1, 1) + timedelta(days=i) for i in range(365)]
        assert {row["windows"] for row in days} == {24}
    assert_rows_match(daily_rows(db), expected_days(rows))
    assert window_count(db) == 30 * 24 * len(ENGINES)  # whole days only: Dec 2 … Dec 31
    with db.connect() as conn:
        assert conn.execute(select(func.min(health_windows_table.c.window_end))).scalar_one() == datetime(
            2025, 12, 2, 0, 50, tzinfo=UTC
        )
    purged = [message for message in caplog.messages if message.startswith("purged")]
    assert purged == [
        "purged the rows older than 30 days (ended before 2025-12-02 10:00:00Z) and the daily health "
        f"older than 730 days: 0 from health_daily, 0 from scraper_cycles, {335 * 24 * 4} from "
        "health_windows"
    ]


def test_one_day_by_hand(tmp_path, databases):
    db = database(databases, tmp_path)
    day = datetime(2026, 3, 4, tzinfo=UTC)
    add_windows(
        db,
        [
            window(
                day + timedelta(hours=1),
                requests=10,
                ok=9,
                hard_blocks=1,
                items=40,
                valid_items=30,
                result_pages=8,
                yielding_pages=8,
                p95_latency_ms=100.0,
                score=80,
            ),
            window(
                day + timedelta(hours=2),
                requests=30,
                ok=28,
                challenges=1,
                errors=1,
                items=100,
                valid_items=90,
                result_pages=20,
                yielding_pages=16,
                p95_latency_ms=300.0,
                score=None,
            ),
            window(day + timedelta(hours=23, minutes=59), requests=0, p95_latency_ms=None, score=60),
            window(day + timedelta(days=1), requests=5, p95_latency_ms=900.0, score=10),  # midnight: the next day
            window(day + timedelta(hours=3), engine="bing", requests=2, soft_blocks=2, score=0),
        ],
    )
    assert roll_up(db, day + timedelta(days=1, hours=1)) == 3
    google, next_day, bing = daily_rows(db, "google") + daily_rows(db, "bing")
    assert google == {
        "engine": "google",
        "node": "n1",
        "day": date(2026, 3, 4),
        "windows": 3,
        "score_mean": 70.0,
        "score_min": 60,  # the window without a score counts in neither
        "requests": 40,
        "ok": 37,
        "hard_blocks": 1,
        "challenges": 1,
        "soft_blocks": 0,
        "errors": 1,
        "items": 140,
        "valid_items": 120,
        "result_pages": 28,
        "yielding_pages": 24,
        "p95_ms": 250.0,  # (100 × 10 + 300 × 30) / 40
        "parser_score": 73,  # 24/28 × 120/140 = 0.7347
    }
    assert (next_day["day"], next_day["windows"], next_day["p95_ms"]) == (date(2026, 3, 5), 1, 900.0)
    assert (bing["score_mean"], bing["score_min"], bing["p95_ms"], bing["parser_score"]) == (0.0, 0, None, None)


def test_p95s_without_requests_to_weigh_them_are_averaged(tmp_path, databases):
    db = database(databases, tmp_path)
    end = datetime(2026, 3, 4, 12, tzinfo=UTC)
    add_windows(db, [window(end, p95_latency_ms=200.0), window(end + timedelta(hours=1), p95_latency_ms=400.0)])
    roll_up(db, end)
    assert daily_rows(db)[0]["p95_ms"] == 300.0


def test_rolling_up_again_writes_nothing_and_changes_nothing(tmp_path, databases):
    db = database(databases, tmp_path)
    rows = [
        window(
            datetime(2026, 3, day, hour, tzinfo=UTC),
            engine,
            node,
            requests=hour,
            score=50 + hour,
            p95_latency_ms=10.0 * hour,
        )
        for day in (1, 2, 3)
        for hour in (1, 9, 17)
        for engine in ("google", "bing")
        for node in ("n1", "n2")
    ]
    add_windows(db, rows)
    now = datetime(2026, 3, 3, 18, tzinfo=UTC)
    assert roll_up(db, now) == 3 * 2 * 2
    first = daily_rows(db)
    assert roll_up(db, now) == 0
    assert roll_up(db, now + timedelta(hours=5)) == 0
    assert daily_rows(db) == first
    assert_rows_match(first, expected_days(rows))


def test_windows_of_days_after_now_wait_for_their_day(tmp_path, databases):
    db = database(databases, tmp_path)
    today = datetime(2026, 3, 3, 18, tzinfo=UTC)
    add_windows(db, [window(today, requests=1), window(today + timedelta(days=1), requests=2)])
    assert roll_up(db, today) == 1
    assert [row["day"] for row in daily_rows(db)] == [date(2026, 3, 3)]
    assert roll_up(db, today + timedelta(days=1)) == 1
    assert [row["requests"] for row in daily_rows(db)] == [1, 2]


def test_a_late_window_is_taken_in_by_the_next_rollup_whatever_its_day(tmp_path, databases):
    db = database(databases, tmp_path)
    rows = [
        window(datetime(2026, 3, day, 12, tzinfo=UTC), requests=10, score=90, p95_latency_ms=100.0) for day in (1, 2, 3)
    ]
    add_windows(db, rows)
    now = datetime(2026, 3, 3, 13, tzinfo=UTC)
    roll_up(db, now)
    late = [
        window(datetime(2026, 3, 3, 12, 30, tzinfo=UTC), requests=30, score=50, p95_latency_ms=500.0),  # today
        window(datetime(2026, 3, 1, 18, tzinfo=UTC), requests=10, score=70, p95_latency_ms=300.0),
    ]  # two days ago
    add_windows(db, late)
    assert roll_up(db, now) == 2
    days = daily_rows(db)
    assert [(row["day"].day, row["windows"], row["requests"], row["score_min"]) for row in days] == [
        (1, 2, 20, 70),
        (2, 1, 10, 90),
        (3, 2, 40, 50),
    ]
    assert days[0]["p95_ms"] == 200.0 and days[2]["p95_ms"] == 400.0
    assert_rows_match(days, expected_days(rows + late))


def test_day_by_day_while_the_windows_are_purged_every_window_is_in_the_history(tmp_path, databases):
    """The extension purges every six hours with a retention of two days, while windows keep coming (and some
    arrive late): the history ends up as if it had been computed from every window at once."""
    crawler = make_crawler(tmp_path, retention_days=2)
    db = database(databases, tmp_path)
    start = datetime(2026, 5, 1, tzinfo=UTC)
    every = [
        window(
            start + timedelta(minutes=20 * k + 7),
            engine,
            "n1",
            requests=k % 4,
            items=k % 5,
            valid_items=k % 3,
            result_pages=k % 4,
            yielding_pages=k % 2,
            score=k * 7 % 100,
            p95_latency_ms=float(k % 9 * 100),
        )
        for k in range(10 * 72)
        for engine in ("google", "brave")
    ]
    stored: set[int] = set()

    def body(extension, clock):
        for step in range(1, 10 * 4 + 2):  # the last one six hours after the last window: the late ones too
            moment = start + timedelta(hours=6 * step)
            # Windows that ended by now; every 7th arrives six hours late (a process's outbox through an outage).
            due = [
                index
                for index, row in enumerate(every)
                if index not in stored
                and (row["window_end"] <= moment - timedelta(hours=6) or row["window_end"] <= moment and index % 7)
            ]
            if due:
                add_windows(db, [every[index] for index in due])
            stored.update(due)
            clock.now = moment.timestamp()
            extension.tick()
            assert extension.outbox.flush()

    run_extension(crawler, start, body)
    assert len(stored) == len(every)
    assert window_count(db) < len(every) / 3  # most are purged
    assert_rows_match(daily_rows(db), expected_days(every))


def test_daily_rows_older_than_history_days_go(tmp_path, databases):
    db = database(databases, tmp_path)
    now = datetime(2026, 6, 30, 12, tzinfo=UTC)
    add_windows(db, [window(now - timedelta(days=age), requests=1) for age in (0, 9, 10, 11, 40)])
    deleted = purge_older_than(db, now - timedelta(days=30), now=now, history_days=10)
    assert deleted == {"health_daily": 2, "scraper_cycles": 0, "health_windows": 1}
    assert [row["day"] for row in daily_rows(db)] == [date(2026, 6, 20), date(2026, 6, 21), date(2026, 6, 30)]
    assert purge_history(db, date(2026, 6, 21)) == 1
    assert purge_history(db, date(2026, 6, 21)) == 0


def test_without_a_retention_the_windows_stay_and_the_history_is_still_rolled_up_and_kept_its_days(
    tmp_path, caplog, databases
):
    caplog.set_level(logging.INFO, logger="topicstreams.extensions.cycle_accounting")
    crawler = make_crawler(tmp_path, history_days=100)
    db = database(databases, tmp_path)
    now = datetime(2026, 6, 30, 12, tzinfo=UTC)
    add_windows(db, [window(now - timedelta(days=age), requests=1) for age in (0, 50, 150)])
    run_extension(crawler, now, retention_days=0)
    assert window_count(db) == 3
    assert [row["day"] for row in daily_rows(db)] == [date(2026, 5, 11), date(2026, 6, 30)]
    assert "purged the daily health older than 100 days: 1 from health_daily" in caplog.messages


def test_several_processes_rolling_up_and_purging_at_once_agree(tmp_path, databases):
    url = f"sqlite:///{tmp_path}/history.db"
    upgrade(url)
    rollups_at_once(databases, url)


def rollups_at_once(databases, url: str) -> None:
    """Four handles of their own (four connections, as four processes have) roll up and purge at once while
    windows keep coming: no error, and the history is every window's."""
    now = datetime(2026, 6, 30, 23, tzinfo=UTC)
    rows = [
        window(now - timedelta(hours=k), engine, requests=k % 6, score=k % 100, p95_latency_ms=float(k))
        for k in reversed(range(24 * 8))
        for engine in ENGINES
    ]
    add_windows(databases.of(url), rows[: len(rows) // 2])  # the older half; the newer half comes meanwhile
    errors: list[BaseException] = []

    def worker(index: int) -> None:
        db = make_database(url)
        try:
            for step in range(6):
                if index == 0:
                    add_windows(db, rows[len(rows) // 2 + step * len(rows) // 12 :][: len(rows) // 12])
                elif step % 2:
                    purge_older_than(db, now - timedelta(days=3), now=now, history_days=730)
                else:
                    roll_up(db, now)
        except BaseException as exc:
            errors.append(exc)
        finally:
            db.dispose()

    threads = [threading.Thread(target=worker, args=(index,)) for index in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    db = databases.of(url)
    roll_up(db, now)
    assert_rows_match(daily_rows(db), expected_days(rows))
    assert window_count(db) == 4 * 24 * len(ENGINES)  # Jun 27 … Jun 30


# ---- the monitor's reads ----------------------------------------------------------------------------------------
def test_health_hours_adds_the_nodes_up_per_engine_and_hour(tmp_path, databases):
    db = database(databases, tmp_path)
    now = datetime(2026, 6, 30, 14, 20, tzinfo=UTC)
    add_windows(
        db,
        [
            window(
                datetime(2026, 6, 30, 14, 10, tzinfo=UTC), "google", "n1", requests=10, score=90, p95_latency_ms=100.0
            ),
            window(
                datetime(2026, 6, 30, 14, 15, tzinfo=UTC), "google", "n2", requests=30, score=60, p95_latency_ms=500.0
            ),
            window(
                datetime(2026, 6, 30, 13, 0, tzinfo=UTC), "google", "n2", requests=5, score=None, p95_latency_ms=None
            ),
            window(datetime(2026, 6, 29, 15, 0, tzinfo=UTC), "google", "n1", requests=7, score=40),  # the first hour
            window(datetime(2026, 6, 29, 14, 59, tzinfo=UTC), "google", "n1", requests=99, score=0),  # 24 h and more
            window(datetime(2026, 6, 30, 14, 0, tzinfo=UTC), "bing", "n1", requests=1, score=100, p95_latency_ms=80.0),
        ],
    )
    assert health_hours(db, now) == {
        "bing": [HealthHour(datetime(2026, 6, 30, 14, tzinfo=UTC), 1, 100.0, 100, 1, 80.0)],
        "google": [
            HealthHour(datetime(2026, 6, 29, 15, tzinfo=UTC), 1, 40.0, 40, 7, None),
            HealthHour(datetime(2026, 6, 30, 13, tzinfo=UTC), 1, None, None, 5, None),
            HealthHour(datetime(2026, 6, 30, 14, tzinfo=UTC), 2, 75.0, 60, 40, 400.0),
        ],
    }
    assert list(health_hours(db, now, hours=1)) == ["bing", "google"]
    assert health_hours(db, now, hours=1)["google"][0].hour == datetime(2026, 6, 30, 14, tzinfo=UTC)


def test_health_days_adds_the_nodes_up_per_engine_and_day(tmp_path, databases):
    db = database(databases, tmp_path)
    now = datetime(2026, 6, 30, 14, 20, tzinfo=UTC)

    def day_row(day: date, engine: str, node: str, **values) -> dict:
        return {
            "engine": engine,
            "node": node,
            "day": day,
            "windows": 0,
            "score_mean": None,
            "score_min": None,
            **dict.fromkeys(COUNTS, 0),
            "p95_ms": None,
            "parser_score": None,
            **values,
        }

    with db.begin() as conn:
        conn.execute(
            insert(health_daily_table),
            [
                day_row(
                    date(2026, 6, 30),
                    "google",
                    "n1",
                    windows=10,
                    score_mean=90.0,
                    score_min=70,
                    requests=100,
                    p95_ms=200.0,
                    result_pages=50,
                    yielding_pages=50,
                    items=100,
                    valid_items=100,
                ),
                day_row(
                    date(2026, 6, 30),
                    "google",
                    "n2",
                    windows=30,
                    score_mean=50.0,
                    score_min=20,
                    requests=300,
                    p95_ms=600.0,
                    result_pages=50,
                    yielding_pages=25,
                    items=100,
                    valid_items=80,
                ),
                day_row(date(2026, 6, 30), "google", "n3", windows=5, requests=0),  # no score, no latency
                day_row(date(2025, 7, 1), "google", "n1", windows=1, score_mean=10.0, score_min=10, requests=1),
                day_row(date(2025, 6, 30), "google", "n1", windows=1, score_mean=0.0, score_min=0),  # 366 days ago
                day_row(
                    date(2026, 6, 29),
                    "brave",
                    "n1",
                    windows=2,
                    score_mean=100.0,
                    score_min=100,
                    requests=4,
                    p95_ms=50.0,
                ),
            ],
        )
    assert health_days(db, now) == {
        "brave": [HealthDay(date(2026, 6, 29), 2, 100.0, 100, 4, 50.0, None)],
        "google": [
            HealthDay(date(2025, 7, 1), 1, 10.0, 10, 1, None, None),
            # (90 × 10 + 50 × 30) / 40; (200 × 100 + 600 × 300) / 400; 75/100 × 180/200
            HealthDay(date(2026, 6, 30), 45, 60.0, 20, 400, 500.0, 68),
        ],
    }
    assert health_days(db, now, days=1) == {"google": [HealthDay(date(2026, 6, 30), 45, 60.0, 20, 400, 500.0, 68)]}
