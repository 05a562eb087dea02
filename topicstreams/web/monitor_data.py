"""What the monitor reads besides the health report: each engine's cycle timeline.

``scraper_cycles`` holds one row per engine, node and ``scraper.scrape_interval`` window. The monitor draws each
engine's last 24 hours of them, every node added up, in hourly buckets (by the hour each window ended in): topics
swept, entries and new feed events. The buckets are summed in SQL over the index
``ix_scraper_cycles_timeline`` alone (it holds every column read), so a day of 20 nodes × 4 engines at one row a
minute each (115,200 rows) stays a short read.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from datetime import UTC, datetime

from sqlalchemy import Engine, func, select

from topicstreams.storage.models import scraper_cycles_table as cycles
from topicstreams.storage.time_buckets import hour_bucket, parse_hour


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
    bucket = hour_bucket(db.dialect, cycles.c.window_end)
    query = (select(cycles.c.engine, bucket.label("hour"), func.sum(cycles.c.topics_count),
                    func.sum(cycles.c.entries), func.sum(cycles.c.new_events))
             .where(cycles.c.window_end >= start, cycles.c.window_end < end)
             .group_by(cycles.c.engine, bucket).order_by(cycles.c.engine, bucket))
    timeline: dict[str, list[CycleHour]] = defaultdict(list)
    with db.connect() as conn:
        for engine, hour, topics, entries, new_events in conn.execute(query):
            timeline[engine].append(CycleHour(parse_hour(hour).replace(tzinfo=UTC), int(topics or 0),
                                              int(entries or 0), int(new_events or 0)))
    return dict(timeline)
