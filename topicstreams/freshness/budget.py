"""An engine's request budget: how many requests an hour it may send (:func:`fixed_budget`), and a token bucket that
holds a crawl to it (:class:`RequestBudget`).

The adaptive schedule never sends more than the fixed one would: every active topic every ``scrape_interval``
seconds, ``max_pages`` requests a visit. The planner shrinks that figure by the degrade factor while the engine is
degraded and makes it 0 while paused (:meth:`RequestBudget.resize`); pacing's floor (the least delay between two
requests to an engine) is enforced apart, by the pacing middleware.

The allocation (:mod:`.allocation`) spends the budget on average; the bucket holds it over any window, depth on demand
included (each extra page takes a token): over any ``hours``, at most ``per_hour * hours + capacity`` requests are
taken. It starts full, so a crawl starts at once. **The capacity** (:func:`bucket_capacity`) is a quarter of an hour of
budget (:data:`CAPACITY_HOURS`), and never less than one deep visit (its pages plus the burst pages): enough to
absorb topics falling due together and to follow a burst at once, small enough that an hour never sees more than 1.25
hours of budget. A request of more tokens than the capacity is never granted (:meth:`RequestBudget.wait` says
``math.inf``), nor is any while the budget is 0.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable

CAPACITY_HOURS = 0.25
"""The bucket holds this many hours of budget (see :func:`bucket_capacity`)."""


def fixed_budget(active_topics: int, scrape_interval: float, max_pages: int) -> float:
    """The requests per hour the fixed schedule sends: ``active_topics * 3600 / scrape_interval * max_pages``."""
    if not (math.isfinite(scrape_interval) and scrape_interval > 0):
        raise ValueError(f"scrape_interval must be a finite number of seconds > 0, got {scrape_interval!r}")
    if active_topics < 0 or max_pages < 0:
        raise ValueError(f"counts must be >= 0, got active_topics={active_topics!r}, max_pages={max_pages!r}")
    return active_topics * 3600.0 / scrape_interval * max_pages


def bucket_capacity(per_hour: float, visit_pages: int) -> float:
    """The bucket's capacity for a budget of ``per_hour`` requests an hour: :data:`CAPACITY_HOURS` of it, at least
    ``visit_pages`` (a visit's pages with its burst pages); 0 for a budget of 0."""
    if per_hour <= 0:
        return 0.0
    return max(float(visit_pages), per_hour * CAPACITY_HOURS, 1.0)


class RequestBudget:
    """A token bucket of ``capacity`` tokens filled at ``per_hour`` tokens an hour, on ``clock`` (seconds, monotonic),
    full at the start. Owned by one engine's planner; not thread-safe (the crawl's reactor thread only)."""

    def __init__(self, per_hour: float, capacity: float, clock: Callable[[], float] = time.monotonic) -> None:
        check(per_hour, capacity)
        self.per_hour = float(per_hour)
        self.capacity = float(capacity)
        self.clock = clock
        self._tokens = self.capacity
        self._at = clock()

    def _fill(self) -> float:
        now = self.clock()
        if now > self._at:  # a clock that went back fills nothing
            self._tokens = min(self.capacity, self._tokens + (now - self._at) * self.per_hour / 3600.0)
            self._at = now
        return self._tokens

    def available(self) -> float:
        """The tokens in the bucket now."""
        return self._fill()

    def take(self, n: float = 1) -> bool:
        """Take ``n`` tokens if the bucket holds them (True), else take none (False)."""
        if n < 0:
            raise ValueError(f"n must be >= 0 tokens, got {n!r}")
        if self._fill() < n:
            return False
        self._tokens -= n
        return True

    def wait(self, n: float = 1) -> float:
        """Seconds until the bucket holds ``n`` tokens: 0 if it does now, ``math.inf`` if it never will (``n`` over
        the capacity, or a budget of 0)."""
        missing = n - self._fill()
        if missing <= 0:
            return 0.0
        if n > self.capacity or self.per_hour <= 0:
            return math.inf
        return missing * 3600.0 / self.per_hour

    def resize(self, per_hour: float, capacity: float | None = None) -> None:
        """From now on fill at ``per_hour`` (and hold ``capacity``, if given); the tokens held are kept, but never
        more than the capacity: a budget of 0 with a capacity of 0 stops every request at once."""
        self._fill()
        check(per_hour, self.capacity if capacity is None else capacity)
        self.per_hour = float(per_hour)
        if capacity is not None:
            self.capacity = float(capacity)
        self._tokens = min(self._tokens, self.capacity)


def check(per_hour: float, capacity: float) -> None:
    if not (math.isfinite(per_hour) and per_hour >= 0):
        raise ValueError(f"per_hour must be a finite number of requests per hour >= 0, got {per_hour!r}")
    if not (math.isfinite(capacity) and capacity >= 0):
        raise ValueError(f"capacity must be a finite number of tokens >= 0, got {capacity!r}")
