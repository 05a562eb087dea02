"""An engine's recent responses: samples, their summary, and the rolling window the score is computed on. Pure.

A :class:`Sample` is one classified response (times are wall-clock seconds, so that windows line up across
processes and restarts); the spider's parse outcome fills in its items later. :class:`WindowStats` sums a
run of samples: the counts per class, the parse outcome, bytes, browser seconds and the latency percentiles
(nearest rank, in milliseconds, over the samples that have a latency).
"""

from __future__ import annotations

import math
from collections import Counter, deque
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field

from topicstreams.engines.classify import ResponseClass
from topicstreams.engines.parser_health import parser_score
from topicstreams.health.cost import per_record
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
    result_page: bool = False
    """Whether the page should carry results (an ``ok`` page with result items, or one the parser failed on)."""
    missing: dict[str, int] = field(default_factory=dict)
    """Required field -> the page's items lacking it."""
    consent: bool = False
    """Whether the response was a consent wall (a ``challenge`` with reason ``consent``)."""


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
    result_pages: int = 0
    yielding_pages: int = 0
    """Result pages the spider built items from."""
    missing_fields: dict[str, int] = field(default_factory=dict)
    consent_walls: int = 0
    """Of the challenges, the consent walls."""

    @classmethod
    def of(cls, samples: Iterable[Sample]) -> WindowStats:
        counts = dict.fromkeys(ResponseClass, 0)
        items = valid = parse_errors = size = result_pages = yielding = walls = 0
        missing: Counter[str] = Counter()
        latencies: list[float] = []
        for sample in samples:
            counts[sample.cls] += 1
            items += sample.items
            valid += sample.valid_items
            parse_errors += sample.parse_error
            walls += sample.consent
            size += sample.bytes
            if sample.result_page:
                result_pages += 1
                yielding += sample.items > 0
            missing.update(sample.missing)
            if sample.latency is not None:
                latencies.append(sample.latency * 1000)
        latencies.sort()
        return cls(
            requests=sum(counts.values()),
            ok=counts[ResponseClass.OK],
            hard_blocks=counts[ResponseClass.HARD_BLOCK],
            challenges=counts[ResponseClass.CHALLENGE],
            soft_blocks=counts[ResponseClass.SOFT_BLOCK],
            errors=counts[ResponseClass.ERROR],
            items=items,
            valid_items=valid,
            parse_errors=parse_errors,
            bytes=size,
            browser_seconds=sum(latencies) / 1000,
            p50_latency_ms=percentile(latencies, 0.50),
            p95_latency_ms=percentile(latencies, 0.95),
            result_pages=result_pages,
            yielding_pages=yielding,
            missing_fields={name: count for name, count in missing.items() if count},
            consent_walls=walls,
        )

    def parser(self) -> tuple[int | None, list[str]]:
        """The window's parser score and reasons (:func:`topicstreams.engines.parser_health.parser_score`)."""
        return parser_score(
            self.result_pages, self.yielding_pages, self.parse_errors, self.items, self.valid_items, self.missing_fields
        )

    def cost(self) -> dict[str, float] | None:
        """What one valid record cost in the window (:func:`topicstreams.health.cost.per_record`)."""
        return per_record(self.requests, self.bytes, self.browser_seconds, self.valid_items)

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
