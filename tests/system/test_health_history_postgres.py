"""The daily health history on a real PostgreSQL server: the rollup, the purge that keeps the days, and the
monitor's reads, with PostgreSQL's own day and hour expressions — in a session whose time zone is fourteen hours
away from UTC, so that a day taken in local time would show.

The SQLite tests (tests/unit/test_health_history.py) say what each function must do; most of them run here
unchanged on a PostgreSQL database. Skipped, with the reason, where no PostgreSQL server can run.
"""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

import pytest
from sqlalchemy import Engine, func, select, text

from tests.unit import test_health_history as sqlite_history
from topicstreams.storage import upgrade
from topicstreams.storage.health_history import HealthDay, HealthHour, health_days, health_hours, roll_up
from topicstreams.storage.models import health_windows_table
from topicstreams.storage.scraper_cycles import purge_older_than

window = sqlite_history.window


@pytest.fixture
def pg_url(postgres_url: str, databases) -> str:
    """A fresh database with the schema, its sessions in Pacific/Kiritimati (UTC+14)."""
    upgrade(postgres_url)
    with databases.of(postgres_url).begin() as conn:
        conn.execute(text(f"ALTER DATABASE {postgres_url.rsplit('/', 1)[1]} SET timezone TO 'Pacific/Kiritimati'"))
    databases.dispose()
    return postgres_url


@pytest.fixture
def db(pg_url: str, databases) -> Engine:
    db = databases.of(pg_url)
    with db.connect() as conn:
        assert conn.scalar(text("SHOW timezone")) == "Pacific/Kiritimati"
    return db


@pytest.mark.parametrize(
    "test",
    [
        sqlite_history.test_one_day_by_hand,
        sqlite_history.test_p95s_without_requests_to_weigh_them_are_averaged,
        sqlite_history.test_rolling_up_again_writes_nothing_and_changes_nothing,
        sqlite_history.test_windows_of_days_after_now_wait_for_their_day,
        sqlite_history.test_a_late_window_is_taken_in_by_the_next_rollup_whatever_its_day,
        sqlite_history.test_daily_rows_older_than_history_days_go,
        sqlite_history.test_health_hours_adds_the_nodes_up_per_engine_and_hour,
        sqlite_history.test_health_days_adds_the_nodes_up_per_engine_and_day,
    ],
    ids=lambda test: test.__name__.removeprefix("test_"),
)
def test_the_sqlite_tests_pass_on_postgresql(test, db, monkeypatch, tmp_path, databases):
    monkeypatch.setattr(sqlite_history, "database", lambda _databases, folder, name="": db)
    test(tmp_path, databases)


def test_days_and_hours_are_utc_whatever_the_session_time_zone(db):
    # 23:30 and 00:30 UTC are 13:30 and 14:30 of one day in Kiritimati: two UTC days, two UTC hours apart.
    sqlite_history.add_windows(
        db,
        [
            window(datetime(2026, 3, 1, 23, 30, tzinfo=UTC), requests=1, score=80, p95_latency_ms=100.0),
            window(datetime(2026, 3, 2, 0, 30, tzinfo=UTC), requests=3, score=40, p95_latency_ms=500.0),
        ],
    )
    now = datetime(2026, 3, 2, 0, 45, tzinfo=UTC)
    assert roll_up(db, now) == 2
    assert [(row["day"], row["requests"]) for row in sqlite_history.daily_rows(db)] == [
        (date(2026, 3, 1), 1),
        (date(2026, 3, 2), 3),
    ]
    assert health_hours(db, now) == {
        "google": [
            HealthHour(datetime(2026, 3, 1, 23, tzinfo=UTC), 1, 80.0, 80, 1, 100.0),
            HealthHour(datetime(2026, 3, 2, 0, tzinfo=UTC), 1, 40.0, 40, 3, 500.0),
        ]
    }
    assert health_days(db, now) == {
        "google": [
            HealthDay(date(2026, 3, 1), 1, 80.0, 80, 1, 100.0, None),
            HealthDay(date(2026, 3, 2), 1, 40.0, 40, 3, 500.0, None),
        ]
    }


def test_a_year_of_windows_rolls_up_into_365_daily_rows_per_engine_and_the_purge_keeps_them(db):
    rows = sqlite_history.year_of_windows()
    sqlite_history.add_windows(db, rows)
    now = datetime(2026, 1, 1, 10, 0, tzinfo=UTC)
    deleted = purge_older_than(db, now - timedelta(days=30), now=now, history_days=730)
    assert deleted == {"health_daily": 0, "scraper_cycles": 0, "health_windows": 335 * 24 * 4}
    for engine in sqlite_history.ENGINES:
        assert len(sqlite_history.daily_rows(db, engine)) == 365
    sqlite_history.assert_rows_match(sqlite_history.daily_rows(db), sqlite_history.expected_days(rows))
    with db.connect() as conn:
        assert conn.execute(select(func.min(health_windows_table.c.window_end))).scalar_one() == datetime(
            2025, 12, 2, 0, 50, tzinfo=UTC
        )
    assert roll_up(db, now) == 0  # nothing left to do, whatever was purged
    assert len(health_days(db, now, days=366)["bing"]) == 365


def test_several_processes_rolling_up_and_purging_at_once_agree(pg_url, databases):
    sqlite_history.rollups_at_once(databases, pg_url)
