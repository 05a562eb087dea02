"""The target health score of one engine: how far its current window strays from its own normal. Pure.

Four signals, each a penalty of ``weight × badness`` with badness between 0 and 1:

* the rates of ``hard_block``, ``challenge`` and ``soft_block`` responses: only the excess over the engine's own
  baseline rate counts, and it takes the full penalty 20 percentage points above it
  (``min(1, max(0, (now - base) / 0.20))``);
* ``latency``, the window's p95: full penalty at three times the baseline p95
  (``min(1, max(0, (now / max(base, 1) - 1) / 2))``, in milliseconds).

The score is ``round(100 - sum of penalties)``; the reasons are the signals whose penalty is at least 1, largest
first (ties in the order of the weights). Below ``min_requests`` requests in the window there is no score: a
missing score is more honest than a confident wrong one.

The bands (:func:`band_of`): ``ok`` 80–100, ``degraded`` 50–79, ``critical`` below 50, ``unknown`` without a score.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

DEFAULT_WEIGHTS: Mapping[str, float] = {"hard_block": 35, "challenge": 25, "soft_block": 25, "latency": 15}
"""The signals and their weights, in the order that breaks ties between equal penalties."""

RATE_SPAN = 0.20
"""The rise over the baseline rate (a share of requests) that takes a rate signal's whole penalty."""

LATENCY_SPAN = 2.0
"""The rise of the p95 over the baseline p95, in multiples of it, that takes the latency signal's whole penalty."""

NOT_ENOUGH = "not enough requests to judge"

OK, DEGRADED, CRITICAL, UNKNOWN = "ok", "degraded", "critical", "unknown"
OK_FLOOR, DEGRADED_FLOOR = 80, 50
"""The lowest score of the ``ok`` band and of the ``degraded`` band."""


@dataclass(frozen=True)
class Window:
    """An engine's responses over a window of time: counts, and the p95 of their latency in milliseconds."""

    requests: int = 0
    hard_blocks: int = 0
    challenges: int = 0
    soft_blocks: int = 0
    p95_latency_ms: float = 0.0

    def rate(self, count: int) -> float:
        """``count`` as a share of the window's requests (0 for an empty window)."""
        return count / self.requests if self.requests else 0.0


def _clamp(value: float) -> float:
    return min(1.0, max(0.0, value))


def badness(current: Window, baseline: Window) -> dict[str, float]:
    """Each signal's badness, 0 (its normal or better) to 1 (its full penalty)."""
    return {
        "hard_block": _clamp((current.rate(current.hard_blocks) - baseline.rate(baseline.hard_blocks)) / RATE_SPAN),
        "challenge": _clamp((current.rate(current.challenges) - baseline.rate(baseline.challenges)) / RATE_SPAN),
        "soft_block": _clamp((current.rate(current.soft_blocks) - baseline.rate(baseline.soft_blocks)) / RATE_SPAN),
        "latency": _clamp((current.p95_latency_ms / max(baseline.p95_latency_ms, 1) - 1) / LATENCY_SPAN),
    }


def health_score(
    current: Window, baseline: Window, weights: Mapping[str, float] = DEFAULT_WEIGHTS, min_requests: int = 50
) -> tuple[int | None, list[str]]:
    """The score of ``current`` against ``baseline`` (0–100, or None below ``min_requests``) and its reasons."""
    if current.requests < min_requests:
        return None, [NOT_ENOUGH]
    unknown = set(weights) - set(DEFAULT_WEIGHTS)
    if unknown:
        raise ValueError(
            f"unknown health signal(s) {', '.join(sorted(unknown))}: expected {', '.join(DEFAULT_WEIGHTS)}"
        )
    bad = badness(current, baseline)
    penalties = {name: weights[name] * bad[name] for name in weights}
    order = list(weights)
    reasons = sorted(
        (name for name, penalty in penalties.items() if penalty >= 1),
        key=lambda name: (-penalties[name], order.index(name)),
    )
    return round(100 - sum(penalties.values())), reasons


def band_of(score: float | None) -> str:
    """The band of a score: ``ok`` 80–100, ``degraded`` 50–79, ``critical`` below 50, ``unknown`` for None."""
    if score is None:
        return UNKNOWN
    if score >= OK_FLOOR:
        return OK
    if score >= DEGRADED_FLOOR:
        return DEGRADED
    return CRITICAL


@dataclass
class Smoothed:
    """An exponentially weighted moving average of scores; ``weight`` is the newest score's (1: no smoothing)."""

    weight: float
    value: float | None = None

    def add(self, score: float) -> float:
        self.value = score if self.value is None else self.weight * score + (1 - self.weight) * self.value
        return self.value

    def reset(self, value: float | None = None) -> None:
        self.value = value
