"""Exit-IP saturation, without a browser: the pure verdict over hand-made status rows, then the per-process watch
reading a real SQLite file and logging the verdict's changes."""

from __future__ import annotations

import logging
from dataclasses import fields, replace
from datetime import UTC, datetime, timedelta

import pytest

from tests.support.databases import database_fixture
from topicstreams.config.packaged import load_defaults
from topicstreams.config.sections import PacingSection, SaturationSection, ScraperSection, build_section
from topicstreams.crawl.runtime import Runtime
from topicstreams.extensions.saturation_watch import (
    CLEAR_AFTER,
    SaturationWatch,
    watch_for,
)
from topicstreams.health.network_state import NetworkState
from topicstreams.health.saturation import (
    FRESH_SLACK,
    Saturation,
    SaturationPolicy,
    judge_saturation,
    network_of,
    saturation_policy,
)
from topicstreams.storage.engine_status import (
    COOLING,
    PAUSED,
    RUNNING,
    EngineStatusRow,
    save_status,
)

NOW = datetime(2026, 11, 29, 21, 0, 0, tzinfo=UTC)
SUSPECTED = "EXIT IP SATURATION SUSPECTED: robust engines cooling: bing, google"
LOGGER = "topicstreams.extensions.saturation_watch"


def status(engine: str, node: str = "n1", **values) -> EngineStatusRow:
    """A status row as read from the table: running, updated a second ago; columns not named here are None."""
    row = {field.name: None for field in fields(EngineStatusRow)}
    row.update(
        engine=engine,
        node=node,
        band="unknown",
        state=RUNNING,
        reasons=[],
        parser_reasons=[],
        canary_mismatches=[],
        updated_at=NOW - timedelta(seconds=1),
    )
    return EngineStatusRow(**{**row, **values})


def cooling(engine: str, node: str = "n1", until: timedelta = timedelta(seconds=30), **values) -> EngineStatusRow:
    """A row of an engine cooling until ``until`` after NOW."""
    return status(engine, node, state=COOLING, cooling_until=NOW + until, **values)


def policy(threshold: int = 2, canaries=("brave",), floors=None) -> SaturationPolicy:
    return SaturationPolicy(
        frozenset(canaries),
        threshold,
        {"google": 2.0, "bing": 2.0, "yahoo": 2.0, "brave": 4.0} if floors is None else floors,
    )


# --- judge_saturation ----------------------------------------------------------------------------------------------


def test_google_and_bing_cooling_together_is_suspected():
    verdict = judge_saturation([cooling("google"), cooling("bing"), status("yahoo"), status("brave")], NOW, policy())
    assert verdict == Saturation(True, ("bing", "google"))


def test_google_and_the_canary_brave_cooling_is_not_suspected():
    verdict = judge_saturation([cooling("google"), cooling("brave"), status("bing")], NOW, policy())
    assert verdict == Saturation(False, ("google",))


def test_no_row_and_no_cooling_engine_is_not_suspected():
    assert judge_saturation([], NOW, policy()) == Saturation(False, ())
    assert judge_saturation([status("google"), status("bing")], NOW, policy()) == Saturation(False, ())


def test_a_paused_engine_is_not_cooling():
    verdict = judge_saturation([cooling("google"), status("bing", state=PAUSED)], NOW, policy())
    assert verdict == Saturation(False, ("google",))


@pytest.mark.parametrize(
    ("threshold", "rows", "expected"),
    [
        (1, [cooling("google")], Saturation(True, ("google",))),
        (1, [cooling("brave")], Saturation(False, ())),
        (3, [cooling("google"), cooling("bing")], Saturation(False, ("bing", "google"))),
        (3, [cooling("google"), cooling("bing"), cooling("yahoo")], Saturation(True, ("bing", "google", "yahoo"))),
        (3, [cooling("google"), cooling("bing"), cooling("brave")], Saturation(False, ("bing", "google"))),
    ],
)
def test_the_threshold_counts_the_robust_engines_cooling(threshold, rows, expected):
    assert judge_saturation(rows, NOW, policy(threshold)) == expected


