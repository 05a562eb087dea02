"""The health extension: each engine scored against its own normal, and the bands acting on the engine.

A Scrapy extension, one per engine crawler (``TOPICSTREAMS_HEALTH_ENABLED``, on by default). It only listens:

* ``response_classified`` — each classified response becomes a :class:`~topicstreams.health.window.Sample` of
  the engine's rolling window (``health.window`` seconds); the window is scored against the engine's own
  baseline and smoothed (:class:`~topicstreams.health.monitor.EngineHealth`);
* ``page_parsed`` — the spider's parse outcome of that page (items, valid items, missing fields, a parse error)
  joins its sample, and the window's **parser health** is judged (:mod:`topicstreams.health.parser`): its own
  score and reasons, a WARNING when its band falls, no action on the engine;
* ``canary_checked`` — a canary query's answer (:mod:`topicstreams.canaries`): a wrong one adds the reason
  ``canary mismatch`` (and a WARNING) until that canary answers right again.

and writes:

* the engine's :class:`~topicstreams.engine_state.EngineState`: ``degraded`` multiplies the pacing floor and the
  re-scrape interval by ``health.degrade_factor`` (a WARNING names the reasons) until a score is ``ok`` again;
  ``critical`` pauses the engine: it schedules no topic until a person runs ``scrapy health resume ENGINE``;
* a person's attention, on a pause: a CRITICAL log line with the reasons, a row in ``alerts``, a POST to
  ``alerting.webhook_url`` when set;
* the ``engine_status`` row of the engine on this node (score, band, state, cooling until, reasons, window
  counts, parser score and reasons, canary mismatches, the cost per valid record against the baseline's —
  :mod:`topicstreams.health.cost`), which every process and ``scrapy health`` read; the pause lives there, so
  it survives restarts; it is written on every response and at least every ``HEARTBEAT`` seconds, so a fresh
  row means a live process;
* ``health_windows``: one row per ``health.window`` of responses, the history later baselines are made of
  (the engine's windows over ``health.baseline_days`` days, the most recent day left out);
* the stats ``topicstreams/<engine>/health_score`` (smoothed), ``health_band``, ``parser_score`` and the
  window's counts under ``topicstreams/<engine>/window/…``.

Every :data:`TICK` it also judges the node's exit-IP saturation from the fresh status rows of every process on
the node (:mod:`topicstreams.extensions.saturation_watch`; one watch per node and process, so ``crawlall`` warns
once).

The tables are there when it opens: the schema extension (:mod:`topicstreams.extensions.schema`) upgraded the
database before any other component was built. Every write goes through the process's outbox
(:mod:`topicstreams.storage.outbox`): off the event loop, in order, kept in memory while the database is away;
a read the database cannot answer keeps what is in force until the next look; no handler raises for either.

Nothing ever makes the engine go faster than its configured pace: without a score, what is in force stays.
"""

from __future__ import annotations

import asyncio
import logging
import math
import time
from datetime import datetime, timedelta
from typing import Any

from scrapy import Spider, signals
from scrapy.crawler import Crawler
from scrapy.utils.asyncio import create_looping_call
from sqlalchemy import Engine
from sqlalchemy.exc import SQLAlchemyError

from topicstreams import ENGINES
from topicstreams.alerting import alert_payload, post_webhook
from topicstreams.canaries import CANARY_MISMATCH, canaries_for
from topicstreams.classify import PARSE_ERROR, ResponseClass
from topicstreams.consent import CONSENT
from topicstreams.engine_state import COOLING, PAUSED, RUNNING, EngineState, state_for
from topicstreams.extensions.saturation_watch import SaturationWatch, watch_for
from topicstreams.extensions.shared import engine_database_url, wall
from topicstreams.health.cost import cost_drift, per_record
from topicstreams.health.monitor import (
    PAUSE,
    RECOVER,
    SLOW_DOWN,
    Assessment,
    EngineHealth,
    HealthSettings,
    History,
    ParserAssessment,
)
from topicstreams.health.score import CRITICAL, DEGRADED, OK, Window
from topicstreams.health.window import Sample, WindowStats
from topicstreams.health_report import policy_from_settings
from topicstreams.signals import (
    CanaryChecked,
    Classification,
    PageParsed,
    canary_checked,
    page_parsed,
    response_classified,
)
from topicstreams.storage import database_for, utcnow
from topicstreams.storage import engine_status as store
from topicstreams.storage.availability import availability_of
from topicstreams.storage.failures import describe
from topicstreams.storage.outbox import Outbox, outbox_for

