"""The crawl's alerting work: news digests (``alerting.digests``) and topics gone silent, sent by the crawl processes.

A Scrapy extension built per engine crawler (``TOPICSTREAMS_ALERTS_ENABLED``, on an engine spider, with a
database), but the work is the process's: the crawlers of ``scrapy crawlall`` share one :class:`AlertingWork` (per
database and node, kept in the process's runtime), with one looping call — started when the first crawler opens,
stopped when the last one closes — and one thread of its own, where every read, claim and write runs (never on the
event loop). Alerts are handed to the process's :class:`~topicstreams.alerts.delivery.Notifier`, which delivers them in
its own thread. The web app sends nothing.

Every ``TOPICSTREAMS_ALERTS_TICK`` seconds (a Scrapy setting, :mod:`topicstreams.settings`):

* **scheduled digests** (``hour``, ``day``, ``week``): a digest seen for the first time starts from that moment
  (:func:`topicstreams.storage.digest_events.ensure`: never the whole history). When its ``sent_until`` is before the
  latest end of its periods (:func:`topicstreams.alerts.digest_periods.last_boundary`), the process claims the period
  (a compare-and-set in ``digest_states``: one process of every node gets it), reads the digest's events in
  ``(sent_until, end]``, sends them as one message (nothing when there are none), and completes the period. A
  period missed while no crawl ran is part of the next one: one message covering the gap at the next start.
  A process that dies between its claim and its completion leaves the claim to expire (:data:`CLAIM_HOLD`):
  the period is then sent by another, at most once more;
* **as-it-happens batches**: the store pipeline announces the feed events it added
  (:data:`topicstreams.crawl.signals.events_stored`); they wait here, and :data:`BATCH_SECONDS` after the first of them
  each ``as_it_happens`` digest gets one message with those of its events (its topics, engines and query). A crawl
  that closes — the end of a ``once=1`` run, SIGTERM — sends its pending batch (the last crawler of the process to
  close does) and then waits a few seconds for the notifier to deliver (``TOPICSTREAMS_ALERT_STOP_WAIT``: what is
  left then is delivered by the node's next start, :mod:`topicstreams.alerts.leftovers`).

Every ``TOPICSTREAMS_ALERTS_SILENCE_EVERY`` seconds: **topic silence**
(:mod:`topicstreams.alerts.topic_silence`) of every active topic, judged on its new events over ``health.baseline_days``
while any of the enabled engines has a fresh ``engine_status`` row in state ``running`` (on any node). A topic that
goes silent moves ``alert_states`` ``silence:<topic>`` from ``ok`` to ``silent`` — one alert ``silence`` per
transition, whichever process moves it — and its first new event afterwards moves it back, with one "news again"
alert. The states move whatever ``alerting.events`` says; the notifier leaves out an event it does not name.

A database the process knows is away is not read (nothing is sent until it is back; a missed period is sent
then); a failed read or write is logged once (a WARNING) until one passes again.
"""

from __future__ import annotations

import asyncio
import bisect
import logging
import os
import threading
import time
import uuid
from collections.abc import Callable, Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import asdict
from datetime import UTC, datetime, timedelta
from typing import Any

from scrapy import Spider, signals
from scrapy.crawler import Crawler
from scrapy.utils.asyncio import create_looping_call

from topicstreams.alerts.delivery import Notifier, options_from_settings
from topicstreams.alerts.digest_periods import SCHEDULED, last_boundary, render_batch, render_digest
from topicstreams.alerts.topic_silence import (
    OK,
    SILENT,
    TopicMoments,
    judge_moments,
    news_again_alert,
    silence_alert,
    state_key,
)
from topicstreams.config.sections import AlertingSection, DigestSection
from topicstreams.config.setting_names import sections_from
from topicstreams.crawl.runtime import Runtime
from topicstreams.crawl.signals import EventsStored, events_stored
from topicstreams.engines.states import RUNNING
from topicstreams.extensions.timing import engine_database_url, wall
from topicstreams.storage import alert_states
from topicstreams.storage import digest_events as digests
from topicstreams.storage.engine_status import read_statuses
from topicstreams.storage.event_times import active_topics, moments_since
from topicstreams.storage.failures import describe
from topicstreams.text.search_words import SearchError

logger = logging.getLogger(__name__)

MOMENTS_RELOAD = 86400.0
"""Seconds between two full reads of the topics' new-event moments (the checks between read what is new)."""

MOMENTS_OVERLAP = 300.0
"""Seconds of moments read again at each check: rows another process committed late with a slightly earlier time."""

BATCH_SECONDS = 60.0
"""An as-it-happens batch: what was stored within this many seconds of its first event, in one message."""

CLAIM_HOLD = 120.0
"""Seconds a digest's claim holds: a process that died mid-send leaves the period to another after this."""


