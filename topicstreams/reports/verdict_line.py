"""The one-line verdict of a health report: the most specific true thing to say about the nodes, first.

``scrapy health`` prints it above its table, ``/monitor`` at the top of the page, the feed in its header. In order,
the first that holds is said (several nodes or engines in the same case are named together):

1. a node's network is down: ``Network down since 14:44 UTC — no engine reachable`` (``… on node-a …`` when the
   report covers several nodes);
2. a node's routes (CONTRACT "Routes"; ``routes``, from the ``route_status`` rows) are down: every one of them,
   ``Every route down on node-a (eu-1, us-1) — no engine reachable: check their proxies``; some,
   ``route eu-1 down on node-a — its engines go on through 2 other routes`` (``… — google has no other route``);
   a node whose network is down says only that (its routes fail because its network does);
3. an engine is paused (a person must resume it): ``google paused on node-a: challenge``;
4. an engine is critical: ``bing critical on node-a: hard_block``;
5. a node's exit IP is suspected saturated: ``Exit IP saturation suspected on node-a: bing, google cooling``;
6. an engine's crawl went silent: ``google stale on node-a: no word from its crawl since 14:50 UTC`` (the engines of
   a node together: ``google, bing stale on node-a: no word from their crawl since …``);
7. an engine is degraded or cooling: ``bing degraded on node-a: soft_block``, ``brave cooling on node-a until
   14:52 UTC``;
8. no engine is crawling: ``No crawl running: the last one stopped at 14:50 UTC`` (``… no crawl has run`` when
   no engine has a row);
9. else ``All 4 engines healthy on 1 node`` (``Both engines …``, ``google healthy …``) — or, while some have too
   few requests to be judged, ``4 engines running on 1 node; 2 of them not judged yet (too few requests)``.

:func:`exit_status` is the same judgement as monitoring plugins read it (``scrapy health``'s exit status).

Pure: it reads the report's rows and verdicts (:class:`Verdicts`); node ids pass through ``shown`` (a terminal's or a
page's escaping is the caller's).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Protocol

from topicstreams.engines.states import COOLING, GONE, PAUSED, ROUTE_DOWN, RUNNING, STALE
from topicstreams.health.network_state import NetworkState
from topicstreams.health.saturation import Saturation
from topicstreams.health.score import CRITICAL, DEGRADED, UNKNOWN


class EngineRow(Protocol):
    """What the line reads of an engine on a node (a health report's row is one)."""

    @property
    def node(self) -> str: ...
    @property
    def engine(self) -> str: ...
    @property
    def state(self) -> str | None: ...
    @property
    def band(self) -> str: ...
    @property
    def reasons(self) -> tuple[str, ...]: ...
    @property
    def cooling_until(self) -> datetime | None: ...
    @property
    def updated_at(self) -> datetime | None: ...


class RouteRow(Protocol):
    """What the line reads of a route on a node
    (:class:`topicstreams.reports.route_states.RouteOnNode` is one)."""

    @property
    def node(self) -> str: ...
    @property
    def route(self) -> str: ...
    @property
    def state(self) -> str: ...
    @property
    def engines(self) -> tuple[str, ...]: ...


EXIT_OK, EXIT_DEGRADED, EXIT_CRITICAL, EXIT_UNKNOWN = 0, 1, 2, 3
"""``scrapy health``'s exit statuses, as monitoring plugins read them: OK, WARNING, CRITICAL, UNKNOWN."""


class Verdicts(Protocol):
    """What the line reads of a health report (:class:`topicstreams.reports.health_report.HealthReport` is one)."""

    @property
    def engines(self) -> Sequence[EngineRow]: ...
    @property
    def network(self) -> Mapping[str, NetworkState]: ...
    @property
    def saturation(self) -> Mapping[str, Saturation]: ...
    @property
    def all_nodes(self) -> bool: ...


def clock(moment: datetime | None) -> str:
    """``14:44 UTC`` (a naive moment is taken as UTC)."""
    if moment is None:
        return "an unknown time"
    moment = moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)
    return moment.strftime("%H:%M UTC")


def plural(count: int, word: str) -> str:
    """``1 engine``, ``4 engines``."""
    return f"{count} {word}{'' if count == 1 else 's'}"


def verdict_line(report: Verdicts, shown: Callable[[str], str] = str, routes: Sequence[RouteRow] = ()) -> str:
    """The report's one-line verdict (see the module); ``routes``: each route of each node, when it has them."""
    several = report.all_nodes or len({row.node for row in report.engines}) > 1

    def where(node: str) -> str:
        return f" on {shown(node)}" if several else ""

    down = sorted((node, state) for node, state in report.network.items() if state.down)
    if down:
        return "; ".join(
            f"Network down{where(node)} since {clock(state.since)} — no engine reachable" for node, state in down
        )
    lines = routes_down(routes, where, shown)
    if lines:
        return "; ".join(lines)
    rows = [row for row in report.engines if row.state is not None]
    live = [row for row in rows if row.state not in GONE]
    for case, pick in (
        ("paused", lambda row: row.state == PAUSED),
        ("critical", lambda row: row.band == CRITICAL and row.state in (RUNNING, COOLING)),
    ):
        picked = [row for row in live if pick(row)]
        if picked:
            return "; ".join(f"{row.engine} {case}{where(row.node)}{reasons(row)}" for row in picked)
    saturated = sorted((node, verdict) for node, verdict in report.saturation.items() if verdict.suspected)
    if saturated:
        return "; ".join(
            f"Exit IP saturation suspected{where(node)}: {', '.join(verdict.cooling)} cooling"
            for node, verdict in saturated
        )
    stale: dict[str, list[EngineRow]] = {}
    for row in rows:
        if row.state == STALE:
            stale.setdefault(row.node, []).append(row)
    if stale:
        return "; ".join(silent(group, where(node)) for node, group in stale.items())
    troubled = [row for row in live if row.band == DEGRADED or row.state == COOLING]
    if troubled:
        return "; ".join(trouble(row, where(row.node)) for row in troubled)
    if not live:
        if not rows:
            return "No crawl running: no crawl has run on this database yet"
        last = max((row.updated_at for row in rows if row.updated_at is not None), default=None)
        return f"No crawl running: the last one stopped at {clock(last)}"
    return healthy(live)


