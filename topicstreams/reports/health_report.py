"""The health report: each engine's score, band and state on a node, each node's network and exit-IP saturation —
the object ``scrapy health --json`` prints, the table ``scrapy health`` prints, and what the web app serves.

:func:`build_report` reads the ``engine_status`` rows of a database (this node's, or every node's) and returns a
:class:`HealthReport`: one :class:`EngineReport` per engine and node — this node's enabled engines and every engine
with a row, in the order of :data:`topicstreams.ENGINES` (:func:`report_rows`) — and each node's network
(:func:`topicstreams.health.saturation.network_of`) and saturation (``judge_saturation``, never while the network is
down). :meth:`HealthReport.as_json` is the JSON object (:func:`report_json`), :meth:`HealthReport.as_api_json` the
same with each engine's route-vs-site verdict (``GET /api/health``), :meth:`HealthReport.as_table` the verdict line
(:mod:`topicstreams.reports.verdict_line`) and the table (:func:`format_table`), :meth:`HealthReport.exit_status` what
monitoring plugins read (:func:`exit_status`).
With routes, their ``route_status`` rows ride along (:attr:`HealthReport.route_rows`; :mod:`.route_states`).

What is not known reads ``-`` in the table and ``null`` in JSON. The state is the one at ``now``
(:meth:`~topicstreams.storage.engine_status.EngineStatusRow.state_at`): ``stopped`` once the crawl closed, ``stale``
once it went silent (the table says when it last wrote, the JSON ``stale``), and a cooldown that has ended reads
``running``. The reasons put hostility first (the score's reasons), then ``canary mismatch``, then ``coverage`` (when
the status row's coverage says ``low``), then ``holes`` (:mod:`topicstreams.health.holes_rule`), then the parser's;
none of those changes the score or the band.

Coverage (:mod:`topicstreams.health.coverage_model`: of what the other engines found for the topics the engine scraped,
the share it found too, against its own baseline) is the table's last column, ``window/baseline`` to two places
(``0.42/0.78``; ``-`` for a share not known, ``-`` alone when neither is), and each JSON engine object's
``"coverage": {"window", "baseline", "drop"}`` — always that object, its members ``null`` where not known (a row
not judged yet, or no row at all), so that a script reads ``engine["coverage"]["drop"]`` without a check first.

In lease mode (``scraper.assignment: lease``; :func:`lease_interval_of` says it), each engine's JSON object gains
``"carried_by"``: the nodes whose claims scraped the engine's topics within the last :data:`CARRIED_MARGIN` scrape
intervals (:func:`topicstreams.storage.leases.carriers`), sorted; the table says the same in a line under it. In
shard mode the member is absent: there every node carries its own shard, whatever happens to the others.

Node ids reach the table through :func:`~topicstreams.reports.terminal_safe.terminal_text`.

Nothing here needs Scrapy: a database handle (its owner's, e.g. from :class:`topicstreams.storage.db.Databases`), a
node id, the enabled engines and the saturation policy are all it takes.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import Engine

from topicstreams import ENGINES
from topicstreams.config.loading import Config
from topicstreams.crawl.canaries import CANARY_MISMATCH
from topicstreams.engines.states import COOLING, PAUSED
from topicstreams.health.coverage_model import COVERAGE
from topicstreams.health.holes_rule import HOLES, holes_reason
from topicstreams.health.network_state import NetworkState
from topicstreams.health.route_verdict import RouteVerdict, judge_routes
from topicstreams.health.saturation import (
    Saturation,
    SaturationPolicy,
    judge_saturation,
    network_of,
)
from topicstreams.health.score import UNKNOWN
from topicstreams.reports.lost_items import lost_lines, with_lost
from topicstreams.reports.route_states import route_state_entries, routes_block, routes_on_nodes, verdict_pairs
from topicstreams.reports.terminal_safe import terminal_text
from topicstreams.reports.utc_times import utc_text
from topicstreams.reports.verdict_line import exit_status, verdict_line
from topicstreams.storage import utcnow
from topicstreams.storage.engine_status import EngineStatusRow, read_statuses
from topicstreams.storage.leases import carriers
from topicstreams.storage.route_status import RouteStatusRow, read_route_statuses
from topicstreams.storage.store_losses import Lost, recent_losses

NO_VALUE = "-"
"""What the table prints for a value that is not known."""

COLUMNS = (
    "engine",
    "score",
    "band",
    "state",
    "parser score",
    "p50 ms",
    "p95 ms",
    "cooling until",
    "reasons",
    "coverage",
)
"""The table's columns; ``--all-nodes`` puts a ``node`` column first."""

