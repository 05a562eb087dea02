"""Health by route: each (engine, route) pair scored from the same model as the engine, and its ``route_status`` row.

The health extension (:mod:`topicstreams.extensions.watch`) owns one :class:`RouteScores` per engine crawler. Every
classified response of the engine goes to its route's own :class:`~topicstreams.health.band.EngineHealth` (windows,
score, band: the pair's), and adds to the pair's counters. The pair's row (CONTRACT "Routes": ``route_status``) says
its state — ``down`` while its route is down, ``cooling`` while the pair is benched, else ``ok`` — with its score,
band, cooling-until and latest failure; it is written when the pair's state changes and at least every heartbeat,
through the process's outbox, and reads ``stopped`` once the crawl closes. The pair's score takes no action: a
block cools the pair only (the pacing lane's business), and the engine's own health — the aggregate of its routes —
is the one whose bands act.

A proxied route's own failures (the proxy, the connection: :func:`~topicstreams.engines.classify.is_route_failure`)
are the pair's alone: the extension leaves them out of the engine's score (:func:`route_only`).
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Sequence
from datetime import timedelta
from typing import Any

from topicstreams.config.secrets import shown_proxy
from topicstreams.config.sections import RouteSection
from topicstreams.crawl.engine_state import EngineState
from topicstreams.crawl.signals import Classification
from topicstreams.engines.classify import STAT_KEYS, ResponseClass, is_route_failure
from topicstreams.engines.states import COOLING, ROUTE_DOWN, ROUTE_OK
from topicstreams.health.band import Assessment, EngineHealth, HealthSettings
from topicstreams.health.window import Sample
from topicstreams.storage.db import utcnow
from topicstreams.storage.outbox import Outbox
from topicstreams.storage.route_status import mark_routes_stopped, save_route_status


def route_only(classification: Classification, state: EngineState) -> bool:
    """Whether a response is its route's business alone: a proxied route's own failure (never the engine's)."""
    lane = state.lanes.get(classification.route)
    return lane is not None and lane.standing is not None and is_route_failure(classification.reason)


class RouteScores:
    """The pairs of one engine on this node (see the module docstring)."""

    def __init__(
        self,
        engine: str,
        node: str,
        settings: HealthSettings,
        routes: Sequence[RouteSection],
        state: EngineState,
        *,
        heartbeat: float,
    ) -> None:
        self.engine = engine
        self.node = node
        self.state = state
        self.heartbeat = heartbeat
        self.proxies = {route.name: shown_proxy(route.proxy) for route in routes}
        self.health = {route.name: EngineHealth(settings) for route in routes}
        self.latest: dict[str, Assessment] = {}
        self.counts: dict[str, Counter[str]] = {route.name: Counter() for route in routes}
        self.reasons: dict[str, str | None] = {}
        self.written: dict[str, str] = {}
        """Route -> the state its row was last written with."""
        self.saved_at = -float("inf")

    def observe(self, classification: Classification, sample: Sample) -> bool:
        """Count a response in its pair; whether the pair's row should be written now (its state changed)."""
        route = classification.route
        health = self.health.get(route)
        if health is None:
            return False
        counts = self.counts[route]
        counts["requests"] += 1
        counts[STAT_KEYS[classification.cls]] += 1
        if classification.bench is not None:
            counts["cooldowns"] += 1
        self.reasons[route] = None if classification.cls is ResponseClass.OK else classification.reason
        self.latest[route] = health.observe(sample)
        return self.pair_state(route) != self.written.get(route)

    def pair_state(self, route: str) -> str:
        lane = self.state.lanes.get(route)
        if lane is None:
            return ROUTE_OK
        if lane.route_down:
            return ROUTE_DOWN
        return COOLING if lane.bench_remaining() > 0 else ROUTE_OK

    def due(self) -> bool:
        """Whether the rows are due again (a heartbeat has passed, or a pair's state changed)."""
        if time.monotonic() - self.saved_at >= self.heartbeat:
            return True
        return any(self.pair_state(route) != self.written.get(route) for route in self.health)

    def save(self, outbox: Outbox) -> None:
        """Hand the pairs' rows to ``outbox`` (their counters since the last write added to the row's)."""
        engine, node, now = self.engine, self.node, utcnow()
        for route in self.health:
            state = self.pair_state(route)
            lane = self.state.lanes.get(route)
            remaining = lane.bench_remaining() if lane is not None else 0.0
            assessment = self.latest.get(route)
            values: dict[str, Any] = {
                "proxy": self.proxies[route],
                "state": state,
                "score": assessment.score if assessment is not None else None,
                "band": assessment.band if assessment is not None else "unknown",
                "cooling_until": now + timedelta(seconds=remaining) if state != ROUTE_OK and remaining else None,
                "reason": (lane.standing.reason if state == ROUTE_DOWN and lane and lane.standing else None)
                or self.reasons.get(route),
                "heartbeat_seconds": self.heartbeat,
                "updated_at": now,
            }
            counts, self.counts[route] = dict(self.counts[route]), Counter()
            self.written[route] = state

            def write(db: Any, route: str = route, values: dict[str, Any] = values, counts: dict = counts) -> None:
                save_route_status(db, node, route, engine, counts=counts, **values)

            outbox.put(f"the status of {engine} on route {route} of {node}", write)
        self.saved_at = time.monotonic()

    def stop(self, outbox: Outbox) -> None:
        """The crawl closed: the pairs' rows read ``stopped`` (after their last counts)."""
        self.save(outbox)
        engine, node = self.engine, self.node
        outbox.put(f"the stop of {engine}'s routes on {node}", lambda db: mark_routes_stopped(db, engine, node))
