"""A news world whose topics publish at very different, changing rates: the fakes' ground truth for freshness.

:class:`RatedWorld` is a :class:`~fake_engines.world.NewsWorld` (the same clock, engines, shares, stale engines,
windows, article URLs and pages) whose topics each follow a rate :class:`Profile` instead of one mean gap ``every``:

* **A base rate and bursts.** A topic publishes ``base_per_hour`` articles an hour; a :class:`Burst` is a story
  that breaks at ``start`` (world seconds since the epoch) at ``peak_per_hour`` and fades back to the base
  exponentially, its excess over the base falling by a factor e every ``fade_hours`` and ending after
  :data:`FADE_SPAN` of them. The fade is made of :data:`SEGMENT`-second steps, each at the exact mean of the
  exponential over its step, so the rate is piecewise constant and every count below is exact and cheap.
  Overlapping bursts add their excesses.
* **Profiles, given or drawn.** ``profiles={"topic": Profile(...)}`` fixes a topic's profile (the tests' way);
  every other topic's is drawn from ``seed`` (:func:`drawn_profile`): a base rate log-uniform between one a day
  and one a minute, and for a ``burst_share`` of the topics one burst starting somewhere in the ``horizon_hours``
  after the world's ``origin``, peaking at tens of articles an hour up to two a minute, fading within minutes to
  hours. Everything derives from SHA-256 (:func:`~fake_engines.catalogue.number`), never from ``hash()`` or an
  unseeded random: the same seed, origin and topic names give the same world on every run and machine.
* **Publication times.** With ``Λ(t)`` the expected number of articles a topic has published from :data:`EPOCH`
  (where every stream begins) to ``t``, article ``k`` (1, 2, …) is published at ``T_k = Λ⁻¹(k - 1 + u_k)``,
  ``u_k`` in ``[0, 1)`` a stable hash of the seed, topic and ``k``: exactly one article per unit of ``Λ``, so
  ``T_k`` is strictly increasing, the number published by ``t`` is within one of ``Λ(t)`` and the count in any
  interval within two of the rate's integral over it (steadier than a Poisson stream, on purpose: a test can state
  what it expects). :meth:`RatedWorld.latest` inverts ``T_k`` by bisection over the steps (no scan over ``k``).

For the benchmark's oracle and accounting: :meth:`RatedWorld.rate` (the true rate at a time),
:meth:`RatedWorld.engine_rate` (an engine's ``share`` of it), :meth:`RatedWorld.expected` (``Λ(b) - Λ(a)``) and
:meth:`RatedWorld.published_between` (every article published in ``(a, b]``, with its time).
"""

from __future__ import annotations

import bisect
import math
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from fake_engines.catalogue import number
from fake_engines.world import DAY, EPOCH, WINDOW, NewsWorld, _iso, _number

HOUR = 3600.0
SEGMENT = 300.0
"""Seconds per step of a burst's fade (5 world minutes): the rate is constant on each."""
FADE_SPAN = 5.0
"""A burst ends this many ``fade_hours`` after its start (its excess is then under 1 % of what it was)."""
MAX_PER_HOUR = 3600.0
"""The highest base or peak rate a profile may have (one article a second)."""
MAX_FADE_HOURS = 168.0
"""The longest ``fade_hours`` a burst may have (a week)."""
BASE_RANGE = (1 / 24, 60.0)
"""Drawn base rates are log-uniform between these (per hour: one a day, one a minute)."""
PEAK_RANGE = (20.0, 120.0)
"""Drawn burst peaks are log-uniform between these (per hour), and at least twice the topic's base."""
FADE_RANGE = (0.25, 2.0)
"""Drawn ``fade_hours`` are log-uniform between these."""
_SCALE = 1_000_000
"""Resolution of the fractions drawn from hashes."""
_TABLES = 4096
"""How many topics' step tables a world keeps before it starts over (they are cheap to rebuild)."""


