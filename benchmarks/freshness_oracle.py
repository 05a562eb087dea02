"""The freshness benchmark's world and its oracle, importable by the crawl it runs (``benchmarks/freshness.py``).

:class:`BenchWorld` is a :class:`~fake_engines.rated_world.RatedWorld` whose base rates are skewed towards the
quiet end, as a real list of followed topics is (most topics publish a few articles a day, a few publish every
minute): a topic's base is ``LOW × (high / LOW) ** (u ** skew)``, ``u`` a stable fraction of the seed and the
topic's name, so with the defaults the bases span 1/24 … 120 articles an hour (over three orders of magnitude)
and half the topics publish less than one article every two hours. Its bursts are the rated world's own
(:func:`~fake_engines.rated_world.drawn_profile`: a ``burst_share`` of the topics has one, starting within
``horizon_hours`` of the origin), each peaking at least at twice the topic's base. The same parameters give the
same world in every process and on every machine.

:class:`WorldRates` is the oracle lane's ``TOPICSTREAMS_FRESHNESS_RATES``: built in the crawl from the setting
:data:`SETTING` (the world's parameters as JSON, with the real time the benchmark's world started), it answers
each topic's true rate on the engine at the world's current time, per *real* hour (the world runs ``speed`` times
faster than the crawl's clock, and the crawl's planner counts real hours).
"""

from __future__ import annotations

import json
import logging
import time
from dataclasses import dataclass
from typing import Any

from fake_engines.catalogue import number
from fake_engines.rated_world import MAX_PER_HOUR, Burst, Profile, RatedWorld, drawn_profile

logger = logging.getLogger(__name__)

SETTING = "TOPICSTREAMS_BENCH_WORLD"
"""The Scrapy setting the oracle reads: :meth:`WorldParams.to_json`."""
LOADED = "the benchmark's oracle is loaded"
"""What the oracle logs when the crawl builds it (the benchmark checks the oracle lane's log for it)."""
LOW = 1 / 24
"""The quietest base rate, articles an hour (one a day)."""
_SCALE = 1_000_000


@dataclass(frozen=True)
class WorldParams:
    """Everything that makes a :class:`BenchWorld` (and, with ``started``, its clock)."""

    seed: int
    origin: float
    speed: float
    high: float = 120.0
    """The busiest base rate, articles an hour."""
    skew: float = 2.0
    """``u ** skew``: above 1, most topics are near the quiet end."""
    horizon_hours: float = 2.0
    burst_share: float = 0.15
    window: int = 60
    started: float = 0.0
    """The real time (``time.time()``) the world's clock read ``origin``."""

    def to_json(self) -> str:
        return json.dumps(self.__dict__, sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> WorldParams:
        return cls(**json.loads(text))


class BenchWorld(RatedWorld):
    """The benchmark's world (see the module's docstring); every engine shows every article (``share`` 1)."""

    def __init__(self, params: WorldParams) -> None:
        super().__init__(
            params.seed,
            horizon_hours=params.horizon_hours,
            burst_share=params.burst_share,
            speed=params.speed,
            share=1.0,
            origin=params.origin,
            window=params.window,
        )
        self.params = params

    def profile(self, topic: str) -> Profile:
        given = self.profiles.get(topic)
        if given is not None:
            return given
        p = self.params
        u = number("fresh-bench-base", p.seed, topic) % _SCALE / _SCALE
        base = LOW * (p.high / LOW) ** (u**p.skew)
        drawn = drawn_profile(p.seed, topic, p.origin, p.horizon_hours, p.burst_share)
        bursts = tuple(
            Burst(burst.start, min(MAX_PER_HOUR, max(burst.peak_per_hour, 2 * base)), burst.fade_hours)
            for burst in drawn.bursts
        )
        return Profile(base, bursts)

    def world_time(self, real: float) -> float:
        """The world time when the real clock read ``real``, by ``params.started`` (the same in every process)."""
        return self.params.origin + (real - self.params.started) * self.params.speed


class WorldRates:
    """The oracle: each topic's true rate on an engine now, articles per real hour (see the module's docstring)."""

    def __init__(self, world: BenchWorld) -> None:
        self.world = world

    @classmethod
    def from_crawler(cls, crawler: Any) -> WorldRates:
        raw = crawler.settings.get(SETTING)
        if not raw:
            raise ValueError(f"the benchmark's oracle needs the world's parameters in the setting {SETTING}")
        world = BenchWorld(WorldParams.from_json(raw))
        params = world.params
        logger.info(
            "%s: the planner is told each topic's true rate (world seed %s, speed %g, started at %.3f)",
            LOADED,
            params.seed,
            params.speed,
            params.started,
        )
        return cls(world)

    def rate_per_hour(self, engine: str, topic: str) -> float:
        now = self.world.world_time(time.time())
        return self.world.engine_rate(engine, topic, now) * self.world.params.speed
