"""Lease mode's topic supply (:class:`topicstreams.crawl.leased_supply.LeasedTopics`) driven as the spider's loop drives
it — ``open``, ``prepare``, ``take``, ``done``, ``wait``, ``close`` in an asyncio loop — against the suite's real
PostgreSQL server, without a crawl or a browser.

The supply's own clock is injected (when to look at the schedule again, when to reconcile); the schedule's times
are the server's, as in a cluster. Each test gets a fresh database at the newest migration; its topics are put in
the shared schedule already due, in a known order (the server's clock, a second apart)."""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Awaitable, Callable
from datetime import timedelta
from pathlib import Path

import pytest
from scrapy.settings import Settings
from sqlalchemy import Engine, event, text

from tests.support.crawler import project_crawler
from tests.support.databases import database_fixture
from tests.support.project import write_config
from tests.support.schedule_rows import rows, set_due
from topicstreams.addon import config_settings
from topicstreams.config.loading import load_config
from topicstreams.crawl.engine_state import CooldownPolicy, EngineState
from topicstreams.crawl.leased_supply import LeasedTopics
from topicstreams.crawl.supply import RECONCILE_RETRY, Fate, PassTopics
from topicstreams.crawl.supply_factory import leases_topics, topic_supply_for
from topicstreams.crawl.topic_planner import TopicPlanner
from topicstreams.engines.classify import ResponseClass, Verdict
from topicstreams.storage import add_topics, set_active
from topicstreams.storage import leases as shared
from topicstreams.storage.db import utcnow
from topicstreams.storage.topic_rates import TopicRateRow, save_topic_rates

psycopg = pytest.importorskip("psycopg", reason="psycopg 3 is not installed (pip install 'topicstreams[postgresql]')")

OK = Verdict(ResponseClass.OK, "10 results")
BLOCK = Verdict(ResponseClass.HARD_BLOCK, "HTTP 429")
ERROR = Verdict(ResponseClass.ERROR, "HTTP 500")

INTERVAL = 600.0
LEASE = 60.0


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


db = database_fixture("pg_url")


def server_now(db: Engine):
    with db.connect() as conn:
        return conn.scalar(text("SELECT now()"))


def scheduled(db: Engine, names: list[str], engine: str = "google") -> None:
    """``names`` active on the topics table and in the engine's schedule, due now in the order given."""
    add_topics(db, names)
    now = server_now(db)
    shared.reconcile(db, engine, INTERVAL, now=now - timedelta(hours=1))
    set_due(db, {name: now - timedelta(seconds=len(names) - i) for i, name in enumerate(names)}, engine)


def leased(databases, url: str, clock: Clock, node: str = "n1", *, jitter: float = 0.0, **options) -> LeasedTopics:
    state = EngineState("google", floor=1.0, jitter_ratio=jitter, cooldown=CooldownPolicy(60, 2, 3600), clock=clock)
    settings = {"interval": INTERVAL, "lease_seconds": LEASE, "poll": 5.0, **options}
    return LeasedTopics(state, database_url=url, node=node, clock=clock, **settings, database=databases.of)


async def settled(*supplies: LeasedTopics) -> None:
    """Wait until what each supply handed its thread (re-arms, releases) is done: the thread runs them in order."""
    for supply in supplies:
        await asyncio.wrap_future(supply.worker.submit(lambda: None))


async def next_topic(supply: LeasedTopics) -> str | None:
    """One turn of the spider's loop: prepare, then take."""
    await supply.prepare()
    return supply.take()


def run(scenario: Callable[[], Awaitable[None]]) -> None:
    asyncio.run(scenario())


# ==== claim, re-arm, release ===================================================================================


