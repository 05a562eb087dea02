"""The daily health history: ``health_daily`` rolled up from ``health_windows``, and what the monitor reads of both.

``health_windows`` holds every window of every engine on every node, but only ``scraper.retention_days``; the
monitor's twelve months need a longer, smaller record. One ``health_daily`` row per engine, node and UTC day keeps
what a day's windows said: how many there were, the mean and minimum of their smoothed scores, their counts added
up, their p95 latencies averaged weighted by their requests, and the parser score of the added-up counts. It is
kept ``health.history_days``, in the database, so it survives restarts and every node sees the same history.

A window belongs to the UTC day, and to the hour, **it ended in** — as it belongs to the retention by its end
(``window_end`` is what the purge compares and what the indexes hold).

Rolling up (:func:`roll_up`). A day's row is always recomputed from all of the day's windows, never added to, so a
rollup can run any number of times, from any number of processes, and write the same rows. Which days: each engine
and node's days whose windows are not all in their row yet — a day without a row (the first rollup starts from
the oldest window), the latest rolled-up day while it fills, and an older day a late window arrived for (a window
kept in a process's outbox through a database outage). One count of windows per engine, node and day, compared
with the rows' ``windows``, finds them (about 0.2 s over 345,600 windows on SQLite, over the
``(engine, node, window_end)`` index alone); one GROUP BY recomputes them. A day holding fewer windows than its
row counted is left alone: it lost some to the purge, and its row already has them.

That is why the purge (:func:`topicstreams.storage.scraper_cycles.purge_older_than`) rolls up in the same
transaction as it deletes, and deletes a day's windows only once the whole day is past the retention: every day
recomputed still holds every one of its windows, and no window goes before it is in its day's row.

The monitor's reads (:func:`health_hours`, :func:`health_days`) add every node up per engine in SQL and return a
row per engine and hour or day: a day of 20 nodes × 4 engines at six windows an hour is 96 rows, not 11,520.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from decimal import Decimal
from typing import Any

from sqlalchemy import Connection, Engine, and_, case, delete, func, or_, select, tuple_
from sqlalchemy.sql.elements import ColumnElement

from topicstreams.engines.parser_health import parser_score
from topicstreams.storage.db import immediate, upsert
from topicstreams.storage.models import health_daily_table as daily
from topicstreams.storage.models import health_windows_table as windows
from topicstreams.storage.time_buckets import day_bucket, hour_bucket, parse_day, parse_hour

SUMMED = (
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
"""The counts a day's row adds up from its windows."""

KEY = ("engine", "node", "day")

RANGES_PER_QUERY = 100
"""Runs of days recomputed by one query at most (each run is a term of its WHERE): the first rollup of a node that
ran one day in two for a year would otherwise make one statement of hundreds of terms."""


# ---- rolling up -------------------------------------------------------------------------------------------------
def utc_date(moment: datetime) -> date:
    """The UTC day of ``moment`` (a naive one is taken to be UTC, as :class:`UTCDateTime` takes it)."""
    return moment.date() if moment.tzinfo is None else moment.astimezone(UTC).date()


def day_start(day: date) -> datetime:
    """The UTC midnight that starts ``day``."""
    return datetime.combine(day, time(), UTC)


def roll_up(db: Engine, now: datetime) -> int:
    """Bring ``health_daily`` up to date with ``health_windows`` for the windows that ended before the end of
    ``now``'s UTC day (today's row is partial: the next rollup recomputes it). Returns the rows written.

    One short transaction (on SQLite ``BEGIN IMMEDIATE``: it reads, then writes what it read)."""
    with immediate(db.connect()) as conn, conn.begin():
        return roll_up_in(conn, now)


def roll_up_in(conn: Connection, now: datetime) -> int:
    """:func:`roll_up` in the caller's transaction (the purge's, so that it deletes no window not rolled up)."""
    tomorrow = day_start(utc_date(now) + timedelta(days=1))
    stale = days_to_roll_up(conn, tomorrow)
    rows = sorted(recompute(conn, stale), key=lambda row: (row["engine"], row["node"], row["day"]))
    if rows:
        # One statement (the first row's), executed with every row: each row's values take the first's place. In
        # key order, so that two transactions upserting the same rows lock them in the same order (no deadlock).
        conn.execute(
            upsert(conn.dialect, daily, list(KEY), rows[0], [name for name in rows[0] if name not in KEY]), rows
        )
    return len(rows)


