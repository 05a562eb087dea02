"""An engine's recent responses: samples, their summary, and the rolling window the score is computed on. Pure.

A :class:`Sample` is one classified response (times are wall-clock seconds, so that windows line up across
processes and restarts); the spider's parse outcome fills in its items later. :class:`WindowStats` sums a
run of samples: the counts per class, the parse outcome, bytes, browser seconds and the latency percentiles
(nearest rank, in milliseconds, over the samples that have a latency).
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass

from topicstreams.blocks import ResponseClass
from topicstreams.health.score import Window


@dataclass
class Sample:
    """One classified response of an engine."""

    at: float
    """Wall-clock seconds (``time.time()``) when it was classified."""
    cls: ResponseClass
    latency: float | None
    """Seconds from the real send to the rendered response or the failure; None when unknown."""
    bytes: int = 0
    items: int = 0
    """Result items the spider built from the page (its parse outcome)."""
    valid_items: int = 0
    """Of those, the items carrying every required field."""
    parse_error: bool = False


def percentile(ordered: Sequence[float], share: float) -> float | None:
    """The nearest-rank percentile of sorted values (None for none)."""
    if not ordered:
        return None
    return ordered[max(0, math.ceil(share * len(ordered)) - 1)]


@dataclass(frozen=True)
class WindowStats:
    """What a run of samples adds up to."""

    requests: int = 0
    ok: int = 0
    hard_blocks: int = 0
    challenges: int = 0
    soft_blocks: int = 0
    errors: int = 0
    items: int = 0
    valid_items: int = 0
    parse_errors: int = 0
    bytes: int = 0
    browser_seconds: float = 0.0
    p50_latency_ms: float | None = None
    p95_latency_ms: float | None = None

    @classmethod
    def of(cls, samples: Iterable[Sample]) -> WindowStats:
        counts = {klass: 0 for klass in ResponseClass}
        items = valid = parse_errors = size = 0
        latencies: list[float] = []
        for sample in samples:
            counts[sample.cls] += 1
            items += sample.items
            valid += sample.valid_items
            parse_errors += sample.parse_error
            size += sample.bytes
            if sample.latency is not None:
                latencies.append(sample.latency * 1000)
        latencies.sort()
        return cls(
            requests=sum(counts.values()), ok=counts[ResponseClass.OK], hard_blocks=counts[ResponseClass.HARD_BLOCK],
            challenges=counts[ResponseClass.CHALLENGE], soft_blocks=counts[ResponseClass.SOFT_BLOCK],
            errors=counts[ResponseClass.ERROR], items=items, valid_items=valid, parse_errors=parse_errors,
            bytes=size, browser_seconds=sum(latencies) / 1000, p50_latency_ms=percentile(latencies, 0.50),
            p95_latency_ms=percentile(latencies, 0.95))

    def window(self) -> Window:
        """The part the score reads."""
        return Window(self.requests, self.hard_blocks, self.challenges, self.soft_blocks, self.p95_latency_ms or 0.0)

    def counts(self) -> dict[str, int | float | None]:
        return asdict(self)


class RollingWindow:
    """The samples of the last ``seconds``."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.samples: deque[Sample] = deque()

    def add(self, sample: Sample) -> None:
        self.samples.append(sample)

    def trim(self, now: float) -> None:
        """Forget the samples older than the window."""
        while self.samples and self.samples[0].at <= now - self.seconds:
            self.samples.popleft()

    def forget_before(self, moment: float) -> None:
        """Forget every sample before ``moment`` (a person resumed the engine then: a fresh start)."""
        while self.samples and self.samples[0].at < moment:
            self.samples.popleft()

    def stats(self, now: float) -> WindowStats:
        self.trim(now)
        return WindowStats.of(self.samples)


class LatencyHistory:
    """Every latency seen so far (the newest ``limit``): the baseline p95 until the engine has a history."""

    def __init__(self, limit: int = 10_000) -> None:
        self.values: deque[float] = deque(maxlen=limit)

    def add(self, latency: float | None) -> None:
        if latency is not None:
            self.values.append(latency * 1000)

    def p95_ms(self) -> float:
        return percentile(sorted(self.values), 0.95) or 0.0