logger = logging.getLogger(__name__)

TICK = 2.0
"""Seconds between the extension's looks at the clock: a pause lifted by a person, a window that has ended."""

BASELINE_REFRESH = 3600.0
"""Seconds between two readings of the engine's baseline from its stored windows."""

AWAITING_PARSE = 64
"""Samples kept waiting for their page's parse outcome (a failure never gets one)."""

BASELINE_RETRY = 60.0
"""Seconds before reading the baseline again when the database could not be read."""


def is_result_page(classification: Classification) -> bool:
    """Whether the page should have yielded items: an ``ok`` page with result items, or one the parser failed on."""
    if classification.cls is ResponseClass.OK:
        return classification.items > 0
    return classification.cls is ResponseClass.ERROR and classification.reason.startswith(PARSE_ERROR)


def baseline_history(db: Engine, engine_name: str, node: str, days: float, now: datetime | None = None) -> History:
    """The engine's own normal on the node: its stored windows that ended over the last ``days`` days, the most
    recent day left out, summed (:func:`~topicstreams.storage.engine_status.baseline_totals`); the p95 is the
    median of those windows' p95s."""
    totals = store.baseline_totals(db, engine_name, node, days, now)
    return History(Window(totals.requests, totals.hard_blocks, totals.challenges, totals.soft_blocks,
                          totals.p95_latency_ms),
                   per_record(totals.requests, totals.bytes, totals.browser_seconds, totals.valid_items))