def days_to_roll_up(conn: Connection, before: datetime) -> dict[tuple[str, str], list[date]]:
    """(engine, node) -> the days, oldest first, whose windows that ended before ``before`` are not all in their
    ``health_daily`` row: no row, or more windows than the row counted."""
    day = day_bucket(conn.dialect, windows.c.window_end)
    counted = conn.execute(
        select(windows.c.engine, windows.c.node, day, func.count())
        .where(windows.c.window_end < before)
        .group_by(windows.c.engine, windows.c.node, day)
    ).all()
    if not counted:
        return {}
    oldest = min(parse_day(row[2]) for row in counted)
    kept = {
        (engine, node, day_): count
        for engine, node, day_, count in conn.execute(
            select(daily.c.engine, daily.c.node, daily.c.day, daily.c.windows).where(daily.c.day >= oldest)
        )
    }
    stale: dict[tuple[str, str], list[date]] = defaultdict(list)
    for engine, node, text, count in counted:
        day_ = parse_day(text)
        if count > kept.get((engine, node, day_), 0):
            stale[(engine, node)].append(day_)
    return {pair: sorted(days) for pair, days in stale.items()}


def runs(days: list[date]) -> Iterator[tuple[date, date]]:
    """Sorted days as runs of consecutive days, (first, last)."""
    first = last = days[0]
    for day in days[1:]:
        if day != last + timedelta(days=1):
            yield first, last
            first = day
        last = day
    yield first, last


def recompute(conn: Connection, stale: dict[tuple[str, str], list[date]]) -> list[dict[str, Any]]:
    """The ``health_daily`` rows of the stale days, each from all of its day's windows, summed in SQL."""
    pairs_by_run: dict[tuple[date, date], list[tuple[str, str]]] = defaultdict(list)
    for pair, days in stale.items():
        for run in runs(days):
            pairs_by_run[run].append(pair)
    terms = [
        and_(
            windows.c.window_end >= day_start(first),
            windows.c.window_end < day_start(last) + timedelta(days=1),
            tuple_(windows.c.engine, windows.c.node).in_(pairs),
        )
        for (first, last), pairs in sorted(pairs_by_run.items())
    ]
    day = day_bucket(conn.dialect, windows.c.window_end)
    columns = (
        windows.c.engine,
        windows.c.node,
        day,
        func.count(),
        func.avg(windows.c.score),
        func.min(windows.c.score),
        weighted(windows.c.p95_latency_ms, windows.c.requests),
        *(func.coalesce(func.sum(windows.c[name]), 0) for name in (*SUMMED, "parse_errors")),
    )
    rows = []
    for start in range(0, len(terms), RANGES_PER_QUERY):
        query = (
            select(*columns)
            .where(or_(*terms[start : start + RANGES_PER_QUERY]))
            .group_by(windows.c.engine, windows.c.node, day)
        )
        for engine, node, text, count, mean, minimum, p95, *sums in conn.execute(query):
            counts = dict(zip((*SUMMED, "parse_errors"), map(int, sums), strict=True))
            parse_errors = counts.pop("parse_errors")
            rows.append(
                {
                    "engine": engine,
                    "node": node,
                    "day": parse_day(text),
                    "windows": int(count),
                    "score_mean": number(mean),
                    "score_min": None if minimum is None else int(minimum),
                    **counts,
                    "p95_ms": number(p95),
                    "parser_score": day_parser_score(counts, parse_errors),
                }
            )
    return rows


def day_parser_score(counts: dict[str, int], parse_errors: int = 0) -> int | None:
    """The parser score of counts added up (None without a result page)."""
    return parser_score(
        counts["result_pages"], counts["yielding_pages"], parse_errors, counts["items"], counts["valid_items"]
    )[0]


def weighted(value: ColumnElement, weight: ColumnElement) -> ColumnElement:
    """SQL: the mean of ``value`` weighted by ``weight`` over the rows where ``value`` is known; their plain mean
    when those rows weigh nothing; NULL when none is known."""
    weights = func.sum(case((value.is_not(None), weight), else_=0))
    return func.coalesce(func.sum(value * weight) / func.nullif(weights, 0), func.avg(value))


def number(value: float | Decimal | None) -> float | None:
    """A float from what SQL returns (PostgreSQL's averages and sums of integers are numeric)."""
    return None if value is None else float(value)


def purge_history(db: Engine, before_day: date) -> int:
    """Delete the ``health_daily`` rows of the days before ``before_day``; returns how many."""
    with db.begin() as conn:
        return purge_history_in(conn, before_day)


