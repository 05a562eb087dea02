"""The topic supply behind the spider's loop, on a real SQLite file and an injected clock (no crawl, no browser)."""

from __future__ import annotations

import pytest

from topicstreams.crawl.engine_state import CooldownPolicy, EngineState
from topicstreams.crawl.supply import Fate, PassTopics, in_shard
from topicstreams.engines.classify import ResponseClass, Verdict
from topicstreams.storage import (
    add_topics,
    list_topics,
    set_active,
    upgrade,
)

OK = Verdict(ResponseClass.OK, "10 results")
BLOCK = Verdict(ResponseClass.HARD_BLOCK, "HTTP 429")
ERROR = Verdict(ResponseClass.ERROR, "HTTP 500")


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def db_url(tmp_path) -> str:
    url = f"sqlite:///{tmp_path / 'supply.db'}"
    upgrade(url)
    return url


def state(clock: Clock) -> EngineState:
    return EngineState("google", floor=1.0, jitter_ratio=0.0, cooldown=CooldownPolicy(60, 2, 3600), clock=clock)


def supply(databases, db_url: str, clock: Clock, **kwargs) -> PassTopics:
    options = {"interval": 100.0, "topics": None, "once": False, "once_attempts": 2, **kwargs}
    made = PassTopics(state(clock), database_url=db_url, clock=clock, **options, database=databases.of)
    made.open()
    return made


def take_all(topics: PassTopics) -> list[str]:
    taken = []
    while (topic := topics.take()) is not None:
        taken.append(topic)
    return taken


def test_once_every_topic_at_once_then_exhausted(db_url, clock, databases):
    topics = supply(databases, db_url, clock, topics=["a", "b"], once=True)
    assert take_all(topics) == ["a", "b"]
    assert topics.done("a", OK).fate is Fate.SWEPT and topics.done("b", OK).fate is Fate.SWEPT
    assert topics.exhausted and topics.take() is None
    # a one-off run's topics are stored inactive: they never join the standing list
    assert [(t.name, t.active) for t in list_topics(databases.of(db_url))] == [("a", False), ("b", False)]


def test_once_a_failing_topic_is_retried_then_given_up(db_url, clock, databases):
    topics = supply(databases, db_url, clock, topics=["a"], once=True, once_attempts=2)
    assert topics.take() == "a"
    first = topics.done("a", ERROR)
    assert (first.fate, first.attempts, first.retry_in) == (Fate.RETRY, 1, 60)
    assert topics.take() is None and topics.wait() == pytest.approx(60)  # due again the cooldown's initial later
    clock.now += 60
    assert topics.take() == "a"
    assert topics.done("a", ERROR) == type(first)(Fate.GIVEN_UP, 2)
    assert topics.exhausted


def test_a_blocked_topic_keeps_its_due_time_so_it_is_the_probe(db_url, clock, databases):
    topics = supply(databases, db_url, clock, topics=["a", "b"], once=True)
    assert topics.take() == "a"
    outcome = topics.done("a", BLOCK)
    assert (outcome.fate, outcome.retry_in) == (Fate.RETRY, None)  # after the cooldown, whenever it ends
    assert take_all(topics) == ["a", "b"]  # first again: it goes back before those behind it


def test_a_topic_blocked_on_one_of_several_routes_waits_for_that_pairs_cooldown_and_a_route_failure_fails_over(
    db_url, clock, databases
):
    topics = supply(databases, db_url, clock, topics=["a", "b"], once=True)
    assert topics.take() == "a"
    topics.done("a", BLOCK, hold=60)  # the pair cools 60 s: no other route takes it at once
    assert take_all(topics) == ["b"]
    clock.now += 60
    assert take_all(topics) == ["a"]
    topics.fail_over("a")  # its route failed (the proxy): due now for another route, no attempt counted
    assert take_all(topics) == ["a"] and topics.attempts["a"] == 1


def test_continuous_topics_of_the_argument_are_staggered_and_rearmed_an_interval_on(db_url, clock, databases):
    topics = supply(databases, db_url, clock, topics=["a", "b"])
    assert take_all(topics) == ["a"]  # b is due half an interval later
    assert topics.wait() == pytest.approx(50)
    topics.state.pace_multiplier = 2.0  # a slowed engine comes round later too
    assert topics.done("a", OK).fate is Fate.SWEPT
    clock.now += 50
    assert take_all(topics) == ["b"]
    assert topics.schedule.due_time("a") == pytest.approx(1200)
    assert not topics.exhausted