def test_a_topic_is_claimed_then_rearmed_to_its_next_slot(pg_url, db, clock, databases):
    scheduled(db, ["alpha", "beta", "gamma"])
    before = rows(db)

    async def scenario() -> None:
        supply = leased(databases, pg_url, clock, jitter=0.2)
        supply.open()
        try:
            assert await next_topic(supply) == "alpha"  # the oldest due
            assert supply.take() is None  # one claim at a time: made when the loop can start it
            held = rows(db)
            assert held["alpha"]["lease_node"] == "n1" and held["alpha"]["lease_token"]
            assert (
                timedelta(seconds=LEASE - 10)
                < held["alpha"]["lease_until"] - server_now(db)
                <= timedelta(seconds=LEASE)
            )
            assert held["beta"]["lease_token"] is None and held["gamma"]["lease_token"] is None
            scraped_at = utcnow()
            assert supply.done("alpha", OK).fate is Fate.SWEPT
            await settled(supply)
        finally:
            supply.close()
        row = rows(db)["alpha"]
        assert row["lease_token"] is None and row["lease_node"] is None and row["lease_until"] is None
        assert (row["last_node"], row["scrapes"]) == ("n1", 1)
        step = timedelta(seconds=INTERVAL)
        assert row["slot_at"] == before["alpha"]["slot_at"] + step  # anchored: one interval after its slot
        assert row["slot_at"] > scraped_at
        assert abs(row["due_at"] - row["slot_at"]) <= step * 0.1  # the jitter, ±0.2/2 of an interval
        assert supply.lost == 0

    run(scenario)


def test_a_benching_verdict_gives_the_topic_back_due_as_it_was(pg_url, db, clock, databases):
    scheduled(db, ["alpha", "beta"])
    due = rows(db)["alpha"]["due_at"]

    async def scenario() -> None:
        blocked, other = (
            leased(databases, pg_url, clock, "blocked-node"),
            leased(databases, pg_url, clock, "other-node"),
        )
        blocked.open()
        other.open()
        try:
            assert await next_topic(blocked) == "alpha"
            outcome = blocked.done("alpha", BLOCK)
            assert (outcome.fate, outcome.attempts, outcome.retry_in) == (Fate.RETRY, 1, None)
            await settled(blocked)
            row = rows(db)["alpha"]
            assert row["lease_token"] is None and row["due_at"] == due and row["scrapes"] == 0
            assert await next_topic(other) == "alpha"  # a node that still reaches the engine takes it at once
            assert rows(db)["alpha"]["lease_node"] == "other-node"
        finally:
            blocked.close()
            other.close()

    run(scenario)


def test_another_failure_gives_the_topic_back_due_a_cooldown_later(pg_url, db, clock, databases):
    scheduled(db, ["alpha", "beta"])

    async def scenario() -> None:
        failing, other = (
            leased(databases, pg_url, clock, "n1"),
            leased(databases, pg_url, clock, "n2"),
        )
        failing.open()
        other.open()
        try:
            assert await next_topic(failing) == "alpha"
            failed_at = utcnow()
            outcome = failing.done("alpha", ERROR)
            assert (outcome.fate, outcome.attempts, outcome.retry_in) == (Fate.RETRY, 1, 60)
            await settled(failing)
            row = rows(db)["alpha"]
            assert row["lease_token"] is None and row["scrapes"] == 0
            assert failed_at + timedelta(seconds=59) <= row["due_at"] <= utcnow() + timedelta(seconds=60)
            assert await next_topic(other) == "beta"  # alpha is not due yet
            assert await next_topic(other) is None
        finally:
            failing.close()
            other.close()

    run(scenario)


def test_close_gives_back_the_claims_in_flight_and_ready(pg_url, db, clock, databases):
    scheduled(db, ["alpha", "beta", "gamma"])

    async def scenario() -> None:
        first = leased(databases, pg_url, clock, "stopping")
        first.open()
        assert await next_topic(first) == "alpha"  # in flight
        await first.prepare()  # beta claimed, ready for the next turn
        assert {name for name, row in rows(db).items() if row["lease_token"]} == {"alpha", "beta"}
        first.close()
        assert all(row["lease_token"] is None and row["scrapes"] == 0 for row in rows(db).values())
        second = leased(databases, pg_url, clock, "survivor")
        second.open()
        try:
            assert [await next_topic(second) for _ in range(3)] == ["alpha", "beta", "gamma"]
        finally:
            second.close()

    run(scenario)


