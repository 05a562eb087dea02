"""One engine's health over time: the rolling window, its baseline, the smoothed score and the band in force. Pure.

:class:`EngineHealth` takes each classified response (:meth:`~EngineHealth.observe`) and returns an
:class:`Assessment`: the window's score against the engine's own normal, smoothed, its band and reasons, and
the *action* the band calls for when it changes what is in force:

* ``slow down`` — the engine became ``degraded``: its floor and re-scrape interval are multiplied;
* ``recover`` — a slowed engine is ``ok`` again: back to the normal pace;
* ``pause`` — the engine became ``critical``: it is paused until a person resumes it (:meth:`~EngineHealth.resume`).

Without a score (too few requests) nothing changes: an engine is never sped up for lack of evidence. While
paused, scores are still computed (canaries keep running) but call for nothing.

When the window holds consent walls (challenges with reason ``consent``), its reasons end with ``consent``: the
challenges were walls a person answers (``browser.consent``), not CAPTCHAs.

Parser health (:meth:`EngineHealth.assess_parser`) is read off the same window but is a separate signal: it has
its own band and acts on nothing (a broken parser is a code fix, not a reason to slow down).

The baseline is the engine's own history (:attr:`EngineHealth.history`, windows of earlier days, set by the
caller); until that holds ``min_requests`` requests, it is zero block rates and the engine's own p95 so far.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from topicstreams.config.sections import HealthSection, build_section
from topicstreams.engines.consent_walls import CONSENT
from topicstreams.health.score import (
    CRITICAL,
    DEGRADED,
    OK,
    UNKNOWN,
    Smoothed,
    Window,
    band_of,
    health_score,
)
from topicstreams.health.window import (
    LatencyHistory,
    RollingWindow,
    Sample,
    WindowStats,
)

SLOW_DOWN, RECOVER, PAUSE = "slow down", "recover", "pause"


@dataclass(frozen=True)
class HealthSettings:
    """The ``health.*`` configuration."""

    weights: Mapping[str, float]
    min_requests: int
    window: float
    smoothing: float
    degrade_factor: float
    baseline_days: float

    @classmethod
    def of(cls, health: HealthSection) -> HealthSettings:
        """The scoring's part of the typed ``health`` section."""
        return cls(
            weights=dict(health.weights),
            min_requests=health.min_requests,
            window=health.window,
            smoothing=health.smoothing,
            degrade_factor=health.degrade_factor,
            baseline_days=health.baseline_days,
        )

    @classmethod
    def from_config(cls, health: Mapping[str, Any]) -> HealthSettings:
        """The same, of a ``health`` configuration mapping (every key of the section)."""
        return cls.of(build_section(HealthSection, health, "health"))


@dataclass(frozen=True)
class History:
    """An engine's own normal on a node: its stored windows of earlier days, summed."""

    window: Window
    """What the health score compares with."""
    cost: dict[str, float] | None
    """What one valid record cost (None without a valid record)."""


@dataclass(frozen=True)
class Assessment:
    """The engine's health after one response."""

    raw: int | None
    """The window's score before smoothing (None: not enough requests)."""
    score: int | None
    """The smoothed score (None while there is no raw score)."""
    band: str
    reasons: list[str]
    stats: WindowStats
    baseline: Window
    action: str | None = None
    """``slow down``, ``recover``, ``pause``, or None when what is in force stays."""


@dataclass(frozen=True)
class ParserAssessment:
    """The engine's parser health after one parsed page (see :mod:`topicstreams.engines.parser_health`)."""

    score: int | None
    band: str
    reasons: list[str]
    changed: bool
    """Whether the band differs from the last known one (``unknown`` never counts as a change, nor a first ``ok``)."""


@dataclass
class EngineHealth:
    settings: HealthSettings
    history: Window | None = None
    """The engine's own windows of earlier days, summed (:attr:`History.window`)."""
    in_force: str = OK
    """The band whose action is in force: ``ok`` (normal pace), ``degraded`` (slowed), ``critical`` (paused)."""
    parser_band: str = UNKNOWN
    """The parser's last known band (its score is reported, it acts on nothing)."""
    window: RollingWindow = field(init=False)
    latencies: LatencyHistory = field(init=False)
    smoothed: Smoothed = field(init=False)

    def __post_init__(self) -> None:
        self.window = RollingWindow(self.settings.window)
        self.latencies = LatencyHistory()
        self.smoothed = Smoothed(self.settings.smoothing)

    @property
    def paused(self) -> bool:
        return self.in_force == CRITICAL

    def baseline(self) -> Window:
        if self.history is not None and self.history.requests >= self.settings.min_requests:
            return self.history
        return Window(p95_latency_ms=self.latencies.p95_ms())

    def observe(self, sample: Sample) -> Assessment:
        self.window.add(sample)
        self.latencies.add(sample.latency)
        return self.assess(sample.at)

    def assess(self, now: float) -> Assessment:
        stats = self.window.stats(now)
        baseline = self.baseline()
        raw, reasons = health_score(stats.window(), baseline, self.settings.weights, self.settings.min_requests)
        if stats.consent_walls:
            reasons = [*reasons, CONSENT]  # which challenges they were: a wall a person answers, not a CAPTCHA
        score = None if raw is None else round(self.smoothed.add(raw))
        band = band_of(score)
        return Assessment(raw, score, band, reasons, stats, baseline, self._act(band))

    def assess_parser(self, stats: WindowStats) -> ParserAssessment:
        """The parser health of the window ``stats`` sums (the samples with their parse outcome)."""
        score, reasons = stats.parser()
        band = band_of(score)
        # From unknown, only a fall is news; ok is what an engine starts out as.
        changed = band not in (UNKNOWN, self.parser_band) and not (self.parser_band == UNKNOWN and band == OK)
        if band != UNKNOWN:
            self.parser_band = band
        return ParserAssessment(score, band, reasons, changed)

    def _act(self, band: str) -> str | None:
        if band == UNKNOWN or self.paused or band == self.in_force:
            return None
        self.in_force = band
        return {OK: RECOVER, DEGRADED: SLOW_DOWN, CRITICAL: PAUSE}[band]

    def resume(self, at: float) -> None:
        """A person lifted the pause at ``at``: judging starts afresh from then (the window and the smoothing
        forget what came before), at the slowed pace until a score says the engine is ok."""
        self.window.forget_before(at)
        self.smoothed.reset()
        self.in_force = DEGRADED