class AlertingWork:
    """A process's digests and silence watch over one database (see the module docstring). Its methods that read or
    write run in its own thread (:meth:`run_once`, :meth:`send_due_digests`, :meth:`check_silence`,
    :meth:`send_batches`); a test may call them directly with its own clock."""

    def __init__(
        self,
        database_url: str,
        alerting: AlertingSection,
        node: str,
        *,
        baseline_days: float,
        engines: Iterable[str] | None = None,
        silence_every: float,
        notifier: Notifier | None = None,
        clock: Callable[[], float] = time.time,
        runtime: Runtime | None = None,
    ) -> None:
        self.database_url = database_url
        self.runtime = runtime or Runtime()
        """The process's shared objects: the database handle, its outage state, the notifier."""
        self.node = node
        self.baseline_days = float(baseline_days)
        self.engines = None if engines is None else frozenset(engines)
        """The engines whose running makes a topic's quiet count (None: any)."""
        self.silence_every = silence_every
        self.clock = clock
        """The wall clock, Unix seconds (a test's to replace)."""
        self.me = f"{node}/{os.getpid()}/{uuid.uuid4().hex[:8]}"
        """This process, as its digest claims name it."""
        self.notifier = notifier or self.runtime.notifier(database_url, alerting.delivery(), node)
        self.silence_factor = alerting.silence_factor
        self.silence_min_events = alerting.silence_min_events
        self.scheduled: list[tuple[DigestSection, digests.DigestFilter]] = []
        self.as_it_happens: list[tuple[DigestSection, digests.DigestFilter]] = []
        for digest in alerting.digests:
            wanted = digests.DigestFilter(digest.topics, digest.engines, digest.query)
            try:
                wanted.feed()
            except SearchError as exc:
                logger.error(
                    'digest "%s" is not sent: its query %r cannot be searched for (%s)',
                    digest.name,
                    digest.query,
                    exc,
                )
                continue
            kind = self.scheduled if digest.every in SCHEDULED else self.as_it_happens
            kind.append((digest, wanted))
        self.silence_checked: datetime | None = None
        self.running_since: datetime | None = None
        """Since when this process has seen the engines running without a break (the silence's quiet counts from
        then at the earliest)."""
        self.moments = TopicMoments()
        """Every active topic's new-event moments, kept between silence checks (:meth:`topic_moments`)."""
        self.moments_loaded_at: datetime | None = None
        """When the moments were last read whole."""
        self._lock = threading.Lock()
        self._pending: dict[tuple[int, str], None] = {}
        self._batch_from: datetime | None = None
        """The first ``first_seen_at`` of the pending batch."""
        self._batch_opened: float | None = None
        """When the pending batch got its first events (clock seconds)."""
        self._failing: set[str] = set()
        self._executor: ThreadPoolExecutor | None = None
        self._job: Future | None = None
        self._ticker: Any = None
        self.open_crawlers = 0

    @property
    def db(self):
        return self.runtime.database(self.database_url)

    # ---- the crawl's event loop --------------------------------------------------------------------------------
    def crawler_opened(self, tick: float) -> None:
        """A crawler of the process opened: the first one starts the looping call (its first look at once)."""
        self.open_crawlers += 1
        if self._ticker is None or not self._ticker.running:
            self._ticker = create_looping_call(self.tick)
            self._ticker.start(tick, now=True)

    async def crawler_closed(self) -> None:
        """A crawler of the process closed: the last one stops the loop, sends the pending batch and waits (at most
        the notifier's ``stop_wait``, a few seconds) for the process's alerts to be delivered."""
        self.open_crawlers = max(0, self.open_crawlers - 1)
        if self.open_crawlers:
            return
        if self._ticker is not None and self._ticker.running:
            self._ticker.stop()
        self._ticker = None
        await asyncio.wrap_future(self._submit(self.finish))

    def stored(self, stored: EventsStored) -> None:
        """The store added feed events (the ``events_stored`` signal): into the pending batch."""
        if not self.as_it_happens:
            return
        with self._lock:
            if not self._pending:
                self._batch_opened = self.clock()
                self._batch_from = stored.at
            elif self._batch_from is None or stored.at < self._batch_from:
                self._batch_from = stored.at
            self._pending.update(dict.fromkeys(stored.keys))

    def tick(self) -> None:
        """The looping call: one run at a time in the work's thread (a run still going skips this look)."""
        if self._job is not None and not self._job.done():
            return
        self._job = self._submit(self.run_once)

    def _submit(self, job: Callable[..., Any], *args: Any) -> Future:
        if self._executor is None:
            self._executor = ThreadPoolExecutor(1, thread_name_prefix="topicstreams-alerting")
        return self._executor.submit(job, *args)

    # ---- the work's thread -------------------------------------------------------------------------------------
    def now(self) -> datetime:
        return wall(self.clock())

    def run_once(self, now: datetime | None = None) -> None:
        """One look: the scheduled digests due, the silence when due, the as-it-happens batch when due (and the
        alerts an earlier process of the node left undelivered, until they are taken up)."""
        now = now or self.now()
        self.notifier.resume_leftovers()
        self.guarded("the digests", self.send_due_digests, now)
        if self.silence_checked is None or (now - self.silence_checked).total_seconds() >= self.silence_every:
            self.silence_checked = now
            self.guarded("the topics' silence", self.check_silence, now)
        self.guarded("the as-it-happens digests", self.send_batches, now)

    def finish(self) -> None:
        """The last crawler closed: the pending batch now, then wait for the deliveries."""
        if self.runtime.availability(self.database_url).away:
            with self._lock:
                unsent = len(self._pending)
            if unsent:
                logger.warning(
                    "the as-it-happens digests of the last %d new events were not sent: the database was away when "
                    "the crawl stopped",
                    unsent,
                )
        else:
            self.guarded("the as-it-happens digests", self.send_batches, self.now(), True)
        self.notifier.wait_at_stop()

    def guarded(self, what: str, job: Callable[..., Any], *args: Any) -> None:
        """``job(*args)``; a failure (the database away, a bug) logged once until the job passes again, never
        raised (the loop goes on)."""
        if self.runtime.availability(self.database_url).away:
            return
        try:
            job(*args)
        except Exception as exc:
            if what not in self._failing:
                self._failing.add(what)
                logger.warning(
                    "could not send %s: %s (tried again at the next look)",
                    what,
                    describe(exc),
                    exc_info=not _is_database_error(exc),
                )
            return
        if what in self._failing:
            self._failing.discard(what)
            logger.info("%s: working again", what)

    def send_due_digests(self, now: datetime) -> int:
        """Claim, read, send and complete every scheduled digest that is due at ``now``; how many were sent."""
        if not self.scheduled:
            return 0
        db = self.db
        known = digests.sent_until(db, [digest.name for digest, _ in self.scheduled])
        sent = 0
        for digest, wanted in self.scheduled:
            name = digest.name
            if name not in known:
                digests.ensure(db, name, now)  # from now on; never the history before
                continue
            end = last_boundary(digest.every, digest.at, now)
            if known[name] >= end:
                continue
            start = digests.claim(db, name, end, self.me, CLAIM_HOLD, now=now)
            if start is None:
                continue  # another process has it, or sent it already
            try:
                page = digests.period_events(db, wanted, start, end, digest.max_items)
            except BaseException:
                digests.release(db, name, self.me)
                raise
            if page.total:
                self.notifier.send(render_digest(asdict(digest), page.items, page.total, start, end, now))
                sent += 1
            if not digests.complete(db, name, end, self.me, now=now):
                logger.warning(
                    'digest "%s": the claim of the period to %s expired before it was sent; another '
                    "process may send it too",
                    name,
                    f"{end:%Y-%m-%d %H:%M}Z",
                )
            else:
                logger.info(
                    'digest "%s": %d new events to %s %s',
                    name,
                    page.total,
                    f"{end:%Y-%m-%d %H:%M}Z",
                    "sent" if page.total else "(nothing to send)",
                )
        return sent

    def send_batches(self, now: datetime, force: bool = False) -> int:
        """Send the pending as-it-happens batch when it is :data:`BATCH_SECONDS` old (or ``force``): one message per
        digest that has events in it; how many were sent."""
        with self._lock:
            if not self._pending or not (force or self.clock() - (self._batch_opened or 0.0) >= BATCH_SECONDS):
                return 0
            keys, start, opened = list(self._pending), self._batch_from or now, self._batch_opened
            self._pending, self._batch_from, self._batch_opened = {}, None, None
        db = self.db
        try:
            pages = [
                (digest, digests.stored_events(db, wanted, keys, digest.max_items))
                for digest, wanted in self.as_it_happens
            ]
        except BaseException:
            with self._lock:  # read again at the next look, with what came meanwhile
                self._pending = {**dict.fromkeys(keys), **self._pending}
                self._batch_from = min(start, self._batch_from or start)
                self._batch_opened = opened
            raise
        sent = 0
        for digest, page in pages:
            if page.total:
                end = max(event.first_seen_at for event in page.items) if page.items else now
                self.notifier.send(render_batch(asdict(digest), page.items, page.total, start, end, now))
                sent += 1
        return sent

    def running_engines(self, now: datetime) -> list[str]:
        """The engines with a fresh ``engine_status`` row (any node) in state ``running``."""
        return sorted(
            {
                row.engine
                for row in read_statuses(self.db)
                if (self.engines is None or row.engine in self.engines)
                and not row.stale_at(now)
                and row.state_at(now) == RUNNING
            }
        )

    def check_silence(self, now: datetime) -> int:
        """Judge every active topic's silence at ``now``; send each transition's alert (the caller of the
        compare-and-set that moved it). How many alerts were sent."""
        db = self.db
        running = self.running_engines(now)
        self.running_since = (self.running_since or now) if running else None
        moments = self.topic_moments(db, now)
        states = alert_states.read_states(db, "silence:")
        sent = 0
        for topic, times in moments.times.items():
            counts = moments.counts[topic]
            key = state_key(topic)
            state = states.get(key)
            if state is not None and state.state == SILENT:
                last_before = _moment((state.details or {}).get("last_event"))
                after = bisect.bisect_right(times, last_before.timestamp()) if last_before is not None else 0
                newer = [times[index] for index in range(after, len(times)) if counts[index] > 0]
                if newer:
                    first, last = (datetime.fromtimestamp(moment, UTC) for moment in (newer[0], newer[-1]))
                    if alert_states.transition(
                        db,
                        key,
                        [SILENT],
                        OK,
                        now,
                        {"ended_at": now.isoformat(), "first_event": first.isoformat(), "last_event": last.isoformat()},
                    ):
                        self.notifier.send(news_again_alert(topic, last_before, first, now, running))
                        sent += 1
                continue
            verdict = judge_moments(
                topic,
                times,
                counts,
                now,
                baseline_days=self.baseline_days,
                factor=self.silence_factor,
                min_events=self.silence_min_events,
                running=bool(running),
                running_since=self.running_since,
            )
            if not verdict.silent:
                continue
            alert = silence_alert(verdict, running)
            if alert_states.transition(db, key, [OK], SILENT, now, alert.details):
                self.notifier.send(alert)
                sent += 1
        return sent

    def topic_moments(self, db: Any, now: datetime) -> TopicMoments:
        """Every active topic's new-event moments over the baseline period at ``now``: read whole at the first
        check, once a day and when the clock went back; otherwise only what was stored since the last read (minus
        :data:`MOMENTS_OVERLAP`, for rows committed late)."""
        moments = self.moments
        names = active_topics(db)
        start = now - timedelta(days=self.baseline_days)
        reload = (
            self.moments_loaded_at is None
            or now < self.moments_loaded_at
            or (now - self.moments_loaded_at).total_seconds() >= MOMENTS_RELOAD
        )
        if reload or moments.watermark is None:
            moments.replace(names.values(), moments_since(db, start, names))
            self.moments_loaded_at = now
        else:
            since = max(start.timestamp(), moments.watermark - MOMENTS_OVERLAP)
            moments.merge(names.values(), moments_since(db, datetime.fromtimestamp(since, UTC), names), since)
        moments.trim(start.timestamp())
        return moments