def test_a_deactivated_topic_is_not_taken(pg_url, db, clock, databases):
    scheduled(db, ["alpha", "beta"])
    set_active(db, ["alpha"], False)

    async def scenario() -> None:
        supply = leased(databases, pg_url, clock)
        supply.open()
        try:
            assert await next_topic(supply) == "beta"
            assert await next_topic(supply) is None
            assert supply.wait() > 0
        finally:
            supply.close()
        assert "alpha" not in rows(db)  # its free row went at the supply's first reconcile

    run(scenario)


def test_topics_added_to_the_table_reach_the_schedule_within_an_interval(pg_url, db, clock, databases):
    async def scenario() -> None:
        supply = leased(databases, pg_url, clock, seed=["seeded"])
        supply.open()
        try:
            assert await next_topic(supply) in (None, "seeded")
            assert sorted(rows(db)) == ["seeded"]  # seeded into the table, reconciled into the schedule
            assert 0 < supply.wait() <= 5.0  # looks again within the poll
            add_topics(db, ["added later"])
            clock.now += INTERVAL
            await supply.prepare()
            assert sorted(rows(db)) == ["added later", "seeded"]
            first = rows(db)["added later"]["slot_at"]
            assert first <= server_now(db) + timedelta(seconds=INTERVAL)
        finally:
            supply.close()

    run(scenario)


def test_a_node_whose_lease_was_taken_rearms_nothing(pg_url, db, clock, caplog, databases):
    scheduled(db, ["alpha"])

    async def scenario() -> None:
        slow, quick = (
            leased(databases, pg_url, clock, "slow"),
            leased(databases, pg_url, clock, "quick"),
        )
        slow.open()
        quick.open()
        try:
            assert await next_topic(slow) == "alpha"
            with db.begin() as conn:  # the slow node's lease runs out (it was not extended)
                conn.execute(text("UPDATE schedule SET lease_until = now() - interval '1 second'"))
            assert await next_topic(quick) == "alpha"
            caplog.set_level(logging.WARNING, logger="topicstreams.crawl.leased_supply")
            assert slow.done("alpha", OK).fate is Fate.SWEPT
            await settled(slow)
            assert slow.lost == 1
            assert "another node claimed it" in caplog.text
            row = rows(db)["alpha"]
            assert (row["lease_node"], row["scrapes"], row["last_node"]) == ("quick", 0, None)
            quick.done("alpha", OK)
            await settled(quick)
            row = rows(db)["alpha"]
            assert (row["lease_node"], row["scrapes"], row["last_node"]) == (None, 1, "quick")
        finally:
            slow.close()
            quick.close()

    run(scenario)


def test_leases_are_extended_while_a_topic_is_worked_on(pg_url, db, clock, databases):
    scheduled(db, ["alpha"])

    async def scenario() -> None:
        worker, other = (
            leased(databases, pg_url, clock, "worker", lease_seconds=1.0),
            leased(databases, pg_url, clock, "other"),
        )
        worker.open()
        other.open()
        try:
            assert await next_topic(worker) == "alpha"
            first_until = rows(db)["alpha"]["lease_until"]
            await asyncio.sleep(2.0)  # twice the lease: extended every quarter of it meanwhile
            row = rows(db)["alpha"]
            assert row["lease_until"] > first_until and row["lease_until"] > server_now(db)
            assert await next_topic(other) is None
            worker.done("alpha", OK)
            await settled(worker)
            assert rows(db)["alpha"]["last_node"] == "worker" and worker.lost == 0
        finally:
            worker.close()
            other.close()

    run(scenario)


def test_a_database_that_goes_away_makes_the_engine_wait(pg_url, db, clock, postgres_server, caplog, databases):
    scheduled(db, ["alpha", "beta"])

    async def scenario() -> None:
        supply = leased(databases, pg_url, clock)
        supply.open()
        try:
            assert await next_topic(supply) == "alpha"
            supply.done("alpha", OK)
            await settled(supply)
            caplog.set_level(logging.WARNING, logger="topicstreams.crawl.leased_supply")
            postgres_server.halt()
            try:
                await supply.prepare()  # does not raise
                assert supply.take() is None
                assert supply.wait() == pytest.approx(RECONCILE_RETRY)
                assert "could not claim topics from the shared schedule" in caplog.text
                clock.now += 1
                await supply.prepare()  # not looked at again before its time
                assert supply.take() is None and 0 < supply.wait() < RECONCILE_RETRY
            finally:
                postgres_server.resume()
            clock.now += RECONCILE_RETRY
            assert await next_topic(supply) == "beta"
            assert supply.away is None
        finally:
            supply.close()

    run(scenario)


