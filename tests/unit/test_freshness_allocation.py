"""The budget's allocation among topics (topicstreams/freshness/allocation.py): never over the budget, within the
bounds, a hotter topic never waits longer, new topics at the fixed interval, the square-root rule, a short budget
stretching caps then max_interval, a zero budget."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from topicstreams.freshness.allocation import RATE_FLOOR, Demand, allocate, requests_per_hour

BOUNDS = {"min_interval": 60.0, "max_interval": 3600.0, "default_interval": 600.0, "pages_per_visit": 1}


def delay(intervals, demands):
    """The articles' total mean delay per hour: sum(rate * interval / 2)."""
    return sum(demands[key].rate_per_hour * interval / 2 for key, interval in intervals.items())


rates = st.one_of(st.none(), st.floats(0.0, 1000.0), st.floats(0.0, 0.1))
demand_maps = st.dictionaries(
    st.integers(0, 200), st.builds(Demand, rates, st.sampled_from([0, 5, 10, 20, 100])), min_size=1, max_size=25
)


@settings(max_examples=300, deadline=None)
@given(
    demands=demand_maps,
    budget=st.floats(0.0, 5000.0),
    min_interval=st.floats(10.0, 600.0),
    spread=st.floats(1.0, 100.0),
    default_interval=st.floats(30.0, 7200.0),
    pages=st.integers(1, 4),
)
def test_the_budget_is_never_exceeded_and_the_bounds_hold(
    demands, budget, min_interval, spread, default_interval, pages
):
    max_interval = min_interval * spread
    intervals = allocate(
        demands,
        budget_per_hour=budget,
        min_interval=min_interval,
        max_interval=max_interval,
        default_interval=default_interval,
        pages_per_visit=pages,
    )
    assert intervals.keys() == demands.keys()
    if budget == 0:
        assert all(each == math.inf for each in intervals.values())
        return
    assert requests_per_hour(intervals.values(), pages) <= budget * (1 + 1e-9)
    new = [key for key, demand in demands.items() if demand.rate_per_hour is None]
    learnt = [key for key in demands if key not in new]
    assert all(intervals[key] >= min_interval * (1 - 1e-12) for key in learnt)
    least = pages * 3600 * (len(new) / default_interval + len(learnt) / max_interval)
    if least <= budget:  # the budget pays for every topic at its bound: no stretching
        assert all(intervals[key] == default_interval for key in new)
        assert all(intervals[key] <= max_interval * (1 + 1e-12) for key in learnt)
    else:  # budget first: everything stretched by one factor, spending the budget
        assert all(intervals[key] >= default_interval for key in new)
        assert all(intervals[key] >= max_interval for key in learnt)
        assert requests_per_hour(intervals.values(), pages) == pytest.approx(budget, rel=1e-9)


@settings(max_examples=300, deadline=None)
@given(
    rates=st.lists(st.floats(0.0, 1000.0), min_size=2, max_size=25),
    page_items=st.sampled_from([0, 10, 50]),
    budget=st.floats(1.0, 5000.0),
)
def test_a_hotter_topic_never_gets_a_longer_interval(rates, page_items, budget):
    demands = {index: Demand(rate, page_items) for index, rate in enumerate(rates)}
    intervals = allocate(demands, budget_per_hour=budget, **BOUNDS)
    by_rate = sorted(demands, key=lambda key: demands[key].rate_per_hour)
    for colder, hotter in zip(by_rate, by_rate[1:], strict=False):
        assert intervals[hotter] <= intervals[colder] * (1 + 1e-9)


def test_the_square_root_rule_spends_the_budget():
    demands = {"quiet": Demand(1.0, 0), "busy": Demand(100.0, 0)}
    intervals = allocate(demands, budget_per_hour=22.0, **BOUNDS)
    assert intervals["quiet"] / intervals["busy"] == pytest.approx(10.0)  # sqrt(100 / 1)
    assert requests_per_hour(intervals.values(), 1) == pytest.approx(22.0)
    assert intervals == pytest.approx({"quiet": 1800.0, "busy": 180.0})
    bounded = allocate(demands, budget_per_hour=6.0, **BOUNDS)  # the root rule would give the quiet one 6600 s
    assert bounded == pytest.approx({"quiet": 3600.0, "busy": 720.0})


