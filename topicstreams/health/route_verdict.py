"""Route or site: whether an engine's trouble comes from one route (a node, its exit IP) or from the engine itself.
Pure.

Every node reaches the engines through its own exit IP. When an engine is in trouble — cooling, degraded or paused
(critical) — on some nodes while it is fine on others, the trouble is the route's: those nodes' exit IPs are the
ones the engine is turning against, and moving their load elsewhere helps. When it is in trouble on every node that
runs it, the engine is turning against the crawler itself, whatever the route: a slower crawl or a fix is the
remedy, not another node.

:func:`judge_routes` reads the health report's rows of every node and gives one :class:`RouteVerdict` per engine:

* ``route`` — in trouble on some nodes, fine on others (``nodes``: the troubled ones);
* ``site`` — in trouble on every node that runs it;
* ``ok`` — in trouble on none;
* ``one node`` — only one node runs it: there is nothing to compare (``nodes``: that node if it is in trouble).

Only rows of running crawls count: a stale or stopped row is the last state of a process that ended, not a
route in use. An engine with no fresh row on any node gets no verdict.

**Over (node, route) pairs.** A node with several routes (CONTRACT "Routes") reaches each engine through each of
them: when the report has the engine's rows per route on a node (:class:`PairOnNode`, the ``route_status`` rows),
each (node, route) pair is a place of its own and the node's engine row is not: the engine in trouble on some pairs
only is ``route`` (on one route of one node too), on every pair of every node ``site``, and ``one node`` means only
one pair runs it. A pair is in trouble when it cools or its own band is degraded or critical, or when the engine is
paused on its node (a pause holds every route). A pair whose route is ``down`` does not count (the route's proxy is
broken, which says nothing about the engine), nor does one no running crawl is behind. A node without such rows, or
with one route for the engine, is one place, judged by its engine row, as before: with one route per node the
verdict is the nodes' verdict.
:attr:`RouteVerdict.pairs` (``node/route``) then says where the engine is in trouble.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Protocol

from topicstreams import ENGINES
from topicstreams.engines.states import COOLING, GONE, PAUSED, ROUTE_DOWN
from topicstreams.health.score import CRITICAL, DEGRADED

OK, ROUTE, SITE, ONE_NODE = "ok", "route", "site", "one node"
VERDICTS = (OK, ROUTE, SITE, ONE_NODE)


class EngineOnNode(Protocol):
    """What the verdict reads of one engine on one node (a health report's row is one)."""

    engine: str
    node: str
    state: str | None
    band: str
    stale: bool


def in_trouble(row: EngineOnNode) -> bool:
    """Cooling, paused, degraded or critical."""
    return row.state in (COOLING, PAUSED) or row.band in (DEGRADED, CRITICAL)


@dataclass(frozen=True)
class PairOnNode:
    """One engine on one route of one node, as the verdict reads it (a ``route_status`` row read at the report's
    time)."""

    engine: str
    node: str
    route: str
    state: str
    """The pair's state at the report's time: ``ok``, ``cooling``, ``down``, ``stale`` or ``stopped``."""
    band: str


@dataclass(frozen=True)
class RouteVerdict:
    engine: str
    verdict: str
    nodes: tuple[str, ...]
    """The nodes where the engine is in trouble (on at least one of their routes), sorted."""
    fine: tuple[str, ...] = ()
    """The nodes where it is not, sorted."""
    pairs: tuple[str, ...] | None = None
    """Judged over (node, route) pairs: the pairs where it is in trouble, ``node/route``, sorted (a node without
    rows per route is named alone). None when every place was a node (no rows per route)."""
    fine_pairs: tuple[str, ...] = ()
    """Judged over pairs: the pairs where it is not."""

    def as_json(self) -> dict[str, Any]:
        """``{"engine", "verdict", "nodes"}``, and ``"pairs"`` when judged over (node, route) pairs."""
        answer: dict[str, Any] = {"engine": self.engine, "verdict": self.verdict, "nodes": list(self.nodes)}
        if self.pairs is not None:
            answer["pairs"] = list(self.pairs)
        return answer

    def describe(self) -> str:
        """One phrase: ``google route (node-a)`` (``google route (node-a/eu-1)`` over pairs), ``bing site``,
        ``yahoo ok``, ``brave one node``."""
        if self.verdict == ROUTE:
            return f"{self.engine} route ({', '.join(self.nodes if self.pairs is None else self.pairs)})"
        return f"{self.engine} {self.verdict}"


def pair_name(node: str, route: str | None) -> str:
    """``node/route`` (the node alone for a node judged without rows per route)."""
    return node if route is None else f"{node}/{route}"


def places_of(
    rows: Iterable[EngineOnNode], pairs: Iterable[PairOnNode]
) -> dict[str, dict[tuple[str, str | None], bool]]:
    """Engine -> its places, ``(node, route)`` (route None: the node judged by its engine row) -> in trouble."""
    fresh: dict[tuple[str, str], EngineOnNode] = {}
    for row in rows:
        if not (row.stale or row.state is None or row.state in GONE):
            fresh[(row.engine, row.node)] = row
    routed: dict[tuple[str, str], list[PairOnNode]] = {}
    for pair in pairs:
        routed.setdefault((pair.engine, pair.node), []).append(pair)
    places: dict[str, dict[tuple[str, str | None], bool]] = {}
    for (engine, node), row in fresh.items():
        mine = places.setdefault(engine, {})
        own = routed.get((engine, node), [])
        if len(own) < 2:  # one route on the node: the node is the place, as before routes (unless that route is down)
            if not (own and own[0].state == ROUTE_DOWN):
                mine[(node, None)] = in_trouble(row)
            continue
        for pair in routed[(engine, node)]:
            if pair.state in GONE or pair.state == ROUTE_DOWN:
                continue
            mine[(node, pair.route)] = row.state == PAUSED or pair.state == COOLING or pair.band in (DEGRADED, CRITICAL)
    return {engine: mine for engine, mine in places.items() if mine}


def judge_routes(rows: Iterable[EngineOnNode], pairs: Iterable[PairOnNode] = ()) -> list[RouteVerdict]:
    """One verdict per engine with a fresh row, in the order of :data:`topicstreams.ENGINES` (unknown names last);
    over (node, route) pairs where ``pairs`` has the engine's rows on a node (see the module)."""
    by_engine = places_of(rows, pairs)
    order = [name for name in ENGINES if name in by_engine] + sorted(set(by_engine) - set(ENGINES))
    verdicts = []
    for engine in order:
        places = by_engine[engine]
        troubled_nodes = {node for (node, _), trouble in places.items() if trouble}
        troubled = tuple(sorted(troubled_nodes))
        fine = tuple(sorted({node for node, _ in places} - troubled_nodes))
        trouble_count = sum(places.values())
        if len(places) == 1:
            verdict = ONE_NODE
        elif not trouble_count:
            verdict = OK
        elif trouble_count == len(places):
            verdict = SITE
        else:
            verdict = ROUTE
        if all(route is None for _, route in places):
            verdicts.append(RouteVerdict(engine, verdict, troubled, fine))
            continue
        names = {place: pair_name(*place) for place in places}
        verdicts.append(
            RouteVerdict(
                engine,
                verdict,
                troubled,
                fine,
                pairs=tuple(sorted(names[place] for place, trouble in places.items() if trouble)),
                fine_pairs=tuple(sorted(names[place] for place, trouble in places.items() if not trouble)),
            )
        )
    return verdicts
