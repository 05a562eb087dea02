"""Lease mode's topic supply (``scraper.assignment: lease``): the engine's topics claimed from the schedule every node
shares (:mod:`topicstreams.storage.leases`), behind the same seam as the pass of a node's own topics
(:class:`~topicstreams.crawl.supply.TopicSupply`).

* **Claims, one at a time.** The loop asks for a topic only when it can start one (the engine is not benched nor
  paused, its previous topic is over); :meth:`LeasedTopics.prepare` then claims one due row, and :meth:`take` hands it
  out. A cooling or paused engine claims nothing, so its topics stay free for the nodes that still reach it.
* **Re-armed by its claim.** After the topic's pages its row is re-armed to its next slot (anchored to the slot, the
  jitter around it, missed slots skipped) — only if this claim still holds it: a node whose lease expired and was
  taken re-arms nothing. A topic that met a block is released at once, due when it was (another node takes it now);
  one that met another failure is released due a cooldown's initial length later.
* **Leases kept while working.** Every quarter of ``scraper.lease_seconds`` the claims in flight are extended; when
  the spider closes (SIGTERM, Ctrl-C) they are released, so the others take them at once. A node that dies leaves
  them to expire.
* **The topics table reconciled** into the schedule when the supply opens and every interval after (any node may:
  it is idempotent), so a topic added or deactivated reaches every node within one interval.
* **Looks again** at the schedule when its next row is due, and at most every ``TOPICSTREAMS_LEASE_POLL`` seconds
  (another node may release a topic at any time).

The database is touched only from the supply's own thread (one worker, so statements keep their order), never on the
reactor: a database that is away makes the engine wait (a WARNING, and a look again every few seconds), nothing else.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from collections import Counter, deque
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from datetime import timedelta
from typing import Any

from sqlalchemy.exc import SQLAlchemyError

from topicstreams.crawl.engine_state import EngineState
from topicstreams.crawl.supply import RECONCILE_RETRY, Fate, NameCheck, Outcome, warn_no_topics
from topicstreams.crawl.topic_planner import TopicPlanner
from topicstreams.engines.classify import ResponseClass, Verdict
from topicstreams.engines.topic_names import shown
from topicstreams.storage import active_topics, seed_topics
from topicstreams.storage import leases as shared
from topicstreams.storage.db import utcnow
from topicstreams.storage.failures import describe

logger = logging.getLogger(__name__)

CLOSE_TIMEOUT = 5.0
"""Seconds the release of a closing supply's claims may take before it is left to their expiry."""


