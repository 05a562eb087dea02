"""What people see of the schedule (issue 36, CONTRACT "Freshness"), without a browser: the ``schedule_hours`` table
on a real SQLite file, its extension and the health reason ``holes`` fed ``topic_visited`` through a real crawler's
signals, the words of ``scrapy topics list``, the monitor panel's figures."""

from __future__ import annotations

import asyncio
import logging
from datetime import UTC, datetime, timedelta

import pytest
from scrapy.exceptions import NotConfigured

from tests.support.crawler import make_crawler
from topicstreams.crawl.runtime import Runtime
from topicstreams.crawl.signals import TopicVisit, topic_visited
from topicstreams.extensions.schedule_watch import ScheduleHoursExtension
from topicstreams.extensions.watch import HealthExtension
from topicstreams.health.holes_rule import HOLES, HOLES_MIN, HoleWindow, holes_reason
from topicstreams.reports.health_report import EngineReport
from topicstreams.reports.schedule_words import engine_text, engines_json, rate_text, topic_text
from topicstreams.spiders.google import GoogleSpider
from topicstreams.storage import engine_status, upgrade
from topicstreams.storage.schedule_hours import (
    HourCounts,
    ScheduleHourRow,
    add_schedule_hours,
    hour_of,
    purge_schedule_hours,
    read_schedule_hours,
)
from topicstreams.storage.topic_rates import TopicRateRow
from topicstreams.web.monitor_schedule import busiest_topics, engine_budgets

NOW = datetime(2026, 12, 4, 14, 15, tzinfo=UTC)
"""A quarter past the hour: the previous hour still counts three quarters in "the last hour"."""


def visit(
    *, pages: int = 1, burst: int = 0, hole: bool = False, at: datetime | None = None, budget: float = 600.0
) -> TopicVisit:
    return TopicVisit(
        engine="google",
        topic="climate",
        route="default",
        pages=pages,
        burst_pages=burst,
        new=3,
        items=10,
        censored=hole,
        hole=hole,
        first=False,
        rate_per_hour=4.0,
        interval_seconds=300.0,
        budget_per_hour=budget,
        at=at or datetime.now(UTC),
    )


def rate_row(topic: str, engine: str, rate: float | None, interval: float | None, due: datetime | None):
    return TopicRateRow(topic, engine, rate, 0.0, 0.0, 2, 10, interval, due, None)


# ---- the table -----------------------------------------------------------------------------------------------
def test_hours_add_up_across_writes_and_keep_the_largest_budget_then_go_with_the_retention(tmp_path, databases):
    url = f"sqlite:///{tmp_path / 'hours.db'}"
    upgrade(url)
    db = databases.of(url)
    hour = hour_of(NOW)
    first = HourCounts()
    first.add(requests=2, burst_pages=1, hole=True, budget_per_hour=600.0)
    first.add(requests=1, burst_pages=0, hole=False, budget_per_hour=None)
    add_schedule_hours(db, "n1", {("google", NOW): first, ("google", NOW - timedelta(days=40)): HourCounts(1, 1)})
    later = HourCounts()
    later.add(requests=1, burst_pages=0, hole=True, budget_per_hour=300.0)  # degraded: the hour keeps the larger
    add_schedule_hours(db, "n1", {("google", NOW + timedelta(minutes=30)): later})
    add_schedule_hours(db, "n2", {("google", NOW): later})
    rows = read_schedule_hours(db, NOW - timedelta(hours=1), node="n1")
    assert rows == [ScheduleHourRow("n1", "google", hour, 3, 4, 1, 2, 600.0)]
    assert len(read_schedule_hours(db, NOW - timedelta(days=41))) == 3
    assert purge_schedule_hours(db, NOW - timedelta(days=30)) == 1
    assert purge_schedule_hours(db, NOW - timedelta(days=30)) == 0
    assert {row.node for row in read_schedule_hours(db, NOW - timedelta(days=41))} == {"n1", "n2"}


