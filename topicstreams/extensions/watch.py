"""The health extension: each engine scored against its own normal, and the bands acting on the engine.

A Scrapy extension, one per engine crawler (``TOPICSTREAMS_HEALTH_ENABLED``, on by default). It only listens:

* ``response_classified`` — each classified response becomes a :class:`~topicstreams.health.window.Sample` of
  the engine's rolling window (``health.window`` seconds); the window is scored against the engine's own
  baseline and smoothed (:class:`~topicstreams.health.band.EngineHealth`);
* ``page_parsed`` — the spider's parse outcome of that page (items, valid items, missing fields, a parse error)
  joins its sample, and the window's **parser health** is judged (:mod:`topicstreams.engines.parser_health`): its own
  score and reasons, a WARNING when its band falls, no action on the engine;
* ``canary_checked`` — a canary query's answer (:mod:`topicstreams.crawl.canaries`): a wrong one adds the reason
  ``canary mismatch`` (and a WARNING) until that canary answers right again.

and writes:

* the engine's :class:`~topicstreams.crawl.engine_state.EngineState`: ``degraded`` multiplies the pacing floor and the
  re-scrape interval by ``health.degrade_factor`` (a WARNING names the reasons) until a score is ``ok`` again;
  ``critical`` pauses the engine: it schedules no topic until a person runs ``scrapy health resume ENGINE``;
* a person's attention (:mod:`topicstreams.alerts`): one alert per transition of the engine on this node —
  ``paused`` (with a CRITICAL log line, and a reminder every ``alerting.repeat`` seconds while it lasts),
  ``resumed``, ``recovered``, ``degraded``, ``parser_critical``, ``canary_mismatch``, ``coverage_drop`` (and their
  ends) — handed to the process's notifier, which records and delivers them off the event loop; per node, the
  ``saturation`` verdict's changes and the ``network_down`` verdict's, sent by whichever process moves the shared
  state (``alert_states``) first;
* **coverage** (:mod:`topicstreams.health.coverage_model`): when a stored window closes, of the articles the other engines
  found for the topics the engine scraped in it (lagged by one re-scrape interval: the configured one times the
  slowdown, or the one the engine really keeps when longer — :meth:`HealthExtension.coverage_grace`), the share it
  found too, against its own baseline; a drop of ``health.coverage_drop`` in two judged windows in a row while the
  pages parse fine is reason ``coverage`` — beside the score, never in it;
* **the node's network** (:mod:`topicstreams.alerts.network`): a connection-level failure (DNS, refused, no route)
  is held until it is known whether every engine of the node fails alike; then it is left out of the score and
  the stored window (its class and cooldown stand), so the network being down pauses nothing;
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
from collections import deque
from datetime import datetime, timedelta
from typing import Any

from scrapy import Spider, signals
from scrapy.crawler import Crawler
from scrapy.utils.asyncio import create_looping_call
from sqlalchemy import Engine
from sqlalchemy.exc import SQLAlchemyError

from topicstreams import ENGINES
from topicstreams.alerts import transitions
from topicstreams.alerts.delivery import Notifier, notifier_for, options_from_settings
from topicstreams.alerts.events import Alert
from topicstreams.alerts.network import NetworkWatch, network_watch_for
from topicstreams.crawl.canaries import CANARY_MISMATCH, canaries_for
from topicstreams.crawl.engine_state import EngineState, state_for
from topicstreams.crawl.signals import (
    CanaryChecked,
    Classification,
    PageParsed,
    canary_checked,
    page_parsed,
    response_classified,
)
from topicstreams.engines.classify import PARSE_ERROR, ResponseClass, is_connection_level
from topicstreams.engines.consent_walls import CONSENT
from topicstreams.engines.states import COOLING, PAUSED, RUNNING
from topicstreams.extensions.saturation_watch import SaturationWatch, watch_for
from topicstreams.extensions.timing import engine_database_url, wall
from topicstreams.health.band import (
    PAUSE,
    RECOVER,
    SLOW_DOWN,
    Assessment,
    EngineHealth,
    HealthSettings,
    History,
    ParserAssessment,
)
from topicstreams.health.cost import cost_drift, per_record
from topicstreams.health.coverage_model import Coverage, judge_coverage
from topicstreams.health.saturation import policy_from_settings
from topicstreams.health.score import CRITICAL, DEGRADED, OK, Window
from topicstreams.health.window import Sample, WindowStats
from topicstreams.storage import coverage_counts as coverage_store
from topicstreams.storage import database_for, utcnow
from topicstreams.storage import engine_status as store
from topicstreams.storage.alert_states import transition as change_alert_state
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

COVERAGE_CONFIRM = 2
"""Judged windows in a row whose coverage must be low before the reason and the alert: one window's share of a few
dozen articles varies by chance, two in a row rarely."""

STORE_MARGIN = 5.0
"""Seconds added to the coverage's grace for what each engine's store takes to write its finds (batches, outbox)."""

CLOSE_DELIVERY_SECONDS = 30.0
"""How long a closing crawl waits for its alerts to be delivered (or given up)."""


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
    return History(
        Window(totals.requests, totals.hard_blocks, totals.challenges, totals.soft_blocks, totals.p95_latency_ms),
        per_record(totals.requests, totals.bytes, totals.browser_seconds, totals.valid_items),
    )


class HealthExtension:
    def __init__(
        self,
        crawler: Crawler,
        settings: HealthSettings,
        database_url: str,
        node: str,
        notifier: Notifier | None = None,
        saturation: SaturationWatch | None = None,
        canary_queries: tuple[str, ...] = (),
        *,
        repeat: float = 0.0,
        coverage_drop: float = 0.2,
        grace: float = 60.0,
        network: NetworkWatch | None = None,
    ) -> None:
        self.crawler = crawler
        self.engine = crawler.spidercls.name
        self.settings = settings
        self.database_url = database_url
        self.node = node
        self.notifier = notifier
        """Where the alerts go (:mod:`topicstreams.alerts.delivery`: recorded and delivered off the event loop)."""
        self.repeat = repeat
        """``alerting.repeat``: seconds between two reminders of a pause (0: none)."""
        self.coverage_drop = coverage_drop
        self.grace = grace
        """The coverage's grace: one scrape interval for the engine to find what the others found."""
        self.network = network
        self.paused_at: datetime | None = None
        self.reminded_at: datetime | None = None
        self.trouble: tuple[str, datetime] | None = None
        """What the engine was before it recovers (``degraded``, ``paused``) and since when: the recovery's message."""
        self.parser_alerted = False
        self.coverage: Coverage | None = None
        self.coverage_low = False
        self.coverage_baseline: tuple[int, int] | None = None
        self.coverage_read_at = -math.inf
        self.coverage_lows = 0
        """Judged windows in a row with a low coverage (see :data:`COVERAGE_CONFIRM`)."""
        self.scraped_at: dict[str, float] = {}
        """Topic -> when its first results page last came back ok."""
        self.rescrape_gaps: deque[float] = deque(maxlen=256)
        """Seconds between two ok first pages of the same topic, lately: the engine's real re-scrape interval."""
        self.bucket_topics: set[str] = set()
        """The topics whose results pages the engine got in the stored window (what its coverage is judged on)."""
        self.paused_score: int | None = None
        self.health_reasons: tuple[str, ...] = ()
        """The score and reasons of the pause in force (its reminders repeat them)."""
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
        database_url = engine_database_url(
            crawler, switch="TOPICSTREAMS_HEALTH_ENABLED", purpose="health", keeps="the engine status"
        )
        node = settings.get("TOPICSTREAMS_NODE_ID")
        saturation = watch_for(
            database_url,
            node,
            policy_from_settings(
                settings.getdict("TOPICSTREAMS_SATURATION"), settings.getdict("TOPICSTREAMS_PACING"), ENGINES
            ),
            TICK,
        )
        canaries = canaries_for(settings.getdict("TOPICSTREAMS_CANARIES"), crawler.spidercls.name)
        alerting = settings.getdict("TOPICSTREAMS_ALERTING")
        health = settings.getdict("TOPICSTREAMS_HEALTH")
        extension = cls(
            crawler,
            HealthSettings.from_config(health),
            database_url,
            node,
            notifier_for(database_url, alerting, node, **options_from_settings(settings)),
            saturation,
            tuple(canary.query for canary in canaries),
            repeat=float(alerting.get("repeat") or 0),
            coverage_drop=float(health.get("coverage_drop", 0.2)),
            grace=settings.getfloat("TOPICSTREAMS_SCRAPE_INTERVAL", 60.0),
            network=network_watch_for(database_url, node),
        )
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
        if self.network is not None:
            self.network.register(self.engine)
        if self.saturation is not None and self.saturation.on_change is None:
            self.saturation.on_change = self.saturation_changed
        self.save_status()
        self.ticker = create_looping_call(self.tick)
        self.ticker.start(TICK, now=False)

    async def spider_closed(self, spider: Spider, reason: str) -> None:
        if self.ticker is not None and self.ticker.running:
            self.ticker.stop()
        if self.network is not None:  # failures still held for a verdict are this engine's own after all
            for held in self.network.taken_by(self.engine):
                self.score(held.sample, bucket=False)
        self.store_bucket(time.time())
        if self.outbox is not None and not await asyncio.to_thread(self.outbox.flush):
            logger.warning(
                "[%s] the database did not take the latest status and health rows before the end: %d write(s) not kept",
                self.engine,
                self.outbox.pending(),
            )
        if self.notifier is not None:
            await asyncio.to_thread(self.notifier.flush, CLOSE_DELIVERY_SECONDS)

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
            self.paused_at = row.paused_at or utcnow()
            self.paused_score, self.health_reasons = row.score, tuple(row.reasons or ())
            self.trouble = ("paused", self.paused_at)
            self.reminded_at = utcnow()  # a restart is no reminder: the next one comes at its period from the pause
            self.state.pace_multiplier = max(1.0, row.pace_multiplier or self.settings.degrade_factor)
            logger.warning(
                "[%s] paused since %s (%s): it schedules no topic until a person runs `scrapy health resume %s`",
                self.engine,
                f"{row.paused_at:%Y-%m-%d %H:%M:%S}Z" if row.paused_at else "earlier",
                ", ".join(row.reasons) or "no reasons kept",
                self.engine,
            )
        elif row.pace_multiplier and row.pace_multiplier > 1:
            self.health.in_force = DEGRADED
            self.state.pace_multiplier = row.pace_multiplier
            self.trouble = ("degraded", row.updated_at)
            logger.warning(
                "[%s] slowed down when last seen: the pacing floor and re-scrape interval stay × %g "
                "until its score is ok again",
                self.engine,
                row.pace_multiplier,
            )

    def tick(self) -> None:
        now = time.time()
        if self.bucket_start is not None and now >= self.bucket_start + self.settings.window:
            self.store_bucket(now)
        if now - self.baseline_read_at >= BASELINE_REFRESH:
            self.refresh_baseline(now)
        if self.state.paused:
            self.check_resumed()
        if self.state.paused:
            self.remind(wall(now))
        if time.monotonic() - self.saved_at >= store.HEARTBEAT:
            self.save_status()
        if self.saturation is not None:
            self.read("the node's status rows", self.saturation.check, wall(now))
            if self.network is not None:  # the node's engines that other processes run count for its network too
                self.network.other_processes(
                    (row.engine, row.connection_failures_since.timestamp() if row.connection_failures_since else None)
                    for row in self.saturation.rows
                    if not row.stale_at(wall(now))
                )
        self.settle_held(now)

    def refresh_baseline(self, now: float) -> None:
        self.baseline_read_at = now
        history = self.read(
            "the baseline", baseline_history, self.engine, self.node, self.settings.baseline_days, wall(now)
        )
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
        logger.warning(
            "[%s] resumed by a person: judged afresh from now, at the slowed pace (× %g) until its score is ok",
            self.engine,
            self.settings.degrade_factor,
        )
        self.alert(transitions.resumed(self.engine, self.node, self.paused_at, wall(at), self.settings.degrade_factor))
        self.paused_at = self.reminded_at = None
        self.save_status()

    def remind(self, now: datetime) -> None:
        """While paused, a reminder every ``alerting.repeat`` seconds from the pause."""
        if self.paused_at is None or not transitions.reminder_due(self.paused_at, self.reminded_at, now, self.repeat):
            return
        self.reminded_at = now
        row_reasons = list(self.health_reasons or ())
        self.alert(
            transitions.paused(
                self.engine, self.node, self.paused_score, row_reasons, self.paused_at, now, reminder=True
            )
        )

    # ---- what the crawl reports -----------------------------------------------------------------------
    def response_classified(self, classification: Classification) -> None:
        sample = Sample(
            at=classification.at.timestamp(),
            cls=classification.cls,
            latency=classification.latency,
            bytes=classification.bytes,
            result_page=is_result_page(classification),
            consent=classification.reason == CONSENT,
        )
        self.awaiting[id(classification)] = (classification, sample)
        while len(self.awaiting) > AWAITING_PARSE:
            del self.awaiting[next(iter(self.awaiting))]
        if (
            classification.cls is ResponseClass.OK
            and classification.topic
            and not classification.canary
            and not classification.probe
        ):
            self.bucket_topics.add(classification.topic)
            if classification.page_type == "first":
                last = self.scraped_at.get(classification.topic)
                if last is not None and sample.at > last:
                    self.rescrape_gaps.append(sample.at - last)
                self.scraped_at[classification.topic] = sample.at
        if self.network is not None:
            connection_level = is_connection_level(classification.reason)
            self.network.answered(self.engine, sample.at, connection_level, classification.reason)
            if connection_level:
                # The node's network or the engine? Held until the verdict says (alerts/network.py); its class and
                # cooldown stand either way.
                self.network.hold(self.engine, sample.at, sample)
                self.settle_held(sample.at)
                self.save_status()
                return
            self.settle_held(sample.at)
        self.score(sample)

    def score(self, sample: Sample, bucket: bool = True) -> None:
        """Let ``sample`` count: in the stored window (``bucket``) and in the score, and act on the assessment."""
        if bucket:
            self.add_to_bucket(sample)
        assessment = self.health.observe(sample)
        if assessment.score is not None:
            self.bucket_score = assessment.score
        self.act(assessment)
        self.publish(assessment)

    def settle_held(self, now: float) -> None:
        """Score the connection-level failures the network verdict clears as the engine's own, drop those it puts on
        the node's network, and announce a change of the verdict."""
        if self.network is None:
            return
        release, dropped = self.network.settle(self.engine, now)
        for held in release:
            in_bucket = self.bucket_start is None or held.at >= self.bucket_start
            self.score(held.sample, bucket=in_bucket)
        if dropped:
            logger.info(
                "[%s] %d connection failure(s) left out of the score: the node's network is down",
                self.engine,
                len(dropped),
            )
        self.announce_network(now)

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
        if parser.band == CRITICAL and not self.parser_alerted:
            self.parser_alerted = True
            self.alert(transitions.parser_critical(self.engine, self.node, parser.score, parser.reasons, utcnow()))
        elif parser.band == OK and self.parser_alerted:
            self.parser_alerted = False
            self.alert(transitions.parser_critical(self.engine, self.node, parser.score, (), utcnow(), ended=True))
        if not parser.changed:
            return
        if parser.band == OK:
            logger.info("[%s] parser health %s (ok): the results are read in full again", self.engine, parser.score)
        else:
            logger.warning(
                "[%s] parser health %s (%s): %s; the engine's result markup has probably changed and "
                "its parser needs a fix (not a block: the pace stays as it is)",
                self.engine,
                parser.score,
                parser.band,
                ", ".join(parser.reasons) or "no single signal",
            )

    def canary_checked(self, check: CanaryChecked) -> None:
        was_wrong = check.query in self.mismatches
        self.last_canary = {
            "query": check.query,
            "at": check.at.isoformat(),
            "matched": check.matched,
            "results": check.results,
            "problem": check.problem,
        }
        if check.matched:
            self.mismatches.discard(check.query)
            if was_wrong:
                logger.info("[%s] canary %r answers right again (%d results)", self.engine, check.query, check.results)
                if not self.mismatches:
                    self.alert(
                        transitions.canary_mismatch(self.engine, self.node, check.query, None, check.at, ended=True)
                    )
        else:
            if not self.mismatches:
                self.alert(transitions.canary_mismatch(self.engine, self.node, check.query, check.problem, check.at))
            self.mismatches.add(check.query)
            logger.warning(
                "[%s] %s: canary %r: %s; the page looked normal, but it is not what a real visitor would see",
                self.engine,
                CANARY_MISMATCH,
                check.query,
                check.problem,
            )
        self.save_status()

    # ---- the bands acting -----------------------------------------------------------------------------
    def act(self, assessment: Assessment) -> None:
        reasons = ", ".join(assessment.reasons) or "no single signal"
        now = utcnow()
        if assessment.action == SLOW_DOWN:
            self.state.pace_multiplier = self.settings.degrade_factor
            logger.warning(
                "[%s] health %s (degraded): %s; slowing down: the pacing floor and the re-scrape interval "
                "× %g until it recovers",
                self.engine,
                assessment.score,
                reasons,
                self.settings.degrade_factor,
            )
            if self.trouble is None:
                self.trouble = ("degraded", now)
            self.alert(
                transitions.degraded(
                    self.engine, self.node, assessment.score, assessment.reasons, self.settings.degrade_factor, now
                )
            )
        elif assessment.action == RECOVER:
            self.state.pace_multiplier = 1.0
            logger.info("[%s] health %s (ok): back to the normal pace", self.engine, assessment.score)
            was, since = self.trouble or ("degraded", None)
            self.trouble = None
            self.alert(transitions.recovered(self.engine, self.node, assessment.score, was, since, now))
        elif assessment.action == PAUSE:
            self.pause(assessment, reasons)

    def pause(self, assessment: Assessment, reasons: str) -> None:
        self.state.paused = True
        self.state.pace_multiplier = max(self.state.pace_multiplier, self.settings.degrade_factor)
        message = (
            f"[{self.engine}] health {assessment.score} (critical): {reasons}; engine paused on node "
            f"{self.node}: it schedules no topic until a person looks and runs "
            f"`scrapy health resume {self.engine}`"
        )
        logger.critical(message)
        at = utcnow()
        self.paused_at, self.reminded_at = at, None
        self.paused_score, self.health_reasons = assessment.score, tuple(assessment.reasons)
        self.trouble = ("paused", at)
        engine, node, multiplier = self.engine, self.node, self.state.pace_multiplier
        self.outbox.put(
            f"the pause of {engine} on {node}",
            lambda db: store.pause(db, engine, node, at, pace_multiplier=multiplier),
            row=(engine, node),
        )
        self.alert(transitions.paused(engine, node, assessment.score, assessment.reasons, at, at))

    # ---- telling a person -----------------------------------------------------------------------------
    def alert(self, alert: Alert) -> None:
        """Hand ``alert`` to the notifier, which records and delivers it in its own thread (``alerting.events``
        chooses what goes out)."""
        if self.notifier is not None:
            self.notifier.send(alert)

    def alert_once(self, key: str, from_states: tuple[str, ...], to_state: str, alert: Alert) -> None:
        """Send ``alert`` if this process is the one that moves the shared state ``key`` (``alert_states``) from
        one of ``from_states`` to ``to_state``: several processes may see the same node's change."""
        if self.notifier is None or self.outbox is None:
            return
        notifier = self.notifier

        def change(db: Engine) -> None:
            if change_alert_state(db, key, from_states, to_state, alert.at, alert.details):
                notifier.send(alert)

        self.outbox.put(f"the {alert.event} alert of node {self.node}", change)

    def saturation_changed(self, begins: bool, cooling: tuple[str, ...], since: datetime | None, now: datetime) -> None:
        key = f"saturation:{self.node}"
        if begins:
            self.alert_once(key, ("ok",), "saturated", transitions.saturation(self.node, cooling, True, None, now))
        else:
            self.alert_once(key, ("saturated",), "ok", transitions.saturation(self.node, (), False, since, now))

    def announce_network(self, now: float) -> None:
        """Tell a person once when the node's network verdict changes (whichever crawler of the process sees it)."""
        verdict = self.network.verdict()
        announced = self.network.announced
        if verdict.down == announced.down:
            return
        self.network.announced = verdict
        key = f"network:{self.node}"
        if verdict.down:
            since = wall(verdict.since) if verdict.since is not None else wall(now)
            logger.warning(
                "node %s: every engine fails to connect (%s): the node's network, not the engines; "
                "these failures are left out of the scores",
                self.node,
                ", ".join(verdict.reasons) or "connection failures",
            )
            self.alert_once(
                key,
                ("ok",),
                "down",
                transitions.network_down(self.node, verdict.engines, verdict.reasons, since, wall(now)),
            )
        else:
            since = wall(announced.since) if announced.since is not None else None
            logger.info("node %s: the network is back, the engines answer again", self.node)
            self.alert_once(
                key,
                ("down",),
                "ok",
                transitions.network_down(self.node, announced.engines, (), since, wall(now), ended=True),
            )

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
                self.crawler.stats.set_value(
                    f"topicstreams/{self.engine}/window/{name}", round(value, 3) if isinstance(value, float) else value
                )

    def save_status(self, assessment: Assessment | None = None, stats: WindowStats | None = None) -> None:
        """Write the engine's row: its state now, the canary mismatches, the parser health, the latest assessment
        when there is one, and the cost of the window ``stats`` (the assessment's by default)."""
        values: dict[str, Any] = {
            "pace_multiplier": self.state.pace_multiplier,
            "canary_mismatches": sorted(self.mismatches),
        }
        if self.network is not None:
            failing = self.network.engines.get(self.engine)
            values["connection_failures_since"] = (
                wall(failing.failing_since) if failing is not None and failing.failing_since is not None else None
            )
        if self.coverage is not None:
            values["coverage"] = {**self.coverage.as_json(), "low": self.coverage_low}
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
            values.update(
                score=assessment.score,
                raw_score=assessment.raw,
                band=assessment.band,
                reasons=assessment.reasons,
                p50_ms=assessment.stats.p50_latency_ms,
                p95_ms=assessment.stats.p95_latency_ms,
                window_counts=assessment.stats.counts(),
            )
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
        start, samples, score, topics = self.bucket_start, self.bucket, self.bucket_score, self.bucket_topics
        self.bucket, self.bucket_start, self.bucket_score, self.bucket_topics = [], None, None, set()
        if samples and self.outbox is not None:
            end = min(now, start + self.settings.window)
            engine, node, grace = self.engine, self.node, self.coverage_grace()
            counts = {**WindowStats.of(samples).counts(), "score": score}
            try:
                loop: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
            except RuntimeError:  # not on the event loop (a direct call): the coverage is stored, not judged
                loop = None

            def save(db: Engine) -> None:
                # The coverage of the window is read here, off the event loop, just before its row is written.
                expected, found = (
                    coverage_store.window_counts(db, engine, topics, wall(start), wall(end), grace)
                    if topics
                    else (0, 0)
                )
                store.save_window(
                    db,
                    engine,
                    node,
                    wall(start),
                    wall(end),
                    {**counts, "coverage_expected": expected, "coverage_found": found},
                )
                if topics and loop is not None and not loop.is_closed():
                    loop.call_soon_threadsafe(self.judge_coverage, expected, found)

            self.outbox.put(f"a health window of {engine}", save)

    def coverage_grace(self) -> float:
        """How long the engine is given to find what another engine found: one re-scrape interval — the configured
        one times the slowdown in force, or the one it really keeps (the 90th percentile of its recent re-scrapes of
        a topic) when that is longer, plus :data:`STORE_MARGIN`."""
        kept = sorted(self.rescrape_gaps)
        real = kept[min(len(kept) - 1, int(0.9 * len(kept)))] if kept else 0.0
        return max(self.grace * max(1.0, self.state.pace_multiplier), real) + STORE_MARGIN

    def judge_coverage(self, expected: int, found: int) -> None:
        """The stored window's coverage against the engine's own baseline: reason ``coverage`` and one alert when it
        drops by ``health.coverage_drop`` or more while the pages parse fine, one more when it is back."""
        if self.coverage_baseline is None or time.time() - self.coverage_read_at >= BASELINE_REFRESH:
            baseline = self.read(
                "the coverage baseline",
                coverage_store.baseline_counts,
                self.engine,
                self.node,
                self.settings.baseline_days,
                utcnow(),
            )
            if baseline is not None:
                self.coverage_baseline, self.coverage_read_at = baseline, time.time()
        base_expected, base_found = self.coverage_baseline or (0, 0)
        self.coverage = coverage = judge_coverage(expected, found, base_expected, base_found)
        parser_ok = self.parser is not None and self.parser.band == OK
        if coverage.window is None:
            low = self.coverage_low  # too few articles to judge: what is in force stays
        elif coverage.low(self.coverage_drop, parser_ok):
            self.coverage_lows += 1
            low = self.coverage_low or self.coverage_lows >= COVERAGE_CONFIRM
        else:
            self.coverage_lows = 0
            low = False
        if low != self.coverage_low:
            self.coverage_low = low
            now = utcnow()
            if low:
                logger.warning(
                    "[%s] coverage %.0f%% of what the other engines found, against its normal %.0f%%, "
                    "while its pages parse fine: it may be serving stale or filtered results",
                    self.engine,
                    100 * coverage.window,
                    100 * (coverage.baseline or 0),
                )
            self.alert(
                transitions.coverage_drop(
                    self.engine, self.node, coverage.window, coverage.baseline, now, ended=not low
                )
            )
        self.save_status()
