"""An engine's schedule of visits: how often each topic is visited and how deep, within the engine's request budget
(CONTRACT "Freshness").

A :class:`TopicPlanner` is made per engine spider. The topic supply asks it each topic's interval
(:meth:`TopicPlanner.interval`); the spider asks it which of a page's articles are already stored
(:meth:`TopicPlanner.stored`), whether to read one more page (:meth:`TopicPlanner.burst_allowed`) and tells it how
each visit went (:meth:`TopicPlanner.visited`).

* **Rates.** After every visit of a topic, in either schedule, the pair's rate (:mod:`topicstreams.freshness.rates`)
  learns from the articles the visit found new over the time since the previous visit, censored when the last page
  was all new; the pair's row in ``topic_rates`` is written, so a restart (or another node, in lease mode) starts
  from it.
* **``scraper.schedule: fixed``**: every topic every ``scraper.scrape_interval`` (times the engine's pace multiplier
  while it is degraded), as it always was; nothing read deeper than ``scraper.max_pages``.
* **``adaptive``**: the engine's budget is what the fixed schedule would send (:func:`~topicstreams.freshness.budget.
  fixed_budget` over the topics the supply follows), divided by the pace multiplier while degraded, 0 while paused;
  the budget, less what burst pages spent in the last hour, is shared among the topics by the square-root rule
  (:func:`~topicstreams.freshness.allocation.allocate`), each between ``scraper.adaptive.min_interval`` and
  ``max_interval``; a topic not learnt yet keeps the fixed interval. The allocation is made again when a rate jumps,
  when the budget changes, and at most every :data:`REPLAN_EVERY` seconds otherwise. Depth on demand: a visit whose
  page (the last of ``max_pages``, and each one after) held only new articles reads the next page too, up to
  ``burst_pages`` more, each taken from a token bucket filled at the budget's rate.
* **Holes.** A visit whose last page held only new articles (after the pair's first visit) counts as a hole
  (``topicstreams/<engine>/holes``): articles may have fallen off the engine's results between two visits.

The engine's pacing floor is untouched: the pacing middleware keeps it between any two requests of a lane, whatever
the schedule asks for.
"""

from __future__ import annotations

import logging
import math
import time
from collections import deque
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from scrapy.utils.misc import build_from_crawler, load_object
from sqlalchemy.exc import SQLAlchemyError

from topicstreams.config.setting_names import sections_from
from topicstreams.crawl.engine_state import EngineState
from topicstreams.crawl.signals import TopicVisit, topic_visited
from topicstreams.freshness.allocation import Demand, allocate
from topicstreams.freshness.budget import RequestBudget, bucket_capacity, fixed_budget
from topicstreams.freshness.rates import RateEstimate, observe
from topicstreams.storage.db import utcnow
from topicstreams.storage.failures import describe
from topicstreams.storage.stored_news import stored_news
from topicstreams.storage.topic_rates import TopicRateRow, read_topic_rates, save_topic_rates

logger = logging.getLogger(__name__)

ADAPTIVE = "adaptive"
REPLAN_EVERY = 10.0
"""Seconds an allocation is kept before it is made again (sooner when a rate jumps or the budget changes)."""
BURST_WINDOW = 3600.0
"""Seconds of burst pages counted against the budget the topics share."""
BURST_RESERVE = 0.1
"""The share of the budget the allocation leaves for burst pages at least (more when the last hour's bursts took
more, up to half): regular visits never spend what depth on demand needs."""


@dataclass
class PairState:
    """What the planner holds of one topic on its engine."""

    estimate: RateEstimate = field(default_factory=RateEstimate.fresh)
    last_visit_at: datetime | None = None
    visited_at: float | None = None
    """When it was last visited (the planner's monotonic clock), in this process."""
    last_ids: frozenset[str] = frozenset()
    """The news ids of its last visit (known even before the store has written them)."""
    holes: int = 0
    burst_pages: int = 0
    last_hole_at: datetime | None = None
    next_due_at: datetime | None = None


