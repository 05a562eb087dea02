"""The monitor's table: the health report (:func:`topicstreams.reports.health_report.build_report`) as rows, one per
node and engine, grouped by node, each cell as the page shows it.

A row holds the engine's state (cooling until when, paused since when), the smoothed score and its band, reasons,
p50/p95 latency and the window's error share coloured by the service levels (``web.sla.*``), parser score and
reasons, the last canary check, cost drift and coverage (of what the other engines found for its topics, the share
it found too — the window's against its baseline, and the reason ``coverage`` when it dropped;
:mod:`topicstreams.health.coverage_model`). A row no running crawl is behind reads ``stale`` (its process went silent)
or ``stopped`` (its crawl closed), with when it was last written, never the state it had. Each node carries its
network (down: every engine fails to connect), else its exit-IP saturation verdict, and its newest heartbeat; and,
when it has routes, its engine × route matrix (:mod:`topicstreams.web.monitor_routes`).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any
from urllib.parse import quote, urlencode

from topicstreams.engines.states import COOLING, GONE, PAUSED
from topicstreams.health.coverage_model import COVERAGE
from topicstreams.health.holes_rule import HOLES
from topicstreams.health.saturation import Saturation
from topicstreams.health.score import band_of
from topicstreams.reports.health_report import EngineReport, HealthReport
from topicstreams.reports.verdict_line import clock
from topicstreams.web.formats import Moment
from topicstreams.web.monitor_routes import RouteMatrix, route_matrices

GOOD, WARNING, CRITICAL_LEVEL, UNKNOWN_LEVEL = "good", "warning", "critical", "unknown"


# ---- the service levels ---------------------------------------------------------------------------------------


def level_of(value: float | None, good: float, critical: float) -> str:
    """``good`` under ``good``, ``critical`` over ``critical``, else ``warning`` (``unknown`` for None)."""
    if value is None:
        return UNKNOWN_LEVEL
    if value < good:
        return GOOD
    return CRITICAL_LEVEL if value > critical else WARNING


def latency_level(p95_ms: float | None, sla) -> str:
    """A p95 latency against ``web.sla.latency_good_ms`` and ``latency_critical_ms``."""
    return level_of(p95_ms, sla.latency_good_ms, sla.latency_critical_ms)


def error_share(counts: dict[str, Any] | None) -> tuple[float | None, int, int]:
    """The window's error share — hard blocks, challenges, soft blocks and errors over requests — and the two
    counts (None without a request)."""
    counts = counts or {}
    requests = int(counts.get("requests") or 0)
    failed = sum(int(counts.get(name) or 0) for name in ("hard_blocks", "challenges", "soft_blocks", "errors"))
    return (failed / requests if requests else None), failed, requests


def errors_level(share: float | None, sla) -> str:
    """An error share against ``web.sla.errors_good`` and ``errors_critical``."""
    return level_of(share, sla.errors_good, sla.errors_critical)


# ---- what the page shows ------------------------------------------------------------------------------------


def percent(share: float) -> str:
    value = share * 100
    return f"{value:.1f} %" if value < 10 else f"{value:.0f} %"


def ms_text(value: float | None) -> str:
    return "-" if value is None else f"{value:.0f}"


def drift_text(cost: dict[str, Any] | None) -> str | None:
    """``attempts ×1.2 · bytes ×0.9 · browser ×1.1`` (None until both the window and the baseline are known)."""
    drift = (cost or {}).get("drift")
    if not drift:
        return None
    names = {"attempts": "attempts", "bytes": "bytes", "browser_seconds": "browser"}
    parts = [f"{label} ×{drift[key]:.2f}" for key, label in names.items() if drift.get(key) is not None]
    return " · ".join(parts) or None


def drift_level(cost: dict[str, Any] | None) -> str:
    drift = (cost or {}).get("drift") or {}
    worst = max((value for value in drift.values() if value is not None), default=None)
    if worst is None:
        return UNKNOWN_LEVEL
    return GOOD if worst < 1.5 else CRITICAL_LEVEL if worst > 3 else WARNING


@dataclass(frozen=True)
class CoverageView:
    """The coverage cell: the window's share, the baseline's, and how it reads."""

    window: str
    baseline: str
    title: str
    level: str
    low: bool

    @property
    def known(self) -> bool:
        """Whether either share is known (else the cell reads ``-``)."""
        return self.window != "-" or self.baseline != "-"


def coverage_view(report: EngineReport) -> CoverageView:
    """``window`` and ``baseline`` as percentages (``-`` where not known); ``critical`` when the reason ``coverage``
    holds, ``good`` when both shares are known and it does not, else ``unknown``."""
    shares = report.coverage_json()
    window, baseline, drop = shares["window"], shares["baseline"], shares["drop"]
    low = report.coverage_low
    if window is None:
        title = "not enough articles found by the other engines in the window to judge"
    elif baseline is None:
        title = "no baseline yet: too little history of this engine's coverage"
    else:
        change = f", {round(-drop * 100):+d} points" if drop is not None else ""
        title = f"finds {percent(window)} of what the other engines find ({percent(baseline)} normally{change})"
    level = CRITICAL_LEVEL if low else GOOD if window is not None and baseline is not None else UNKNOWN_LEVEL
    return CoverageView(
        "-" if window is None else percent(window), "-" if baseline is None else percent(baseline), title, level, low
    )


@dataclass(frozen=True)
class Canary:
    text: str
    level: str
    at: Moment | None


def canary_view(last: dict[str, Any] | None, now: datetime) -> Canary | None:
    if not last:
        return None
    try:
        at = Moment.of(datetime.fromisoformat(str(last.get("at"))), now)
    except (TypeError, ValueError):
        at = None
    query = str(last.get("query") or "")
    if last.get("matched"):
        return Canary(f"matched “{query}” ({last.get('results')} results)", GOOD, at)
    return Canary(f"“{query}”: {last.get('problem') or 'wrong answer'}", CRITICAL_LEVEL, at)


def resume_path(engine: str, node: str) -> str:
    return f"/api/engines/{quote(engine, safe='')}/resume?{urlencode({'node': node})}"


@dataclass(frozen=True)
class Row:
    """One engine on one node, as the monitor shows it."""

    node: str
    engine: str
    stale: bool
    updated: Moment | None
    state: str
    state_at: Moment | None
    """Cooling until when, paused since when, or (``stale``, ``stopped``) last written when."""
    score: str
    band: str
    reasons: list[str]
    p50: str
    p95: str
    latency: str
    errors: str
    errors_title: str
    errors_level: str
    parser_score: str
    parser_band: str
    parser_reasons: list[str]
    canary: Canary | None
    cost: str | None
    cost_level: str
    coverage: CoverageView
    resume_action: str | None
    """The Resume form's action, while the engine is paused."""

    @classmethod
    def of(cls, report: EngineReport, sla, now: datetime) -> Row:
        share, failed, requests = error_share(report.window_counts)
        state_time = (
            report.updated_at
            if report.state in GONE
            else report.cooling_until
            if report.state == COOLING
            else report.paused_at
        )
        mismatch = ["canary mismatch"] if "canary mismatch" in report.reasons else []
        holes = [HOLES] if HOLES in report.reasons else []
        coverage = coverage_view(report)
        return cls(
            node=report.node,
            engine=report.engine,
            stale=report.stale,
            updated=Moment.of(report.updated_at, now) if report.updated_at else None,
            state=report.state or "-",
            state_at=Moment.of(state_time, now) if state_time else None,
            score="-" if report.score is None else str(report.score),
            band=report.band,
            reasons=[*report.hostility, *mismatch, *([COVERAGE] if coverage.low else []), *holes],
            p50=ms_text(report.p50_ms),
            p95=ms_text(report.p95_ms),
            latency=latency_level(report.p95_ms, sla),
            errors="-" if share is None else percent(share),
            errors_title=f"{failed} of {requests} requests in the window" if requests else "no request in the window",
            errors_level=errors_level(share, sla),
            parser_score="-" if report.parser_score is None else str(report.parser_score),
            parser_band=band_of(report.parser_score),
            parser_reasons=list(report.parser_reasons),
            canary=canary_view(report.last_canary, now),
            cost=drift_text(report.cost),
            cost_level=drift_level(report.cost),
            coverage=coverage,
            resume_action=resume_path(report.engine, report.node) if report.state == PAUSED else None,
        )

    @property
    def gone(self) -> bool:
        """No running crawl is behind the row (``stale`` or ``stopped``)."""
        return self.state in GONE


