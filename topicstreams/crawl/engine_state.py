"""The live state of one engine that pacing, block handling and the spider loop share.

* **Pace**: the floor between the starts of two requests to the engine, times ``pace_multiplier`` (Health
  raises it for a degraded engine), plus a random 0…``jitter_ratio`` × that on top, drawn anew for every gap.
  The gap counts from the moment the previous request was actually sent (:meth:`EngineState.mark_sent`).
* **Cooldown**: a benching response (challenge, hard block, soft block) benches the engine for
  ``initial`` × ``factor`` ^ (consecutive failures before it), at most ``max``; a longer ``Retry-After`` wins.
* **Probe**: once a bench ends, one request goes alone; until its outcome is known nothing else does. Success
  resets the cooldown, failure benches the engine again for longer.
* **The node's network**: while Health says the node's network is down (:meth:`EngineState.network_changed`, from
  :mod:`topicstreams.alerts.network`), a connection-level failure is not the engine's: it benches the engine for the
  initial cooldown only, never longer in a row, so the crawl keeps probing and notices at once when the network is
  back; the connection-level failures in a row that came before the verdict are forgiven. When the network is back,
  a bench such a failure began is lifted at once (the next request is the probe).

Pure: times are plain floats from an injected clock (``time.monotonic`` by default), so the rules are tested
without waiting; :mod:`topicstreams.middlewares.pacing` does the waiting.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Sequence
from typing import Any

from topicstreams.config.route_table import DEFAULT_ROUTE, configured_routes
from topicstreams.config.sections import RouteSection
from topicstreams.config.setting_names import sections_from
from topicstreams.crawl.cooldown import CooldownPolicy
from topicstreams.crawl.route_standing import RouteStanding
from topicstreams.engines.classify import BENCHING_CLASSES, ResponseClass, is_route_failure


class EngineState:
    """One engine's state on this node: what Health and the store set for the whole engine (pace multiplier, pause,
    hold, the node's network), and a :class:`RouteLane` per route it takes (see the module docstring)."""

    def __init__(
        self,
        engine: str,
        *,
        floor: float,
        jitter_ratio: float,
        cooldown: CooldownPolicy,
        clock: Callable[[], float] = time.monotonic,
        rng: random.Random | None = None,
        routes: Sequence[str] = (DEFAULT_ROUTE,),
        standing_of: Callable[[str], RouteStanding | None] | None = None,
    ) -> None:
        self.engine = engine
        self.floor = floor
        self.jitter_ratio = jitter_ratio
        self.cooldown = cooldown
        self.clock = clock
        self.rng = rng or random.Random()
        self.pace_multiplier = 1.0
        """Set by Health: 1 normally, ``health.degrade_factor`` while the engine is degraded. It multiplies the
        floor of every lane and the re-scrape interval in the spider's schedule."""
        self.paused = False
        """Set by Health: a paused engine schedules no topics (a person lifts the pause)."""
        self.held: str | None = None
        """Set by the store (:mod:`topicstreams.storage.store_hold`): why the engine takes no new topic now (its items
        would have nowhere to go), None when it may; lifted by the store itself. Apart from ``paused``: neither lifts
        the other."""
        self.network_down = False
        """Set by Health (:meth:`network_changed`): the node's network is down, connection failures are not the
        engine's."""
        self.standing_of = standing_of
        """The standing of a proxied route, shared by every engine of the process (None for a direct one)."""
        self.lanes: dict[str, RouteLane] = {}
        """The engine's lanes, by route name, in the configuration's order."""
        for route in routes:
            self.lane(route)

    def lane(self, route: str) -> RouteLane:
        """The lane of ``route`` (made the first time it is asked for)."""
        found = self.lanes.get(route)
        if found is None:
            standing = self.standing_of(route) if self.standing_of is not None else None
            if standing is not None:
                standing.join(self.engine)
            found = self.lanes[route] = RouteLane(self, route, standing)
        return found

    def bench_remaining(self, now: float | None = None) -> float:
        """Seconds until the engine has a lane off the bench (0 when one is): the engine is benched only while every
        route it takes is."""
        return min(lane.bench_remaining(now) for lane in self.lanes.values())

    @property
    def benched(self) -> bool:
        return self.bench_remaining() > 0

    def network_changed(self, down: bool, now: float | None = None) -> bool:
        """The node's network verdict is ``down`` (or back), for every lane (:meth:`RouteLane.network_changed`);
        whether a bench was lifted on any."""
        if down == self.network_down:
            return False
        self.network_down = down
        lifted = [lane.network_changed(down, now) for lane in self.lanes.values()]
        return any(lifted)


