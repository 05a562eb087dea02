"""Coverage: the cross-engine ground truth — how much of what the other engines find an engine finds too. Pure.

An engine can answer every query with a well-formed page that parses perfectly and still not be what a real visitor
sees (yesterday's articles, a thinned index for a suspected bot). No status code, latency or parser signal shows
that; the other engines, following the same topics, do.

**Per engine and health window** ``[start, end)`` (the counts are read by
:func:`topicstreams.storage.coverage_counts.window_counts`):

* *expected*: the distinct feed events — ``(topic, article)`` pairs — of the topics the engine scraped in the window
  (the topics of its ok results pages) that another engine first found in ``[start − grace, end − grace)``, where
  ``grace`` is one scrape interval: lagged so that the engine had the time of one scrape to find them too. "First
  found" is the earliest ``topic_news_engines.first_seen_at`` among the other engines, so an event counts in one
  window only, and windows add up;
* *found*: of those, the ones the engine found as well (at any time up to ``end``).

The window's **coverage** is ``found / expected`` when ``expected`` is at least :data:`MIN_WINDOW_ARTICLES`, else
unknown (None). The **baseline** is the engine's own normal under the health score's rules: its stored windows
(``health_windows.coverage_expected`` / ``coverage_found``) of the last ``health.baseline_days``, the most recent day
left out, added up (:func:`topicstreams.storage.coverage_counts.baseline_counts`) — ``sum(found) / sum(expected)`` when
``sum(expected)`` is at least :data:`MIN_BASELINE_ARTICLES`, else unknown. The **drop** is ``baseline − window`` in
share points (None when either is unknown): a drop of ``health.coverage_drop`` (0.2) or more while the engine's pages
parse fine (its parser band is ``ok``) is the reason :data:`COVERAGE` (:meth:`Coverage.low`). With pages that do not
parse, the parser's reasons already say why less is found: coverage adds nothing then.

Coverage is a signal of its own, beside hostility and parser health: it never changes the health score or its band.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

COVERAGE = "coverage"
"""The reason an engine's coverage dropped below its baseline."""

MIN_WINDOW_ARTICLES = 5
"""Fewer expected articles in a window: no coverage for it (one miss of three is no evidence)."""

MIN_BASELINE_ARTICLES = 30
"""Fewer expected articles over the baseline period: no baseline."""

TOLERANCE = 1e-9
"""A drop equal to the threshold counts, whatever the floating-point rounding of ``baseline − window``."""

DIGITS = 3
"""The JSON's shares are rounded to this many decimal places."""


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, DIGITS)


@dataclass(frozen=True)
class Coverage:
    """One window's coverage against the engine's baseline (shares between 0 and 1; None: not known)."""

    window: float | None
    baseline: float | None
    drop: float | None
    """``baseline − window``: positive when the engine finds less of what the others find than it used to."""
    expected: int = 0
    """The window's expected articles (what the other engines found)."""
    found: int = 0
    """Of those, the ones the engine found too."""

    def as_json(self) -> dict[str, float | None]:
        """``{"window", "baseline", "drop"}``, rounded to three places, None where not known."""
        return {"window": _rounded(self.window), "baseline": _rounded(self.baseline), "drop": _rounded(self.drop)}

    def low(self, threshold: float, parser_ok: bool) -> bool:
        """Whether this is the reason :data:`COVERAGE`: a drop of ``threshold`` (``health.coverage_drop``) or more
        below the baseline while the engine's pages parse fine (``parser_ok``: its parser band is ``ok``)."""
        return parser_ok and self.drop is not None and self.drop >= threshold - TOLERANCE

    def as_status(self, threshold: float, parser_ok: bool) -> dict[str, Any]:
        """What the status row's ``coverage`` column keeps: :meth:`as_json` and ``"low"`` (:meth:`low`)."""
        return {**self.as_json(), "low": self.low(threshold, parser_ok)}


def _check(expected: int, found: int, what: str) -> None:
    if expected < 0 or found < 0 or found > expected:
        raise ValueError(f"{what}: found {found} of {expected} expected articles (need 0 <= found <= expected)")


def judge_coverage(expected: int, found: int, baseline_expected: int, baseline_found: int) -> Coverage:
    """The coverage of a window (``found`` of ``expected``) against the baseline's counts, each share known only
    from its minimum sample on (:data:`MIN_WINDOW_ARTICLES`, :data:`MIN_BASELINE_ARTICLES`)."""
    _check(expected, found, "the window")
    _check(baseline_expected, baseline_found, "the baseline")
    window = found / expected if expected >= MIN_WINDOW_ARTICLES else None
    baseline = baseline_found / baseline_expected if baseline_expected >= MIN_BASELINE_ARTICLES else None
    drop = baseline - window if window is not None and baseline is not None else None
    return Coverage(window, baseline, drop, expected, found)