# ---- the extension, fed through a real crawler's signals -----------------------------------------------------
def test_the_extension_follows_engine_spiders_with_a_database_only(tmp_path):
    class Other(GoogleSpider):
        name = "other"

    with pytest.raises(NotConfigured):
        ScheduleHoursExtension.from_crawler(make_crawler(tmp_path, spidercls=Other))
    with pytest.raises(NotConfigured):
        ScheduleHoursExtension.from_crawler(make_crawler(tmp_path, TOPICSTREAMS_DATABASE_URL=""))
    with pytest.raises(NotConfigured):
        ScheduleHoursExtension.from_crawler(make_crawler(tmp_path, TOPICSTREAMS_SCHEDULE_HOURS_ENABLED=False))


def test_visits_are_added_per_hour_in_memory_and_written_in_one_batch(tmp_path):
    crawler = make_crawler(tmp_path, retention_days=7)
    url = crawler.settings.get("TOPICSTREAMS_DATABASE_URL")
    upgrade(url)
    extension = ScheduleHoursExtension.from_crawler(crawler)
    db = Runtime.of(crawler).database(url)
    seen = {}

    async def main():
        extension.spider_opened(None)
        try:
            now = datetime.now(UTC)
            for sent in (visit(pages=1), visit(pages=4, burst=3, hole=True), visit(pages=1, budget=900.0)):
                crawler.signals.send_catch_log(topic_visited, visit=sent)
            crawler.signals.send_catch_log(topic_visited, visit=visit(at=now - timedelta(hours=1)))
            assert extension.outbox.flush()
            seen["before"] = read_schedule_hours(db, now - timedelta(hours=2))  # nothing written per visit
            extension.tick()  # the looping call's flush
            assert extension.outbox.flush()
            seen["after"] = read_schedule_hours(db, now - timedelta(hours=2))
            crawler.signals.send_catch_log(topic_visited, visit=visit(pages=2))
        finally:
            await extension.spider_closed(None, "finished")
        seen["closed"] = read_schedule_hours(db, now - timedelta(hours=2))

    asyncio.run(main())
    assert seen["before"] == []
    previous, current = seen["after"]
    assert (previous.visits, previous.requests) == (1, 1)
    assert (current.visits, current.requests, current.burst_pages, current.holes) == (3, 6, 3, 1)
    assert current.budget_per_hour == 900.0
    assert (seen["closed"][-1].visits, seen["closed"][-1].requests) == (4, 8)  # the close writes the rest


# ---- the health reason holes ---------------------------------------------------------------------------------
def test_hole_window_counts_the_holes_of_one_window_only():
    window = HoleWindow(600.0)
    for at in (0.0, 100.0, 500.0):
        window.add(at)
    assert window.count(550.0) == 3 and holes_reason(window.count(550.0))
    assert window.count(650.0) == 2 and not holes_reason(2)
    assert not holes_reason(None)


def test_visits_ending_in_holes_make_the_reason_holes_beside_the_score(tmp_path, caplog):
    caplog.set_level(logging.WARNING, logger="topicstreams.extensions.health_holes")
    crawler = make_crawler(tmp_path, {})
    url = crawler.settings.get("TOPICSTREAMS_DATABASE_URL")
    upgrade(url)
    extension = HealthExtension.from_crawler(crawler)
    db = Runtime.of(crawler).database(url)
    rows = {}

    async def main():
        extension.spider_opened(None)
        try:
            crawler.signals.send_catch_log(topic_visited, visit=visit())
            assert extension.outbox.flush()
            rows["calm"] = engine_status.read_status(db, "google", "n1")
            for _ in range(HOLES_MIN - 1):
                crawler.signals.send_catch_log(topic_visited, visit=visit(hole=True))
            assert extension.outbox.flush()
            rows["two"] = engine_status.read_status(db, "google", "n1")
            crawler.signals.send_catch_log(topic_visited, visit=visit(hole=True))
            assert extension.outbox.flush()
            rows["three"] = engine_status.read_status(db, "google", "n1")
        finally:
            await extension.spider_closed(None, "finished")

    asyncio.run(main())
    assert rows["calm"].window_holes == 0
    assert rows["two"].window_holes == HOLES_MIN - 1
    assert HOLES not in EngineReport.of("n1", "google", rows["two"], NOW).reasons
    three = rows["three"]
    assert three.window_holes == HOLES_MIN and three.score is None  # informs only: no score from visits
    assert EngineReport.of("n1", "google", three, three.updated_at).reasons[-1] == HOLES
    assert [r.getMessage() for r in caplog.records if "ended in holes" in r.getMessage()] != []