class HealthExtension:
    def __init__(self, crawler: Crawler, settings: HealthSettings, database_url: str, node: str,
                 webhook_url: str, saturation: SaturationWatch | None = None,
                 canary_queries: tuple[str, ...] = ()) -> None:
        self.crawler = crawler
        self.engine = crawler.spidercls.name
        self.settings = settings
        self.database_url = database_url
        self.node = node
        self.webhook_url = webhook_url
        self.health = EngineHealth(settings)
        self.db: Any = None
        self.outbox: Outbox | None = None
        """Where every write goes: off the event loop, kept through an outage (:mod:`topicstreams.storage.outbox`)."""
        self.bucket: list[Sample] = []
        """The samples of the current stored window, which started at ``bucket_start``."""
        self.bucket_start: float | None = None
        self.bucket_score: int | None = None
        """The smoothed score of the stored window's latest scored response (None: none had a score)."""
        self.awaiting: dict[int, tuple[Classification, Sample]] = {}
        self.baseline_read_at = -math.inf
        self.deliveries: list[asyncio.Future] = []
        self.ticker: Any = None
        self.saturation = saturation
        self.canary_queries = canary_queries
        self.mismatches: set[str] = set()
        """The canary queries whose latest answer was wrong."""
        self.cost_baseline: dict[str, float] | None = None
        self.parser: ParserAssessment | None = None
        self.saved_at = -math.inf
        self.last_canary: dict[str, Any] | None = None
        """The latest canary check, as the status row keeps it."""

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> HealthExtension:
        settings = crawler.settings
        database_url = engine_database_url(crawler, switch="TOPICSTREAMS_HEALTH_ENABLED", purpose="health",
                                           keeps="the engine status")
        node = settings.get("TOPICSTREAMS_NODE_ID")
        saturation = watch_for(database_url, node, policy_from_settings(
            settings.getdict("TOPICSTREAMS_SATURATION"), settings.getdict("TOPICSTREAMS_PACING"), ENGINES), TICK)
        canaries = canaries_for(settings.getdict("TOPICSTREAMS_CANARIES"), crawler.spidercls.name)
        extension = cls(crawler, HealthSettings.from_config(settings.getdict("TOPICSTREAMS_HEALTH")), database_url,
                        node, settings.getdict("TOPICSTREAMS_ALERTING").get("webhook_url") or "", saturation,
                        tuple(canary.query for canary in canaries))
        crawler.signals.connect(extension.spider_opened, signal=signals.spider_opened)
        crawler.signals.connect(extension.spider_closed, signal=signals.spider_closed)
        crawler.signals.connect(extension.response_classified, signal=response_classified)
        crawler.signals.connect(extension.page_parsed, signal=page_parsed)
        crawler.signals.connect(extension.canary_checked, signal=canary_checked)
        return extension

    @property
    def state(self) -> EngineState:
        return state_for(self.crawler)

    # ---- life cycle -----------------------------------------------------------------------------------
    def spider_opened(self, spider: Spider) -> None:
        self.db = database_for(self.database_url)
        self.outbox = outbox_for(self.database_url)
        self.restore()
        self.refresh_baseline(time.time())
        self.save_status()
        self.ticker = create_looping_call(self.tick)
        self.ticker.start(TICK, now=False)

    async def spider_closed(self, spider: Spider, reason: str) -> None:
        if self.ticker is not None and self.ticker.running:
            self.ticker.stop()
        self.store_bucket(time.time())
        if self.deliveries:
            await asyncio.gather(*self.deliveries, return_exceptions=True)
        if self.outbox is not None and not await asyncio.to_thread(self.outbox.flush):
            logger.warning("[%s] the database did not take the latest status and health rows before the end: "
                           "%d write(s) not kept", self.engine, self.outbox.pending())

    def read(self, what: str, read: Any, *args: Any) -> Any:
        """``read(self.db, *args)``, or None when the database cannot answer (away: not even tried). A read is
        never worth a failed signal handler: what is in force stays until the next look."""
        if availability_of(self.database_url).away:
            return None
        try:
            return read(self.db, *args)
        except SQLAlchemyError as exc:
            logger.debug("[%s] could not read %s: %s", self.engine, what, describe(exc))
            return None

    def restore(self) -> None:
        """Take up what the engine's status row says is in force: a pause, a slowdown."""
        row = store.read_status(self.db, self.engine, self.node)
        if row is None:
            return
        # A canary that answered wrong last time is still suspect until it answers right (if still configured).
        self.mismatches = {query for query in row.canary_mismatches if query in self.canary_queries}
        if row.state == PAUSED:
            self.health.in_force = CRITICAL
            self.state.paused = True
            self.state.pace_multiplier = max(1.0, row.pace_multiplier or self.settings.degrade_factor)
            logger.warning("[%s] paused since %s (%s): it schedules no topic until a person runs "
                           "`scrapy health resume %s`", self.engine, f"{row.paused_at:%Y-%m-%d %H:%M:%S}Z"
                           if row.paused_at else "earlier", ", ".join(row.reasons) or "no reasons kept", self.engine)
        elif row.pace_multiplier and row.pace_multiplier > 1:
            self.health.in_force = DEGRADED
            self.state.pace_multiplier = row.pace_multiplier
            logger.warning("[%s] slowed down when last seen: the pacing floor and re-scrape interval stay × %g "
                           "until its score is ok again", self.engine, row.pace_multiplier)

    def tick(self) -> None:
        now = time.time()
        if self.bucket_start is not None and now >= self.bucket_start + self.settings.window:
            self.store_bucket(now)
        if now - self.baseline_read_at >= BASELINE_REFRESH:
            self.refresh_baseline(now)
        if self.state.paused:
            self.check_resumed()
        if time.monotonic() - self.saved_at >= store.HEARTBEAT:
            self.save_status()
        if self.saturation is not None:
            self.read("the node's status rows", self.saturation.check, wall(now))

    def refresh_baseline(self, now: float) -> None:
        self.baseline_read_at = now
        history = self.read("the baseline", baseline_history, self.engine, self.node, self.settings.baseline_days,
                            wall(now))
        if history is None:  # keep the baseline in force; look again soon
            self.baseline_read_at = now - BASELINE_REFRESH + BASELINE_RETRY
            return
        self.health.history = history.window
        enough = history.window.requests >= self.settings.min_requests
        self.cost_baseline = history.cost if enough else None

    def check_resumed(self) -> None:
        if self.outbox is not None and self.outbox.changing(self.engine, self.node):
            return  # the row does not say the pause yet: a resume is read from it once it does
        row = self.read("the status row", store.read_status, self.engine, self.node)
        if row is None or row.state == PAUSED:
            return
        at = (row.resumed_at or utcnow()).timestamp()
        self.health.resume(at)
        self.state.paused = False
        self.state.pace_multiplier = self.settings.degrade_factor
        logger.warning("[%s] resumed by a person: judged afresh from now, at the slowed pace (× %g) until its "
                       "score is ok", self.engine, self.settings.degrade_factor)
        self.save_status()

    # ---- what the crawl reports -----------------------------------------------------------------------
    def response_classified(self, classification: Classification) -> None:
        sample = Sample(at=classification.at.timestamp(), cls=classification.cls, latency=classification.latency,
                        bytes=classification.bytes, result_page=is_result_page(classification),
                        consent=classification.reason == CONSENT)
        self.awaiting[id(classification)] = (classification, sample)
        while len(self.awaiting) > AWAITING_PARSE:
            del self.awaiting[next(iter(self.awaiting))]
        self.add_to_bucket(sample)
        assessment = self.health.observe(sample)
        if assessment.score is not None:
            self.bucket_score = assessment.score
        self.act(assessment)
        self.publish(assessment)

    def page_parsed(self, outcome: PageParsed) -> None:
        found = self.awaiting.pop(id(outcome.classification), None)
        if found is None:
            return
        _, sample = found
        sample.items, sample.valid_items, sample.parse_error = outcome.items, outcome.valid_items, bool(outcome.error)
        sample.missing = dict(outcome.missing)
        stats = self.health.window.stats(time.time())
        self.parser = self.health.assess_parser(stats)
        self.report_parser(self.parser)
        self.publish_window(stats)
        self.save_status(stats=stats)

    def report_parser(self, parser: ParserAssessment) -> None:
        if parser.score is not None:
            self.crawler.stats.set_value(f"topicstreams/{self.engine}/parser_score", parser.score)
        if not parser.changed:
            return
        if parser.band == OK:
            logger.info("[%s] parser health %s (ok): the results are read in full again", self.engine, parser.score)
        else:
            logger.warning("[%s] parser health %s (%s): %s; the engine's result markup has probably changed and "
                           "its parser needs a fix (not a block: the pace stays as it is)", self.engine,
                           parser.score, parser.band, ", ".join(parser.reasons) or "no single signal")

    def canary_checked(self, check: CanaryChecked) -> None:
        was_wrong = check.query in self.mismatches
        self.last_canary = {"query": check.query, "at": check.at.isoformat(), "matched": check.matched,
                            "results": check.results, "problem": check.problem}
        if check.matched:
            self.mismatches.discard(check.query)
            if was_wrong:
                logger.info("[%s] canary %r answers right again (%d results)", self.engine, check.query,
                            check.results)
        else:
            self.mismatches.add(check.query)
            logger.warning("[%s] %s: canary %r: %s; the page looked normal, but it is not what a real visitor "
                           "would see", self.engine, CANARY_MISMATCH, check.query, check.problem)
        self.save_status()

    # ---- the bands acting -----------------------------------------------------------------------------
    def act(self, assessment: Assessment) -> None:
        reasons = ", ".join(assessment.reasons) or "no single signal"
        if assessment.action == SLOW_DOWN:
            self.state.pace_multiplier = self.settings.degrade_factor
            logger.warning("[%s] health %s (degraded): %s; slowing down: the pacing floor and the re-scrape interval "
                           "× %g until it recovers", self.engine, assessment.score, reasons,
                           self.settings.degrade_factor)
        elif assessment.action == RECOVER:
            self.state.pace_multiplier = 1.0
            logger.info("[%s] health %s (ok): back to the normal pace", self.engine, assessment.score)
        elif assessment.action == PAUSE:
            self.pause(assessment, reasons)

    def pause(self, assessment: Assessment, reasons: str) -> None:
        self.state.paused = True
        self.state.pace_multiplier = max(self.state.pace_multiplier, self.settings.degrade_factor)
        message = (f"[{self.engine}] health {assessment.score} (critical): {reasons}; engine paused on node "
                   f"{self.node}: it schedules no topic until a person looks and runs "
                   f"`scrapy health resume {self.engine}`")
        logger.critical(message)
        at = utcnow()
        engine, node, multiplier = self.engine, self.node, self.state.pace_multiplier
        self.outbox.put(f"the pause of {engine} on {node}", lambda db: store.pause(
            db, engine, node, at, pace_multiplier=multiplier), row=(engine, node))
        alert: dict[str, int] = {}  # its id, once the outbox has written it (before the delivery: in order)
        self.outbox.put(f"the alert of {engine} on {node}", lambda db: alert.update(id=store.add_alert(
            db, engine, node, score=assessment.score, band=assessment.band, reasons=assessment.reasons,
            message=message)))
        if self.webhook_url:
            payload = alert_payload(self.engine, self.node, assessment.score, assessment.band, assessment.reasons,
                                    message, at)
            delivery = asyncio.get_running_loop().run_in_executor(None, post_webhook, self.webhook_url, payload)
            delivery.add_done_callback(lambda done: self.delivered(alert, done))
            self.deliveries.append(delivery)

    def delivered(self, alert: dict[str, int], done: asyncio.Future) -> None:
        self.deliveries.remove(done)
        if not done.cancelled() and done.exception() is None:
            delivery = done.result()
            self.outbox.put("an alert's delivery", lambda db: store.set_alert_delivery(db, alert["id"], delivery)
                            if "id" in alert else None)

    # ---- what it writes -------------------------------------------------------------------------------
    def publish(self, assessment: Assessment) -> None:
        stats = self.crawler.stats
        prefix = f"topicstreams/{self.engine}"
        if assessment.score is not None:
            stats.set_value(f"{prefix}/health_score", assessment.score)
        stats.set_value(f"{prefix}/health_band", assessment.band)
        self.publish_window(assessment.stats)
        self.save_status(assessment)

    def publish_window(self, window: WindowStats) -> None:
        """The window's counts as ``topicstreams/<engine>/window/…`` stats (after each response, and again once its
        page is parsed: the items are known only then)."""
        for name, value in window.counts().items():
            if value is not None:
                self.crawler.stats.set_value(f"topicstreams/{self.engine}/window/{name}",
                                             round(value, 3) if isinstance(value, float) else value)

    def save_status(self, assessment: Assessment | None = None, stats: WindowStats | None = None) -> None:
        """Write the engine's row: its state now, the canary mismatches, the parser health, the latest assessment
        when there is one, and the cost of the window ``stats`` (the assessment's by default)."""
        values: dict[str, Any] = {"pace_multiplier": self.state.pace_multiplier,
                                  "canary_mismatches": sorted(self.mismatches)}
        if self.last_canary is not None:
            values["last_canary"] = self.last_canary
        if self.state.paused:
            state = None  # the pause is the row's to keep until a person lifts it
        elif self.state.benched:
            state = COOLING
            values["cooling_until"] = utcnow() + timedelta(seconds=self.state.bench_remaining())
        else:
            state = RUNNING
            values["cooling_until"] = None
        if assessment is not None:
            values.update(score=assessment.score, raw_score=assessment.raw, band=assessment.band,
                          reasons=assessment.reasons, p50_ms=assessment.stats.p50_latency_ms,
                          p95_ms=assessment.stats.p95_latency_ms, window_counts=assessment.stats.counts())
            stats = stats or assessment.stats
        if self.parser is not None:
            values.update(parser_score=self.parser.score, parser_reasons=self.parser.reasons)
        if stats is not None:
            values["cost"] = cost_drift(stats.cost(), self.cost_baseline)
        self.outbox.save_status(self.engine, self.node, state=state, **values)
        self.saved_at = time.monotonic()

    def add_to_bucket(self, sample: Sample) -> None:
        start = sample.at - sample.at % self.settings.window
        if self.bucket_start is not None and start != self.bucket_start:
            self.store_bucket(start)
        if self.bucket_start is None:
            self.bucket_start = start
        self.bucket.append(sample)

    def store_bucket(self, now: float) -> None:
        """Keep the stored window's samples (up to ``now`` at most) as one row of ``health_windows``."""
        if self.bucket_start is None:
            return
        start, samples, score = self.bucket_start, self.bucket, self.bucket_score
        self.bucket, self.bucket_start, self.bucket_score = [], None, None
        if samples and self.outbox is not None:
            end = min(now, start + self.settings.window)
            engine, node = self.engine, self.node
            counts = {**WindowStats.of(samples).counts(), "score": score}
            self.outbox.put(f"a health window of {engine}", lambda db: store.save_window(
                db, engine, node, wall(start), wall(end), counts))