NODE_COLUMN = "node"

NO_ENGINES = "no engines: none is enabled and the database has no engine status"
"""What the table reads when there is no engine to report."""

COVERAGE_KEYS = ("window", "baseline", "drop")
"""The members of each engine's ``coverage`` in the JSON report."""

CARRIED_MARGIN = 1.5
"""``carried_by`` counts the scrapes of the last 1.5 scrape intervals. One interval is too short: a topic's next due
time moves up to half the pacing's ``jitter_ratio`` of an interval off its slot (a quarter interval at the default
0.25), and a claim waits for the engine's pace, so a node that carries an engine's topics can go a little more than
one interval between two scrapes of the same one. Much longer would keep a node listed after it stopped carrying
the engine (cooling, paused, gone): at 1.5 it drops out half an interval after its last scrape would have been
due again."""


def coverage_value(value: Any) -> float | None:
    """A share of the status row's coverage as reported: a finite number, else None."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return None
    return float(value)


def coverage_text(report: EngineReport) -> str:
    """The table's coverage cell: ``window/baseline`` to two places (``0.42/0.78``, ``-/0.78``), ``-`` when neither
    is known."""
    shares = report.coverage_json()
    if shares["window"] is None and shares["baseline"] is None:
        return NO_VALUE
    return "/".join(NO_VALUE if shares[key] is None else f"{shares[key]:.2f}" for key in ("window", "baseline"))


@dataclass(frozen=True)
class EngineReport:
    """One engine on one node as the report shows it (None: not known)."""

    node: str
    engine: str
    score: int | None = None
    band: str = UNKNOWN
    state: str | None = None
    """The state at the report's time; None without a status row."""
    p50_ms: float | None = None
    p95_ms: float | None = None
    cooling_until: datetime | None = None
    """Set only while the engine is cooling."""
    reasons: tuple[str, ...] = ()
    updated_at: datetime | None = None
    parser_score: int | None = None
    cost: dict[str, Any] | None = None
    """Attempts, bytes and browser seconds per valid record: ``window``, ``baseline``, ``drift``."""
    stale: bool = False
    """No running crawl has written the row lately: the state is the last one known."""
    paused_at: datetime | None = None
    """Since when the engine is paused (set only while it is)."""
    hostility: tuple[str, ...] = ()
    """The health score's own reasons (``reasons`` adds ``canary mismatch`` and the parser's)."""
    parser_reasons: tuple[str, ...] = ()
    window_counts: dict[str, Any] | None = None
    """The current window's counts (requests, each class, …), as the status row keeps them."""
    last_canary: dict[str, Any] | None = None
    """The latest canary check: ``{"query", "at", "matched", "results", "problem"}``."""
    coverage: dict[str, Any] | None = None
    """The coverage signal as the status row keeps it: ``{"window", "baseline", "drop", "low"}`` (None: not judged
    yet)."""

    @property
    def coverage_low(self) -> bool:
        """Whether the status row says the reason ``coverage`` holds."""
        return isinstance(self.coverage, Mapping) and self.coverage.get("low") is True

    def coverage_json(self) -> dict[str, float | None]:
        """``{"window", "baseline", "drop"}``, each None where not known (:func:`coverage_value`)."""
        coverage = self.coverage if isinstance(self.coverage, Mapping) else {}
        return {key: coverage_value(coverage.get(key)) for key in COVERAGE_KEYS}

    @classmethod
    def of(cls, node: str, engine: str, status: EngineStatusRow | None, now: datetime) -> EngineReport:
        """The report of ``engine`` on ``node`` from its status row (None: the engine has none)."""
        if status is None:
            return cls(node=node, engine=engine)
        state = status.state_at(now)
        coverage = status.coverage if isinstance(status.coverage, Mapping) else None
        low = coverage is not None and coverage.get("low") is True
        reasons = [
            *(status.reasons or ()),
            *([CANARY_MISMATCH] if status.canary_mismatches else ()),
            *([COVERAGE] if low else ()),
            *([HOLES] if holes_reason(status.window_holes) else ()),
            *(status.parser_reasons or ()),
        ]
        return cls(
            node=node,
            engine=engine,
            score=status.score,
            band=status.band or UNKNOWN,
            state=state,
            p50_ms=status.p50_ms,
            p95_ms=status.p95_ms,
            cooling_until=status.cooling_until if state == COOLING else None,
            reasons=tuple(reasons),
            updated_at=status.updated_at,
            parser_score=status.parser_score,
            cost=status.cost,
            stale=status.stale_at(now),
            paused_at=status.paused_at if state == PAUSED else None,
            hostility=tuple(status.reasons or ()),
            parser_reasons=tuple(status.parser_reasons or ()),
            window_counts=status.window_counts,
            last_canary=status.last_canary,
            coverage=coverage,
        )