def test_a_claim_being_made_when_the_supply_closes_is_given_back(pg_url, db, clock, databases):
    """The spider closes (SIGTERM) while its loop waits on ``prepare()``: the claim that look makes in the supply's
    thread lands after ``close()`` took stock. It must be given back too, not left to expire a lease later."""
    scheduled(db, ["alpha", "beta"])

    async def scenario() -> None:
        supply = leased(databases, pg_url, clock, "stopping")
        supply.open()
        claiming = asyncio.ensure_future(supply.prepare())
        await asyncio.sleep(0)  # the loop is in prepare(): the claim is handed to the supply's thread
        supply.close()
        await claiming
        supply.worker.shutdown(wait=True)

    run(scenario)
    assert all(row["lease_token"] is None for row in rows(db).values()), rows(db)


def test_the_database_is_touched_only_from_the_supplys_own_thread(pg_url, db, clock, databases):
    """Never on the reactor (the module's promise): a slow or unreachable server must not stall the crawl."""
    scheduled(db, ["alpha"])
    threads: set[str] = set()

    def seen(*args) -> None:
        threads.add(threading.current_thread().name)

    event.listen(db, "before_cursor_execute", seen)
    try:

        async def scenario() -> None:
            supply = leased(databases, pg_url, clock, seed=["seeded"])
            supply.open()
            assert await next_topic(supply) == "alpha"
            supply.done("alpha", OK)
            assert await next_topic(supply) is None
            supply.close()
            supply.worker.shutdown(wait=True)

        run(scenario)
    finally:
        event.remove(db, "before_cursor_execute", seen)
    assert threads and all(name.startswith("leases-google") for name in threads), threads


# ==== which supply a crawl gets ================================================================================


def crawl_settings(folder: Path, database_url: str, assignment: str) -> Settings:
    config = write_config(
        folder,
        {
            "database": {"url": database_url},
            "node": {"id": "node-a"},
            "topics": ["configured"],
            "scraper": {"schedule": "fixed", "assignment": assignment},
        },
    )
    settings = Settings()
    settings.setmodule("topicstreams.settings")
    settings.update(config_settings(load_config({"TOPICSTREAMS_CONFIG": str(config)}, environ={})))
    return settings


def test_continuous_runs_in_lease_mode_claim_and_one_off_runs_do_not(tmp_path, pg_url, clock, databases):
    settings = crawl_settings(tmp_path, pg_url, "lease")
    state = EngineState("google", floor=1.0, jitter_ratio=0.0, cooldown=CooldownPolicy(60, 2, 3600), clock=clock)
    assert leases_topics(settings, topics=None, once=False)
    assert not leases_topics(settings, topics=["x"], once=False)
    assert not leases_topics(settings, topics=None, once=True)
    supply = topic_supply_for(settings, state, topics=None, once=False, database=databases.of)
    assert isinstance(supply, LeasedTopics)
    assert (supply.node, supply.lease_seconds, supply.interval, supply.seed) == ("node-a", 120, 60, ["configured"])
    supply.worker.shutdown()
    assert isinstance(
        topic_supply_for(settings, state, topics=["x", "y"], once=False, database=databases.of), PassTopics
    )
    assert isinstance(topic_supply_for(settings, state, topics=None, once=True, database=databases.of), PassTopics)
    shard = crawl_settings(tmp_path, pg_url, "shard")
    assert not leases_topics(shard, topics=None, once=False)
    assert isinstance(topic_supply_for(shard, state, topics=None, once=False, database=databases.of), PassTopics)


