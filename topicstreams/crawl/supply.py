"""The topic supply: the one seam between an engine's loop and where its topics come from.

The spider's loop (:mod:`topicstreams.crawl.spider`) asks a :class:`TopicSupply` "which topic next?"
(:meth:`~TopicSupply.take`: a topic due now, or None) and "when should I look again?"
(:meth:`~TopicSupply.wait`), and tells it "this topic is done" with the verdict of its pages
(:meth:`~TopicSupply.done`, which answers what becomes of the topic: swept, retried, given up). The loop knows
nothing else of the topics.

Behind it, in lease mode's continuous runs, :class:`~topicstreams.crawl.leased_supply.LeasedTopics` (claims on the
schedule every node shares); otherwise :class:`PassTopics`: the schedule
(:class:`~topicstreams.crawl.topic_schedule.TopicSchedule`) over the topics of a pass —

* the ``topics`` argument (missing names inserted inactive: a one-off run never joins the standing list), else
  the table's active topics, seeded from the configuration's ``topics``, followed by a reconcile every interval;
* only the topics of this node's shard (``scraper.shard``, a hash stable across machines and runs);
* only names the engine can take (``problem_of``: :mod:`topicstreams.engines.topic_names`' rule). A name of the
  table that breaks it (stored before names were checked) is skipped, with one WARNING per supply — once per engine and
  process — never a crash nor a warning every pass;
* in once mode every topic due at once, each tried up to ``scraper.once_attempts`` times; otherwise staggered over
  one interval and re-armed an interval (× the engine's pace multiplier, jittered) after each sweep;
* a topic that met a block goes back with its old due time (it is the probe once the cooldown is over); after
  another failure it is due again the cooldown's initial length later.
"""

from __future__ import annotations

import enum
import hashlib
import logging
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from sqlalchemy.exc import SQLAlchemyError

from topicstreams.crawl.engine_state import EngineState
from topicstreams.crawl.topic_planner import TopicPlanner
from topicstreams.crawl.topic_schedule import TopicSchedule
from topicstreams.engines.classify import ResponseClass, Verdict
from topicstreams.engines.topic_names import shown
from topicstreams.storage import active_topics, ensure_topics, seed_topics
from topicstreams.storage.failures import describe

logger = logging.getLogger(__name__)

RECONCILE_RETRY = 10.0
"""Seconds before looking at the topics table again when it could not be read."""


class Fate(enum.StrEnum):
    SWEPT = "swept"
    """Every page of the topic was read; it comes round again in continuous mode."""
    RETRY = "retry"
    """It failed; it will be due again (``retry_in`` seconds, or after the cooldown)."""
    GIVEN_UP = "given_up"
    """Once mode: it failed ``scraper.once_attempts`` times and is not tried again."""


@dataclass(frozen=True)
class Outcome:
    fate: Fate
    attempts: int = 0
    """Failed attempts at the topic so far in this run."""
    retry_in: float | None = None
    """For a retry: seconds until it is due again; None: when the engine's cooldown is over."""


class TopicSupply(Protocol):
    """What the loop asks of whatever supplies its topics."""

    def open(self) -> None:
        """Before the first topic: prepare (the topics table, the first schedule)."""

    async def prepare(self) -> None:
        """Before :meth:`take`, when the loop could start a topic: fetch what it will hand out (lease mode claims
        a topic here, off the reactor); nothing for a pass of the node's own topics."""

    def take(self) -> str | None:
        """A topic due now, taken (in flight until :meth:`done`); None when none is due."""

    def done(self, topic: str, verdict: Verdict, hold: float = 0.0) -> Outcome:
        """The topic's pages are over, with ``verdict`` (the last page's); what becomes of it. ``hold``: after a block
        on one of several routes, the seconds the topic must wait (that pair's cooldown): a block is never tried again
        at once on another route — that is how a site sees a bot hopping addresses."""

    def fail_over(self, topic: str) -> None:
        """The topic's request failed for a route's reason and another route of the engine is free: it is due again
        now (no attempt counted: the route failed, not the topic), for another lane to take."""

    def wait(self) -> float | None:
        """Seconds until a topic may be due (or the supply wants a look again); None when it cannot tell."""

    @property
    def exhausted(self) -> bool:
        """Once mode: no topic is left to take."""

    def abandon(self) -> list[str]:
        """Once mode on an engine that cannot go on: the topics left, which are given up."""

    def close(self) -> None:
        """The spider closes: give back whatever is held (lease mode's claims)."""


