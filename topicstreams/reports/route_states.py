"""The routes of each node as every reader shows them (CONTRACT "Routes"): the ``route_states`` of ``scrapy health
--json`` and ``/api/health``, the lines of ``scrapy routes``, the routes block of ``scrapy health``, and the facts the
verdict line and the route-vs-site verdict read — all from the ``route_status`` rows
(:mod:`topicstreams.storage.route_status`), read at one moment.

:func:`route_state_entries` is the JSON: one entry per (node, route), ordered by node then route::

    {"node": "node-a", "route": "eu-1", "state": "cooling",
     "engines": {"google": {"state": "cooling", "score": 62, "band": "degraded",
                            "cooling_until": "2026-12-04T14:52:00Z"}}}

The route's ``state`` is :func:`~topicstreams.storage.route_status.route_state` (``ok``, ``cooling``, ``down``,
``stale``, ``stopped``); each engine's is its pair's at the moment
(:meth:`~topicstreams.storage.route_status.RouteStatusRow.state_at`: a cooldown that has ended reads ``ok``), its
``score`` and ``band`` the pair's own health, ``cooling_until`` when its bench ends while it is benched (``cooling``,
or ``down``: the route's own bench, until its probe) else null. Engines are in the order of
:data:`topicstreams.ENGINES`. No rows: ``[]``. The proxy is not in the entries (the monitor shows its safe form).

:func:`routes_block` is the text of ``scrapy health``: for a node with more than one route, or its one route down,
one line per route after the table — name, state, and the engines cooling or down on it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from topicstreams import ENGINES
from topicstreams.engines.states import COOLING, GONE, ROUTE_DOWN
from topicstreams.health.route_verdict import PairOnNode
from topicstreams.reports.terminal_safe import terminal_text
from topicstreams.reports.utc_times import utc_text
from topicstreams.reports.verdict_line import clock
from topicstreams.storage.route_status import RouteStatusRow, route_state


def engine_key(engine: str) -> tuple[int, str]:
    """Engines in the order of :data:`topicstreams.ENGINES`, unknown names last."""
    return (ENGINES.index(engine) if engine in ENGINES else len(ENGINES), engine)


def routes_of(rows: Iterable[RouteStatusRow]) -> dict[tuple[str, str], list[RouteStatusRow]]:
    """(node, route) -> its rows, engines in the order of :data:`topicstreams.ENGINES`; keys sorted."""
    grouped: dict[tuple[str, str], list[RouteStatusRow]] = {}
    for row in rows:
        grouped.setdefault((row.node, row.route), []).append(row)
    return {key: sorted(grouped[key], key=lambda row: engine_key(row.engine)) for key in sorted(grouped)}


def benched_until(row: RouteStatusRow, state: str) -> datetime | None:
    """When the pair's bench ends, while it is benched (``cooling``, ``down``); else None."""
    return row.cooling_until if state in (COOLING, ROUTE_DOWN) else None


def engine_entry(row: RouteStatusRow, now: datetime) -> dict[str, Any]:
    """``{"state", "score", "band", "cooling_until"}`` of one pair."""
    state = row.state_at(now)
    return {
        "state": state,
        "score": row.score,
        "band": row.band,
        "cooling_until": utc_text(benched_until(row, state)),
    }


def route_state_entries(rows: list[RouteStatusRow], now: datetime) -> list[dict[str, Any]]:
    """``route_states``: one entry per (node, route) of ``rows`` at ``now`` (see the module)."""
    return [
        {
            "node": node,
            "route": route,
            "state": route_state(mine, now),
            "engines": {row.engine: engine_entry(row, now) for row in mine},
        }
        for (node, route), mine in routes_of(rows).items()
    ]


@dataclass(frozen=True)
class RouteOnNode:
    """One route of one node at a moment: what the verdict line reads."""

    node: str
    route: str
    state: str
    engines: tuple[str, ...]
    """The engines a running crawl has on it."""


def routes_on_nodes(rows: Iterable[RouteStatusRow], now: datetime) -> list[RouteOnNode]:
    """Each (node, route) of ``rows``, its state and live engines, by node then route."""
    return [
        RouteOnNode(
            node, route, route_state(mine, now), tuple(row.engine for row in mine if row.state_at(now) not in GONE)
        )
        for (node, route), mine in routes_of(rows).items()
    ]


def verdict_pairs(rows: Iterable[RouteStatusRow], now: datetime) -> list[PairOnNode]:
    """The rows as the route-vs-site verdict reads them (:func:`~topicstreams.health.route_verdict.judge_routes`)."""
    return [PairOnNode(row.engine, row.node, row.route, row.state_at(now), row.band) for row in rows]


def shows_routes(entries: Sequence[dict[str, Any]]) -> bool:
    """Whether a node's routes are worth a block: more than one, or its one route down (one route cooling is its
    engines cooling: the engines' table says it already)."""
    return len(entries) > 1 or any(entry["state"] == ROUTE_DOWN for entry in entries)


def route_line(entry: dict[str, Any], name: str, width: int) -> str:
    """``eu-1     down     google, bing down until 14:52 UTC`` (``ok`` alone when no engine is benched on it)."""
    benched = []
    for state in (ROUTE_DOWN, COOLING):
        engines = [engine for engine, pair in entry["engines"].items() if pair["state"] == state]
        if engines:
            untils = [pair["cooling_until"] for pair in entry["engines"].values() if pair["state"] == state]
            last = max((datetime.fromisoformat(until) for until in untils if until), default=None)
            until = f" until {clock(last)}" if last is not None else ""
            benched.append(f"{', '.join(engines)} {state}{until}")
    words = "; ".join(benched)
    return f"  {name.ljust(width)}  {entry['state'].ljust(7)}  {words}".rstrip()


def routes_block(entries: Sequence[dict[str, Any]], all_nodes: bool = False) -> list[str]:
    """The ``routes`` lines of ``scrapy health``: for each node worth it (:func:`shows_routes`), a heading and one
    line per route (``node/route`` with ``all_nodes``). Names go through
    :func:`~topicstreams.reports.terminal_safe.terminal_text`."""
    by_node: dict[str, list[dict[str, Any]]] = {}
    for entry in entries:
        by_node.setdefault(entry["node"], []).append(entry)
    shown = [entry for mine in by_node.values() if shows_routes(mine) for entry in mine]
    if not shown:
        return []
    names = [terminal_text(f"{entry['node']}/{entry['route']}" if all_nodes else entry["route"]) for entry in shown]
    width = max(len(name) for name in names)
    return ["routes:", *(route_line(entry, name, width) for entry, name in zip(shown, names, strict=True))]
