"""Pace, cooldown and probe of one engine, on an injected clock (no waiting)."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import pytest

from topicstreams.config.route_table import DEFAULT_ROUTE
from topicstreams.crawl.engine_state import CooldownPolicy, EngineState, RouteLane
from topicstreams.engines.classify import ResponseClass
from topicstreams.middlewares.blocks import retry_after_seconds


class Clock:
    def __init__(self, now: float = 1000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def make(
    clock: Clock, floor: float = 1.0, jitter: float = 0.2, initial: float = 2, factor: float = 2, maximum: float = 30
) -> RouteLane:
    """The one lane of an engine without routes."""
    return EngineState(
        "google",
        floor=floor,
        jitter_ratio=jitter,
        cooldown=CooldownPolicy(initial, factor, maximum),
        clock=clock,
        rng=random.Random(7),
    ).lane(DEFAULT_ROUTE)


def test_the_first_request_goes_at_once_and_each_next_one_a_jittered_floor_after_the_previous_start():
    clock = Clock()
    state = make(clock)
    assert state.wait_time() == 0
    gaps = []
    for _ in range(500):
        state.start_request()
        wait = state.wait_time()
        assert 1.0 <= wait <= 1.2  # the floor, plus 0 ... 0.2 x the floor
        gaps.append(wait)
        clock.now += wait
    assert 1.09 < sum(gaps) / len(gaps) < 1.11
    assert len({round(gap, 6) for gap in gaps}) > 400  # drawn anew for every gap


def test_the_gap_counts_from_when_the_request_really_left():
    clock = Clock()
    state = make(clock, jitter=0)
    state.start_request()
    clock.now += 0.4
    state.mark_sent()  # the browser reports the navigation 0.4 s after the request was let go
    assert state.wait_time() == pytest.approx(1.0)
    state.mark_sent(clock.now - 5)  # an older report never moves the start back
    assert state.wait_time() == pytest.approx(1.0)


def test_the_pace_multiplier_stretches_the_floor():
    clock = Clock()
    state = make(clock, jitter=0)
    state.owner.pace_multiplier = 2.0
    state.start_request()
    assert state.wait_time() == pytest.approx(2.0)


@pytest.mark.parametrize(("failures", "expected"), [(1, 2), (2, 4), (3, 8), (4, 16), (5, 30), (9, 30)])
def test_the_cooldown_grows_by_the_factor_up_to_the_max(failures, expected):
    assert CooldownPolicy(2, 2, 30).length(failures) == expected


def test_a_longer_retry_after_wins_a_shorter_one_does_not():
    policy = CooldownPolicy(60, 2, 3600)
    assert policy.length(1, retry_after=120) == 120
    assert policy.length(1, retry_after=5) == 60


def test_a_block_benches_then_one_probe_goes_alone_and_success_resets():
    clock = Clock()
    state = make(clock, jitter=0)
    state.start_request()
    assert state.record(ResponseClass.HARD_BLOCK) == 2
    assert state.benched and state.wait_time() == pytest.approx(2)
    clock.now += 2
    assert state.wait_time() == 0
    assert state.start_request() is True  # the probe
    assert state.wait_time() is None  # nothing else goes while its outcome is unknown
    assert state.start_request() is False  # a second request is never a second probe
    assert state.record(ResponseClass.HARD_BLOCK, probe=True) == 4  # the probe failed: longer
    clock.now += 4
    assert state.start_request() is True
    assert state.record(ResponseClass.OK, probe=True) is None
    assert state.failures == 0 and not state.needs_probe and not state.benched
    state.start_request()
    assert state.wait_time() == pytest.approx(1.0)  # back to the normal pace
    assert state.record(ResponseClass.CHALLENGE) == 2  # the next block starts from the initial cooldown again


def test_every_benching_class_benches_and_an_error_neither_benches_nor_resets():
    clock = Clock()
    state = make(clock)
    for cls in (ResponseClass.CHALLENGE, ResponseClass.HARD_BLOCK, ResponseClass.SOFT_BLOCK):
        assert state.record(cls) is not None
    assert state.failures == 3
    assert state.record(ResponseClass.ERROR) is None
    assert state.failures == 3 and state.needs_probe


def test_a_retry_after_header_reads_as_seconds_or_a_date():
    now = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)
    assert retry_after_seconds("120") == 120
    assert retry_after_seconds(format_datetime(now + timedelta(seconds=90), usegmt=True), now) == 90
    assert retry_after_seconds(format_datetime(now - timedelta(seconds=90), usegmt=True), now) == 0
    assert retry_after_seconds("soon") is None
    assert retry_after_seconds("") is None and retry_after_seconds(None) is None


def test_connection_failures_while_the_network_is_down_keep_the_initial_cooldown_and_are_lifted_when_it_is_back():
    clock = Clock()
    state = make(clock, initial=2, factor=2, maximum=30)
    refused = {"connection_level": True}
    assert state.record(ResponseClass.HARD_BLOCK, **refused) == 2
    clock.now += 2
    assert state.record(ResponseClass.HARD_BLOCK, probe=True, **refused) == 4  # no verdict yet: the engine's, so far
    assert state.owner.network_changed(True) is False  # every engine fails alike: the node's network
    assert state.failures == 0 and state.bench_remaining() == 2  # forgiven, and cut to the initial cooldown
    for _ in range(5):  # the outage goes on: the probe goes every initial cooldown, never longer
        clock.now += state.bench_remaining()
        assert state.start_request() is True
        assert state.record(ResponseClass.HARD_BLOCK, probe=True, **refused) == 2
        assert state.failures == 0
    clock.now += 0.5
    assert state.owner.network_changed(True) is False  # no change: nothing happens
    assert state.owner.network_changed(False) is True  # back: the bench it began is lifted now
    assert state.bench_remaining() == 0 and state.failures == 0 and state.wait_time() < 1.2  # the pace alone
    assert state.start_request() is True  # the next request still goes alone first
    assert state.owner.network_changed(False) is False


def test_the_network_lifts_no_bench_an_engine_earned_itself():
    clock = Clock()
    state = make(clock, initial=2, factor=2, maximum=30)
    state.record(ResponseClass.CHALLENGE)
    state.record(ResponseClass.CHALLENGE)
    assert state.owner.network_changed(True) is False and state.bench_remaining() == 4
    state.record(ResponseClass.SOFT_BLOCK)  # a site's answer while others fail to connect: its own, escalated
    assert state.failures == 3 and state.bench_remaining() == 8
    assert state.owner.network_changed(False) is False and state.bench_remaining() == 8
