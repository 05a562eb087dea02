"""The routes report: each route of one node with its proxy as it may be shown, its own state and, per engine, the
pair's state, score and cooldown — what ``scrapy routes`` prints.

Each route's entry is the ``route_states`` entry of ``scrapy health --json`` and ``/api/health``
(:func:`topicstreams.reports.route_states.route_state_entries`, ``{"node", "route", "state", "engines": {ENGINE:
{"state", "score", "band", "cooling_until"}}}``), built from the same ``route_status`` rows. :func:`build_routes_report`
adds what only ``scrapy routes`` shows: the node's configured routes first (in the configuration's order, with the
enabled engines each serves, even those no crawl has used yet: their ``state`` is null, *not crawled yet*), then any
other route with rows on the node; the proxy (:func:`~topicstreams.config.secrets.shown_proxy`: ``direct`` or
``scheme://host:port``, never credentials); each pair's latest failure (``reason``, credentials masked).
:meth:`RoutesReport.as_json` is ``{"routes": [ENTRY + {"proxy", "configured"}]}`` with each engine's ``"reason"``;
:meth:`RoutesReport.as_table` the table, and under it what each unusual state means and what to do.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import Engine

from topicstreams.config.route_table import DEFAULT_ROUTE
from topicstreams.config.secrets import shown_proxy, shown_reason
from topicstreams.config.sections import RouteSection
from topicstreams.engines.states import COOLING, ROUTE_DOWN, STALE, STOPPED
from topicstreams.health.score import UNKNOWN
from topicstreams.reports.route_states import engine_key, route_state_entries
from topicstreams.reports.terminal_safe import terminal_text
from topicstreams.storage.route_status import RouteStatusRow, read_route_statuses

COLUMNS = ("route", "proxy", "state", "engines")

NO_VALUE = "-"
"""What the table prints for a value that is not known (as the health report does)."""

NOT_CRAWLED = "not crawled yet"
"""What the table reads for a route (or an engine on it) that no crawl has used yet: it has no row."""

NO_ROUTES = "no routes: none is configured and the database has no route status for this node"


def no_row() -> dict[str, Any]:
    """An engine's member where the pair has no row yet (no crawl has taken the engine on the route): all null."""
    return {"state": None, "score": None, "band": UNKNOWN, "cooling_until": None}


def not_crawled(node: str, route: str) -> dict[str, Any]:
    """The entry of a route that no crawl on ``node`` has used yet: ``state`` null, no engine yet."""
    return {"node": node, "route": route, "state": None, "engines": {}}


@dataclass(frozen=True)
class RouteReport:
    """One route of the node as ``scrapy routes`` shows it."""

    entry: dict[str, Any]
    """Its ``route_states`` entry (``state`` None: not crawled yet), with :func:`no_row` for each enabled engine it
    serves that has no row."""
    proxy: str
    """As it may be shown: ``direct``, ``scheme://host:port``, or ``one of N proxies`` (the default route of an
    ``anti_detection.proxy`` with several, before a crawl has drawn one)."""
    configured: bool
    reasons: dict[str, str] = field(default_factory=dict)
    """Per engine, the pair's latest failure (masked), where it has one."""

    @property
    def name(self) -> str:
        return str(self.entry["route"])

    @property
    def state(self) -> str | None:
        return self.entry["state"]  # type: ignore[no-any-return]

    def as_json(self) -> dict[str, Any]:
        engines = {
            engine: {**values, "reason": self.reasons.get(engine)} for engine, values in self.entry["engines"].items()
        }
        return {**self.entry, "engines": engines, "proxy": self.proxy, "configured": self.configured}


def configured_proxy(route: RouteSection, proxies: int) -> str:
    """A configured route's proxy as shown, before any row says which one a crawl took."""
    if route.name == DEFAULT_ROUTE and proxies > 1:
        return f"one of {proxies} proxies"
    return shown_proxy(route.proxy)


def route_report(
    node: str,
    name: str,
    rows: Sequence[RouteStatusRow],
    now: datetime,
    configured: RouteSection | None,
    enabled: Sequence[str],
    proxies: int = 1,
) -> RouteReport:
    """The report of route ``name`` on ``node`` from its rows there and its configuration (None: not configured)."""
    entry = route_state_entries(list(rows), now)[0] if rows else not_crawled(node, name)
    if configured is not None:
        missing = [engine for engine in enabled if configured.serves(engine) and engine not in entry["engines"]]
        engines = {**entry["engines"], **{engine: no_row() for engine in missing}}
        entry["engines"] = {engine: engines[engine] for engine in sorted(engines, key=engine_key)}
    newest = max(rows, key=lambda row: row.updated_at, default=None)
    if newest is not None:
        proxy = shown_proxy(newest.proxy)  # stored shown already; whatever it holds, never more than this
    else:
        proxy = configured_proxy(configured, proxies) if configured is not None else NO_VALUE
    return RouteReport(
        entry=entry,
        proxy=proxy,
        configured=configured is not None,
        reasons={row.engine: shown_reason(row.reason) for row in rows if row.reason},
    )


