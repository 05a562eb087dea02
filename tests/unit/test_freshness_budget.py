"""An engine's request budget (topicstreams/freshness/budget.py): the fixed schedule's figure, and the token bucket
that never lets more than ``per_hour * hours + capacity`` requests through over any window."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from topicstreams.freshness.budget import CAPACITY_HOURS, RequestBudget, bucket_capacity, fixed_budget


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_the_fixed_budget_is_what_the_fixed_schedule_sends():
    assert fixed_budget(10, 600.0, 2) == 120.0  # 10 topics, 6 visits an hour each, 2 pages a visit
    assert fixed_budget(0, 600.0, 2) == 0.0
    assert fixed_budget(200, 3600.0, 1) == 200.0
    with pytest.raises(ValueError, match="scrape_interval"):
        fixed_budget(10, 0.0, 1)
    with pytest.raises(ValueError, match="counts"):
        fixed_budget(-1, 60.0, 1)


def test_the_capacity_is_a_quarter_hour_but_at_least_a_deep_visit():
    assert CAPACITY_HOURS == 0.25
    assert bucket_capacity(400.0, 4) == 100.0
    assert bucket_capacity(8.0, 4) == 4.0  # one visit of 1 page and 3 burst pages fits
    assert bucket_capacity(0.0, 4) == 0.0  # paused


def test_the_bucket_starts_full_drains_and_refills_at_the_rate():
    clock = Clock()
    budget = RequestBudget(per_hour=36.0, capacity=3.0, clock=clock)  # a token every 100 s
    assert budget.available() == 3.0
    assert budget.take(2) and budget.take()
    assert not budget.take()
    assert budget.wait() == pytest.approx(100.0)
    assert budget.wait(3) == pytest.approx(300.0)
    assert budget.wait(4) == math.inf  # more than it ever holds
    clock.now += 50
    assert budget.available() == pytest.approx(0.5)
    assert not budget.take()
    assert budget.available() == pytest.approx(0.5)  # a refused take takes nothing
    clock.now += 10_000
    assert budget.available() == 3.0  # never above the capacity
    clock.now -= 500  # a clock that goes back fills nothing and takes nothing back
    assert budget.available() == 3.0
    assert budget.take(0)


def test_resizing_keeps_the_tokens_and_changes_the_rate():
    clock = Clock()
    budget = RequestBudget(36.0, 3.0, clock)
    budget.take(3)
    clock.now += 100  # one token at the old rate
    budget.resize(72.0)
    clock.now += 50  # one more at the new one
    assert budget.available() == pytest.approx(2.0)
    budget.resize(0.0, capacity=0.0)  # paused
    assert budget.available() == 0.0
    assert not budget.take()
    assert budget.wait() == math.inf
    clock.now += 3600
    assert budget.available() == 0.0
    budget.resize(36.0, capacity=3.0)
    clock.now += 100
    assert budget.take()
    with pytest.raises(ValueError, match="per_hour"):
        budget.resize(-1.0)


@settings(max_examples=200, deadline=None)
@given(
    per_hour=st.floats(0.0, 3600.0),
    capacity=st.floats(0.0, 20.0),
    steps=st.lists(st.tuples(st.floats(0.0, 600.0), st.integers(0, 5)), min_size=1, max_size=60),
)
def test_no_window_ever_sees_more_than_the_rate_and_the_capacity(per_hour, capacity, steps):
    clock = Clock()
    budget = RequestBudget(per_hour, capacity, clock)
    taken: list[tuple[float, int]] = []
    for advance, n in steps:
        clock.now += advance
        ready = budget.wait(n) == 0.0
        assert budget.take(n) == ready
        if ready:
            taken.append((clock.now, n))
    for first, (start, _) in enumerate(taken):
        total = 0
        for end, n in taken[first:]:
            total += n
            assert total <= per_hour * (end - start) / 3600 + capacity + 1e-9


@settings(max_examples=100, deadline=None)
@given(per_hour=st.floats(1.0, 3600.0), capacity=st.floats(1.0, 20.0), n=st.integers(1, 20))
def test_waiting_as_told_is_enough(per_hour, capacity, n):
    clock = Clock()
    budget = RequestBudget(per_hour, capacity, clock)
    budget.take(budget.available())
    wait = budget.wait(n)
    if n > capacity:
        assert wait == math.inf
        return
    clock.now += wait * (1 + 1e-9)
    assert budget.take(n)