@dataclass(frozen=True)
class Burst:
    """A story breaking at ``start`` (world seconds since the epoch) at ``peak_per_hour`` articles an hour, fading
    back to the topic's base: its excess falls by a factor e every ``fade_hours``."""

    start: float
    peak_per_hour: float
    fade_hours: float

    def __post_init__(self) -> None:
        if not _number(self.start):
            raise ValueError(f"burst start: seconds since the epoch, not {self.start!r}")
        if not _number(self.peak_per_hour) or not 0 < self.peak_per_hour <= MAX_PER_HOUR:
            raise ValueError(f"burst peak_per_hour: a number in (0, {MAX_PER_HOUR:g}], not {self.peak_per_hour!r}")
        if not _number(self.fade_hours) or not 0 < self.fade_hours <= MAX_FADE_HOURS:
            raise ValueError(f"burst fade_hours: a number in (0, {MAX_FADE_HOURS:g}], not {self.fade_hours!r}")

    @property
    def end(self) -> float:
        """When the burst is over (:data:`FADE_SPAN` fades after its start, rounded up to whole steps)."""
        return self.start + self.steps * SEGMENT

    @property
    def steps(self) -> int:
        return max(1, math.ceil(FADE_SPAN * self.fade_hours * HOUR / SEGMENT))

    def excess(self, step: int, base_per_hour: float) -> float:
        """The burst's excess over ``base_per_hour`` on its step ``step`` (0-based), articles per hour: the mean
        of the exponential over the step."""
        tau = self.fade_hours * HOUR
        mean = tau / SEGMENT * (math.exp(-step * SEGMENT / tau) - math.exp(-(step + 1) * SEGMENT / tau))
        return (self.peak_per_hour - base_per_hour) * mean

    def state(self) -> dict[str, Any]:
        return {
            "start": self.start,
            "start_iso": _iso(self.start),
            "peak_per_hour": self.peak_per_hour,
            "fade_hours": self.fade_hours,
        }


@dataclass(frozen=True)
class Profile:
    """A topic's rates: ``base_per_hour`` articles an hour, plus its ``bursts`` (each peaking at least at the
    base)."""

    base_per_hour: float
    bursts: tuple[Burst, ...] = ()

    def __post_init__(self) -> None:
        if not _number(self.base_per_hour) or not 0 < self.base_per_hour <= MAX_PER_HOUR:
            raise ValueError(f"base_per_hour: a number in (0, {MAX_PER_HOUR:g}], not {self.base_per_hour!r}")
        if not isinstance(self.bursts, tuple) or not all(isinstance(b, Burst) for b in self.bursts):
            raise ValueError(f"bursts: a tuple of Burst, not {self.bursts!r}")
        for burst in self.bursts:
            if burst.peak_per_hour < self.base_per_hour:
                raise ValueError(
                    f"a burst's peak ({burst.peak_per_hour:g} an hour) is below the base ({self.base_per_hour:g})"
                )

    def state(self) -> dict[str, Any]:
        return {"base_per_hour": self.base_per_hour, "bursts": [burst.state() for burst in self.bursts]}


def drawn_profile(
    seed: int | str, topic: str, origin: float, horizon_hours: float = 24.0, burst_share: float = 0.15
) -> Profile:
    """``topic``'s profile drawn from ``seed``: a base log-uniform over :data:`BASE_RANGE`; with the chance
    ``burst_share``, one burst starting uniformly in ``[origin, origin + horizon_hours)``, its peak log-uniform
    over :data:`PEAK_RANGE` (at least twice the base), its fade log-uniform over :data:`FADE_RANGE`."""
    base = _log_between(*BASE_RANGE, _fraction("rated-base", seed, topic))
    if _fraction("rated-bursty", seed, topic) >= burst_share:
        return Profile(base)
    start = origin + _fraction("rated-start", seed, topic) * horizon_hours * HOUR
    peak = _log_between(max(PEAK_RANGE[0], 2 * base), PEAK_RANGE[1], _fraction("rated-peak", seed, topic))
    fade = _log_between(*FADE_RANGE, _fraction("rated-fade", seed, topic))
    return Profile(base, (Burst(start, peak, fade),))