def engine_text(engine: str, values: Mapping[str, Any]) -> str:
    """``google ok 92``, ``bing cooling 41 until 2026-12-04T10:05:00Z``, ``yahoo not crawled yet``."""
    if values["state"] is None:
        return f"{terminal_text(engine, 24)} {NOT_CRAWLED}"
    parts = [terminal_text(engine, 24), terminal_text(values["state"], 24)]
    if values["score"] is not None:
        parts.append(str(values["score"]))
    if values["cooling_until"]:
        parts.append(f"until {values['cooling_until']}")
    return " ".join(parts)


def engines_text(engines: Mapping[str, Mapping[str, Any]], crawled: bool = True) -> str:
    """The table's engines cell: each engine's :func:`engine_text`; only their names on a route not crawled yet."""
    if not crawled:
        return ", ".join(terminal_text(engine, 24) for engine in engines) or NO_VALUE
    return ", ".join(engine_text(engine, values) for engine, values in engines.items()) or NO_VALUE


@dataclass(frozen=True)
class RoutesReport:
    """The routes of ``node`` at ``now``."""

    node: str
    routes: list[RouteReport]
    now: datetime

    def as_json(self) -> dict[str, Any]:
        """The object ``scrapy routes --json`` prints."""
        return {"routes": [route.as_json() for route in self.routes]}

    def as_table(self) -> str:
        """A header, one line per route, columns left-aligned two spaces apart; then a line for each route that is
        down, cooling on some engine, stale or not crawled yet, saying what it means and what to do."""
        if not self.routes:
            return NO_ROUTES
        lines = [list(COLUMNS)]
        for route in self.routes:
            state = route.state
            lines.append(
                [
                    terminal_text(route.name, 32),
                    terminal_text(route.proxy),
                    NOT_CRAWLED if state is None else (state.upper() if state in (ROUTE_DOWN, STALE) else state),
                    engines_text(route.entry["engines"], crawled=state is not None),
                ]
            )
        widths = [max(len(line[column]) for line in lines) for column in range(len(COLUMNS))]
        table = [
            "  ".join(cell.ljust(width) for cell, width in zip(line, widths, strict=True)).rstrip() for line in lines
        ]
        return "\n".join([*table, *self.notes()])

    def notes(self) -> list[str]:
        """What the table's unusual states mean, one line each."""
        notes: list[str] = []
        for route in self.routes:
            name, engines = terminal_text(route.name, 32), route.entry["engines"]
            if route.state == ROUTE_DOWN:
                reason = next((route.reasons[engine] for engine in engines if engine in route.reasons), None)
                notes.append(
                    f"DOWN: {name} ({terminal_text(route.proxy)}) fails on every engine it serves"
                    + (f" ({terminal_text(reason, 160)})" if reason else "")
                    + ": its proxy or the way to it, not the engines; they go on through their other routes "
                    "while its probe retries it. Check the proxy (`scrapy routes check` tries it now)"
                )
            cooling = [engine for engine, values in engines.items() if values["state"] == COOLING]
            if cooling and route.state != ROUTE_DOWN:
                notes.append(
                    f"cooling: {', '.join(terminal_text(engine, 24) for engine in cooling)} on {name} — a block on "
                    "this route only: the engine goes on through its other routes, and this pair resumes with a "
                    "probe when its cooldown ends"
                )
            if route.state == STALE:
                notes.append(
                    f"STALE: {name} — no crawl has written its status for three heartbeats and none closed "
                    "cleanly: the crawl died or cannot reach the database"
                )
            if route.state is None and route.configured:
                notes.append(f"{NOT_CRAWLED}: {name} — configured, but no crawl on this node has used it yet")
        live = [route for route in self.routes if route.state not in (None, STALE, STOPPED)]
        if live and all(route.state == ROUTE_DOWN for route in live):
            notes.append(
                f"every route of node {terminal_text(self.node)} is down: the node's network or its proxies, not "
                "the engines (check this machine's connection and the proxies)"
            )
        return notes


def build_routes_report(
    db: Engine,
    *,
    node: str,
    routes: Sequence[RouteSection],
    enabled: Sequence[str],
    now: datetime,
    proxies: int = 1,
) -> RoutesReport:
    """The routes of ``node``: ``routes`` (the configured ones, :func:`~topicstreams.config.route_table.
    configured_routes`) with the ``enabled`` engines each serves, then every other route with rows on ``node``;
    ``proxies``: how many ``anti_detection.proxy.proxies`` the default route draws from."""
    by_route: dict[str, list[RouteStatusRow]] = {}
    for row in read_route_statuses(db, node=node):
        by_route.setdefault(row.route, []).append(row)
    configured = {route.name: route for route in routes}
    names = [route.name for route in routes] + sorted(set(by_route) - set(configured))
    return RoutesReport(
        node=node,
        routes=[
            route_report(node, name, by_route.get(name, []), now, configured.get(name), enabled, proxies)
            for name in names
        ],
        now=now,
    )
