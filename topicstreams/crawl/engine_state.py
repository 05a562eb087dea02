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
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from topicstreams.config.setting_names import sections_from
from topicstreams.engines.classify import BENCHING_CLASSES, ResponseClass


@dataclass(frozen=True)
class CooldownPolicy:
    initial: float
    factor: float
    max: float

    def length(self, failures: int, retry_after: float | None = None) -> float:
        """The bench after ``failures`` consecutive failures (1 for the first one)."""
        computed = min(self.max, self.initial * self.factor ** max(0, failures - 1))
        if retry_after is not None and retry_after > computed:
            return retry_after
        return computed


class EngineState:
    """One engine's pace, cooldown and probe (see the module docstring)."""

    def __init__(
        self,
        engine: str,
        *,
        floor: float,
        jitter_ratio: float,
        cooldown: CooldownPolicy,
        clock: Callable[[], float] = time.monotonic,
        rng: random.Random | None = None,
    ) -> None:
        self.engine = engine
        self.floor = floor
        self.jitter_ratio = jitter_ratio
        self.cooldown = cooldown
        self.clock = clock
        self.rng = rng or random.Random()
        self.pace_multiplier = 1.0
        """Set by Health: 1 normally, ``health.degrade_factor`` while the engine is degraded. It multiplies the
        floor here and the re-scrape interval in the spider's schedule."""
        self.paused = False
        """Set by Health: a paused engine schedules no topics (a person lifts the pause)."""
        self.held: str | None = None
        """Set by the store (:mod:`topicstreams.storage.store_hold`): why the engine takes no new topic now (its items
        would have nowhere to go), None when it may; lifted by the store itself. Apart from ``paused``: neither lifts
        the other."""
        self.last_sent: float | None = None
        self.failures = 0
        """Consecutive benching responses since the last success."""
        self.benched_until = 0.0
        self.needs_probe = False
        self.probe_in_flight = False
        self.network_down = False
        """Set by Health (:meth:`network_changed`): the node's network is down, connection failures are not the
        engine's."""
        self.connection_failures = 0
        """Of ``failures``, the connection-level ones at the end of the run (forgiven once the network is judged)."""
        self.network_bench = False
        """Whether the bench in force began with a connection-level failure."""
        self._jitter = self.rng.random()

    # ---- pace -----------------------------------------------------------------------------------------
    @property
    def base_gap(self) -> float:
        """The floor as it applies now (the configured floor times the pace multiplier)."""
        return self.floor * self.pace_multiplier

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
        """Seconds until the bench ends (0 when the engine is not benched)."""
        now = self.clock() if now is None else now
        return max(0.0, self.benched_until - now)

    @property
    def benched(self) -> bool:
        return self.bench_remaining() > 0

    def wait_time(self, now: float | None = None) -> float | None:
        """Seconds before the next request may start; None while a probe's outcome is awaited."""
        now = self.clock() if now is None else now
        if self.probe_in_flight:
            return None
        waits = [self.bench_remaining(now)]
        if self.last_sent is not None:
            waits.append(self.last_sent + self.gap - now)
        return max(0.0, *waits)

    def start_request(self, now: float | None = None) -> bool:
        """A request is let go now (its send time until the browser reports the real one); the gap after it
        gets its own jitter. True when it is the probe after a bench."""
        self.mark_sent(now)
        self._jitter = self.rng.random()
        if self.needs_probe and not self.probe_in_flight:
            self.probe_in_flight = True
            return True
        return False

    def forget_probe(self) -> None:
        """The probe's outcome never came (its request was lost): the next request is the probe."""
        self.probe_in_flight = False

    def record(
        self,
        cls: ResponseClass,
        *,
        probe: bool = False,
        retry_after: float | None = None,
        now: float | None = None,
        connection_level: bool = False,
    ) -> float | None:
        """Take a response's class; returns the bench it starts (seconds), or None when it starts none.

        A benching class benches the engine (longer each time in a row); ``ok`` resets the cooldown. An
        ``error`` leaves the cooldown as it is, except that a probe ending in one lets the next request probe.
        A ``connection_level`` failure (no name resolution, refused, no route) while the node's network is down
        benches it for the initial cooldown and counts for nothing in a row."""
        now = self.clock() if now is None else now
        if probe:
            self.probe_in_flight = False
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

    def network_changed(self, down: bool, now: float | None = None) -> bool:
        """The node's network verdict is ``down`` (or back). Either way the connection-level failures in a row so far
        were the network's, not the engine's: forgiven. Down: a bench they began is cut to the initial cooldown;
        back: it is lifted now. Returns whether a bench was lifted."""
        if down == self.network_down:
            return False
        now = self.clock() if now is None else now
        self.network_down = down
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


def engine_state_from(crawler: Any) -> EngineState:
    """A new state of the engine a crawler runs (one engine spider per crawler), from its settings; the crawler's
    one is the runtime's (:meth:`topicstreams.crawl.runtime.Runtime.engine_state`)."""
    settings = crawler.settings
    scraper = sections_from(settings).scraper
    cooldown = scraper.cooldown
    return EngineState(
        crawler.spidercls.name,
        floor=settings.getfloat("TOPICSTREAMS_MIN_INTERVAL"),  # the engine's own (the add-on's), or a test's
        jitter_ratio=scraper.pacing.jitter_ratio,
        cooldown=CooldownPolicy(cooldown.initial, cooldown.factor, cooldown.max),
    )