def engine_order(names: Iterable[str]) -> list[str]:
    """``names`` without repeats, in the order of :data:`topicstreams.ENGINES`; unknown names last, sorted."""
    names = set(names)
    return [name for name in ENGINES if name in names] + sorted(names - set(ENGINES))


def report_rows(
    statuses: Iterable[EngineStatusRow], node: str, enabled: Iterable[str], now: datetime, all_nodes: bool = False
) -> list[EngineReport]:
    """The report's rows: on ``node``, each of the ``enabled`` engines and every engine with a status row; with
    ``all_nodes``, also every other node's engines with a status row. By node (when ``all_nodes``), then engine."""
    by_key = {(status.node, status.engine): status for status in statuses if all_nodes or status.node == node}
    engines_of: dict[str, set[str]] = {node: set(enabled)}
    for row_node, engine in by_key:
        engines_of.setdefault(row_node, set()).add(engine)
    return [
        EngineReport.of(row_node, engine, by_key.get((row_node, engine)), now)
        for row_node in sorted(engines_of)
        for engine in engine_order(engines_of[row_node])
    ]


def _ms(value: float | None) -> str:
    return NO_VALUE if value is None else str(math.floor(value + 0.5))


def _cells(report: EngineReport) -> list[str]:
    return [
        report.engine,
        NO_VALUE if report.score is None else str(report.score),
        report.band,
        report.state or NO_VALUE,
        NO_VALUE if report.parser_score is None else str(report.parser_score),
        _ms(report.p50_ms),
        _ms(report.p95_ms),
        utc_text(report.cooling_until) or NO_VALUE,
        ", ".join(report.reasons) or NO_VALUE,
        coverage_text(report),
    ]


def format_table(
    reports: Sequence[EngineReport],
    all_nodes: bool = False,
    saturation: Mapping[str, Saturation] | None = None,
    routes: Sequence[RouteVerdict] = (),
    carried_by: Mapping[str, Sequence[str]] | None = None,
    carried_seconds: float | None = None,
) -> str:
    """A header line, then one line per report, columns left-aligned two spaces apart; then one line per node with
    stale rows, ``stale: …``, one per node of ``saturation``, ``saturation: …`` (``… on NODE: …`` with
    ``all_nodes``), with ``routes`` one line of every engine's route-vs-site verdict, ``route vs site: …``, and with
    ``carried_by`` (lease mode) one line of the nodes carrying each reported engine (:func:`carried_line`). Node ids
    go through :func:`terminal_text`."""
    header = [NODE_COLUMN, *COLUMNS] if all_nodes else list(COLUMNS)
    lines = [header] + [
        [terminal_text(report.node), *_cells(report)] if all_nodes else _cells(report) for report in reports
    ]
    widths = [max(len(line[column]) for line in lines) for column in range(len(header))]
    table = ["  ".join(cell.ljust(width) for cell, width in zip(line, widths, strict=False)).rstrip() for line in lines]
    stale_by_node: dict[str, list[EngineReport]] = {}
    for report in reports:
        if report.stale:
            stale_by_node.setdefault(report.node, []).append(report)
    for node, stale in stale_by_node.items():
        written = ", ".join(f"{report.engine} at {utc_text(report.updated_at)}" for report in stale)
        where = f" on {terminal_text(node)}" if all_nodes else ""
        table.append(
            f"stale{where}: no running crawl writes these rows and none said it stopped: killed, hung, or cut "
            f"off from the database (last written: {written})"
        )
    for node, verdict in sorted((saturation or {}).items()):
        table.append(f"saturation{f' on {terminal_text(node)}' if all_nodes else ''}: {verdict.describe()}")
    if routes:
        table.append("route vs site: " + ", ".join(verdict.describe() for verdict in routes))
    if carried_by is not None and reports:
        table.append(carried_line(engine_order(report.engine for report in reports), carried_by, carried_seconds))
    return "\n".join(table)


def carried_line(engines: Sequence[str], carried_by: Mapping[str, Sequence[str]], seconds: float | None = None) -> str:
    """``carried by (scraped in the last 90 s): google by node-a, node-b; bing by no node``."""
    window = f" (scraped in the last {seconds:g} s)" if seconds is not None else ""
    parts = [
        f"{engine} by {', '.join(terminal_text(node) for node in carried_by.get(engine, ())) or 'no node'}"
        for engine in engines
    ]
    return f"carried by{window}: " + "; ".join(parts)


