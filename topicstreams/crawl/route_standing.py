"""A proxied route's standing in this process: up, or ``down`` with a bench and a probe of its own.

A route fails as a route when its requests fail for a route reason (:func:`~topicstreams.engines.classify.
is_route_failure`: the proxy refuses, wants credentials, drops the tunnel, the connection times out) rather than with
an engine's answer. When the latest request of **every** engine that takes the route in this process failed so, the
route is ``down``: each engine's lane on it waits for the route's own cooldown (``scraper.cooldown``'s policy, longer
each time the probe fails), then one request goes alone on the route (its probe); any answer from an engine — even a
block, which is the engine's business — brings the route back. No engine is penalised for a route's failure: its
lanes are not benched for it beyond the route's bench, and Health leaves it out of the engine's score.

A ``direct`` route has no standing: a machine that cannot connect is the node's network
(:mod:`topicstreams.alerts.network`), judged as before routes existed.

Pure, on an injected clock; the process's runtime keeps one per route (:meth:`topicstreams.crawl.runtime.Runtime.
route_standing`), shared by the lanes of every engine crawler of the process.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import UTC, datetime

from topicstreams.crawl.cooldown import CooldownPolicy

DOWN, RECOVERED = "down", "recovered"
"""The route's transitions, as :meth:`RouteStanding.failed` and :meth:`RouteStanding.answered` return them."""


class RouteStanding:
    """One proxied route's standing (see the module docstring)."""

    def __init__(self, route: str, cooldown: CooldownPolicy, clock: Callable[[], float] = time.monotonic) -> None:
        self.route = route
        self.cooldown = cooldown
        self.clock = clock
        self.failing: dict[str, bool] = {}
        """Engine -> whether its latest request on the route failed for a route reason."""
        self.down = False
        self.down_since: datetime | None = None
        """When it went down (kept after it recovers until it goes down again: the recovery says how long)."""
        self.reason: str | None = None
        """The latest route failure's reason (kept while down, for the messages)."""
        self.failures = 0
        """Failed probes in a row (1 when it went down): the bench grows with them."""
        self.benched_until = 0.0
        self.probe_in_flight = False

    def join(self, engine: str) -> None:
        """``engine`` takes the route in this process (a lane of it is made)."""
        self.failing.setdefault(engine, False)

    def wait_time(self, now: float | None = None) -> float | None:
        """Seconds before a request may go on the route (0 when up); None while its probe is out."""
        if not self.down:
            return 0.0
        if self.probe_in_flight:
            return None
        now = self.clock() if now is None else now
        return max(0.0, self.benched_until - now)

    def start_request(self, now: float | None = None) -> bool:
        """A request goes on the route now: True when it is the route's probe (the route is down and its bench is
        over); nothing else goes on it until that probe's outcome is known."""
        now = self.clock() if now is None else now
        if self.down and not self.probe_in_flight and self.benched_until <= now:
            self.probe_in_flight = True
            return True
        return False

    def forget_probe(self) -> None:
        """The route's probe never came back: the next request is the probe."""
        self.probe_in_flight = False

    def failed(self, engine: str, reason: str, *, probe: bool = False, now: float | None = None) -> str | None:
        """``engine``'s request on the route failed for a route reason; :data:`DOWN` when the route turns down now."""
        now = self.clock() if now is None else now
        if probe:
            self.probe_in_flight = False
        self.failing[engine] = True
        self.reason = reason
        if self.down:
            if probe:
                self.failures += 1
                self.benched_until = max(self.benched_until, now + self.cooldown.length(self.failures))
            return None
        if all(self.failing.values()):
            self.down, self.down_since, self.failures = True, datetime.now(UTC), 1
            self.benched_until = now + self.cooldown.length(1)
            return DOWN
        return None

    def answered(self, engine: str, *, probe: bool = False) -> str | None:
        """``engine`` got an answer on the route (whatever its class); :data:`RECOVERED` when the route was down."""
        if probe:
            self.probe_in_flight = False
        self.failing[engine] = False
        if not self.down:
            return None
        self.down, self.failures, self.benched_until = False, 0, 0.0
        self.probe_in_flight = False
        return RECOVERED

    def bench_remaining(self, now: float | None = None) -> float:
        """Seconds until the route's bench ends (0 when up, or when its probe may go)."""
        if not self.down:
            return 0.0
        now = self.clock() if now is None else now
        return max(0.0, self.benched_until - now)