def test_the_square_root_rule_beats_the_fixed_schedule_at_the_same_cost():
    demands = {f"topic-{rate}": Demand(float(rate), 0) for rate in (0.1, 0.5, 2, 8, 30, 120)}
    intervals = allocate(demands, budget_per_hour=24.0, **BOUNDS)
    assert requests_per_hour(intervals.values(), 1) == pytest.approx(24.0)
    fixed = dict.fromkeys(demands, 3600 * len(demands) / 24.0)
    assert delay(intervals, demands) < 0.6 * delay(fixed, demands)


def test_new_topics_start_at_the_default_and_their_cost_comes_first():
    demands = {"new": Demand(None, 0), "old": Demand(4.0, 0)}
    intervals = allocate(demands, budget_per_hour=12.0, **BOUNDS)
    assert intervals["new"] == 600.0  # 6 requests an hour
    assert intervals["old"] == pytest.approx(600.0)  # the other 6


def test_a_plentiful_budget_visits_every_learnt_topic_at_the_least_interval():
    demands = {"a": Demand(0.0, 10), "b": Demand(50.0, 10), "c": Demand(None, 10)}
    intervals = allocate(demands, budget_per_hour=10_000.0, **BOUNDS)
    assert intervals == {"a": 60.0, "b": 60.0, "c": 600.0}


def test_a_topic_is_visited_before_its_pages_overflow():
    """10 articles a page at 60 an hour fill the page in 10 minutes: the cap, though the root rule says longer."""
    demands = {"busy": Demand(60.0, 10), "quiet": Demand(0.5, 10)}
    bounds = {**BOUNDS, "max_interval": 36_000.0}
    intervals = allocate(demands, budget_per_hour=6.5, **bounds)  # the root rule: busy 657 s, quiet 5091 s
    assert intervals == pytest.approx({"busy": 600.0, "quiet": 7200.0})  # the rest of the budget to the quiet one
    two_pages = allocate(demands, budget_per_hour=6.5, **{**bounds, "pages_per_visit": 2})
    assert two_pages == pytest.approx({"busy": 1200.0, "quiet": 14_400.0})  # 20 articles a visit


def test_a_short_budget_stretches_the_caps_before_max_interval():
    demands = {"busy": Demand(60.0, 10), "hot": Demand(120.0, 10), "quiet": Demand(0.01, 10)}
    at_caps = 3600 / 600 + 3600 / 300 + 1  # 19 an hour
    intervals = allocate(demands, budget_per_hour=at_caps / 2 + 0.5, **BOUNDS)  # 10 an hour
    assert intervals["quiet"] == 3600.0
    assert intervals["busy"] == pytest.approx(2 * intervals["hot"])  # one factor for every cap
    assert 600.0 < intervals["busy"] < 3600.0
    assert requests_per_hour(intervals.values(), 1) == pytest.approx(10.0)
    starved = allocate(demands, budget_per_hour=1.5, **BOUNDS)  # less than 3 topics at max_interval
    assert list(starved.values()) == pytest.approx([3600 * 2] * 3)


def test_rates_below_the_floor_are_equal():
    demands = {"silent": Demand(0.0, 0), "nearly": Demand(RATE_FLOOR / 2, 0), "some": Demand(RATE_FLOOR * 4, 0)}
    intervals = allocate(demands, budget_per_hour=2.0, **{**BOUNDS, "max_interval": 36_000.0})
    assert intervals["silent"] == intervals["nearly"]
    assert intervals["silent"] == pytest.approx(2 * intervals["some"])


def test_a_zero_budget_visits_nothing_and_one_topic_takes_the_budget():
    demands = {"only": Demand(5.0, 10), "new": Demand(None, 10)}
    assert allocate(demands, budget_per_hour=0.0, **BOUNDS) == {"only": math.inf, "new": math.inf}
    assert allocate({"only": Demand(5.0, 0)}, budget_per_hour=2.0, **BOUNDS) == {"only": pytest.approx(1800.0)}
    assert allocate({}, budget_per_hour=100.0, **BOUNDS) == {}


def test_nonsense_is_refused():
    with pytest.raises(ValueError, match="min_interval <= max_interval"):
        allocate({"a": Demand(1.0, 1)}, budget_per_hour=1.0, **{**BOUNDS, "min_interval": 7200.0})
    with pytest.raises(ValueError, match="pages_per_visit"):
        allocate({"a": Demand(1.0, 1)}, budget_per_hour=1.0, **{**BOUNDS, "pages_per_visit": 0})
    with pytest.raises(ValueError, match="finite rate"):
        allocate({"a": Demand(math.nan, 1)}, budget_per_hour=100.0, **BOUNDS)
