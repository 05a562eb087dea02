"""The planner of an engine's visits (:mod:`topicstreams.crawl.topic_planner`) on a real SQLite file: the budget,
each schedule's intervals, what a visit teaches and writes, holes and burst pages, and a restart that starts from
the learnt rates."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from tests.support.crawler import project_crawler
from topicstreams.crawl.cooldown import CooldownPolicy
from topicstreams.crawl.engine_state import EngineState
from topicstreams.crawl.signals import topic_visited
from topicstreams.crawl.topic_planner import TopicPlanner, VisitCount
from topicstreams.freshness.rates import RateEstimate
from topicstreams.storage import add_topics, make_database, upgrade
from topicstreams.storage.topic_rates import read_topic_rates

TOPICS = ["quiet", "busy", "fresh"]


class Clock:
    """The planner's two clocks, moved by the test: monotonic seconds, and the time of day (``wall``)."""

    def __init__(self) -> None:
        self.now = 1000.0
        self.start = datetime(2026, 1, 1, tzinfo=UTC)

    def __call__(self) -> float:
        return self.now

    def wall(self) -> datetime:
        return self.start + timedelta(seconds=self.now)


@pytest.fixture
def db_url(tmp_path: Path) -> str:
    url = f"sqlite:///{tmp_path / 'news.db'}"
    upgrade(url)
    add_topics(make_database(url), TOPICS)
    return url


def planner_for(tmp_path: Path, db_url: str, schedule: str = "adaptive", clock: Clock | None = None, **adaptive):
    config = {
        "database": {"url": db_url},
        "scraper": {
            "scrape_interval": 60,
            "max_pages": 1,
            "schedule": schedule,
            "adaptive": {"min_interval": 10, "max_interval": 600, "burst_pages": 2, **adaptive},
        },
    }
    crawler = project_crawler(tmp_path, config)
    state = EngineState("google", floor=1.0, jitter_ratio=0.0, cooldown=CooldownPolicy(60, 2, 3600))
    databases: dict[str, object] = {}

    def database(url: str):
        if url not in databases:
            databases[url] = make_database(url)
        return databases[url]

    clock = clock or Clock()
    planner = TopicPlanner(crawler, state, database=database, clock=clock, wall=clock.wall)
    return planner, crawler, state


def visit(planner: TopicPlanner, topic: str, new: int, items: int = 10, ids: list[str] | None = None):
    """A visit ten minutes after the last one (on the planner's clocks), finding ``new`` of ``items`` new."""
    planner.clock.now += 600
    count = VisitCount(topic)
    page_ids = ids or [f"{topic}-{index}" for index in range(items)]
    stored = set(page_ids[new:])
    count.page(page_ids, stored)
    return planner.visited(count, "default")


def test_the_budget_is_what_the_fixed_schedule_sends_less_while_degraded_none_while_paused(tmp_path, db_url):
    planner, _, state = planner_for(tmp_path, db_url)
    planner.follow(TOPICS)
    assert planner.budget_per_hour() == 3 * 3600 / 60 * 1
    state.pace_multiplier = 2.0
    assert planner.budget_per_hour() == 3 * 3600 / 60 / 2
    state.paused = True
    assert planner.budget_per_hour() == 0


def test_fixed_gives_every_topic_the_scrape_interval_times_the_pace_and_never_reads_deeper(tmp_path, db_url):
    planner, _, state = planner_for(tmp_path, db_url, schedule="fixed")
    planner.follow(TOPICS)
    assert planner.interval("busy") == 60
    state.pace_multiplier = 2.0
    assert planner.interval("busy") == 120
    assert not planner.burst_allowed(0)


def test_a_visit_teaches_the_rate_writes_the_row_counts_holes_and_sends_the_signal(tmp_path, db_url):
    clock = Clock()
    planner, crawler, _ = planner_for(tmp_path, db_url, clock=clock)
    planner.follow(TOPICS)
    heard = []
    crawler.signals.connect(lambda visit: heard.append(visit), signal=topic_visited, weak=False)
    first = visit(planner, "busy", new=10)
    assert first.first and not first.hole and first.rate_per_hour is None
    assert first.interval_seconds == 60, "not learnt yet: the fixed interval"
    second = visit(planner, "busy", new=10)  # all new again, past the first visit: a hole
    assert second.hole and not second.first and second.censored
    assert crawler.stats.get_value("topicstreams/google/holes") == 1
    assert [each.topic for each in heard] == ["busy", "busy"]
    (row,) = read_topic_rates(make_database(db_url), "google")
    assert row.topic == "busy" and row.visits == 2 and row.holes == 1 and row.page_items == 10
    assert row.rate_per_hour is not None and row.rate_per_hour > 0
    assert row.interval_seconds == second.interval_seconds and row.next_due_at is not None


def test_a_hot_topic_gets_a_shorter_interval_than_a_quiet_one_within_the_bounds(tmp_path, db_url):
    planner, _, _ = planner_for(tmp_path, db_url)
    planner.follow(TOPICS)
    for topic, new in (("busy", 6), ("quiet", 0)):
        for _ in range(3):
            visit(planner, topic, new=new)
    planner.plan(force=True)
    busy, quiet, fresh = planner.interval("busy"), planner.interval("quiet"), planner.interval("fresh")
    assert 10 <= busy < quiet <= 600
    assert fresh == 60, "a topic never seen starts at the fixed interval"


def test_burst_pages_stop_at_the_limit_and_are_counted(tmp_path, db_url):
    planner, crawler, _ = planner_for(tmp_path, db_url)
    planner.follow(TOPICS)
    assert planner.burst_allowed(0) and planner.burst_allowed(1)
    assert not planner.burst_allowed(2)
    count = VisitCount("busy", burst_pages=2)
    count.page(["a", "b"], set())
    planner.visited(count, "default")
    assert crawler.stats.get_value("topicstreams/google/burst_pages") == 2


def test_a_page_the_store_cannot_tell_teaches_nothing(tmp_path, db_url):
    count = VisitCount("busy")
    count.page(["a", "b"], set())
    count.page(["c"], None)
    assert count.new is None and not count.censored and count.items == 3 and count.first_page_items == 2


def test_a_restart_starts_from_the_learnt_rates(tmp_path, db_url):
    planner, _, _ = planner_for(tmp_path, db_url)
    planner.follow(TOPICS)
    for _ in range(3):
        visit(planner, "busy", new=4)
    learnt = planner.pair("busy").estimate
    again, _, _ = planner_for(tmp_path, db_url)
    again.load()
    assert again.pair("busy").estimate == learnt
    assert not again.first_visit("busy") and again.first_visit("quiet")


def test_a_rate_that_jumps_brings_the_topics_next_visit_forward_at_once(tmp_path, db_url):
    clock = Clock()
    planner, _, _ = planner_for(tmp_path, db_url, clock=clock)
    planner.follow(TOPICS)
    quiet_pairs = {topic: planner.pair(topic) for topic in TOPICS}
    for pair in quiet_pairs.values():  # every topic learnt as quiet: about one new article an hour
        pair.estimate = RateEstimate(1.0, 4.0, 4.0, 5, 10)
        pair.last_visit_at = clock.wall()
    planner.plan(force=True)
    before = planner.interval("busy")
    plans = planner.plans
    broke = visit(planner, "busy", new=10)  # ten new in ten minutes where one was expected a little less often
    assert planner.plans > plans, "a jump makes the allocation again at once, not at its next turn"
    assert broke.rate_per_hour is not None and broke.rate_per_hour > 20
    assert broke.interval_seconds < before / 2
