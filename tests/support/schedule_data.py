"""A database filled with what the adaptive schedule writes (``topic_rates``, ``schedule_hours``, the engines'
``window_holes``), for the tests of what people see of it."""

from __future__ import annotations

from datetime import timedelta

from topicstreams.storage import add_topics, utcnow
from topicstreams.storage.engine_status import save_status
from topicstreams.storage.schedule_hours import HourCounts, add_schedule_hours, hour_of
from topicstreams.storage.topic_rates import TopicRateRow, save_topic_rates

HOSTILE = '<img src=x onerror=alert("topic")>'


def rate(topic: str, engine: str, per_hour: float | None, interval: float | None, due_in: float | None, holes: int = 0):
    due = None if due_in is None else utcnow() + timedelta(seconds=due_in)
    return TopicRateRow(topic, engine, per_hour, 0.0, 0.0, 3, 10, interval, due, utcnow(), holes=holes)


def fill(db) -> None:
    """Three topics (one hostile), rates on google and bing, an hour and a half of visits with holes, google's row
    holding three recent holes."""
    add_topics(db, ["climate", "quiet", HOSTILE, "energy"])
    save_topic_rates(
        db,
        [
            rate("climate", "google", 42.5, 120.0, 90, holes=4),
            rate("climate", "bing", None, 600.0, 400),
            rate(HOSTILE, "google", 18.0, 300.0, 200, holes=3),
            rate("energy", "google", 0.4, 3600.0, 3000),
            rate("energy", "bing", 2.0, 1800.0, 1500),
        ],
    )
    now = utcnow()
    counts: dict = {}
    for engine, hours_ago, visits, pages, holes, budget in (
        ("google", 0, 30, 44, 2, 600.0),
        ("google", 1, 40, 60, 3, 600.0),
        ("bing", 0, 12, 12, 0, 240.0),
    ):
        hour = HourCounts()
        for n in range(visits):
            hour.add(requests=1, burst_pages=0, hole=n < holes, budget_per_hour=budget)
        hour.requests, hour.burst_pages = pages, pages - visits
        counts[(engine, hour_of(now) - timedelta(hours=hours_ago))] = hour
    add_schedule_hours(db, "n1", counts)
    save_status(db, "google", "n1", state="running", score=91, band="ok", window_holes=3)
    save_status(db, "bing", "n1", state="running", score=95, band="ok", window_holes=1)
