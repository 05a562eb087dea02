"""What the web app says first about the crawl: the health report's one-line verdict, in the words ``scrapy health``
prints (:func:`topicstreams.reports.verdict_line.verdict_line`), how it reads (its level: the colour), each node whose
network is down, and whether any crawl is running at all.

``/monitor`` shows it at its top (:func:`verdict_of` its report); the feed in a line of its header and in its empty
state, from one read of the small ``engine_status`` and ``route_status`` tables (:func:`read_crawl_verdict`: the
report's rows, network, saturation and routes judged as :func:`~topicstreams.reports.health_report.build_report`
judges them, without its other reads), so that the feed page stays as fast as it was. A node whose every route is
down reads as a network down (:data:`DOWN`); a route down with others carrying its engines is a :data:`WARNING_LEVEL`.

The feed's three cases (:attr:`CrawlVerdict.activity`): ``network-down`` (a node's every engine fails to connect:
nothing new can come), ``crawling`` (some engine has a running crawl behind it: new events come by themselves) and
``idle`` (no crawl is running: its rows are ``stopped`` or ``stale``, or there are none — a person must start one).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import Engine

from topicstreams.engines.states import COOLING, GONE, PAUSED, ROUTE_DOWN, RUNNING, STALE
from topicstreams.health.saturation import SaturationPolicy, judge_saturation, network_of
from topicstreams.health.score import CRITICAL, DEGRADED
from topicstreams.reports.health_report import HealthReport, report_rows
from topicstreams.reports.route_states import RouteOnNode, routes_on_nodes
from topicstreams.reports.verdict_line import clock, every_route_down, live_routes, verdict_line
from topicstreams.storage.engine_status import read_statuses
from topicstreams.storage.route_status import read_route_statuses
from topicstreams.web.formats import Moment

DOWN, CRITICAL_LEVEL, WARNING_LEVEL, OK_LEVEL, IDLE = "down", "critical", "warning", "ok", "idle"
"""How a verdict reads: the network is down; a person must act (an engine paused or critical); something to watch
(saturation, a crawl gone silent, an engine degraded or cooling); all well; no crawl running."""

NETWORK_DOWN, CRAWLING, NOT_CRAWLING = "network-down", "crawling", "idle"
"""The feed's cases (:attr:`CrawlVerdict.activity`)."""


@dataclass(frozen=True)
class NetworkDown:
    """A node whose every running engine fails to connect."""

    node: str
    since: Moment | None
    clock: str
    """Since when, ``14:44 UTC`` (the verdict line's words)."""


@dataclass(frozen=True)
class LiveEngine:
    """An engine a running crawl is behind, and its state (``running``, ``cooling``, ``paused``)."""

    engine: str
    node: str
    state: str


@dataclass(frozen=True)
class CrawlVerdict:
    text: str
    """The one line (:func:`~topicstreams.reports.verdict_line.verdict_line`)."""
    level: str
    """:data:`DOWN`, :data:`CRITICAL_LEVEL`, :data:`WARNING_LEVEL`, :data:`OK_LEVEL` or :data:`IDLE`."""
    down: list[NetworkDown]
    live: list[LiveEngine]
    several_nodes: bool
    """Whether the live engines run on more than one node (the feed then names the node of each)."""

    @property
    def activity(self) -> str:
        """:data:`NETWORK_DOWN`, :data:`CRAWLING` or :data:`NOT_CRAWLING`."""
        if self.down:
            return NETWORK_DOWN
        return CRAWLING if self.live else NOT_CRAWLING


def routes_level(routes: list[RouteOnNode]) -> str | None:
    """:data:`DOWN` when every live route of a node is down, :data:`WARNING_LEVEL` when some route is, else None."""
    if every_route_down(routes):
        return DOWN
    live = live_routes(routes).values()
    return WARNING_LEVEL if any(route.state == ROUTE_DOWN for mine in live for route in mine) else None


def level_of(report: HealthReport, routes: list[RouteOnNode] | None = None) -> str:
    """How the report's verdict reads, in the verdict line's order of cases (a route down is at least a warning)."""
    by_routes = routes_level(routes or [])
    if by_routes == DOWN or any(state.down for state in report.network.values()):
        return DOWN
    level = engines_level(report)
    return WARNING_LEVEL if by_routes == WARNING_LEVEL and level in (OK_LEVEL, IDLE) else level


def engines_level(report: HealthReport) -> str:
    """How the engines' part of the verdict reads (the network not down)."""
    rows = [row for row in report.engines if row.state is not None]
    live = [row for row in rows if row.state not in GONE]
    if any(row.state == PAUSED or (row.band == CRITICAL and row.state in (RUNNING, COOLING)) for row in live):
        return CRITICAL_LEVEL
    if (
        any(verdict.suspected for verdict in report.saturation.values())
        or any(row.state == STALE for row in rows)
        or any(row.band == DEGRADED or row.state == COOLING for row in live)
    ):
        return WARNING_LEVEL
    return OK_LEVEL if live else IDLE


def verdict_of(report: HealthReport, now: datetime) -> CrawlVerdict:
    """The verdict of a health report of every node (its routes from its ``route_status`` rows)."""
    down = [
        NetworkDown(node, Moment.of(state.since, now) if state.since else None, clock(state.since))
        for node, state in sorted(report.network.items())
        if state.down
    ]
    live = [
        LiveEngine(row.engine, row.node, row.state)
        for row in report.engines
        if row.state is not None and row.state not in GONE
    ]
    routes = routes_on_nodes(report.route_rows, now)
    return CrawlVerdict(
        verdict_line(report, routes=routes),
        level_of(report, routes),
        down,
        live,
        len({each.node for each in live}) > 1,
    )


def cheap_report(
    statuses: Iterable, node: str, policy: SaturationPolicy, now: datetime, route_rows: Iterable = ()
) -> HealthReport:
    """The health report of every node from its status rows alone: rows, network, saturation, routes."""
    statuses = list(statuses)
    rows = report_rows(statuses, node, (), now, all_nodes=True)
    nodes = {row.node for row in rows}
    of = {each: [status for status in statuses if status.node == each] for each in nodes}
    saturation = {each: judge_saturation(of[each], now, policy) for each in nodes}
    network = {each: network_of(of[each], now) for each in nodes}
    return HealthReport(node, rows, saturation, all_nodes=True, network=network, at=now, route_rows=list(route_rows))


def read_crawl_verdict(db: Engine, node: str, policy: SaturationPolicy, now: datetime) -> CrawlVerdict:
    """The verdict from one read of ``engine_status`` and one of ``route_status`` (the feed's)."""
    return verdict_of(cheap_report(read_statuses(db), node, policy, now, read_route_statuses(db)), now)