class TopicPlanner:
    """The schedule of one engine's visits on this node (see the module docstring)."""

    def __init__(
        self,
        crawler: Any,
        state: EngineState,
        *,
        database: Callable[[str], Any],
        clock: Callable[[], float] = time.monotonic,
        wall: Callable[[], datetime] = utcnow,
        outbox: Any = None,
    ) -> None:
        settings = crawler.settings
        sections = sections_from(settings)
        scraper = sections.scraper
        self.crawler = crawler
        self.engine = state.engine
        self.state = state
        self.adaptive = scraper.schedule == ADAPTIVE
        self.scrape_interval = scraper.scrape_interval
        self.max_pages = scraper.max_pages
        self.min_interval = scraper.adaptive.min_interval
        self.max_interval = scraper.adaptive.max_interval
        self.burst_limit = scraper.adaptive.burst_pages if self.adaptive else 0
        self.memory_hours = settings.getfloat("TOPICSTREAMS_RATE_MEMORY") / 3600
        self.database_url = sections.database.url
        self.database = database
        self.clock = clock
        self.wall = wall
        """The time of day a visit is recorded at (``topic_rates``: other processes and nodes read it)."""
        self.outbox = outbox
        """Where the pairs' rows are written, off the event loop and through outages (the process's outbox of the
        database); None: written at once (a planner of its own, in a test)."""
        oracle = settings.get("TOPICSTREAMS_FRESHNESS_RATES")
        self.oracle = build_from_crawler(load_object(oracle), crawler) if oracle else None
        self.pairs: dict[str, PairState] = {}
        self.followed: list[str] = []
        self.intervals: dict[str, float] = {}
        self.planned_at: float | None = None
        self.plans = 0
        """How many allocations were made (the supply brings topics forward after each)."""
        self.planned_budget: float | None = None
        self.bursts: deque[float] = deque()
        budget = self.budget_per_hour()
        self.bucket = RequestBudget(budget, capacity=self.bucket_capacity(budget), clock=clock)

    # ---- the topics -------------------------------------------------------------------------------
    def load(self) -> None:
        """Start from what the database has learnt of the engine's topics (nothing when it cannot be read)."""
        try:
            rows = read_topic_rates(self.database(self.database_url), self.engine)
        except SQLAlchemyError as exc:
            logger.info(
                "[%s] could not read the topics' learnt rates (%s): starting from none", self.engine, describe(exc)
            )
            return
        for row in rows:
            self.pairs[row.topic] = PairState(
                estimate=RateEstimate(
                    rate_per_hour=row.rate_per_hour or 0.0,
                    evidence=row.evidence,
                    exposure_hours=row.exposure_hours,
                    visits=row.visits,
                    page_items=row.page_items,
                ),
                last_visit_at=row.last_visit_at,
                holes=row.holes,
                burst_pages=row.burst_pages,
                last_hole_at=row.last_hole_at,
                next_due_at=row.next_due_at,
            )
        self.planned_at = None

    def follow(self, topics: Iterable[str]) -> None:
        """The topics the supply schedules now (the budget is theirs)."""
        followed = list(dict.fromkeys(topics))
        if followed != self.followed:
            self.followed = followed
            self.planned_at = None

    def pair(self, topic: str) -> PairState:
        found = self.pairs.get(topic)
        if found is None:
            found = self.pairs[topic] = PairState()
        return found

    def first_visit(self, topic: str) -> bool:
        """Whether the pair has never been visited (everything it finds is new: nothing to learn from)."""
        return self.pair(topic).estimate.visits == 0

    # ---- the budget -------------------------------------------------------------------------------
    def budget_per_hour(self) -> float:
        """The engine's requests an hour: what the fixed schedule sends over the topics followed, less while the
        engine is degraded, none while it is paused."""
        if self.state.paused:
            return 0.0
        topics = max(1, len(self.followed))
        return fixed_budget(topics, self.scrape_interval, self.max_pages) / max(1.0, self.state.pace_multiplier)

    def bucket_capacity(self, budget: float) -> float:
        return bucket_capacity(budget, self.max_pages + self.burst_limit)

    def burst_per_hour(self) -> float:
        """Burst pages read in the last hour (what depth on demand spent)."""
        horizon = self.clock() - BURST_WINDOW
        while self.bursts and self.bursts[0] < horizon:
            self.bursts.popleft()
        return float(len(self.bursts))

    # ---- intervals --------------------------------------------------------------------------------
    def interval(self, topic: str) -> float:
        """Seconds until the topic's next visit, counted from the end of this one."""
        if not self.adaptive:
            return self.scrape_interval * self.state.pace_multiplier
        self.plan()
        interval = self.intervals.get(topic, self.scrape_interval)
        # no budget (a paused engine takes no topic anyway): due again no later than a quiet topic would be
        return interval if math.isfinite(interval) else self.max_interval

    def plan(self, force: bool = False) -> bool:
        """Make the allocation again when it is due (or ``force``); whether it was made."""
        budget = self.budget_per_hour()
        now = self.clock()
        kept = self.planned_at is not None and budget == self.planned_budget and now - self.planned_at < REPLAN_EVERY
        if kept and not force:
            return False
        demands = {topic: self.demand(topic) for topic in self.followed}
        reserve = max(self.burst_per_hour(), BURST_RESERVE * budget) if self.burst_limit else 0.0
        # topics not learnt yet keep the fixed interval whatever the reserve (they are few but at the start)
        unknown = sum(1 for demand in demands.values() if demand.rate_per_hour is None)
        spendable = max(
            budget - min(reserve, budget / 2), min(budget, fixed_budget(unknown, self.scrape_interval, self.max_pages))
        )
        self.intervals = allocate(
            demands,
            budget_per_hour=spendable,
            min_interval=self.min_interval,
            max_interval=self.max_interval,
            default_interval=self.scrape_interval,
            pages_per_visit=self.max_pages,
        )
        self.bucket.resize(budget, self.bucket_capacity(budget))
        self.planned_at, self.planned_budget = now, budget
        self.plans += 1
        return True

    def demand(self, topic: str) -> Demand:
        estimate = self.pair(topic).estimate
        if self.oracle is not None:
            return Demand(float(self.oracle.rate_per_hour(self.engine, topic)), estimate.page_items)
        return Demand(estimate.rate_per_hour if estimate.known else None, estimate.page_items)

    def due_after(self, topic: str) -> float | None:
        """When the topic should be due by its current interval (the planner's clock), if it was visited here."""
        visited = self.pair(topic).visited_at
        return None if visited is None else visited + self.interval(topic)

    # ---- a visit ----------------------------------------------------------------------------------
    def stored(self, topic: str, ids: Collection[str]) -> set[str] | None:
        """Which of ``ids`` the engine found for the topic before (None: the store cannot tell now)."""
        known = set(self.pair(topic).last_ids.intersection(ids))
        try:
            known |= stored_news(self.database(self.database_url), topic, self.engine, ids)
        except SQLAlchemyError as exc:
            logger.debug("[%s] could not tell which articles are stored (%s)", self.engine, describe(exc))
            return None
        return known

    def burst_allowed(self, burst_pages: int) -> bool:
        """Whether a visit that has read ``burst_pages`` burst pages so far may read one more."""
        return burst_pages < self.burst_limit and not self.state.paused and self.bucket.take(1)

    def spent(self, pages: int) -> None:
        """Requests of a visit's regular pages (the bucket counts every request; they are planned, never refused)."""
        self.bucket.take(pages)

    def visited(self, visit: VisitCount, route: str) -> TopicVisit:
        """A visit is over: learn from it, write the pair's row, count its holes and burst pages, send
        ``topic_visited``; the visit as sent."""
        pair = self.pair(visit.topic)
        now_wall, now = self.wall(), self.clock()
        first = pair.estimate.visits == 0
        jumped = False
        if visit.new is not None:
            hours = (now_wall - pair.last_visit_at).total_seconds() / 3600 if pair.last_visit_at is not None else 0.0
            observed = observe(
                pair.estimate,
                new=visit.new,
                hours=max(hours, 0.0),
                censored=visit.censored,
                items=visit.first_page_items,
                memory_hours=self.memory_hours,
            )
            pair.estimate, jumped = observed.estimate, observed.jumped
        pair.last_visit_at, pair.visited_at = now_wall, now
        pair.last_ids = frozenset(visit.ids)
        hole = visit.censored and not first and visit.new is not None
        stats = self.crawler.stats
        if hole:
            pair.holes += 1
            pair.last_hole_at = now_wall
            stats.inc_value(f"topicstreams/{self.engine}/holes")
        if visit.burst_pages:
            pair.burst_pages += visit.burst_pages
            stats.inc_value(f"topicstreams/{self.engine}/burst_pages", visit.burst_pages)
            self.bursts.extend([now] * visit.burst_pages)
        if jumped and self.adaptive:
            self.plan(force=True)
        interval = self.interval(visit.topic)
        pair.next_due_at = datetime.fromtimestamp(now_wall.timestamp() + interval, now_wall.tzinfo)
        estimate = pair.estimate
        rate = estimate.rate_per_hour if estimate.known else None
        self.save(visit.topic, pair, rate, interval)
        outcome = TopicVisit(
            engine=self.engine,
            topic=visit.topic,
            route=route,
            pages=visit.pages,
            burst_pages=visit.burst_pages,
            new=visit.new,
            items=visit.items,
            censored=visit.censored,
            hole=hole,
            first=first,
            rate_per_hour=rate,
            interval_seconds=interval,
            budget_per_hour=self.budget_per_hour(),
            at=now_wall,
        )
        self.crawler.signals.send_catch_log(signal=topic_visited, visit=outcome)
        return outcome

    def save(self, topic: str, pair: PairState, rate: float | None, interval: float) -> None:
        estimate = pair.estimate
        row = TopicRateRow(
            topic=topic,
            engine=self.engine,
            rate_per_hour=rate,
            evidence=estimate.evidence,
            exposure_hours=estimate.exposure_hours,
            visits=estimate.visits,
            page_items=estimate.page_items,
            interval_seconds=interval,
            next_due_at=pair.next_due_at,
            last_visit_at=pair.last_visit_at,
            holes=pair.holes,
            burst_pages=pair.burst_pages,
            last_hole_at=pair.last_hole_at,
        )
        if self.outbox is not None:
            self.outbox.put(f"the learnt rate of a topic on {self.engine}", lambda db: save_topic_rates(db, [row]))
            return
        try:
            save_topic_rates(self.database(self.database_url), [row])
        except SQLAlchemyError as exc:
            logger.debug("[%s] could not write topic %r's learnt rate (%s)", self.engine, topic, describe(exc))


@dataclass
class VisitCount:
    """What a visit of a topic found so far, page by page (the spider keeps one per topic run)."""

    topic: str
    pages: int = 0
    burst_pages: int = 0
    items: int = 0
    first_page_items: int = 0
    new: int | None = 0
    """Articles not stored before; None once a page could not be told (the store away)."""
    censored: bool = False
    """The latest page held only new articles."""
    ids: set[str] = field(default_factory=set)

    def page(self, ids: list[str], stored: set[str] | None) -> None:
        """One more page, with its articles' news ids and those of them stored before (None: cannot tell)."""
        if self.pages == 0:
            self.first_page_items = len(ids)
        self.pages += 1
        self.items += len(ids)
        self.ids.update(ids)
        if stored is None or self.new is None:
            self.new, self.censored = None, False
            return
        fresh = sum(1 for news in ids if news not in stored)
        self.new += fresh
        self.censored = bool(ids) and fresh == len(ids)