def test_the_canary_engines_are_configurable():
    rows = [cooling("google"), cooling("bing"), cooling("brave")]
    assert judge_saturation(rows, NOW, policy(canaries=("bing",))) == Saturation(True, ("brave", "google"))
    assert judge_saturation(rows, NOW, policy(canaries=("bing", "brave"))) == Saturation(False, ("google",))
    assert judge_saturation(rows, NOW, policy(canaries=())) == Saturation(True, ("bing", "brave", "google"))


def test_a_cooldown_that_has_ended_is_not_cooling():
    ended = cooling("bing", until=-timedelta(seconds=1))
    assert judge_saturation([cooling("google"), ended], NOW, policy()) == Saturation(False, ("google",))
    ends_now = cooling("bing", until=timedelta(0))  # state_at: cooling_until <= now is running again
    assert judge_saturation([cooling("google"), ends_now], NOW, policy()) == Saturation(False, ("google",))
    no_end = status("bing", state=COOLING, cooling_until=None)
    assert judge_saturation([cooling("google"), no_end], NOW, policy()) == Saturation(False, ("google",))
    still = cooling("bing", until=timedelta(microseconds=1))
    assert judge_saturation([cooling("google"), still], NOW, policy()) == Saturation(True, ("bing", "google"))


def test_a_stale_row_does_not_count_and_one_exactly_at_the_boundary_does():
    # bing's floor is 2 s: its row is fresh for 2 × 2 + 60 = 64 s after it was written (inclusive, `<=`). Its crawl
    # beats every 60 s here, so the row itself is not stale before three of them (180 s).
    fresh_for = timedelta(seconds=2 * 2.0 + FRESH_SLACK)
    assert fresh_for == timedelta(seconds=64)
    beat = {"heartbeat_seconds": 60.0, "until": timedelta(minutes=10)}
    at_boundary = cooling("bing", updated_at=NOW - fresh_for, **beat)
    stale = cooling("bing", updated_at=NOW - fresh_for - timedelta(microseconds=1), **beat)
    assert judge_saturation([cooling("google"), at_boundary], NOW, policy()) == Saturation(True, ("bing", "google"))
    assert judge_saturation([cooling("google"), stale], NOW, policy()) == Saturation(False, ("google",))


def test_rows_whose_crawl_is_gone_do_not_count():
    # Three heartbeats without a write (45 s at the default 15 s) make a row stale; a closed crawl's row is stopped.
    silent = cooling("bing", updated_at=NOW - timedelta(seconds=45, microseconds=1))
    closed = cooling("bing", stopped_at=NOW - timedelta(seconds=5), updated_at=NOW - timedelta(seconds=5))
    assert silent.state_at(NOW) == "stale" and closed.state_at(NOW) == "stopped"
    for gone in (silent, closed):
        assert judge_saturation([cooling("google"), gone], NOW, policy()) == Saturation(False, ("google",))


def test_no_saturation_while_the_network_is_down():
    # Every running engine of the node fails to connect: its network, not its exit IP's budget.
    failing = {"connection_failures_since": NOW - timedelta(seconds=30)}
    rows = [cooling("google", **failing), cooling("bing", **failing), cooling("yahoo", **failing)]
    assert network_of(rows, NOW) == NetworkState(True, NOW - timedelta(seconds=30), ("bing", "google", "yahoo"))
    assert judge_saturation(rows, NOW, policy()) == Saturation(False, ())
    # One engine answering (its run of failures over): the network is not down, but the engines that cannot connect
    # are still throttled by no site (their sites or routes are unreachable); engines cooling for what their sites
    # answered count again.
    answering = [*rows[:2], cooling("yahoo")]
    assert not network_of(answering, NOW).down
    assert judge_saturation(answering, NOW, policy()) == Saturation(False, ("yahoo",))
    assert judge_saturation([cooling("google"), cooling("bing"), cooling("yahoo")], NOW, policy()).suspected


def test_a_dead_process_row_still_cooling_by_its_clock_is_not_taken_for_a_cooling_engine():
    # The process wrote "cooling for an hour" ten minutes ago, then died: no heartbeat since.
    dead = cooling("bing", updated_at=NOW - timedelta(minutes=10), until=timedelta(minutes=50))
    assert judge_saturation([cooling("google"), dead], NOW, policy()) == Saturation(False, ("google",))