@dataclass(frozen=True)
class _Steps:
    """A profile as a step function from :data:`EPOCH`: the rate ``rates[i]`` (per second) on
    ``[edges[i], edges[i + 1])`` and ``base`` from the last edge on; ``counts[i]`` is ``Λ(edges[i])``."""

    edges: tuple[float, ...]
    rates: tuple[float, ...]
    counts: tuple[float, ...]
    base: float

    @classmethod
    def of(cls, profile: Profile) -> _Steps:
        points = {EPOCH}
        for burst in profile.bursts:
            points.update(burst.start + step * SEGMENT for step in range(burst.steps + 1))
        edges = sorted(point for point in points if point >= EPOCH)
        rates: list[float] = []
        counts = [0.0]
        for left, right in zip(edges, edges[1:], strict=False):
            middle = (left + right) / 2  # safely inside one step of every burst, whatever the float rounding
            per_hour = profile.base_per_hour
            for burst in profile.bursts:
                if burst.start <= middle < burst.end:
                    per_hour += burst.excess(math.floor((middle - burst.start) / SEGMENT), profile.base_per_hour)
            rates.append(per_hour / HOUR)
            counts.append(counts[-1] + per_hour / HOUR * (right - left))
        return cls(tuple(edges), tuple(rates), tuple(counts), profile.base_per_hour / HOUR)

    def rate_at(self, index: int) -> float:
        return self.rates[index] if index < len(self.rates) else self.base

    def count(self, t: float) -> float:
        """``Λ(t)``: the expected number of articles from :data:`EPOCH` to ``t``."""
        if t <= EPOCH:
            return 0.0
        index = bisect.bisect_right(self.edges, t) - 1
        return self.counts[index] + self.rate_at(index) * (t - self.edges[index])

    def time(self, count: float) -> float:
        """``Λ⁻¹(count)``: when the expected number of articles reaches ``count`` (>= 0)."""
        index = max(0, bisect.bisect_right(self.counts, count) - 1)
        return self.edges[index] + (count - self.counts[index]) / self.rate_at(index)