def engine_json(report: EngineReport, carried_by: Mapping[str, Sequence[str]] | None = None) -> dict[str, Any]:
    """One engine's entry of the JSON report; with ``carried_by`` (lease mode: engine -> nodes), its
    ``"carried_by"``."""
    entry = {
        "engine": report.engine,
        "score": report.score,
        "band": report.band,
        "state": report.state,
        "parser_score": report.parser_score,
        "p50_ms": report.p50_ms,
        "p95_ms": report.p95_ms,
        "cooling_until": utc_text(report.cooling_until),
        "reasons": list(report.reasons),
        "cost": report.cost,
        "coverage": report.coverage_json(),
        "updated_at": utc_text(report.updated_at),
        "stale": report.stale,
    }
    if carried_by is not None:
        entry["carried_by"] = sorted(carried_by.get(report.engine, ()))
    return entry


def network_json(network: NetworkState | None) -> dict[str, Any]:
    """``{"down": bool, "since": ISO 8601 or null}`` (not judged: not down)."""
    network = network or NetworkState(False)
    return {"down": network.down, "since": utc_text(network.since)}


def node_json(
    node: str,
    reports: Iterable[EngineReport],
    saturation: Saturation | None = None,
    carried_by: Mapping[str, Sequence[str]] | None = None,
    network: NetworkState | None = None,
) -> dict[str, Any]:
    """The JSON report of one node: its saturation (null when not judged), its network (``{"down": false, "since":
    null}`` when not judged) and its engines among ``reports``."""
    return {
        "node": node,
        "saturation": None if saturation is None else saturation.as_json(),
        "network": network_json(network),
        "engines": [engine_json(report, carried_by) for report in reports if report.node == node],
    }


def report_json(
    reports: Sequence[EngineReport],
    node: str,
    all_nodes: bool = False,
    saturation: Mapping[str, Saturation] | None = None,
    carried_by: Mapping[str, Sequence[str]] | None = None,
    network: Mapping[str, NetworkState] | None = None,
) -> dict[str, Any]:
    """The JSON report: ``node``'s object, or with ``all_nodes`` ``{"nodes": [...]}`` with one per node;
    ``saturation`` and ``network`` map nodes to their verdicts; ``carried_by`` (lease mode only) engines to the nodes
    carrying them."""
    saturation = saturation or {}
    network = network or {}
    if not all_nodes:
        return node_json(node, reports, saturation.get(node), carried_by, network.get(node))
    nodes = sorted({node, *(report.node for report in reports)})
    return {"nodes": [node_json(each, reports, saturation.get(each), carried_by, network.get(each)) for each in nodes]}