def test_the_pace_multiplier_lengthens_freshness():
    # Floor 2 s, slowed × 3: fresh for 2 × 6 + 60 = 72 s instead of 64 s. (The rows' crawls beat every 60 s: not
    # stale before 180 s.)
    written = NOW - timedelta(seconds=70)
    slowed = cooling(
        "bing", heartbeat_seconds=60.0, updated_at=written, pace_multiplier=3.0, until=timedelta(minutes=10)
    )
    normal = cooling(
        "bing", heartbeat_seconds=60.0, updated_at=written, pace_multiplier=1.0, until=timedelta(minutes=10)
    )
    unknown = cooling(
        "bing", heartbeat_seconds=60.0, updated_at=written, pace_multiplier=None, until=timedelta(minutes=10)
    )
    assert judge_saturation([cooling("google"), slowed], NOW, policy()).suspected
    assert not judge_saturation([cooling("google"), normal], NOW, policy()).suspected
    assert not judge_saturation([cooling("google"), unknown], NOW, policy()).suspected  # None reads as × 1
    boundary = cooling(
        "bing",
        heartbeat_seconds=60.0,
        updated_at=NOW - timedelta(seconds=72),
        pace_multiplier=3.0,
        until=timedelta(hours=1),
    )
    beyond = cooling(
        "bing",
        heartbeat_seconds=60.0,
        updated_at=NOW - timedelta(seconds=72, microseconds=1),
        pace_multiplier=3.0,
        until=timedelta(hours=1),
    )
    assert judge_saturation([cooling("google"), boundary], NOW, policy()).suspected
    assert not judge_saturation([cooling("google"), beyond], NOW, policy()).suspected
    assert policy().freshness(slowed) == timedelta(seconds=72)


def test_an_engine_missing_from_floors_uses_a_floor_of_0():
    only_google = policy(floors={"google": 30.0})
    bing = cooling("bing", heartbeat_seconds=60.0, updated_at=NOW - timedelta(seconds=60), until=timedelta(minutes=10))
    late_bing = cooling(
        "bing", heartbeat_seconds=60.0, updated_at=NOW - timedelta(seconds=61), until=timedelta(minutes=10)
    )
    assert only_google.freshness(bing) == timedelta(seconds=FRESH_SLACK)
    assert only_google.freshness(cooling("bing", pace_multiplier=5.0)) == timedelta(seconds=FRESH_SLACK)
    assert judge_saturation([cooling("google"), bing], NOW, only_google).suspected
    assert not judge_saturation([cooling("google"), late_bing], NOW, only_google).suspected
    # google's own floor (30 s) keeps its row fresh for 120 s
    google = cooling(
        "google", heartbeat_seconds=60.0, updated_at=NOW - timedelta(seconds=120), until=timedelta(minutes=10)
    )
    assert judge_saturation([google, bing], NOW, only_google).suspected


def test_rows_of_several_nodes_are_not_told_apart_by_the_pure_verdict_but_an_engine_counts_once():
    verdict = judge_saturation([cooling("google", "n1"), cooling("google", "n2")], NOW, policy())
    assert verdict == Saturation(False, ("google",))


def test_describe_and_as_json():
    suspected = Saturation(True, ("bing", "google"))
    assert suspected.describe() == SUSPECTED
    assert suspected.as_json() == {"suspected": True, "cooling": ["bing", "google"]}
    one = Saturation(False, ("google",))
    assert one.describe() == "not suspected (robust engines cooling: google)"
    assert one.as_json() == {"suspected": False, "cooling": ["google"]}
    none = Saturation(False, ())
    assert none.describe() == "not suspected"
    assert none.as_json() == {"suspected": False, "cooling": []}


def test_saturation_policy_reads_the_canaries_the_threshold_and_every_floor():
    scraper = build_section(ScraperSection, load_defaults()["scraper"], "scraper")
    scraper = replace(
        scraper,
        saturation=SaturationSection(("brave",), 3),
        pacing=PacingSection(2.0, 0.25, {"brave": 4.0}),
    )
    made = saturation_policy(scraper, ["google", "bing", "brave"])
    assert made == SaturationPolicy(frozenset({"brave"}), 3, {"google": 2.0, "bing": 2.0, "brave": 4.0})


# --- SaturationWatch against a real SQLite file -------------------------------------------------------------------


