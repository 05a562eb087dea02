"""The health extension's coverage: of what the other engines found, the share the engine found too.

A part of :class:`~topicstreams.extensions.watch.HealthExtension` (which sets the attributes declared here). When a
stored window closes, of the articles the other engines found for the topics the engine scraped in it (lagged by
one re-scrape interval: the configured one times the slowdown, or the one the engine really keeps when longer —
:meth:`CoverageJudging.coverage_grace`), the share it found too, against its own baseline
(:mod:`topicstreams.health.coverage_model`); a drop of ``health.coverage_drop`` in two judged windows in a row while
the pages parse fine is reason ``coverage`` — beside the score, never in it.
"""

from __future__ import annotations

import logging
import time
from collections import deque
from typing import TYPE_CHECKING, Any

from topicstreams.alerts import transitions
from topicstreams.alerts.events import Alert
from topicstreams.crawl.engine_state import EngineState
from topicstreams.extensions.health_rows import BASELINE_REFRESH
from topicstreams.health.band import HealthSettings, ParserAssessment
from topicstreams.health.coverage_model import Coverage, judge_coverage
from topicstreams.health.score import OK
from topicstreams.storage import coverage_counts as coverage_store
from topicstreams.storage import utcnow

logger = logging.getLogger(__name__)

COVERAGE_CONFIRM = 2
"""Judged windows in a row whose coverage must be low before the reason and the alert: one window's share of a few
dozen articles varies by chance, two in a row rarely."""

STORE_MARGIN = 5.0
"""Seconds added to the coverage's grace for what each engine's store takes to write its finds (batches, outbox)."""


class CoverageJudging:
    """Judges the engine's coverage window by window (a mixin of the health extension)."""

    engine: str
    node: str
    settings: HealthSettings
    state: EngineState
    grace: float
    coverage_drop: float
    coverage: Coverage | None
    coverage_low: bool
    coverage_baseline: tuple[int, int] | None
    coverage_read_at: float
    coverage_lows: int
    rescrape_gaps: deque[float]
    parser: ParserAssessment | None

    if TYPE_CHECKING:  # the other parts' methods this one calls

        def alert(self, alert: Alert) -> None: ...
        def read(self, what: str, read: Any, *args: Any) -> Any: ...
        def save_status(self, *args: Any, **kwargs: Any) -> None: ...

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