@dataclass(frozen=True)
class HealthReport:
    """The health of one node, or with ``all_nodes`` of every node in the database."""

    node: str
    """This node: its enabled engines are reported even without a status row."""
    engines: list[EngineReport]
    saturation: Mapping[str, Saturation]
    """Each reported node's exit-IP saturation."""
    all_nodes: bool = False
    carried_by: Mapping[str, list[str]] | None = None
    """Lease mode: engine -> the nodes that scraped its topics lately, sorted (None: shard mode)."""
    carried_seconds: float | None = None
    """The window ``carried_by`` looked back over, in seconds."""
    lost: Mapping[str, Lost] = field(default_factory=dict)  # node -> the items its crawls lost lately
    network: Mapping[str, NetworkState] = field(default_factory=dict)
    """Each reported node's network (:func:`~topicstreams.health.saturation.network_of`)."""
    at: datetime | None = None
    """When the report was made."""
    route_rows: Sequence[RouteStatusRow] = ()  # the reported nodes' route_status rows

    def route_states(self) -> list[dict[str, Any]]:
        """``route_states`` (:func:`~topicstreams.reports.route_states.route_state_entries`)."""
        return route_state_entries(list(self.route_rows), self.at or utcnow())

    def as_json(self) -> dict[str, Any]:
        """The object ``scrapy health --json`` prints (:func:`report_json`), with ``"route_states"``."""
        report = report_json(
            self.engines,
            self.node,
            all_nodes=self.all_nodes,
            saturation=self.saturation,
            carried_by=self.carried_by,
            network=self.network,
        )
        return {**with_lost(report, self.lost), "route_states": self.route_states()}

    def as_table(self) -> str:
        """The verdict line (:func:`topicstreams.reports.verdict_line.verdict_line`), then the table ``scrapy health``
        prints (:func:`format_table`; with ``all_nodes`` the route-vs-site line under it), or :data:`NO_ENGINES`."""
        if not self.engines:
            return NO_ENGINES
        routes = routes_block(self.route_states(), self.all_nodes)
        return (
            verdict_line(self, routes=routes_on_nodes(self.route_rows, self.at or utcnow()))
            + "\n"
            + format_table(
                self.engines,
                all_nodes=self.all_nodes,
                saturation=self.saturation,
                routes=self.routes if self.all_nodes else (),
                carried_by=self.carried_by,
                carried_seconds=self.carried_seconds,
            )
            + "".join(f"\n{line}" for line in routes)
            + lost_lines(self.lost, self.all_nodes, terminal_text)
        )

    @property
    def routes(self) -> list[RouteVerdict]:
        """Each engine's route-vs-site verdict from the fresh rows of every reported node, over its (node, route)
        pairs where it has rows per route (:func:`~topicstreams.health.route_verdict.judge_routes`)."""
        return judge_routes(self.engines, verdict_pairs(self.route_rows, self.at or utcnow()))

    def heartbeats(self) -> dict[str, datetime]:
        """Node -> the newest ``updated_at`` of its status rows: when a crawl on it last wrote (every response, and
        at least every :data:`~topicstreams.storage.engine_status.HEARTBEAT` seconds)."""
        newest: dict[str, datetime] = {}
        for report in self.engines:
            if report.updated_at is not None and (report.node not in newest or report.updated_at > newest[report.node]):
                newest[report.node] = report.updated_at
        return newest

    def as_api_json(self) -> dict[str, Any]:
        """What ``GET /api/health`` answers: the JSON report, plus ``"routes": [{"engine", "verdict", "nodes"}]``."""
        return {**self.as_json(), "routes": [verdict.as_json() for verdict in self.routes]}

    def exit_status(self) -> int:
        """As monitoring plugins read it (:func:`exit_status`)."""
        return exit_status(self.engines, self.network, routes_on_nodes(self.route_rows, self.at or utcnow()))


def build_report(
    db: Engine,
    *,
    node: str,
    enabled: Iterable[str],
    policy: SaturationPolicy,
    all_nodes: bool = False,
    now: datetime | None = None,
    lease_interval: float | None = None,
) -> HealthReport:
    """The health report of ``node`` (every node with ``all_nodes``) from the status rows in ``db`` at ``now``
    (the present by default): ``enabled`` are this node's enabled engines, ``policy`` judges the saturation.
    ``lease_interval`` is the scrape interval in lease mode (:func:`lease_interval_of`): the report then says which
    nodes carry each engine (:func:`read_carriers`); None (shard mode) leaves ``carried_by`` out."""
    now = now or utcnow()
    statuses = read_statuses(db, None if all_nodes else node)
    rows = report_rows(statuses, node, enabled, now, all_nodes=all_nodes)
    nodes = {node, *(row.node for row in rows)}
    saturation = {
        each: judge_saturation([status for status in statuses if status.node == each], now, policy) for each in nodes
    }
    network = {each: network_of([status for status in statuses if status.node == each], now) for each in nodes}
    lost = recent_losses(db, now, None if all_nodes else node)
    routes = read_route_statuses(db, None if all_nodes else node)
    if lease_interval is None:
        return HealthReport(node, rows, saturation, all_nodes, lost=lost, network=network, at=now, route_rows=routes)
    return HealthReport(
        node,
        rows,
        saturation,
        all_nodes,
        carried_by=read_carriers(db, now, lease_interval),
        carried_seconds=lease_interval * CARRIED_MARGIN,
        lost=lost,
        network=network,
        at=now,
        route_rows=routes,
    )


def carried_since(now: datetime, interval: float) -> datetime:
    """Where ``carried_by`` starts looking: :data:`CARRIED_MARGIN` scrape intervals before ``now``."""
    return now - timedelta(seconds=interval * CARRIED_MARGIN)


def read_carriers(db: Engine, now: datetime, interval: float) -> dict[str, list[str]]:
    """Engine -> the nodes whose claims scraped its topics since :func:`carried_since`, sorted (lease mode's
    shared schedule)."""
    return {engine: sorted(nodes) for engine, nodes in carriers(db, carried_since(now, interval)).items()}


def lease_interval_of(config: Config) -> float | None:
    """The scrape interval when the configuration says ``scraper.assignment: lease``, else None: what
    :func:`build_report` takes as ``lease_interval``."""
    scraper = config.sections.scraper
    return scraper.scrape_interval if scraper.assignment == "lease" else None