@pytest.fixture
def url(sqlite_url: str) -> str:
    return sqlite_url


db = database_fixture("url")


def cool(db, engine: str, at: datetime, node: str = "node-a", seconds: float = 60) -> None:
    save_status(db, engine, node, state=COOLING, cooling_until=at + timedelta(seconds=seconds), updated_at=at)


def run(db, engine: str, at: datetime, node: str = "node-a") -> None:
    save_status(db, engine, node, state=RUNNING, cooling_until=None, updated_at=at)


def records(caplog, level: int | None = None) -> list[logging.LogRecord]:
    return [record for record in caplog.records if record.name == LOGGER and (level is None or record.levelno == level)]


def test_the_watch_warns_once_when_saturation_begins_again_when_the_set_changes_and_informs_when_it_ends(db, caplog):
    caplog.set_level(logging.INFO, logger=LOGGER)
    watch = SaturationWatch("node-a", policy(), every=2.0)
    t = NOW

    cool(db, "google", t)
    assert watch.check(db, t) == Saturation(False, ("google",))
    assert records(caplog) == []

    t += timedelta(seconds=2)
    cool(db, "bing", t)
    assert watch.check(db, t) == Saturation(True, ("bing", "google"))
    warnings = records(caplog, logging.WARNING)
    assert len(warnings) == 1 and len(records(caplog)) == 1
    assert SUSPECTED in warnings[0].getMessage()
    assert "node-a" in warnings[0].getMessage()

    for _ in range(3):  # it lasts, unchanged: nothing more is said
        t += timedelta(seconds=2)
        assert watch.check(db, t).suspected
    assert len(records(caplog)) == 1

    t += timedelta(seconds=2)
    cool(db, "yahoo", t)  # the set of cooling engines changes: said again
    assert watch.check(db, t) == Saturation(True, ("bing", "google", "yahoo"))
    warnings = records(caplog, logging.WARNING)
    assert len(warnings) == 2 and len(records(caplog)) == 2
    assert "EXIT IP SATURATION SUSPECTED: robust engines cooling: bing, google, yahoo" in warnings[1].getMessage()

    t += timedelta(seconds=2)
    cool(db, "brave", t)  # a canary cooling changes nothing
    assert watch.check(db, t) == Saturation(True, ("bing", "google", "yahoo"))
    assert len(records(caplog)) == 2

    t += timedelta(seconds=2)
    run(db, "yahoo", t)
    run(db, "bing", t)  # one robust engine left cooling: over, once that lasts CLEAR_AFTER seconds
    assert watch.check(db, t) == Saturation(False, ("google",))
    assert len(records(caplog)) == 2
    t += timedelta(seconds=CLEAR_AFTER - 2)
    assert watch.check(db, t) == Saturation(False, ("google",))
    assert len(records(caplog)) == 2
    t += timedelta(seconds=2)
    assert watch.check(db, t) == Saturation(False, ("google",))
    assert len(records(caplog, logging.WARNING)) == 2
    infos = records(caplog, logging.INFO)
    assert len(infos) == 1 and "exit IP saturation over on node node-a" in infos[0].getMessage()

    t += timedelta(seconds=2)
    assert not watch.check(db, t).suspected
    assert len(records(caplog)) == 3  # no second INFO


def test_the_watch_notices_cooldowns_ending_by_the_clock(db, caplog):
    caplog.set_level(logging.INFO, logger=LOGGER)
    watch = SaturationWatch("node-a", policy(), every=2.0)
    cool(db, "google", NOW, seconds=10)
    cool(db, "bing", NOW, seconds=10)
    assert watch.check(db, NOW).suspected
    assert not watch.check(db, NOW + timedelta(seconds=10)).suspected  # no new row: the cooldowns ran out
    assert not watch.check(db, NOW + timedelta(seconds=10 + CLEAR_AFTER)).suspected
    assert [record.levelno for record in records(caplog)] == [logging.WARNING, logging.INFO]


