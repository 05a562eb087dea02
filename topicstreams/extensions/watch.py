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
* ``topic_visited`` — a visit of a topic that ended in a hole counts for one window; enough of them is the reason
  ``holes`` (:mod:`topicstreams.extensions.health_holes`), beside the score, never in it.

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
* **coverage** (:mod:`topicstreams.extensions.health_coverage`): when a stored window closes, of the articles the
  other engines found for the topics the engine scraped in it (lagged by one re-scrape interval), the share it found
  too, against its own baseline; a drop of ``health.coverage_drop`` in two judged windows in a row while the pages
  parse fine is reason ``coverage`` — beside the score, never in it;
* **the node's network** (:mod:`topicstreams.alerts.network`): a connection-level failure (DNS, refused, no route)
  is held until it is known whether every engine of the node fails alike; then it is left out of the score and
  the stored window (its class and cooldown stand), so the network being down pauses nothing;
* the ``engine_status`` row of the engine on this node (score, band, state, cooling until, reasons, window
  counts, parser score and reasons, canary mismatches, the cost per valid record against the baseline's —
  :mod:`topicstreams.health.cost`), which every process and ``scrapy health`` read; the pause lives there, so
  it survives restarts; it is written on every response and at least every heartbeat
  (``TOPICSTREAMS_NODE_HEARTBEAT`` seconds, the membership's: one period for a process to say it is alive), which
  the row keeps (``heartbeat_seconds``): a row not written for three of them reads ``stale`` (its process was
  killed or hangs). When the engine's crawler closes, its last write of the row says so (``stopped_at``: the row
  reads ``stopped``), after every other write of it;