def _moment(value: Any) -> datetime | None:
    try:
        return datetime.fromisoformat(value) if isinstance(value, str) else None
    except ValueError:
        return None


def _is_database_error(exc: BaseException) -> bool:
    from sqlalchemy.exc import SQLAlchemyError

    return isinstance(exc, SQLAlchemyError)


class AlertingExtension:
    """One per engine crawler; the work is the process's (kept in its :class:`~topicstreams.crawl.runtime.Runtime`)."""

    def __init__(self, work: AlertingWork, tick: float) -> None:
        self.work = work
        self.tick = tick

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> AlertingExtension:
        settings = crawler.settings
        database_url = engine_database_url(
            crawler, switch="TOPICSTREAMS_ALERTS_ENABLED", purpose="alerting", keeps="the digests' progress"
        )
        sections = sections_from(settings)
        node = sections.node.id
        runtime = Runtime.of(crawler)
        work = runtime.shared(
            (AlertingWork, database_url, node),
            lambda: AlertingWork(
                database_url,
                sections.alerting,
                node,
                baseline_days=sections.health.baseline_days,
                engines=sections.enabled_engines() or None,
                silence_every=settings.getfloat("TOPICSTREAMS_ALERTS_SILENCE_EVERY"),
                notifier=runtime.notifier(
                    database_url, sections.alerting.delivery(), node, **options_from_settings(settings)
                ),
                runtime=runtime,
            ),
        )
        extension = cls(work, settings.getfloat("TOPICSTREAMS_ALERTS_TICK"))
        crawler.signals.connect(extension.spider_opened, signal=signals.spider_opened)
        crawler.signals.connect(extension.spider_closed, signal=signals.spider_closed)
        crawler.signals.connect(extension.events_stored, signal=events_stored)
        return extension

    def spider_opened(self, spider: Spider) -> None:
        self.work.crawler_opened(self.tick)

    async def spider_closed(self, spider: Spider, reason: str) -> None:
        await self.work.crawler_closed()

    def events_stored(self, stored: EventsStored) -> None:
        self.work.stored(stored)