def purge_history_in(conn: Connection, before_day: date) -> int:
    """:func:`purge_history` in the caller's transaction."""
    return conn.execute(delete(daily).where(daily.c.day < before_day)).rowcount


def history_start(now: datetime, history_days: float) -> date:
    """The first day ``health.history_days`` keeps at ``now``."""
    return utc_date(now - timedelta(days=history_days))


# ---- what the monitor reads -------------------------------------------------------------------------------------
@dataclass(frozen=True)
class HealthHour:
    """One engine's windows that ended in one UTC hour, every node added up."""

    hour: datetime
    """The hour's start (UTC)."""
    windows: int
    score_mean: float | None
    """The mean of the windows' smoothed scores (None: none had one)."""
    score_min: int | None
    requests: int
    p95_ms: float | None
    """The windows' p95 latencies averaged weighted by their requests."""


@dataclass(frozen=True)
class HealthDay:
    """One engine's UTC day of ``health_daily``, every node added up."""

    day: date
    windows: int
    score_mean: float | None
    """The nodes' mean scores weighted by their windows (None: no window had a score)."""
    score_min: int | None
    requests: int
    p95_ms: float | None
    """The nodes' p95 latencies weighted by their requests."""
    parser_score: int | None
    """The parser score of every node's counts added up."""


def hour_floor(moment: datetime) -> datetime:
    moment = moment if moment.tzinfo is None else moment.astimezone(UTC)
    return moment.replace(minute=0, second=0, microsecond=0, tzinfo=UTC)


def health_hours(db: Engine, now: datetime, hours: int = 24) -> dict[str, list[HealthHour]]:
    """Engine -> its last ``hours`` UTC hours (the current one, partial, included) from ``health_windows``, oldest
    first; an hour without a window has no entry."""
    end = hour_floor(now) + timedelta(hours=1)
    start = end - timedelta(hours=hours)
    hour = hour_bucket(db.dialect, windows.c.window_end)
    query = (
        select(
            windows.c.engine,
            hour,
            func.count(),
            func.avg(windows.c.score),
            func.min(windows.c.score),
            func.coalesce(func.sum(windows.c.requests), 0),
            weighted(windows.c.p95_latency_ms, windows.c.requests),
        )
        .where(windows.c.window_end >= start, windows.c.window_end < end)
        .group_by(windows.c.engine, hour)
        .order_by(windows.c.engine, hour)
    )
    timeline: dict[str, list[HealthHour]] = defaultdict(list)
    with db.connect() as conn:
        for engine, text, count, mean, minimum, requests, p95 in conn.execute(query):
            timeline[engine].append(
                HealthHour(
                    parse_hour(text).replace(tzinfo=UTC),
                    int(count),
                    number(mean),
                    None if minimum is None else int(minimum),
                    int(requests),
                    number(p95),
                )
            )
    return dict(timeline)


def health_days(db: Engine, now: datetime, days: int = 365) -> dict[str, list[HealthDay]]:
    """Engine -> its last ``days`` UTC days (today, as of the last rollup, included) from ``health_daily``, oldest
    first; a day without a row has no entry."""
    today = utc_date(now)
    counts = ("result_pages", "yielding_pages", "items", "valid_items")
    query = (
        select(
            daily.c.engine,
            daily.c.day,
            func.coalesce(func.sum(daily.c.windows), 0),
            weighted(daily.c.score_mean, daily.c.windows),
            func.min(daily.c.score_min),
            func.coalesce(func.sum(daily.c.requests), 0),
            weighted(daily.c.p95_ms, daily.c.requests),
            *(func.coalesce(func.sum(daily.c[name]), 0) for name in counts),
        )
        .where(daily.c.day > today - timedelta(days=days), daily.c.day <= today)
        .group_by(daily.c.engine, daily.c.day)
        .order_by(daily.c.engine, daily.c.day)
    )
    history: dict[str, list[HealthDay]] = defaultdict(list)
    with db.connect() as conn:
        for engine, day, count, mean, minimum, requests, p95, *sums in conn.execute(query):
            history[engine].append(
                HealthDay(
                    day,
                    int(count),
                    number(mean),
                    None if minimum is None else int(minimum),
                    int(requests),
                    number(p95),
                    day_parser_score(dict(zip(counts, map(int, sums), strict=True))),
                )
            )
    return dict(history)