* ``health_windows``: one row per ``health.window`` of responses, the history later baselines are made of
  (the engine's windows over ``health.baseline_days`` days, the most recent day left out);
* the stats ``topicstreams/<engine>/health_score`` (smoothed), ``health_band``, ``parser_score`` and the
  window's counts under ``topicstreams/<engine>/window/…``.

Every :data:`TICK` it also judges the node's exit-IP saturation from the fresh status rows of every process on
the node (:mod:`topicstreams.extensions.saturation_watch`; one watch per node and process, so ``crawlall`` warns
once).

The tables are there when it opens: the schema extension (:mod:`topicstreams.extensions.schema_upgrade`) upgraded the
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
from datetime import datetime
from functools import cached_property
from typing import Any

from scrapy import Spider, signals
from scrapy.crawler import Crawler
from scrapy.utils.asyncio import create_looping_call
from sqlalchemy.exc import SQLAlchemyError

from topicstreams.alerts import transitions
from topicstreams.alerts.delivery import Notifier, options_from_settings
from topicstreams.alerts.network import NetworkWatch
from topicstreams.config.setting_names import sections_from
from topicstreams.crawl.canaries import CANARY_MISMATCH, canaries_for
from topicstreams.crawl.engine_state import EngineState, crawl_routes
from topicstreams.crawl.runtime import Runtime
from topicstreams.crawl.signals import (
    CanaryChecked,
    Classification,
    PageParsed,
    canary_checked,
    page_parsed,
    response_classified,
    route_changed,
    topic_visited,
)
from topicstreams.engines.classify import PARSE_ERROR, ResponseClass, is_connection_level
from topicstreams.engines.consent_walls import CONSENT
from topicstreams.extensions.health_alerts import EngineAlerting
from topicstreams.extensions.health_coverage import CoverageJudging
from topicstreams.extensions.health_holes import HoleWatching
from topicstreams.extensions.health_pause import EnginePausing
from topicstreams.extensions.health_rows import BASELINE_REFRESH, HealthRows
from topicstreams.extensions.route_scores import RouteScores, route_only
from topicstreams.extensions.saturation_watch import SaturationWatch, watch_for
from topicstreams.extensions.timing import engine_database_url, wall
from topicstreams.health.band import (
    EngineHealth,
    HealthSettings,
    ParserAssessment,
)
from topicstreams.health.coverage_model import Coverage
from topicstreams.health.holes_rule import HoleWindow
from topicstreams.health.saturation import saturation_policy
from topicstreams.health.window import Sample
from topicstreams.storage import engine_status as store
from topicstreams.storage.failures import describe
from topicstreams.storage.outbox import Outbox

logger = logging.getLogger(__name__)

TICK = 2.0
"""Seconds between the extension's looks at the clock: a pause lifted by a person, a window that has ended."""

MIN_TICK = 0.1
"""The shortest tick, whatever the heartbeat (the ticker looks twice per heartbeat, at most every :data:`TICK`)."""

AWAITING_PARSE = 64
"""Samples kept waiting for their page's parse outcome (a failure never gets one)."""


def is_result_page(classification: Classification) -> bool:
    """Whether the page should have yielded items: an ``ok`` page with result items, or one the parser failed on."""
    if classification.cls is ResponseClass.OK:
        return classification.items > 0
    return classification.cls is ResponseClass.ERROR and classification.reason.startswith(PARSE_ERROR)


class HealthExtension(EnginePausing, EngineAlerting, HealthRows, CoverageJudging, HoleWatching):
    """Scores the engine's responses and acts on the bands; its parts: :mod:`~topicstreams.extensions.health_pause`
    (slowdown, pause, resume), :mod:`~topicstreams.extensions.health_alerts` (alerts, the network's verdict),
    :mod:`~topicstreams.extensions.health_rows` (stats, status row, stored windows, baseline),
    :mod:`~topicstreams.extensions.health_coverage` (coverage), :mod:`~topicstreams.extensions.health_holes` (holes)."""

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
        repeat: float,
        coverage_drop: float,
        grace: float,
        network: NetworkWatch | None = None,
        heartbeat: float = store.HEARTBEAT,
    ) -> None:
        self.crawler = crawler
        self.runtime = Runtime.of(crawler)
        """The process's shared objects (database handle, outbox, notifier, watches, the engine's state)."""
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
        self.heartbeat = heartbeat
        """Seconds between two writes of the status row at least (kept in it as ``heartbeat_seconds``)."""
        self.closed = False
        self.hole_window: HoleWindow | None = None
        """The engine's recent holes (``topic_visited``; the reason ``holes``)."""
        """The crawler closed: the row's last write (its stop) is handed over, nothing writes it after."""

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> HealthExtension:
        settings = crawler.settings
        database_url = engine_database_url(
            crawler, switch="TOPICSTREAMS_HEALTH_ENABLED", purpose="health", keeps="the engine status"
        )
        sections = sections_from(settings)
        node = sections.node.id
        runtime = Runtime.of(crawler)
        saturation = watch_for(runtime, database_url, node, saturation_policy(sections.scraper), TICK)
        canaries = canaries_for(sections.canaries, crawler.spidercls.name)
        alerting, health = sections.alerting, sections.health
        extension = cls(
            crawler,
            HealthSettings.of(health),
            database_url,
            node,
            runtime.notifier(database_url, alerting.delivery(), node, **options_from_settings(settings)),
            saturation,
            tuple(canary.query for canary in canaries),
            repeat=alerting.repeat,
            coverage_drop=health.coverage_drop,
            grace=sections.scraper.scrape_interval,
            network=runtime.network_watch(database_url, node),
            heartbeat=settings.getfloat("TOPICSTREAMS_NODE_HEARTBEAT"),
        )
        crawler.signals.connect(extension.spider_opened, signal=signals.spider_opened)
        crawler.signals.connect(extension.spider_closed, signal=signals.spider_closed)
        crawler.signals.connect(extension.response_classified, signal=response_classified)
        crawler.signals.connect(extension.page_parsed, signal=page_parsed)
        crawler.signals.connect(extension.canary_checked, signal=canary_checked)
        crawler.signals.connect(extension.route_changed, signal=route_changed)
        crawler.signals.connect(extension.topic_visited, signal=topic_visited)
        return extension

    @property
    def state(self) -> EngineState:
        return self.runtime.engine_state(self.crawler)

    @cached_property
    def route_scores(self) -> RouteScores:
        """The engine's pairs (engine, route): their health and ``route_status`` rows."""
        return RouteScores(
            self.engine,
            self.node,
            self.settings,
            crawl_routes(self.crawler.settings),
            self.state,
            heartbeat=self.heartbeat,
        )

    def save_routes(self) -> None:
        if not self.closed and self.outbox is not None:
            self.route_scores.save(self.outbox)

    # ---- life cycle -----------------------------------------------------------------------------------
    def spider_opened(self, spider: Spider) -> None:
        self.db = self.runtime.database(self.database_url)
        self.outbox = self.runtime.outbox(self.database_url)
        self.restore()
        self.refresh_baseline(time.time())
        if self.network is not None:
            self.network.register(self.engine)
        if self.saturation is not None:
            if self.saturation.on_change is None:
                self.saturation.on_change = self.saturation_changed
            self.saturation.network = self.network
        self.save_status()
        self.save_routes()
        if self.notifier is not None:  # what an earlier process of the node left undelivered
            self.notifier.resume_leftovers()
        self.ticker = create_looping_call(self.tick)
        self.ticker.start(max(MIN_TICK, min(TICK, self.heartbeat / 2)), now=False)  # a look twice a heartbeat

    async def spider_closed(self, spider: Spider, reason: str) -> None:
        if self.ticker is not None and self.ticker.running:
            self.ticker.stop()
        if self.network is not None:  # failures still held for a verdict are this engine's own after all
            for held in self.network.taken_by(self.engine):
                self.score(held.sample, bucket=False)
        self.store_bucket(time.time())
        if self.outbox is not None:
            self.route_scores.stop(self.outbox)
        self.closed = True  # from here on nothing writes the row: its stop is its last write
        if self.outbox is not None:
            engine, node = self.engine, self.node
            self.outbox.put(
                f"the stop of {engine} on {node}", lambda db: store.mark_stopped(db, engine, node), row=(engine, node)
            )
        if self.outbox is not None and not await asyncio.to_thread(self.outbox.flush):
            logger.warning(
                "[%s] the database did not take the latest status and health rows before the end: %d write(s) not kept",
                self.engine,
                self.outbox.pending(),
            )
        if self.notifier is not None:  # a few seconds at most (what is left is kept for the node's next start)
            await asyncio.to_thread(self.notifier.wait_at_stop)

    def read(self, what: str, read: Any, *args: Any) -> Any:
        """``read(self.db, *args)``, or None when the database cannot answer (away: not even tried). A read is
        never worth a failed signal handler: what is in force stays until the next look."""
        if self.runtime.availability(self.database_url).away:
            return None
        try:
            return read(self.db, *args)
        except SQLAlchemyError as exc:
            logger.debug("[%s] could not read %s: %s", self.engine, what, describe(exc))
            return None

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
        if time.monotonic() - self.saved_at >= self.heartbeat:
            self.save_status()
        if self.route_scores.due():
            self.save_routes()
        if self.saturation is not None:
            self.read("the node's status rows", self.saturation.check, wall(now))
            if self.network is not None:  # the node's engines that other processes run count for its network too
                self.network.other_processes(
                    (row.engine, row.connection_failures_since.timestamp() if row.connection_failures_since else None)
                    for row in self.saturation.rows
                    if not row.gone_at(wall(now))
                )
        self.settle_held(now)

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
        if self.route_scores.observe(classification, sample):
            self.save_routes()
        connection_level = is_connection_level(classification.reason)
        if self.network is not None:
            self.network.answered(self.engine, sample.at, connection_level, classification.reason)
        if route_only(classification, self.state):
            # The route's failure (its proxy, the way to it): the pair's alone, never the engine's score. The node's
            # network has heard of it (every route failing is the network's verdict); the row says when it began.
            self.save_status()
            return
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
