"""Share one engine's request budget among its topics: an interval per topic, by the square-root rule.

:func:`allocate` takes each topic's :class:`Demand` (its learnt rate of new articles, or None, and its page size) and
the engine's budget in requests per hour, and returns each topic's interval in seconds. A visit costs
``pages_per_visit`` requests, so a topic visited every ``I`` seconds costs ``pages_per_visit * 3600 / I`` requests an
hour (:func:`requests_per_hour`); the intervals never cost more than the budget.

**Why the square root.** An article published at a uniform moment between two visits ``I`` apart waits ``I / 2`` on
average before it is stored, so a topic publishing ``r`` articles an hour contributes ``r * I / 2`` to the total delay.
Minimising ``sum(r_i * I_i / 2)`` under the budget ``sum(c / I_i) = B`` (``c = pages_per_visit * 3600``) with a
Lagrange multiplier ``λ``: ``r_i / 2 = λ c / I_i²``, so ``I_i = k / sqrt(r_i)`` with one ``k`` for all topics. The
objective is linear and the cost convex in the intervals, so clipping each ``I_i`` to its bounds with the same ``k``
(found by bisection so the cost fits the budget) is the exact optimum under bounds too. A topic ten times hotter is
visited about three times as often: hot topics get more, quiet ones are not starved.

**Why not Cho and Garcia-Molina's freshness-optimal policy** ("Effective page refresh policies for web crawlers"): it
maximises the share of *pages* that are fresh, a page being fresh or stale as a whole. A page that changes far faster
than it can be revisited is stale soon after every visit, so that policy gives the fastest pages *fewer* visits, down
to none. Here every article counts and a hot topic's visit stores many of them: starving it is the worst trade there
is. The delay per article is the right cost, and it gives the square root.

**Bounds.** Each interval lies in ``[min_interval, upper_i]``, ``upper_i = min(max_interval, cap_i)``, where ``cap_i``
is the time the topic takes to fill its pages (``page_items * pages_per_visit`` articles at its rate): visited later,
articles fall off the results before they are seen (lost, not delayed). A cap below ``min_interval`` leaves the topic
at ``min_interval``: depth on demand follows the rest. Rates under :data:`RATE_FLOOR` count as the floor (the root of
0 has no inverse; below one article a day an estimate with hours of memory cannot tell rates apart).

**Topics not learnt yet** (rate None) get ``default_interval``, the fixed schedule's ("a topic never seen starts at the
fixed interval"), their cost reserved first; the learnt ones share the rest.

**When the budget is short** (a degraded engine's budget, a burst of topics), budget first, in this order:

1. If the learnt topics cannot all be paid at their ``upper_i``, the caps give way: every cap is stretched by one common
   factor (each capped topic overflows its pages by the same share, none is dropped) until the cost fits; the topics
   then sit at their stretched caps or at ``max_interval``.
2. If even every learnt topic at ``max_interval`` and every new one at ``default_interval`` costs more than the budget,
   all those intervals are stretched by one common factor, past ``max_interval``.
3. A budget of 0 (a paused engine) gives every topic ``math.inf``: no visit is due (never a due time in the past).

Pure: no clock, no I/O; the planner (:mod:`topicstreams.crawl`) feeds it the learnt rates.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Iterable, Mapping
from dataclasses import dataclass
from typing import TypeVar

K = TypeVar("K", bound=Hashable)

RATE_FLOOR = 1.0 / 24.0
"""Articles per hour: a learnt rate below it (one article a day) counts as it."""

SEARCH_STEPS = 200
"""The most halvings of a bisection (each ends sooner, once its bracket is within a relative 1e-12)."""

PRECISION = 1e-12
"""The relative width at which a bisection's bracket is narrow enough."""


@dataclass(frozen=True, slots=True)
class Demand:
    """One topic's claim on the budget: its rate of new articles per hour (None: not learnt yet) and the number of
    articles on its first results page (0: unknown, no cap)."""

    rate_per_hour: float | None
    page_items: int


def requests_per_hour(intervals: Iterable[float], pages_per_visit: int) -> float:
    """What visiting topics at ``intervals`` (seconds) costs, in requests per hour."""
    return math.fsum(pages_per_visit * 3600.0 / interval for interval in intervals if interval > 0)