class RouteLane:
    """One (engine, route) pair's pace, cooldown and probe (see the module docstring); what the whole engine
    shares (its pace multiplier, the node's network) it reads from ``engine``."""

    def __init__(self, engine: EngineState, route: str, standing: RouteStanding | None = None) -> None:
        self.owner = engine
        self.route = route
        self.standing = standing
        """The route's standing (a proxied route's), shared by every engine's lane on it; None for a direct one."""
        self.route_probe = False
        """Whether this lane's request in flight is the route's probe."""
        self.route_change: str | None = None
        """The route's transition the latest :meth:`record` made (``down``, ``recovered``), None if none."""
        self.engine = engine.engine
        self.floor = engine.floor
        self.jitter_ratio = engine.jitter_ratio
        self.cooldown = engine.cooldown
        self.clock = engine.clock
        self.rng = engine.rng
        self.last_sent: float | None = None
        self.failures = 0
        """Consecutive benching responses since the last success."""
        self.benched_until = 0.0
        self.needs_probe = False
        self.probe_in_flight = False
        self.connection_failures = 0
        """Of ``failures``, the connection-level ones at the end of the run (forgiven once the network is judged)."""
        self.network_bench = False
        """Whether the bench in force began with a connection-level failure."""
        self._jitter = self.rng.random()

    # ---- pace -----------------------------------------------------------------------------------------
    @property
    def base_gap(self) -> float:
        """The floor as it applies now (the configured floor times the pace multiplier)."""
        return self.floor * self.owner.pace_multiplier

    @property
    def gap(self) -> float:
        """The gap the next request keeps after the previous one: the floor plus this gap's jitter."""
        return self.base_gap * (1.0 + self.jitter_ratio * self._jitter)

    def mark_sent(self, at: float | None = None) -> None:
        """A request to the engine left at ``at`` (now by default): the next gap counts from the latest one."""
        at = self.clock() if at is None else at
        if self.last_sent is None or at > self.last_sent:
            self.last_sent = at

    # ---- cooldown -------------------------------------------------------------------------------------
    def bench_remaining(self, now: float | None = None) -> float:
        """Seconds until the bench ends (0 when the lane is not benched): its own, or its route's while it is down."""
        now = self.clock() if now is None else now
        route = self.standing.bench_remaining(now) if self.standing is not None else 0.0
        return max(0.0, self.benched_until - now, route)

    @property
    def route_down(self) -> bool:
        """Whether the lane's route is down (a proxied route failing on every engine that takes it)."""
        return self.standing is not None and self.standing.down

    @property
    def benched(self) -> bool:
        return self.bench_remaining() > 0

    def wait_time(self, now: float | None = None) -> float | None:
        """Seconds before the next request may start; None while a probe's outcome is awaited."""
        now = self.clock() if now is None else now
        if self.probe_in_flight:
            return None
        waits = [self.bench_remaining(now)]
        if self.standing is not None:
            route_wait = self.standing.wait_time(now)
            if route_wait is None:  # the route's probe is out (this lane's or another engine's)
                return None
            waits.append(route_wait)
        if self.last_sent is not None:
            waits.append(self.last_sent + self.gap - now)
        return max(0.0, *waits)

    def start_request(self, now: float | None = None) -> bool:
        """A request is let go now (its send time until the browser reports the real one); the gap after it
        gets its own jitter. True when it is the probe after a bench."""
        self.mark_sent(now)
        self._jitter = self.rng.random()
        if self.standing is not None and self.standing.start_request(now):
            self.route_probe = True
            return True
        if self.needs_probe and not self.probe_in_flight:
            self.probe_in_flight = True
            return True
        return False

    def forget_probe(self) -> None:
        """The probe's outcome never came (its request was lost): the next request is the probe."""
        self.probe_in_flight = False
        if self.route_probe and self.standing is not None:
            self.standing.forget_probe()
        self.route_probe = False

    def record(
        self,
        cls: ResponseClass,
        *,
        probe: bool = False,
        retry_after: float | None = None,
        now: float | None = None,
        connection_level: bool = False,
        reason: str = "",
    ) -> float | None:
        """Take a response's class; returns the bench it starts (seconds), or None when it starts none.

        A benching class benches the engine (longer each time in a row); ``ok`` resets the cooldown. An
        ``error`` leaves the cooldown as it is, except that a probe ending in one lets the next request probe.
        A ``connection_level`` failure (no name resolution, refused, no route) while the node's network is down
        benches it for the initial cooldown and counts for nothing in a row.

        On a proxied route (:attr:`standing`), a route's failure (``reason``: :func:`~topicstreams.engines.classify.
        is_route_failure`) is the route's, not the engine's: it tells the route's standing, benches the lane for the
        initial cooldown only (its topic fails over to another route meanwhile) and counts for nothing in a row;
        while the route is down its own bench holds the lane. Any other answer tells the standing the route works.
        :attr:`route_change` says what it made of the route."""
        now = self.clock() if now is None else now
        route_probe, self.route_probe = self.route_probe, False
        if probe and not route_probe:
            self.probe_in_flight = False
        self.route_change = None
        if self.standing is not None:
            if is_route_failure(reason):
                self.route_change = self.standing.failed(self.engine, reason, probe=route_probe, now=now)
                if self.standing.down:
                    return self.standing.bench_remaining(now) or None
                length = self.cooldown.length(1)
                self.benched_until = max(self.benched_until, now + length)
                return length
            self.route_change = self.standing.answered(self.engine, probe=route_probe)
        if cls in BENCHING_CLASSES:
            if connection_level and self.network_down:
                length = self.cooldown.length(1)
            else:
                self.failures += 1
                self.connection_failures = self.connection_failures + 1 if connection_level else 0
                length = self.cooldown.length(self.failures, retry_after)
            self.benched_until = max(self.benched_until, now + length)
            self.network_bench = connection_level
            self.needs_probe = True
            return length
        if cls is ResponseClass.OK:
            self.failures = self.connection_failures = 0
            self.needs_probe = False
        return None

    @property
    def network_down(self) -> bool:
        """The node's network is down (Health says so, :meth:`EngineState.network_changed`): connection failures
        are not the engine's."""
        return self.owner.network_down

    def network_changed(self, down: bool, now: float | None = None) -> bool:
        """The node's network verdict is ``down`` (or back). Either way the connection-level failures in a row so far
        were the network's, not the engine's: forgiven. Down: a bench they began is cut to the initial cooldown;
        back: it is lifted now. Returns whether a bench was lifted."""
        now = self.clock() if now is None else now
        self.failures = max(0, self.failures - self.connection_failures)
        self.connection_failures = 0
        if not self.network_bench:
            return False
        if down:
            self.benched_until = min(self.benched_until, now + self.cooldown.length(1))
            return False
        self.network_bench = False
        lifted = self.benched_until > now
        self.benched_until = min(self.benched_until, now)
        return lifted