def live_routes(routes: Sequence[RouteRow]) -> dict[str, list[RouteRow]]:
    """Node -> its routes a running crawl is behind (not ``stale`` nor ``stopped``), nodes sorted."""
    by_node: dict[str, list[RouteRow]] = {}
    for route in routes:
        if route.state not in GONE:
            by_node.setdefault(route.node, []).append(route)
    return dict(sorted(by_node.items()))


def every_route_down(routes: Sequence[RouteRow]) -> bool:
    """Whether some node has live routes and every one of them is down: nothing leaves that node."""
    return any(all(route.state == ROUTE_DOWN for route in live) for live in live_routes(routes).values())


def routes_down(routes: Sequence[RouteRow], where: Callable[[str], str], shown: Callable[[str], str]) -> list[str]:
    """A phrase per node whose every live route is down, else per route down (see the module); [] when none is."""
    lines = []
    for node, live in live_routes(routes).items():
        down = [route for route in live if route.state == ROUTE_DOWN]
        if not down:
            continue
        if len(down) == len(live):
            names = ", ".join(shown(route.route) for route in down)
            lines.append(f"Every route down{where(node)} ({names}) — no engine reachable: check their proxies")
            continue
        carrying = [route for route in live if route.state != ROUTE_DOWN]
        for route in down:
            lines.append(f"route {shown(route.route)} down{where(node)} — {carried_on(route, carrying)}")
    return lines


def carried_on(down: RouteRow, carrying: Sequence[RouteRow]) -> str:
    """``its engines go on through 2 other routes``, or the engines of ``down`` no other route carries: ``google has
    no other route``."""
    stranded = [engine for engine in down.engines if not any(engine in route.engines for route in carrying)]
    if stranded:
        return f"{', '.join(stranded)} {'has' if len(stranded) == 1 else 'have'} no other route"
    others = sum(1 for route in carrying if set(route.engines) & set(down.engines))
    return f"its engines go on through {plural(others, 'other route')}"


def silent(group: Sequence[EngineRow], where: str) -> str:
    """``google stale on node-a: no word from its crawl since 14:50 UTC`` (``google, bing stale …: no word from their
    crawl since`` the newest word of any of them)."""
    last = max((row.updated_at for row in group if row.updated_at is not None), default=None)
    whose = "its" if len(group) == 1 else "their"
    return f"{', '.join(row.engine for row in group)} stale{where}: no word from {whose} crawl since {clock(last)}"


def reasons(row: EngineRow) -> str:
    return f": {', '.join(row.reasons)}" if row.reasons else ""


def trouble(row: EngineRow, where: str) -> str:
    if row.state == COOLING:
        until = f" until {clock(row.cooling_until)}" if row.cooling_until is not None else ""
        return f"{row.engine} cooling{where}{until}{reasons(row)}"
    return f"{row.engine} degraded{where}{reasons(row)}"


def healthy(live: Sequence[EngineRow]) -> str:
    """Every live engine running and none in trouble: healthy, or some not judged yet."""
    nodes = plural(len({row.node for row in live}), "node")
    unjudged = sum(1 for row in live if row.band == UNKNOWN)
    if unjudged == 0:
        if len(live) == 1:
            return f"{live[0].engine} healthy on {nodes}"
        every = "Both engines" if len(live) == 2 else f"All {len(live)} engines"
        return f"{every} healthy on {nodes}"
    if unjudged == len(live):
        return f"{plural(len(live), 'engine')} running on {nodes}; none judged yet (too few requests)"
    return f"{plural(len(live), 'engine')} running on {nodes}; {unjudged} of them not judged yet (too few requests)"


def exit_status(
    reports: Iterable[EngineRow], network: Mapping[str, NetworkState] | None = None, routes: Sequence[RouteRow] = ()
) -> int:
    """2 when an engine is ``critical`` or ``paused`` or a node's network is down — or every route of a node that
    has live routes is down (its way out is, whatever its own network says); else 3 when an engine is ``stale`` (its
    process went silent: its health is not known); else 1 when one is ``degraded``; else 0 (``stopped`` and
    ``unknown`` engines count as 0)."""
    if any(state.down for state in (network or {}).values()) or every_route_down(routes):
        return EXIT_CRITICAL
    worst = EXIT_OK
    for report in reports:
        if report.state == PAUSED or (report.band == CRITICAL and report.state not in GONE):
            return EXIT_CRITICAL
        if report.state == STALE:
            worst = EXIT_UNKNOWN
        elif report.band == DEGRADED and report.state not in GONE and worst != EXIT_UNKNOWN:
            worst = EXIT_DEGRADED
    return worst