class RatedWorld(NewsWorld):
    """A :class:`NewsWorld` whose topics publish along rate :class:`Profile` s (see the module's docstring).

    ``profiles``: fixed profiles by topic name; any other topic's is drawn from ``seed`` (:func:`drawn_profile`,
    with ``horizon_hours`` and ``burst_share``; the bursts start after ``origin``, so give an ``origin`` for the
    same world on every run). ``speed``, ``share``, ``origin``, ``window``: as in :class:`NewsWorld`.
    """

    def __init__(
        self,
        seed: int | str = 0,
        profiles: Mapping[str, Profile] | None = None,
        *,
        horizon_hours: float = 24.0,
        burst_share: float = 0.15,
        speed: float = 1.0,
        share: float = 0.75,
        origin: float | None = None,
        window: int = WINDOW,
    ) -> None:
        super().__init__(speed=speed, share=share, origin=origin, window=window)
        if not isinstance(seed, (int, str)) or isinstance(seed, bool):
            raise ValueError(f"seed: an int or a string, not {seed!r}")
        if not _number(horizon_hours) or horizon_hours <= 0:
            raise ValueError(f"horizon_hours: a number of hours > 0, not {horizon_hours!r}")
        if not _number(burst_share) or not 0 <= burst_share <= 1:
            raise ValueError(f"burst_share: a number in [0, 1], not {burst_share!r}")
        given = dict(profiles or {})
        for topic, profile in given.items():
            if not isinstance(topic, str) or not isinstance(profile, Profile):
                raise ValueError(f"profiles: topic names to Profile, not {topic!r}: {profile!r}")
        self.seed = seed
        self.horizon_hours = float(horizon_hours)
        self.burst_share = float(burst_share)
        self.profiles = given
        self._steps: dict[str, _Steps] = {}
        self._steps_lock = threading.Lock()

    def __repr__(self) -> str:
        return (
            f"<RatedWorld seed={self.seed!r} now={_iso(self.now())} speed={self.speed:g} share={self.share:g}"
            f" profiles={len(self.profiles)} stale={','.join(self.stale_engines()) or '-'}>"
        )

    # -- the profiles ---------------------------------------------------------------------------------

    def profile(self, topic: str) -> Profile:
        """``topic``'s profile: the one given, or the one drawn from the seed."""
        given = self.profiles.get(topic)
        if given is not None:
            return given
        return drawn_profile(self.seed, topic, self.origin, self.horizon_hours, self.burst_share)

    def _table(self, topic: str) -> _Steps:
        with self._steps_lock:
            steps = self._steps.get(topic)
        if steps is None:
            steps = _Steps.of(self.profile(topic))
            with self._steps_lock:
                if len(self._steps) >= _TABLES:
                    self._steps.clear()
                self._steps[topic] = steps
        return steps

    def rate(self, topic: str, t: float) -> float:
        """The true rate of ``topic`` at world time ``t``, articles per hour (0 before :data:`EPOCH`); an engine
        shows ``share`` of them."""
        if t < EPOCH:
            return 0.0
        steps = self._table(topic)
        return steps.rate_at(bisect.bisect_right(steps.edges, t) - 1) * HOUR

    def engine_rate(self, engine: str, topic: str, now: float | None = None) -> float:
        """The rate at which ``topic``'s articles appear on ``engine`` at world time ``now`` (default:
        :meth:`now`), per hour: ``share`` of the topic's rate (of yesterday's while the engine is stale)."""
        t = self.now() if now is None else float(now)
        return self.share * self.rate(topic, t - DAY if self.is_stale(engine) else t)

    def expected(self, topic: str, a: float, b: float) -> float:
        """``Λ(b) - Λ(a)``: the expected number of ``topic``'s articles published in ``(a, b]`` (the actual count
        is within two of it)."""
        steps = self._table(topic)
        return steps.count(b) - steps.count(a)

    def profiles_state(self, topics: Iterable[str] = ()) -> dict[str, Any]:
        """The profiles of the given topics and of ``topics``, JSON-able: topic -> {base_per_hour, bursts}."""
        names = dict.fromkeys([*self.profiles, *topics])
        return {topic: self.profile(topic).state() for topic in names}

    # -- the streams ----------------------------------------------------------------------------------

    def phase(self, topic: str) -> float:
        """When ``topic``'s stream begins: :data:`EPOCH`, for every topic."""
        return EPOCH

    def published(self, topic: str, k: int) -> float:
        """``T_k = Λ⁻¹(k - 1 + u_k)``: when article ``k`` (>= 1) of ``topic`` is published, seconds since the
        epoch."""
        u = number("rated-u", self.seed, topic, k) % _SCALE / _SCALE
        return self._table(topic).time(k - 1 + u)

    def latest(self, topic: str, t: float) -> int:
        """The number of ``topic``'s newest article at world time ``t`` (0: none yet)."""
        # T_k <= t iff k - 1 + u_k <= Λ(t): k = floor(Λ(t)) always is, floor + 1 may be (the loops mend rounding)
        k = max(0, math.floor(self._table(topic).count(t)))
        while k >= 1 and self.published(topic, k) > t:
            k -= 1
        while self.published(topic, k + 1) <= t:
            k += 1
        return k

    def published_between(self, topic: str, a: float, b: float) -> list[tuple[int, float]]:
        """Every article of ``topic`` published in ``(a, b]``: ``(k, T_k)``, oldest first."""
        first, last = self.latest(topic, a) + 1, self.latest(topic, b)
        return [(k, self.published(topic, k)) for k in range(first, last + 1)]

    # -- control --------------------------------------------------------------------------------------

    def state(self) -> dict[str, Any]:
        """The world's settings and state, JSON-able: :meth:`NewsWorld.state` without ``every``, with the seed,
        the drawing's settings and the given profiles."""
        state = super().state()
        del state["every"]
        state.update(
            seed=self.seed,
            horizon_hours=self.horizon_hours,
            burst_share=self.burst_share,
            profiles=self.profiles_state(),
        )
        return state


def _fraction(*parts: object) -> float:
    """A stable fraction in ``[0, 1)`` from ``parts``."""
    return number(*parts) % _SCALE / _SCALE


def _log_between(low: float, high: float, fraction: float) -> float:
    return math.exp(math.log(low) + fraction * (math.log(high) - math.log(low)))
