"""What ``scrapy routes check`` prints: one line per (route, engine), ``reachable`` with the HTTP status and the time,
or why not (:mod:`topicstreams.browser.route_reach`); then the routes none of whose requests got an answer (the
command exits 1 when there is one)."""

from __future__ import annotations

from collections.abc import Sequence

from topicstreams.browser.route_reach import Reach
from topicstreams.config.route_table import DIRECT
from topicstreams.reports.terminal_safe import terminal_text

CHECK_COLUMNS = ("route", "proxy", "engine", "result")


def unreachable_routes(reaches: Sequence[Reach]) -> list[str]:
    """The routes none of whose requests got an answer (``scrapy routes check`` exits 1 when there is one)."""
    routes: dict[str, bool] = {}
    for reach in reaches:
        routes[reach.route] = routes.get(reach.route, False) or reach.reachable
    return [route for route, reached in routes.items() if not reached]


def reach_text(reach: Reach) -> str:
    """``reachable (HTTP 200, 0.31 s)``, or why not (``unreachable: DNS: the name does not resolve
    (net::ERR_NAME_NOT_RESOLVED), 0.01 s``)."""
    if reach.reachable:
        return f"reachable (HTTP {reach.status}, {reach.seconds:.2f} s)"
    return f"unreachable: {terminal_text(reach.problem or '', 200)}, {reach.seconds:.2f} s"


def check_table(reaches: Sequence[Reach], unchecked: Sequence[str] = ()) -> str:
    """``scrapy routes check``'s table, one line per (route, engine), then one line per unreachable route and one
    per route with no enabled engine to check (``unchecked``), then the count."""
    lines = [list(CHECK_COLUMNS)]
    for reach in reaches:
        lines.append([terminal_text(reach.route, 32), terminal_text(reach.proxy), reach.engine, reach_text(reach)])
    widths = [max(len(line[column]) for line in lines) for column in range(len(CHECK_COLUMNS))]
    table = ["  ".join(cell.ljust(width) for cell, width in zip(line, widths, strict=True)).rstrip() for line in lines]
    if not reaches:
        table = []
    unreachable = unreachable_routes(reaches)
    direct = {reach.route for reach in reaches if reach.proxy == DIRECT}
    for route in unreachable:
        advice = (
            "check this machine's own connection (DNS, network, firewall): the route goes out directly"
            if route in direct
            else "check its proxy (address, port, credentials) and that this machine may reach it"
        )
        table.append(f"UNREACHABLE: {terminal_text(route, 32)} — none of its requests got an answer: {advice}")
    for route in unchecked:
        table.append(f"not checked: {terminal_text(route, 32)} — it serves none of the enabled engines")
    checked = len({reach.route for reach in reaches})
    table.append(f"{checked - len(unreachable)} of {checked} route(s) reachable")
    return "\n".join(table)