# ---- the words of scrapy topics list, and the API's engines member ------------------------------------------
def test_each_engine_in_words_and_as_the_api_writes_it():
    due = NOW + timedelta(minutes=37)
    google = rate_row("climate", "google", 12.0, 300.0, due)
    bing = rate_row("climate", "bing", None, 900.0, NOW + timedelta(days=1, hours=1))
    assert engine_text(google, NOW) == "google 12.0/h every 5 min, due 14:52 UTC"
    assert engine_text(bing, NOW) == "bing learning, every 15 min, due 2026-12-05 15:15 UTC"
    assert engine_text(rate_row("t", "yahoo", 0.04, 3600.0, NOW - timedelta(seconds=1)), NOW) == (
        "yahoo 0.04/h every 60 min, due now"
    )
    assert topic_text([], NOW) == "learning"
    assert topic_text([bing, google], NOW).count("; ") == 1
    assert rate_text(250.4) == "250/h"
    assert engines_json([google, rate_row("climate", "brave", None, None, None)], lambda t: t and t.isoformat()) == {
        "google": {"rate_per_hour": 12.0, "interval_seconds": 300.0, "next_due_at": due.isoformat()},
        "brave": {"rate_per_hour": None, "interval_seconds": None, "next_due_at": None},
    }


# ---- the monitor panel's figures ----------------------------------------------------------------------------
def test_the_last_hour_weighs_the_previous_hour_by_its_share_and_24_hours_add_up():
    hour = hour_of(NOW)

    def row(hours_ago: int, requests: int, holes: int, budget: float | None, node: str = "n1", engine: str = "google"):
        return ScheduleHourRow(node, engine, hour - timedelta(hours=hours_ago), requests, requests, 0, holes, budget)

    rows = [row(30, 99, 9, 600.0), row(5, 50, 2, 600.0), row(1, 400, 4, 600.0), row(0, 100, 1, 300.0)]
    rows += [row(0, 10, 0, 0.0, engine="bing")]
    google, bing = engine_budgets(rows, NOW)
    assert (bing.engine, bing.text, bing.level) == ("bing", "10 requests (budget 0: paused)", "none")
    assert google.requests == 100 + 300  # this hour's, and three quarters of the previous one's
    assert (google.holes_hour, google.holes_day) == (4, 7)  # 1 + 3 rounded; the hour 30 h ago is out of the day
    assert google.budget == 600.0 and google.bar == round(400 / 600 * 100, 1) and google.level == "used"
    assert google.text == "400 of 600 requests (67 %)"
    over = engine_budgets([row(0, 900, 0, 600.0)], NOW)[0]
    assert over.level == "over" and over.bar == 100


def test_the_busiest_topics_are_the_highest_learnt_rates():
    rows = [rate_row(f"t{n}", "google", float(n), 60.0 * (10 - n), NOW) for n in range(8)]
    rows.append(rate_row("new", "google", None, 300.0, NOW))
    busiest = busiest_topics(rows, NOW)
    assert [(topic.topic, topic.rate) for topic in busiest] == [
        ("t7", "7.0/h"),
        ("t6", "6.0/h"),
        ("t5", "5.0/h"),
        ("t4", "4.0/h"),
        ("t3", "3.0/h"),
    ]
    assert busiest[0].interval == "every 3 min" and busiest[-1].interval == "every 7 min"