def test_the_table_seeds_and_is_followed(db_url, clock, databases):
    topics = supply(databases, db_url, clock, seed=["alpha", "beta"])
    db = databases.of(db_url)
    assert take_all(topics) == ["alpha"]
    set_active(db, ["beta"], False)
    add_topics(db, ["gamma"])
    clock.now += 100  # the next reconcile: beta dropped, gamma staggered in
    topics.done("alpha", OK)
    assert take_all(topics) == ["gamma"]  # alpha is due again an interval after its sweep
    assert "beta" not in topics.schedule.topics and topics.schedule.due_time("alpha") == pytest.approx(1200)


def test_a_shard_takes_only_its_topics(db_url, clock, databases):
    names = [f"t{i}" for i in range(20)]
    topics = supply(databases, db_url, clock, topics=names, once=True, shard="1/3")
    assert take_all(topics) == [name for name in names if in_shard(name, "1/3")]


def test_once_on_a_paused_engine_abandons_what_is_left(db_url, clock, databases):
    topics = supply(databases, db_url, clock, topics=["a", "b", "c"], once=True)
    assert topics.take() == "a"
    topics.done("a", OK)
    assert topics.abandon() == ["b", "c"] and topics.exhausted


def test_a_stored_name_the_engine_cannot_take_is_skipped_with_one_warning(db_url, clock, caplog, databases):
    from topicstreams.engines import Google
    from topicstreams.engines.topic_names import topic_problem

    google = Google("http://127.0.0.1:9")
    long_name = "y" * 5000
    # stored before names were checked: the storage layer takes any name
    add_topics(databases.of(db_url), ["alpha", long_name, "a\tb", "beta"])
    caplog.set_level("WARNING", logger="topicstreams.crawl.supply")
    topics = supply(databases, db_url, clock, problem_of=lambda name: topic_problem(name, [google]))

    def one_pass() -> list[str]:  # what the loop takes over one interval, each topic done as it is taken
        taken = []
        for _ in range(10):
            for topic in take_all(topics):
                taken.append(topic)
                topics.done(topic, OK)
            clock.now += 10
        return sorted(taken)

    assert one_pass() == ["alpha", "beta"]
    warnings = sorted(record.getMessage() for record in caplog.records)
    assert len(warnings) == 2, warnings
    assert warnings[1].startswith(
        f"[google] topic {'y' * 40 + '…' + 'y' * 12!r} (5,000 characters) of the topics "
        "table is skipped: its google results URL would be"
    )
    assert "y" * 60 not in warnings[1] and "`scrapy topics deactivate`" in warnings[1]
    assert warnings[0].startswith("[google] topic 'a\\tb' of the topics table is skipped: it holds a control")
    for _ in range(3):  # pass after pass (each with its reconcile of the table): no new warning, still skipped
        assert one_pass() == ["alpha", "beta"]
    assert len(caplog.records) == 2


def test_a_topics_table_that_cannot_be_read_keeps_the_schedule_and_is_read_again_later(
    db_url, clock, tmp_path, databases
):
    import sqlite3

    add_topics(databases.of(db_url), ["a", "b"])
    topics = supply(databases, db_url, clock)
    assert sorted(take_all_due(topics, clock, 100)) == ["a", "b"]  # staggered over the interval
    for name in ("a", "b"):
        topics.done(name, OK)
    path = tmp_path / "supply.db"
    with sqlite3.connect(path) as conn:  # the table cannot be read (as when the database is away)
        conn.execute("ALTER TABLE topics RENAME TO topics_away")
    clock.now += 100  # a reconcile is due, and both topics again
    assert sorted(take_all(topics)) == ["a", "b"]  # the schedule went on as it was
    for name in ("a", "b"):
        topics.done(name, OK)
    with sqlite3.connect(path) as conn:
        conn.execute("ALTER TABLE topics_away RENAME TO topics")
    add_topics(databases.of(db_url), ["c"])
    clock.now += 11  # the table is looked at again soon, not an interval later
    assert take_all_due(topics, clock, 5) == ["c"]


def take_all_due(topics: PassTopics, clock: Clock, within: float) -> list[str]:
    """Every topic taken over the next ``within`` seconds (the clock moved on one second at a time)."""
    taken = []
    for _ in range(int(within)):
        taken += take_all(topics)
        clock.now += 1
    return taken