def in_shard(topic: str, shard: str) -> bool:
    """Whether this node takes ``topic`` under ``shard`` ("i/n"): a hash stable across machines and runs."""
    index, count = (int(part) for part in shard.split("/"))
    if count == 1:
        return True
    digest = hashlib.sha256(topic.encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") % count == index


class NameCheck:
    """Whether an engine can take a name of the topics table (``problem_of``); a WARNING the first time it cannot.
    Each name is looked at once: what keeps the engine from taking it (None: nothing) is kept."""

    def __init__(self, engine: str, problem_of: Callable[[str], str | None] | None) -> None:
        self.engine = engine
        self.problem_of = problem_of
        self.problems: dict[str, str | None] = {}

    def __call__(self, name: str) -> bool:
        if self.problem_of is None:
            return True
        if name not in self.problems:
            problem = self.problems[name] = self.problem_of(name)
            if problem is not None:
                logger.warning(
                    "[%s] topic %s of the topics table is skipped: %s (it was stored before names were "
                    "checked; `scrapy topics deactivate` takes it off the list)",
                    self.engine,
                    shown(name),
                    problem,
                )
        return self.problems[name] is None


class PassTopics:
    """The schedule over the topics of a pass (see the module docstring)."""

    def __init__(
        self,
        state: EngineState,
        *,
        database_url: str,
        interval: float,
        topics: Sequence[str] | None,
        seed: Sequence[str] = (),
        once: bool = False,
        once_attempts: int = 1,
        shard: str = "0/1",
        problem_of: Callable[[str], str | None] | None = None,
        database: Callable[[str], Any],
        clock: Callable[[], float] = time.monotonic,
        planner: TopicPlanner | None = None,
    ) -> None:
        self.state = state
        self.planner = planner
        """Each topic's interval under the adaptive schedule (None, or a fixed one: every ``interval``)."""
        self.plans_seen = 0
        self.database_url = database_url
        self.database = database
        """Where the database's handle comes from (the process runtime's)."""
        self.interval = interval
        self.topics_arg = list(topics) if topics is not None else None
        self.seed = list(seed)
        self.once = once
        self.once_attempts = once_attempts
        self.shard = shard
        self.takes = NameCheck(state.engine, problem_of)
        self.schedule = TopicSchedule(interval, state.jitter_ratio, clock=clock)
        self.follows_table = self.topics_arg is None and not once
        self.attempts: Counter[str] = Counter()
        self.due: dict[str, float] = {}
        """Topics in flight -> the due time they were taken at."""

    # ---- the topics of a pass -------------------------------------------------------------------------
    def current_topics(self) -> list[str]:
        """The topics of this pass: the ``topics`` argument, else the table's active topics; sharded."""
        if self.topics_arg is not None:
            names = self.topics_arg
        else:
            names = [name for _, name in active_topics(self.database(self.database_url))]
        return [name for name in names if in_shard(name, self.shard) and self.takes(name)]

    def open(self) -> None:
        if self.topics_arg is not None:
            ensure_topics(self.database(self.database_url), self.topics_arg, active=False)
        elif self.seed:
            seed_topics(self.database(self.database_url), self.seed)
        if self.once:
            self.schedule.add_now(self.follow(self.current_topics()))
        elif not self.follows_table:
            self.schedule.stagger(self.follow(self.current_topics()))
        if not self.follows_table and not len(self.schedule):
            warn_no_topics()

    def reconcile(self) -> None:
        try:
            topics = self.current_topics()
        except SQLAlchemyError as exc:
            # The database is away (the store keeps what is scraped meanwhile): the schedule stays as it is.
            self.schedule.defer_reconcile(RECONCILE_RETRY)
            logger.debug(
                "could not read the topics table (%s): the schedule stays as it is; looking again in %g s",
                describe(exc),
                RECONCILE_RETRY,
            )
            return
        added, dropped = self.schedule.reconcile(self.follow(topics))
        if added and len(added) < len(self.schedule):
            logger.info(
                "topics table: %d new topic(s) scheduled within the next %g s: %s",
                len(added),
                self.interval,
                ", ".join(added),
            )
        if dropped:
            logger.info("topics table: %d topic(s) no longer active, dropped: %s", len(dropped), ", ".join(dropped))
        if not topics:
            warn_no_topics()

    def follow(self, topics: list[str]) -> list[str]:
        """The topics of the pass, told to the planner (its budget is theirs)."""
        if self.planner is not None:
            self.planner.follow(topics)
        return topics

    def adaptive(self) -> bool:
        return self.planner is not None and self.planner.adaptive

    def bring_forward(self) -> None:
        """After a new allocation: a topic whose new interval makes it due sooner than its place says comes forward
        (a rate that jumps brings its visit forward at once; never later: the next re-arm does that)."""
        planner = self.planner
        if planner is None or planner.plans == self.plans_seen:
            return
        self.plans_seen = planner.plans
        now = self.schedule.clock()
        for topic in self.schedule.topics:
            wanted, due = planner.due_after(topic), self.schedule.due_time(topic)
            if wanted is not None and due is not None and wanted < due:
                self.schedule.move(topic, max(now, wanted))

    # ---- the seam -------------------------------------------------------------------------------------
    async def prepare(self) -> None:
        return None

    def take(self) -> str | None:
        if self.follows_table and self.schedule.reconcile_due():
            self.reconcile()
        popped = self.schedule.pop_due()
        if popped is None:
            return None
        topic, due = popped
        self.due[topic] = due
        return topic

    def done(self, topic: str, verdict: Verdict, hold: float = 0.0) -> Outcome:
        due = self.due.pop(topic, self.schedule.clock())
        if verdict.cls is ResponseClass.OK:
            if not self.once and self.planner is not None and self.adaptive():
                # the topic's own interval (the budget already shrinks while the engine is degraded)
                self.schedule.rearm(topic, interval=self.planner.interval(topic))
                self.bring_forward()
            elif not self.once:
                self.schedule.rearm(topic, self.state.pace_multiplier)  # a slowed engine comes round later too
            return Outcome(Fate.SWEPT, self.attempts[topic])
        self.attempts[topic] += 1
        attempts = self.attempts[topic]
        if self.once and attempts >= self.once_attempts:
            return Outcome(Fate.GIVEN_UP, attempts)
        # A block: the topic goes first once the cooldown is over (it is the probe). Another failure: the
        # topic is tried again a cooldown later, the others go on meanwhile.
        if verdict.benches:
            self.schedule.put_back(topic, max(due, self.schedule.clock() + hold) if hold > 0 else due)
            return Outcome(Fate.RETRY, attempts)
        retry_in = self.state.cooldown.initial
        self.schedule.put_back(topic, self.schedule.clock() + retry_in)
        return Outcome(Fate.RETRY, attempts, retry_in)

    def fail_over(self, topic: str) -> None:
        due = self.due.pop(topic, self.schedule.clock())
        self.schedule.put_back(topic, min(due, self.schedule.clock()))

    def wait(self) -> float | None:
        wakes = [
            when
            for when in (self.schedule.next_due(), self.schedule.next_reconcile if self.follows_table else None)
            if when is not None
        ]
        return max(0.0, min(wakes) - self.schedule.clock()) if wakes else None  # the next due or reconcile

    @property
    def exhausted(self) -> bool:
        return self.once and not len(self.schedule)

    def abandon(self) -> list[str]:
        left = self.schedule.topics
        for topic in left:
            self.schedule.remove(topic)
        return left

    def close(self) -> None:
        return None


def warn_no_topics() -> None:
    logger.warning(
        "no topics to scrape: add some with `scrapy topics add NAME`, "
        "list them in the config's `topics`, or pass -a topics=a,b"
    )