def test_a_one_off_run_in_lease_mode_claims_nothing_from_the_shared_schedule(tmp_path, pg_url, db, clock, databases):
    scheduled(db, ["alpha", "beta"])
    before = rows(db)
    settings = crawl_settings(tmp_path, pg_url, "lease")
    state = EngineState("google", floor=1.0, jitter_ratio=0.0, cooldown=CooldownPolicy(60, 2, 3600), clock=clock)
    for topics, once in ((["alpha", "one-off"], False), (None, True)):
        supply = topic_supply_for(settings, state, topics=topics, once=once, database=databases.of)
        supply.open()
        taken = []
        while (topic := supply.take()) is not None:
            taken.append(topic)
            supply.done(topic, OK)
        assert taken
        supply.close()
    assert rows(db) == before  # no lease taken, nothing re-armed, no row added


# ==== routes: a claim per free lane ============================================================================


def test_each_free_lane_claims_a_topic_of_its_own_and_a_failover_hands_the_claim_to_another_lane(
    pg_url, db, clock, databases
):
    """A node holds as many of an engine's topics at once as it has lanes free to start them (one per route: each
    lane's turn prepares and takes); a topic whose route failed stays this node's and goes to the next lane."""
    scheduled(db, ["alpha", "beta", "gamma", "delta"])

    async def scenario() -> None:
        supply = leased(databases, pg_url, clock)
        supply.open()
        try:
            lanes = [await next_topic(supply) for _ in range(3)]  # three routes, each free: a turn each
            assert lanes == ["alpha", "beta", "gamma"]
            held = rows(db)
            assert {name for name, row in held.items() if row["lease_node"] == "n1"} == {"alpha", "beta", "gamma"}
            assert held["delta"]["lease_token"] is None
            supply.fail_over("beta")  # beta's route failed: another lane takes it at once, still under its lease
            assert await next_topic(supply) == "beta"
            assert rows(db)["beta"]["lease_token"] == held["beta"]["lease_token"]
            assert rows(db)["delta"]["lease_token"] is None  # no claim was made for it meanwhile
        finally:
            supply.close()

    run(scenario)


def test_the_adaptive_schedule_rearms_a_claim_by_the_topics_learnt_interval(tmp_path, pg_url, db, clock, databases):
    """Lease mode under ``scraper.schedule: adaptive``: the planner (whose rates every node reads from
    ``topic_rates``) gives a busy topic a shorter interval than the fixed schedule's; its claim is re-armed by it."""
    scheduled(db, ["alpha", "beta"])
    save_topic_rates(
        db,
        [
            TopicRateRow("alpha", "google", 30.0, 30.0, 1.0, 3, 10, None, None, None),
            TopicRateRow("beta", "google", 0.05, 0.05, 1.0, 3, 10, None, None, None),
        ],
    )
    config = {"database": {"url": pg_url}, "scraper": {"scrape_interval": INTERVAL, "schedule": "adaptive"}}
    crawler = project_crawler(tmp_path, config)

    async def scenario() -> None:
        state = EngineState("google", floor=1.0, jitter_ratio=0.0, cooldown=CooldownPolicy(60, 2, 3600), clock=clock)
        planner = TopicPlanner(crawler, state, database=databases.of, clock=clock)
        planner.load()
        supply = LeasedTopics(
            state,
            database_url=pg_url,
            node="n1",
            clock=clock,
            interval=INTERVAL,
            lease_seconds=LEASE,
            poll=5.0,
            database=databases.of,
            planner=planner,
        )
        supply.open()
        try:
            assert await next_topic(supply) == "alpha"  # the oldest due
            assert planner.followed == ["alpha", "beta"], "the budget is every active topic's"
            scraped_at = utcnow()
            supply.done("alpha", OK)
            await settled(supply)
            clock.now += 10
            assert await next_topic(supply) == "beta"
            supply.done("beta", OK)
            await settled(supply)
        finally:
            supply.close()
        due = rows(db)
        assert timedelta(seconds=60) <= due["alpha"]["due_at"] - scraped_at < timedelta(seconds=INTERVAL / 1.5)
        assert due["beta"]["due_at"] - scraped_at > timedelta(seconds=INTERVAL), "a quiet topic: longer than fixed"

    run(scenario)
