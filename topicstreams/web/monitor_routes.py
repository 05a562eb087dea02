"""The monitor's engine × route matrix of a node (CONTRACT "Routes"): one row per route, one column per engine, each
cell the pair's state at the moment (``ok``, ``cooling`` until when, ``down`` until its probe, ``stale``,
``stopped``), its score and band; the row's header the route's own state
(:func:`~topicstreams.storage.route_status.route_state`) and its exit as it may be shown. Shown only for a node with
``route_status`` rows.

The exit is read from the row's ``proxy`` column, which the crawl writes without credentials; the page takes no
chance with it all the same (:func:`shown_proxy`: scheme, host and port only, never a user name or a password), nor
with a pair's reason (:func:`shown_reason`: a URL's user part dropped, what else looks like a secret masked), and
the template escapes both.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from topicstreams import ENGINES
from topicstreams.config.secrets import shown_proxy as proxy_shown
from topicstreams.config.secrets import shown_reason as reason_shown
from topicstreams.engines.states import COOLING, GONE, ROUTE_DOWN
from topicstreams.reports.route_states import benched_until, routes_of
from topicstreams.storage.route_status import RouteStatusRow, route_state
from topicstreams.web.formats import Moment

DIRECT = "direct"


def shown_reason(reason: str) -> str:
    """A pair's reason as the page shows it (:func:`topicstreams.config.secrets.shown_reason`)."""
    return reason_shown(reason)


def shown_proxy(proxy: str | None) -> str:
    """A route's exit as the page shows it, whatever the stored text holds (:func:`topicstreams.config.secrets.
    shown_proxy`: ``direct``, or ``scheme://host:port``; ``***`` for text that is not such a URL)."""
    return proxy_shown(proxy or DIRECT)


@dataclass(frozen=True)
class PairCell:
    """One engine on one route, as its cell shows it."""

    engine: str
    state: str
    score: str
    band: str
    until: Moment | None
    """When its bench ends (``cooling``, ``down``)."""
    reason: str | None
    """Its latest failure, masked (while cooling or down)."""

    @property
    def gone(self) -> bool:
        return self.state in GONE


@dataclass(frozen=True)
class RouteLine:
    """One route of a node: its header and one cell per engine of the matrix (None: the route does not serve it)."""

    name: str
    state: str
    proxy: str
    cells: list[PairCell | None]


@dataclass(frozen=True)
class RouteMatrix:
    engines: list[str]
    routes: list[RouteLine]


def pair_cell(row: RouteStatusRow, now: datetime) -> PairCell:
    state = row.state_at(now)
    until = benched_until(row, state)
    benched = state in (COOLING, ROUTE_DOWN)
    return PairCell(
        engine=row.engine,
        state=state,
        score="-" if row.score is None else str(row.score),
        band=row.band or "unknown",
        until=Moment.of(until, now) if until is not None else None,
        reason=shown_reason(row.reason) if benched and row.reason else None,
    )


def route_matrices(rows: Iterable[RouteStatusRow], now: datetime) -> dict[str, RouteMatrix]:
    """Node -> its matrix, for each node with ``route_status`` rows; routes by name, engines in the order of
    :data:`topicstreams.ENGINES`."""
    by_node: dict[str, dict[str, list[RouteStatusRow]]] = {}
    for (node, route), mine in routes_of(rows).items():
        by_node.setdefault(node, {})[route] = mine
    matrices = {}
    for node, routes in by_node.items():
        names = {row.engine for mine in routes.values() for row in mine}
        engines = [name for name in ENGINES if name in names] + sorted(names - set(ENGINES))
        lines = []
        for route, mine in routes.items():
            cells = {row.engine: pair_cell(row, now) for row in mine}
            proxy = next((row.proxy for row in mine if row.proxy), DIRECT)
            lines.append(
                RouteLine(route, route_state(mine, now), shown_proxy(proxy), [cells.get(engine) for engine in engines])
            )
        matrices[node] = RouteMatrix(engines, lines)
    return matrices
