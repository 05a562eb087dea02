"""The rate estimator (topicstreams/freshness/rates.py) on synthetic counts: it converges on a constant rate, follows a
step up and down, honours censoring, stays put under noise, and does not count a pair's first visit."""

from __future__ import annotations

import math
import random
import statistics

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from topicstreams.freshness.rates import (
    JUMP_KEEP,
    MEMORY_VISITS,
    RateEstimate,
    censored_count,
    is_jump,
    observe,
)

MEMORY = 6.0  # hours, the planner's default


def poisson(rng: random.Random, mu: float) -> int:
    """A Poisson draw (inversion: exact, fine for the small means used here)."""
    n, term, total, u = 0, math.exp(-mu), math.exp(-mu), rng.random()
    while u > total and n < 10_000:
        n += 1
        term *= mu / n
        total += term
    return n


def seen_once(page_items: int = 10) -> RateEstimate:
    """A pair after its first visit: the page size known, no rate."""
    first = observe(RateEstimate.fresh(), new=page_items, hours=2.0, censored=True, items=page_items, memory_hours=6.0)
    return first.estimate


def run(estimate, rng, rate, hours, visits, memory=MEMORY):
    """``visits`` visits ``hours`` apart of a topic publishing ``rate`` articles an hour: the estimates and jumps."""
    rates, jumps = [], 0
    for _ in range(visits):
        seen = observe(
            estimate, new=poisson(rng, rate * hours), hours=hours, censored=False, items=10, memory_hours=memory
        )
        estimate, jumps = seen.estimate, jumps + seen.jumped
        rates.append(estimate.rate_per_hour)
    return estimate, rates, jumps


def test_the_first_visit_records_the_page_but_no_rate():
    fresh = RateEstimate.fresh()
    assert (fresh.visits, fresh.rate_per_hour, fresh.known) == (0, 0.0, False)
    seen = observe(fresh, new=25, hours=100.0, censored=True, items=25, memory_hours=MEMORY)
    assert not seen.jumped
    assert seen.estimate == RateEstimate(rate_per_hour=0.0, evidence=0.0, exposure_hours=0.0, visits=1, page_items=25)
    assert not seen.estimate.known
    second = observe(seen.estimate, new=3, hours=1.0, censored=False, items=20, memory_hours=MEMORY).estimate
    assert second.known
    assert (second.visits, second.page_items, second.rate_per_hour) == (2, 25, 3.0)  # the largest page is kept


@pytest.mark.parametrize(("rate", "hours"), [(0.5, 1.0), (6.0, 0.5), (40.0, 0.1), (3.0, 4.0)])
def test_converges_on_a_constant_rate(rate, hours):
    estimate, rates, _ = run(seen_once(), random.Random(7), rate, hours, 400)
    settled = statistics.fmean(rates[100:])
    assert settled == pytest.approx(rate, rel=0.12)
    assert estimate.visits == 401


@pytest.mark.parametrize("seed", range(4))
def test_noise_drawn_from_the_rate_is_never_a_jump(seed):
    for rate, hours in [(0.3, 1.0), (3.0, 0.25), (30.0, 0.5), (120.0, 1 / 60)]:
        _, _, jumps = run(seen_once(), random.Random(seed), rate, hours, 300)
        assert jumps == 0, (rate, hours)


@pytest.mark.parametrize("seed", range(4))
def test_a_story_that_breaks_is_followed_at_once(seed):
    rng = random.Random(seed)
    steady, _, _ = run(seen_once(), rng, 2.0, 1.0, 40)
    seen = observe(steady, new=30, hours=1.0, censored=False, items=10, memory_hours=MEMORY)
    assert seen.jumped
    assert seen.estimate.rate_per_hour > 0.7 * 30.0
    _, rates, _ = run(seen.estimate, rng, 30.0, 1.0, 3)
    assert all(0.6 * 30.0 < each < 1.6 * 30.0 for each in rates)


@pytest.mark.parametrize("seed", range(4))
def test_a_story_that_ends_is_followed_within_a_few_visits(seed):
    rng = random.Random(seed)
    busy, _, _ = run(seen_once(), rng, 30.0, 1.0, 40)
    _, rates, _ = run(busy, rng, 3.0, 1.0, 6)
    assert rates[-1] < 2 * 3.0


def test_a_small_step_is_followed_by_the_memory_even_a_long_one():
    """No jump for a rate that only triples; the memory of ~8 visits follows it, even with a memory of weeks."""
    followed = []
    for seed in range(5):
        rng = random.Random(seed)
        steady, _, _ = run(seen_once(), rng, 2.0, 1.0, 60, memory=1000.0)
        _, rates, _ = run(steady, rng, 6.0, 1.0, 3 * MEMORY_VISITS, memory=1000.0)
        followed.append(statistics.fmean(rates[-MEMORY_VISITS:]))
    assert statistics.fmean(followed) == pytest.approx(6.0, rel=0.2)