def cooldown_policy(settings: Any) -> CooldownPolicy:
    """The cooldown of a crawl's settings (``scraper.cooldown``)."""
    cooldown = sections_from(settings).scraper.cooldown
    return CooldownPolicy(cooldown.initial, cooldown.factor, cooldown.max)


def crawl_routes(settings: Any) -> tuple[RouteSection, ...]:
    """The routes of the engine a crawl runs: ``TOPICSTREAMS_ROUTES`` (the add-on's: the configuration's routes that
    serve the engine, or the default route with the run's proxy), else those of the crawl's sections."""
    routes = settings.get("TOPICSTREAMS_ROUTES")
    if routes:
        return tuple(routes)
    return configured_routes(sections_from(settings))


def engine_state_from(crawler: Any, standing_of: Callable[[str], RouteStanding | None] | None = None) -> EngineState:
    """A new state of the engine a crawler runs (one engine spider per crawler), from its settings, with a lane per
    route it takes; the crawler's one is the runtime's (:meth:`topicstreams.crawl.runtime.Runtime.engine_state`).
    ``standing_of``: the standing of a route by name (the runtime's, shared by the process's engines)."""
    settings = crawler.settings
    return EngineState(
        crawler.spidercls.name,
        floor=settings.getfloat("TOPICSTREAMS_MIN_INTERVAL"),  # the engine's own (the add-on's), or a test's
        jitter_ratio=sections_from(settings).scraper.pacing.jitter_ratio,
        cooldown=cooldown_policy(settings),
        routes=[route.name for route in crawl_routes(settings)],
        standing_of=standing_of,
    )
