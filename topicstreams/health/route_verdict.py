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
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Protocol

from topicstreams import ENGINES
from topicstreams.engines.states import COOLING, GONE, PAUSED
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
class RouteVerdict:
    engine: str
    verdict: str
    nodes: tuple[str, ...]
    """The nodes where the engine is in trouble, sorted."""
    fine: tuple[str, ...] = ()
    """The nodes where it is not, sorted."""

    def as_json(self) -> dict[str, Any]:
        return {"engine": self.engine, "verdict": self.verdict, "nodes": list(self.nodes)}

    def describe(self) -> str:
        """One phrase: ``google route (node-a)``, ``bing site``, ``yahoo ok``, ``brave one node``."""
        if self.verdict == ROUTE:
            return f"{self.engine} route ({', '.join(self.nodes)})"
        return f"{self.engine} {self.verdict}"


def judge_routes(rows: Iterable[EngineOnNode]) -> list[RouteVerdict]:
    """One verdict per engine with a fresh row, in the order of :data:`topicstreams.ENGINES` (unknown names last)."""
    by_engine: dict[str, dict[str, bool]] = {}
    for row in rows:
        if row.stale or row.state is None or row.state in GONE:
            continue
        by_engine.setdefault(row.engine, {})[row.node] = in_trouble(row)
    order = [name for name in ENGINES if name in by_engine] + sorted(set(by_engine) - set(ENGINES))
    verdicts = []
    for engine in order:
        nodes = by_engine[engine]
        troubled = tuple(sorted(node for node, trouble in nodes.items() if trouble))
        fine = tuple(sorted(node for node, trouble in nodes.items() if not trouble))
        if len(nodes) == 1:
            verdict = ONE_NODE
        elif not troubled:
            verdict = OK
        elif not fine:
            verdict = SITE
        else:
            verdict = ROUTE
        verdicts.append(RouteVerdict(engine, verdict, troubled, fine))
    return verdicts
