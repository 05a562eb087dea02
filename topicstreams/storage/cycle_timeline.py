"""What the monitor's charts read: each engine's cycle timeline, and the closed hours and days kept.

``scraper_cycles`` holds one row per engine, node and ``scraper.scrape_interval`` window. The monitor draws each
engine's last 24 hours of them, every node added up, in hourly buckets (by the hour each window ended in): topics
swept, entries and new feed events (:func:`cycle_timeline`). The rows are read from the index
``ix_scraper_cycles_timeline`` alone (it holds every column read) and summed in two steps: per window end and engine
first, which follows the index's order (the windows of every node are aligned, so 20 nodes' rows of one minute are
one group), then per hour; one GROUP BY per hour would sort the 115,200 rows a day of 20 nodes × 4 engines writes.

:class:`ChartReads` gives the three series every chart is drawn from — the cycle timeline, the score and p95 of the
last 24 hours (:func:`~topicstreams.storage.health_history.health_hours`) and of the last 12 months
(:func:`~topicstreams.storage.health_history.health_days`) — and keeps what is closed. An hour that is over and a
day that is over change no more, but for a late row (a crawl's writes kept through a database outage): their
buckets are kept for :data:`KEEP_SECONDS` (or until the hour or day turns), and only the current hour and today are
read at each request. The page refreshes itself every 15 s in every open tab: without this each refresh would sum a
day of cycles and a year of days again (a quarter of a second with 20 nodes; ``benchmarks/monitor.py``).
"""

from __future__ import annotations

import threading
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import Engine, func, select

from topicstreams.storage.health_history import health_days, health_hours
from topicstreams.storage.models import scraper_cycles_table as cycles
from topicstreams.storage.time_buckets import hour_bucket, parse_hour

KEEP_SECONDS = 300.0
"""How long the buckets of closed hours and days are kept before they are read again (a late row shows by then)."""


@dataclass(frozen=True)
class CycleHour:
    """One engine's cycles that ended in one hour, every node added up."""

    hour: datetime
    """The hour's start (UTC)."""
    topics: int
    entries: int
    new_events: int


def cycle_timeline(db: Engine, start: datetime, end: datetime) -> dict[str, list[CycleHour]]:
    """Engine -> its hours with cycle rows that ended in ``[start, end)``, oldest first."""
    per_end = (
        select(
            cycles.c.engine,
            cycles.c.window_end,
            func.sum(cycles.c.topics_count).label("topics"),
            func.sum(cycles.c.entries).label("entries"),
            func.sum(cycles.c.new_events).label("new_events"),
        )
        .where(cycles.c.window_end >= start, cycles.c.window_end < end)
        .group_by(cycles.c.window_end, cycles.c.engine)
        .subquery()
    )
    bucket = hour_bucket(db.dialect, per_end.c.window_end)
    query = (
        select(
            per_end.c.engine,
            bucket.label("hour"),
            func.sum(per_end.c.topics),
            func.sum(per_end.c.entries),
            func.sum(per_end.c.new_events),
        )
        .group_by(per_end.c.engine, bucket)
        .order_by(per_end.c.engine, bucket)
    )
    timeline: dict[str, list[CycleHour]] = defaultdict(list)
    with db.connect() as conn:
        for engine, hour, topics, entries, new_events in conn.execute(query):
            timeline[engine].append(
                CycleHour(
                    parse_hour(hour).replace(tzinfo=UTC), int(topics or 0), int(entries or 0), int(new_events or 0)
                )
            )
    return dict(timeline)


def joined(closed: dict[str, list], current: dict[str, list]) -> dict[str, list]:
    """Engine -> the closed periods' buckets, then the current one's."""
    return {engine: [*closed.get(engine, ()), *current.get(engine, ())] for engine in {*closed, *current}}


@dataclass(frozen=True)
class ChartData:
    cycles: dict[str, list[CycleHour]]
    hours: dict[str, list]
    """Engine -> :class:`~topicstreams.storage.health_history.HealthHour` of the last 24 hours."""
    days: dict[str, list]
    """Engine -> :class:`~topicstreams.storage.health_history.HealthDay` of the last 12 months."""


class ChartReads:
    """The charts' series of one database, the closed hours and days kept ``keep`` seconds (0: read everything at
    each request). Thread-safe: the app serves requests from a pool of threads."""

    def __init__(self, db: Engine, keep: float = KEEP_SECONDS, clock: Callable[[], float] = time.monotonic) -> None:
        self.db = db
        self.keep = keep
        self.clock = clock
        self._kept: dict[tuple, tuple[float, Any]] = {}
        self._lock = threading.Lock()

    def closed(self, key: tuple, read: Callable[[], Any]) -> Any:
        """``read()``, or what it gave for ``key`` less than ``keep`` seconds ago."""
        now = self.clock()
        with self._lock:
            found = self._kept.get(key)
        if found is not None and now - found[0] < self.keep:
            return found[1]
        value = read()
        if self.keep > 0:
            with self._lock:
                self._kept = {kept: entry for kept, entry in self._kept.items() if kept[0] != key[0]}
                self._kept[key] = (now, value)
        return value

    def read(self, now: datetime, hours: int, days: int) -> ChartData:
        """The last ``hours`` hours and ``days`` days as of ``now`` (the current hour and today included)."""
        hour = now.replace(minute=0, second=0, microsecond=0)
        before = hour - timedelta(microseconds=1)  # the last moment of the previous hour
        cycles = joined(
            self.closed(("cycles", hour), lambda: cycle_timeline(self.db, hour - timedelta(hours=hours - 1), hour)),
            cycle_timeline(self.db, hour, now + timedelta(seconds=1)),
        )
        recent = joined(
            self.closed(("hours", hour), lambda: health_hours(self.db, before, hours - 1)),
            health_hours(self.db, now, 1),
        )
        yesterday = now - timedelta(days=1)
        history = joined(
            self.closed(("days", now.date()), lambda: health_days(self.db, yesterday, days - 1)),
            health_days(self.db, now, 1),
        )
        return ChartData(cycles, recent, history)