def test_a_probe_between_two_cooldowns_is_no_end_of_saturation(db, caplog):
    caplog.set_level(logging.INFO, logger=LOGGER)
    watch = SaturationWatch("node-a", policy(), every=2.0)
    cool(db, "google", NOW)
    cool(db, "bing", NOW, seconds=4)
    assert watch.check(db, NOW).suspected
    # bing's cooldown is over and its probe is out: it is not cooling for a moment ...
    run(db, "bing", NOW + timedelta(seconds=4))
    assert watch.check(db, NOW + timedelta(seconds=4)) == Saturation(False, ("google",))
    # ... and the probe met a 429: benched again, the same engines cooling — nothing new to say
    cool(db, "bing", NOW + timedelta(seconds=6), seconds=8)
    assert watch.check(db, NOW + timedelta(seconds=6)) == Saturation(True, ("bing", "google"))
    assert [record.levelno for record in records(caplog)] == [logging.WARNING]


def test_the_watch_does_not_judge_again_within_every_seconds(db, caplog):
    caplog.set_level(logging.INFO, logger=LOGGER)
    watch = SaturationWatch("node-a", policy(), every=5.0)
    assert watch.check(db, NOW) == Saturation(False, ())
    cool(db, "google", NOW + timedelta(seconds=1))
    cool(db, "bing", NOW + timedelta(seconds=1))
    # Within 5 s of the last judgement: the verdict in force stands, nothing read, nothing logged.
    assert watch.check(db, NOW + timedelta(seconds=1)) == Saturation(False, ())
    assert watch.check(db, NOW + timedelta(seconds=4.999)) == Saturation(False, ())
    assert records(caplog) == []
    # 5 s on, it judges again.
    assert watch.check(db, NOW + timedelta(seconds=5)) == Saturation(True, ("bing", "google"))
    assert len(records(caplog, logging.WARNING)) == 1
    # and the next judgement counts from this one
    run(db, "bing", NOW + timedelta(seconds=6))
    assert watch.check(db, NOW + timedelta(seconds=9)).suspected
    assert watch.check(db, NOW + timedelta(seconds=10)) == Saturation(False, ("google",))
    assert watch.check(db, NOW + timedelta(seconds=10 + CLEAR_AFTER)) == Saturation(False, ("google",))
    assert len(records(caplog, logging.INFO)) == 1


def test_only_the_watch_nodes_rows_count(db, caplog):
    caplog.set_level(logging.INFO, logger=LOGGER)
    watch = SaturationWatch("node-a", policy(), every=2.0)
    cool(db, "google", NOW)
    cool(db, "bing", NOW, node="n2")
    cool(db, "yahoo", NOW, node="n2")
    assert watch.check(db, NOW) == Saturation(False, ("google",))
    assert records(caplog) == []
    other = SaturationWatch("n2", policy(), every=2.0)
    assert other.check(db, NOW) == Saturation(True, ("bing", "yahoo"))
    assert len(records(caplog, logging.WARNING)) == 1
    assert "(node n2)" in records(caplog)[0].getMessage()


def test_the_watch_ignores_stale_rows_in_the_database(db, caplog):
    caplog.set_level(logging.INFO, logger=LOGGER)
    watch = SaturationWatch("node-a", policy(), every=2.0)
    cool(db, "google", NOW, seconds=3600)
    cool(db, "bing", NOW - timedelta(seconds=65), seconds=3600)  # bing's process went quiet 65 s ago (> 64 s)
    assert watch.check(db, NOW) == Saturation(False, ("google",))
    assert records(caplog) == []


def test_watch_for_shares_one_watch_per_database_and_node(url, tmp_path):
    runtime = Runtime()
    first = watch_for(runtime, url, "node-a", policy(), 2.0)
    assert watch_for(runtime, url, "node-a", policy(), 2.0) is first
    assert watch_for(runtime, url, "node-b", policy(), 2.0) is not first
    other_url = f"sqlite:///{tmp_path / 'other.db'}"
    assert watch_for(runtime, other_url, "node-a", policy(), 2.0) is not first
    # A different policy (another configuration) makes a new watch for the pair, which is then the shared one.
    changed = watch_for(runtime, url, "node-a", policy(threshold=3), 2.0)
    assert changed is not first and changed.policy.robust_threshold == 3
    assert watch_for(runtime, url, "node-a", policy(threshold=3), 2.0) is changed
    # Another process (another runtime) has its own.
    assert watch_for(Runtime(), url, "node-a", policy(threshold=3), 2.0) is not changed