def test_a_quiet_topic_wakes_up_on_a_handful_but_not_on_one():
    quiet = observe(seen_once(), new=0, hours=12.0, censored=False, items=10, memory_hours=MEMORY).estimate
    assert quiet.known and quiet.rate_per_hour == 0.0
    assert not observe(quiet, new=1, hours=1.0, censored=False, items=10, memory_hours=MEMORY).jumped
    woken = observe(quiet, new=8, hours=1.0, censored=False, items=10, memory_hours=MEMORY)
    assert woken.jumped
    assert woken.estimate.rate_per_hour == pytest.approx(8 / (1 + JUMP_KEEP), rel=0.01)


def test_a_jump_is_tested_only_once_a_rate_is_known():
    assert not is_jump(RateEstimate.fresh(), new=1000, hours=1.0, censored=False)
    assert not is_jump(seen_once(), new=1000, hours=1.0, censored=False)
    known = RateEstimate(rate_per_hour=10.0, evidence=60.0, exposure_hours=6.0, visits=7, page_items=10)
    assert not is_jump(known, new=12, hours=1.0, censored=False)
    assert is_jump(known, new=60, hours=1.0, censored=False)
    assert is_jump(known, new=0, hours=1.0, censored=False)  # a fall to nothing from 10 an hour
    assert not is_jump(known, new=0, hours=1.0, censored=True)  # "at least 0" says nothing
    assert not is_jump(known, new=60, hours=0.0, censored=False)  # no time, no test


def test_a_censored_count_is_worth_more_than_the_same_count():
    assert censored_count(1, 1.0) == pytest.approx(1 / (1 - math.exp(-1)))
    assert censored_count(10, 10.0) > 11.0
    assert censored_count(10, 100.0) == pytest.approx(100.0)  # far below the expectation: no news
    assert censored_count(0, 5.0) == 0.0
    assert censored_count(2000, 2000.0) == pytest.approx(2000 + math.sqrt(2000) * 0.7979, rel=0.01)


@settings(max_examples=150, deadline=None)
@given(
    rate=st.floats(0.0, 200.0),
    evidence_hours=st.floats(0.1, 24.0),
    new=st.integers(1, 400),
    hours=st.floats(0.01, 24.0),
)
def test_a_censored_visit_raises_the_estimate_above_the_uncensored_one(rate, evidence_hours, new, hours):
    known = RateEstimate(rate, rate * evidence_hours, evidence_hours, visits=5, page_items=10)
    plain = observe(known, new=new, hours=hours, censored=False, items=10, memory_hours=MEMORY).estimate
    censored = observe(known, new=new, hours=hours, censored=True, items=10, memory_hours=MEMORY).estimate
    assert censored.rate_per_hour > plain.rate_per_hour


def test_a_run_of_censored_visits_pushes_the_rate_up():
    estimate = observe(seen_once(), new=10, hours=1.0, censored=True, items=10, memory_hours=MEMORY).estimate
    rates = [estimate.rate_per_hour]
    for _ in range(5):
        estimate = observe(estimate, new=10, hours=1.0, censored=True, items=10, memory_hours=MEMORY).estimate
        rates.append(estimate.rate_per_hour)
    assert rates[0] > 10.0
    assert rates == sorted(rates)


@settings(max_examples=80, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(0, 500), st.floats(-1.0, 72.0), st.booleans(), st.integers(0, 100)),
        min_size=1,
        max_size=25,
    ),
    st.floats(0.05, 500.0),
)
def test_any_history_gives_a_finite_rate(visits, memory):
    estimate = RateEstimate.fresh()
    for number, (new, hours, censored, items) in enumerate(visits, start=1):
        estimate = observe(estimate, new=new, hours=hours, censored=censored, items=items, memory_hours=memory).estimate
        assert estimate.visits == number
        assert math.isfinite(estimate.rate_per_hour) and estimate.rate_per_hour >= 0.0
        assert estimate.evidence >= 0.0 and estimate.exposure_hours >= 0.0
        assert estimate.page_items == max(each[3] for each in visits[:number])


def test_nonsense_is_refused():
    with pytest.raises(ValueError, match="new and items"):
        observe(seen_once(), new=-1, hours=1.0, censored=False, items=10, memory_hours=MEMORY)
    with pytest.raises(ValueError, match="memory_hours"):
        observe(seen_once(), new=1, hours=1.0, censored=False, items=10, memory_hours=0.0)
    with pytest.raises(ValueError, match="NaN"):
        observe(seen_once(), new=1, hours=math.nan, censored=False, items=10, memory_hours=MEMORY)
