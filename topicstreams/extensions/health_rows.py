"""The health extension's writing: stats, the engine's status row, the stored windows, the baseline read back.

A part of :class:`~topicstreams.extensions.watch.HealthExtension` (which sets the attributes declared here). The
``engine_status`` row of the engine on this node (written on every response and at least every heartbeat, which it
keeps as ``heartbeat_seconds``, so a fresh row means a live process; nothing once the crawler closed), one
``health_windows`` row per ``health.window`` of responses (the history later baselines are made of, with the window's
coverage read just before it is written), and the stats ``topicstreams/<engine>/…``. Every write goes through the
process's outbox (:mod:`topicstreams.storage.outbox`).
"""

from __future__ import annotations

import asyncio
import time
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from scrapy.crawler import Crawler
from sqlalchemy import Engine

from topicstreams.alerts.network import NetworkWatch
from topicstreams.crawl.engine_state import EngineState
from topicstreams.engines.states import COOLING, RUNNING
from topicstreams.extensions.timing import wall
from topicstreams.health.band import Assessment, EngineHealth, HealthSettings, History, ParserAssessment
from topicstreams.health.cost import cost_drift, per_record
from topicstreams.health.coverage_model import Coverage
from topicstreams.health.score import Window
from topicstreams.health.window import Sample, WindowStats
from topicstreams.storage import coverage_counts as coverage_store
from topicstreams.storage import engine_status as store
from topicstreams.storage import utcnow
from topicstreams.storage.outbox import Outbox

BASELINE_REFRESH = 3600.0
"""Seconds between two readings of the engine's baseline from its stored windows."""

BASELINE_RETRY = 60.0
"""Seconds before reading the baseline again when the database could not be read."""


def baseline_history(db: Engine, engine_name: str, node: str, days: float, now: datetime | None = None) -> History:
    """The engine's own normal on the node: its stored windows that ended over the last ``days`` days, the most
    recent day left out, summed (:func:`~topicstreams.storage.engine_status.baseline_totals`); the p95 is the
    median of those windows' p95s."""
    totals = store.baseline_totals(db, engine_name, node, days, now)
    return History(
        Window(totals.requests, totals.hard_blocks, totals.challenges, totals.soft_blocks, totals.p95_latency_ms),
        per_record(totals.requests, totals.bytes, totals.browser_seconds, totals.valid_items),
    )


class HealthRows:
    """Writes what the engine's health is, and reads its baseline back (a mixin of the health extension)."""

    crawler: Crawler
    engine: str
    node: str
    settings: HealthSettings
    health: EngineHealth
    state: EngineState
    outbox: Outbox | None
    network: NetworkWatch | None
    mismatches: set[str]
    coverage: Coverage | None
    coverage_low: bool
    last_canary: dict[str, Any] | None
    parser: ParserAssessment | None
    cost_baseline: dict[str, float] | None
    saved_at: float
    heartbeat: float
    closed: bool
    baseline_read_at: float
    bucket: list[Sample]
    bucket_start: float | None
    bucket_score: int | None
    bucket_topics: set[str]

    if TYPE_CHECKING:  # the other parts' methods this one calls

        def read(self, what: str, read: Any, *args: Any) -> Any: ...
        def coverage_grace(self) -> float: ...
        def judge_coverage(self, expected: int, found: int) -> None: ...
        def window_holes(self) -> int | None: ...

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
        when there is one, and the cost of the window ``stats`` (the assessment's by default). Nothing once the
        crawler closed: the row's stop is its last write."""
        if self.closed:
            return
        values: dict[str, Any] = {
            "heartbeat_seconds": self.heartbeat,
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
        holes = self.window_holes()
        if holes is not None:
            values["window_holes"] = holes
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