def allocate(
    demands: Mapping[K, Demand],
    *,
    budget_per_hour: float,
    min_interval: float,
    max_interval: float,
    default_interval: float,
    pages_per_visit: int,
) -> dict[K, float]:
    """Each topic's interval in seconds, costing at most ``budget_per_hour`` requests an hour (see the module's
    docstring): new topics at ``default_interval``, learnt ones by the square-root rule within ``[min_interval,
    max_interval]`` and their page caps, everything stretched only as far as the budget demands; ``math.inf`` for all
    when the budget is 0."""
    check(budget_per_hour, min_interval, max_interval, default_interval, pages_per_visit)
    if not demands:
        return {}
    if budget_per_hour <= 0:
        return dict.fromkeys(demands, math.inf)
    visit = pages_per_visit * 3600.0
    learnt = {key: demand for key, demand in demands.items() if demand.rate_per_hour is not None}
    new = [key for key, demand in demands.items() if demand.rate_per_hour is None]
    new_cost = len(new) * visit / default_interval
    least_cost = new_cost + len(learnt) * visit / max_interval
    if least_cost > budget_per_hour:
        stretch = least_cost / budget_per_hour * (1.0 + PRECISION)
        short = dict.fromkeys(new, default_interval * stretch)
        short.update(dict.fromkeys(learnt, max_interval * stretch))
        return short
    intervals = dict.fromkeys(new, default_interval)
    spare = budget_per_hour - new_cost
    if learnt and spare <= 0:  # rounding only: the learnt topics' least cost was checked above
        intervals.update(dict.fromkeys(learnt, math.inf))
    elif learnt:
        intervals.update(square_root(learnt, spare, min_interval, max_interval, pages_per_visit))
    return intervals


def check(budget: float, min_interval: float, max_interval: float, default_interval: float, pages: int) -> None:
    if math.isnan(budget):
        raise ValueError("budget_per_hour must be a number of requests per hour, got NaN")
    if not (math.isfinite(min_interval) and math.isfinite(max_interval) and 0 < min_interval <= max_interval):
        raise ValueError(
            f"the intervals must satisfy 0 < min_interval <= max_interval (finite seconds), "
            f"got min_interval={min_interval!r}, max_interval={max_interval!r}"
        )
    if not (math.isfinite(default_interval) and default_interval > 0):
        raise ValueError(f"default_interval must be a finite number of seconds > 0, got {default_interval!r}")
    if pages < 1:
        raise ValueError(f"pages_per_visit must be at least 1, got {pages!r}")


def square_root(
    learnt: Mapping[K, Demand], budget: float, min_interval: float, max_interval: float, pages: int
) -> dict[K, float]:
    """The learnt topics' intervals under ``budget``, which pays for all of them at ``max_interval``."""
    visit = pages * 3600.0
    rates: dict[K, float] = {}
    caps: dict[K, float] = {}
    for key, demand in learnt.items():
        rate = demand.rate_per_hour if demand.rate_per_hour is not None else 0.0
        if not math.isfinite(rate):
            raise ValueError(f"the rate of {key!r} is {rate!r}: pass a finite rate, or None for one not learnt yet")
        rates[key] = max(rate, RATE_FLOOR)
        caps[key] = demand.page_items * pages * 3600.0 / rates[key] if demand.page_items > 0 else math.inf

    def cost(intervals: dict[K, float]) -> float:
        return math.fsum(visit / interval for interval in intervals.values())

    def uppers(stretch: float) -> dict[K, float]:
        return {key: max(min_interval, min(max_interval, cap * stretch)) for key, cap in caps.items()}

    upper = uppers(1.0)
    if cost(upper) > budget:  # the caps give way, all by one factor, until the budget pays for every upper bound
        most = max([1.0, *(max_interval / cap for cap in caps.values())])
        if cost(uppers(most)) > budget:  # every topic at max_interval: over the budget by a rounding error only
            return {key: max_interval * cost(uppers(most)) / budget * (1.0 + PRECISION) for key in caps}
        return uppers(feasible_end(lambda each: cost(uppers(each)) <= budget, 1.0, most))

    def at(k: float) -> dict[K, float]:
        return {key: min(max(k / math.sqrt(rates[key]), min_interval), upper[key]) for key in rates}

    lowest = min(min_interval * math.sqrt(rate) for rate in rates.values())
    if cost(at(lowest)) <= budget:
        return at(lowest)
    highest = max(upper[key] * math.sqrt(rate) for key, rate in rates.items())
    return at(feasible_end(lambda k: cost(at(k)) <= budget, lowest, highest))


def feasible_end(fits: Callable[[float], bool], low: float, high: float) -> float:
    """The least ``x`` in ``(low, high]`` (to :data:`PRECISION`) with ``fits(x)``, by bisection in log scale, for a
    ``fits`` false at ``low``, true at ``high`` and monotone; the answer always fits."""
    for _ in range(SEARCH_STEPS):
        if high <= low * (1.0 + PRECISION):
            break
        middle = math.sqrt(low * high)
        if fits(middle):
            high = middle
        else:
            low = middle
    return high