class LeasedTopics:
    """An engine's topics claimed from the shared schedule (see the module docstring)."""

    def __init__(
        self,
        state: EngineState,
        *,
        database_url: str,
        node: str,
        interval: float,
        lease_seconds: float,
        poll: float,
        seed: Sequence[str] = (),
        problem_of: Callable[[str], str | None] | None = None,
        clock: Callable[[], float] = time.monotonic,
        database: Callable[[str], Any],
        rng: random.Random | None = None,
        planner: TopicPlanner | None = None,
    ) -> None:
        self.state = state
        self.planner = planner
        """Each topic's interval under the adaptive schedule (None, or a fixed one: every ``interval``)."""
        self.engine = state.engine
        self.database_url = database_url
        self.database = database
        """Where the database's handle comes from (the process runtime's)."""
        self.node = node
        self.interval = interval
        self.lease_seconds = lease_seconds
        self.poll = poll
        self.seed = list(seed)
        self.takes = NameCheck(self.engine, problem_of)
        self.clock = clock
        self.rng = rng or random.Random()
        self.ready: deque[shared.Claim] = deque()
        """Claimed and not handed out yet: a claim is made when a lane can start it (one at a time per free lane, so
        a node holds as many topics of the engine as it has free routes), or a claim given back by a failover."""
        self.in_flight: dict[str, shared.Claim] = {}
        self.attempts: Counter[str] = Counter()
        self.next_look = 0.0
        self.next_reconcile = 0.0
        self.away: str | None = None
        """Why the schedule could not be read, while it cannot (warned once per outage)."""
        self.lost = 0
        """Claims found taken by another node when re-armed (their leases had expired)."""
        self.worker = ThreadPoolExecutor(1, thread_name_prefix=f"leases-{self.engine}")
        self.keeper: asyncio.Task | None = None

    @property
    def db(self):
        return self.database(self.database_url)

    # ---- the seam -------------------------------------------------------------------------------------
    def open(self) -> None:
        if self.seed:
            self.worker.submit(self.seed_table)
        self.keeper = asyncio.ensure_future(self.keep_leases())

    async def prepare(self) -> None:
        """Claim a due topic when none is ready and the schedule is worth a look (in the supply's thread)."""
        if self.ready or self.clock() < self.next_look:
            return
        await asyncio.wrap_future(self.worker.submit(self.look))

    def look(self) -> None:
        """Reconcile when due, claim one row; when none is due, find when to look again. (Supply's thread.)"""
        now = self.clock()
        try:
            if now >= self.next_reconcile:
                self.reconcile()
            claims = shared.claim(self.db, self.engine, self.node, self.lease_seconds, limit=1)
            if claims:
                self.ready.extend(claims)
                self.next_look = now
            else:
                due = shared.next_due(self.db, self.engine)
                wait = self.poll if due is None else (due - utcnow()).total_seconds()
                self.next_look = now + min(self.poll, max(0.0, wait))
            if self.away is not None:
                logger.info("[%s] the shared schedule answers again", self.engine)
                self.away = None
        except SQLAlchemyError as exc:
            if self.away is None:
                logger.warning(
                    "[%s] could not claim topics from the shared schedule (%s): claiming nothing; looking "
                    "again every %g s",
                    self.engine,
                    describe(exc),
                    RECONCILE_RETRY,
                )
            self.away = describe(exc)
            self.next_look = now + RECONCILE_RETRY

    def reconcile(self) -> None:
        added, deleted = shared.reconcile(self.db, self.engine, self.interval)
        if self.planner is not None:  # the budget is the whole engine's: every node allocates it alike
            self.planner.follow(name for _, name in active_topics(self.db))
        self.next_reconcile = self.clock() + self.interval
        if added:
            logger.info(
                "[%s] shared schedule: %d topic(s) added, due within the next %g s", self.engine, added, self.interval
            )
        if deleted:
            logger.info("[%s] shared schedule: %d deactivated topic(s) removed", self.engine, deleted)
        if added == 0 and not self.has_rows():
            warn_no_topics()

    def has_rows(self) -> bool:
        return shared.next_due(self.db, self.engine) is not None

    def take(self) -> str | None:
        while self.ready:
            claim = self.ready.popleft()
            if not self.takes(claim.topic):
                # a name the engine cannot take: given back due at its next slot (not counted as scraped)
                self.submit(self.pass_over, claim)
                continue
            self.in_flight[claim.topic] = claim
            return claim.topic
        return None

    def done(self, topic: str, verdict: Verdict, hold: float = 0.0) -> Outcome:
        claim = self.in_flight.pop(topic, None)
        if verdict.cls is ResponseClass.OK:
            self.attempts.pop(topic, None)
            if claim is not None:
                adaptive = self.planner is not None and self.planner.adaptive
                self.submit(self.rearm, claim, self.planner.interval(topic) if adaptive else self.interval)
            return Outcome(Fate.SWEPT)
        self.attempts[topic] += 1
        if verdict.benches:  # blocked here: the topic is free at once for a node that still reaches the engine
            # (after the pair's cooldown when the engine has other routes here: never at once on another route)
            if claim is not None:
                self.submit(self.release, claim, utcnow() + timedelta(seconds=hold) if hold > 0 else None)
            return Outcome(Fate.RETRY, self.attempts[topic])
        retry_in = self.state.cooldown.initial
        if claim is not None:
            self.submit(self.release, claim, utcnow() + timedelta(seconds=retry_in))
        return Outcome(Fate.RETRY, self.attempts[topic], retry_in)

    def fail_over(self, topic: str) -> None:
        claim = self.in_flight.pop(topic, None)
        if claim is not None:  # still this node's: the next free lane takes it at once
            self.ready.appendleft(claim)

    def wait(self) -> float | None:
        return max(0.0, self.next_look - self.clock())

    @property
    def exhausted(self) -> bool:
        return False

    def abandon(self) -> list[str]:
        return []

    def close(self) -> None:
        """Release every claim of this supply (ready or in flight), then stop its thread.

        The release runs in the supply's thread after whatever is queued there (a re-arm of the topic just settled,
        a claim being made): it gives back what is held once those are done, never a claim re-armed a moment later."""
        if self.keeper is not None:
            self.keeper.cancel()
        future = self.worker.submit(self.release_all)
        try:
            future.result(timeout=CLOSE_TIMEOUT)
        except Exception as exc:
            logger.warning(
                "[%s] could not release the claims of the shared schedule at close (%s): they expire within %g s",
                self.engine,
                describe(exc) if isinstance(exc, SQLAlchemyError) else exc,
                self.lease_seconds,
            )
        self.worker.shutdown(wait=False)

    # ---- in the supply's thread -----------------------------------------------------------------------
    def submit(self, action: Callable, *args) -> Future:
        future = self.worker.submit(action, *args)
        future.add_done_callback(self.report)
        return future

    def report(self, future: Future) -> None:
        exc = future.exception()
        if exc is not None:
            logger.warning(
                "[%s] shared schedule: %s (the claim expires within %g s; another node takes it then)",
                self.engine,
                describe(exc) if isinstance(exc, SQLAlchemyError) else repr(exc),
                self.lease_seconds,
            )

    def seed_table(self) -> None:
        try:
            seed_topics(self.db, self.seed)
        except SQLAlchemyError as exc:
            logger.warning(
                "[%s] could not seed the topics table (%s): the schedule has the topics already there",
                self.engine,
                describe(exc),
            )

    def pass_over(self, claim: shared.Claim) -> None:
        _, due = shared.next_slot(claim.slot_at, utcnow(), self.interval, self.state.jitter_ratio, self.rng)
        shared.release(self.db, self.engine, [claim], due_at=due)

    def rearm(self, claim: shared.Claim, interval: float) -> None:
        slot, due = shared.next_slot(claim.slot_at, utcnow(), interval, self.state.jitter_ratio, self.rng)
        if not shared.rearm(self.db, self.engine, self.node, [shared.Rearm(claim, slot, due)]):
            self.lost += 1
            logger.warning(
                "[%s] topic %s: its lease had expired and another node claimed it; not re-armed here "
                "(scraped twice in this slot: raise scraper.lease_seconds if pages take that long)",
                self.engine,
                shown(claim.topic),
            )

    def release(self, claim: shared.Claim, due_at) -> None:
        shared.release(self.db, self.engine, [claim], due_at=due_at)

    def release_all(self) -> None:
        """Give back every claim still held (the loop waits on this at close: nothing else touches them now)."""
        claims = [*self.ready, *self.in_flight.values()]
        self.ready.clear()
        self.in_flight.clear()
        released = shared.release_tokens(self.db, sorted({claim.token for claim in claims}))
        if released:
            logger.info(
                "[%s] released %d claim(s) of the shared schedule: the other nodes take them now", self.engine, released
            )

    def extend(self, tokens: list[str]) -> None:
        kept = shared.extend(self.db, tokens, self.lease_seconds)
        if set(tokens) - kept:
            logger.warning(
                "[%s] %d claim(s) in flight were taken by another node (their leases expired)",
                self.engine,
                len(set(tokens) - kept),
            )

    async def keep_leases(self) -> None:
        """Extend the claims in flight every quarter of the lease, as long as the supply runs."""
        while True:
            await asyncio.sleep(self.lease_seconds / 4)
            tokens = sorted({claim.token for claim in [*self.in_flight.values(), *self.ready]})
            if tokens:
                try:
                    await asyncio.wrap_future(self.worker.submit(self.extend, tokens))
                except (SQLAlchemyError, RuntimeError) as exc:
                    logger.debug("[%s] could not extend the leases: %s", self.engine, exc)