def saturation_text(saturation: Saturation | None) -> str:
    """The node's saturation line: ``Exit IP saturation suspected: bing, google cooling at once — …`` or ``Exit IP
    saturation: not suspected (…)``."""
    if saturation is None:
        return "Exit IP saturation: not judged"
    if saturation.suspected:
        cooling = ", ".join(saturation.cooling)
        return f"Exit IP saturation suspected: {cooling} cooling at once — add a node with its own exit IP"
    return f"Exit IP saturation: {saturation.describe()}"


@dataclass(frozen=True)
class NodeView:
    name: str
    rows: list[Row]
    saturation: str
    """Its line (:func:`saturation_text`); not shown while the network is down."""
    suspected: bool
    stale: bool
    """No running crawl is behind any of its rows."""
    heartbeat: Moment | None
    network_down: bool = False
    """Every engine running on it fails to connect: the node's verdict is its network."""
    down_since: str | None = None
    """Since when, ``14:44 UTC``."""
    routes: RouteMatrix | None = None
    """Its engine × route matrix, when it has ``route_status`` rows."""


def nodes_of(report: HealthReport, sla, now: datetime) -> list[NodeView]:
    """Every node with a status row, its rows in the report's order (rows without a status left out: the web
    server's own node has none unless it crawls)."""
    rows_of: dict[str, list[EngineReport]] = {}
    for engine in report.engines:
        if engine.state is not None:
            rows_of.setdefault(engine.node, []).append(engine)
    heartbeats = report.heartbeats()
    matrices = route_matrices(report.route_rows, now)
    nodes = []
    for name, reports in rows_of.items():
        saturation = report.saturation.get(name)
        newest = heartbeats.get(name)
        network = report.network.get(name)
        down = bool(network and network.down)
        nodes.append(
            NodeView(
                name,
                [Row.of(each, sla, now) for each in reports],
                saturation_text(saturation),
                bool(saturation and saturation.suspected) and not down,
                all(each.state in GONE for each in reports),
                Moment.of(newest, now) if newest else None,
                down,
                clock(network.since) if down and network and network.since else None,
                matrices.get(name),
            )
        )
    return nodes
