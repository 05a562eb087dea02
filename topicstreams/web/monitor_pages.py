"""The watching side of the web app: ``GET /monitor``, ``GET /api/health`` and ``POST /api/engines/{engine}/resume``.

* **``/monitor``** — one row per node and engine from the health report
  (:func:`topicstreams.reports.health_report.build_report`, the builder ``scrapy health --json --all-nodes`` uses): state
  (cooling until when, paused since when), the smoothed score and its band, reasons, p50/p95 latency and the
  window's error share coloured by the service levels (``web.sla.*``), parser score and reasons, the last canary
  check, cost drift, coverage (of what the other engines found for its topics, the share it found too — the window's
  against its baseline, and the reason ``coverage`` when it dropped; :mod:`topicstreams.health.coverage_model`); stale
  rows (no running crawl writes them) marked; per node the exit-IP saturation verdict;
  per engine the route-vs-site verdict (:mod:`topicstreams.health.route_verdict`) and charts drawn on the server
  (:mod:`topicstreams.web.charts`): its cycles over the last 24 hours, its score and p95 over the last 24 hours
  (``health_windows``) and the last 12 months (``health_daily``). Server-rendered and complete without
  JavaScript (a plain reload every :data:`REFRESH_SECONDS`); with it, ``/static/monitor.js`` swaps in
  ``/monitor?partial=1`` every :data:`REFRESH_SECONDS` instead, unless a person is typing in a Resume form.
* **``/api/health``** — the object of ``scrapy health --json --all-nodes``, plus ``routes``.
* **Resume** — the one write of the app: what ``scrapy health resume ENGINE --node NODE`` does, for a person
  holding ``web.admin_token`` (:mod:`topicstreams.web.tokens`). A script sends the token as a Bearer header and gets
  JSON; the monitor's form sends it as the field ``token`` and gets a page (a redirect back to the monitor, or an
  error page that says what to do).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from typing import Annotated, Any
from urllib.parse import parse_qs, quote, urlencode

from fastapi import APIRouter, Query, Request
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from pydantic import BaseModel
from starlette.concurrency import run_in_threadpool

from topicstreams import ENGINES
from topicstreams.engines.states import COOLING, PAUSED
from topicstreams.health.coverage_model import COVERAGE
from topicstreams.health.route_verdict import RouteVerdict
from topicstreams.health.score import band_of
from topicstreams.reports.health_report import EngineReport, HealthReport, build_report, engine_order
from topicstreams.storage import database_for, utcnow
from topicstreams.storage.engine_status import read_status, resume
from topicstreams.web.charts import Chart, Series, hour_ticks, line_chart, milliseconds, month_ticks
from topicstreams.web.pages import Moment
from topicstreams.web.tokens import bearer_token, client_of, same_token

logger = logging.getLogger(__name__)

REFRESH_SECONDS = 15
"""How often the page refreshes itself."""

HOURS, DAYS = 24, 365
"""What the charts cover: the last 24 hours, the last 12 months."""

MAX_FORM_BYTES = 4096
"""The largest Resume form body read."""

GOOD, WARNING, CRITICAL_LEVEL, UNKNOWN_LEVEL = "good", "warning", "critical", "unknown"

router = APIRouter()


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
    """Cooling until when, or paused since when."""
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
        state_time = report.cooling_until if report.state == COOLING else report.paused_at
        mismatch = ["canary mismatch"] if "canary mismatch" in report.reasons else []
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
            reasons=[*report.hostility, *mismatch, *([COVERAGE] if coverage.low else [])],
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


@dataclass(frozen=True)
class NodeView:
    name: str
    rows: list[Row]
    saturation: str
    suspected: bool
    stale: bool
    """No running crawl writes any of its rows."""
    heartbeat: Moment | None


@dataclass(frozen=True)
class EngineCharts:
    engine: str
    charts: list[Chart]


def _hours(end: datetime, count: int) -> list[datetime]:
    last = end.replace(minute=0, second=0, microsecond=0)
    return [last - timedelta(hours=count - 1 - index) for index in range(count)]


def _days(end: datetime, count: int) -> list[date]:
    today = end.date()
    return [today - timedelta(days=count - 1 - index) for index in range(count)]


def _seconds(moment: datetime | date, middle: float) -> float:
    if isinstance(moment, datetime):
        return moment.timestamp() + middle
    return datetime(moment.year, moment.month, moment.day, tzinfo=UTC).timestamp() + middle


def engine_charts(engine: str, now: datetime, cycles: Sequence, hours: Sequence, days: Sequence) -> EngineCharts:
    """The five charts of one engine: cycles, score and p95 over 24 hours; score and p95 over 12 months. Each
    hour (day) without data is a gap."""
    hour_slots = _hours(now, HOURS)
    start, end = hour_slots[0].timestamp(), now.timestamp()
    ticks = hour_ticks(start, end)
    cycle_at = {each.hour: each for each in cycles}
    hour_at = {each.hour: each for each in hours}

    def hourly(source: dict, field: str) -> list[tuple[float, float | None]]:
        # Each hour at its middle; the current one, not over yet, at most at the chart's end (now).
        return [
            (min(_seconds(slot, 1800), end), getattr(source[slot], field) if slot in source else None)
            for slot in hour_slots
        ]

    day_slots = _days(now, DAYS)
    day_at = {each.day: each for each in days}
    year_start = _seconds(day_slots[0], 0)

    def daily(field: str) -> list[tuple[float, float | None]]:
        return [
            (min(_seconds(slot, 43_200), end), getattr(day_at[slot], field) if slot in day_at else None)
            for slot in day_slots
        ]

    score_bands = [(0, 50, "zone-critical"), (50, 80, "zone-degraded")]
    charts = [
        line_chart(
            "Cycles per hour, last 24 h",
            [
                Series("topics", "s-topics", hourly(cycle_at, "topics")),
                Series("entries", "s-entries", hourly(cycle_at, "entries")),
                Series("new events", "s-events", hourly(cycle_at, "new_events")),
            ],
            start,
            end,
            x_ticks=ticks,
        ),
        line_chart(
            "Score, last 24 h",
            [
                Series("mean", "s-score", hourly(hour_at, "score_mean")),
                Series("lowest", "s-low", hourly(hour_at, "score_min")),
            ],
            start,
            end,
            x_ticks=ticks,
            y_max=100,
            bands=score_bands,
        ),
        line_chart(
            "p95 latency, last 24 h",
            [Series("p95", "s-p95", hourly(hour_at, "p95_ms"))],
            start,
            end,
            x_ticks=ticks,
            y_format=milliseconds,
        ),
        line_chart(
            "Score, last 12 months",
            [Series("mean", "s-score", daily("score_mean")), Series("lowest", "s-low", daily("score_min"))],
            year_start,
            end,
            x_ticks=month_ticks(year_start, end),
            y_max=100,
            bands=score_bands,
        ),
        line_chart(
            "p95 latency, last 12 months",
            [Series("p95", "s-p95", daily("p95_ms"))],
            year_start,
            end,
            x_ticks=month_ticks(year_start, end),
            y_format=milliseconds,
        ),
    ]
    return EngineCharts(engine, charts)


@dataclass(frozen=True)
class MonitorView:
    now: datetime
    nodes: list[NodeView]
    routes: list[RouteVerdict]
    charts: list[EngineCharts]


def nodes_of(report: HealthReport, sla, now: datetime) -> list[NodeView]:
    """Every node with a status row, its rows in the report's order (rows without a status left out: the web
    server's own node has none unless it crawls)."""
    rows_of: dict[str, list[EngineReport]] = {}
    for engine in report.engines:
        if engine.state is not None:
            rows_of.setdefault(engine.node, []).append(engine)
    heartbeats = report.heartbeats()
    nodes = []
    for name, reports in rows_of.items():
        saturation = report.saturation.get(name)
        newest = heartbeats.get(name)
        nodes.append(
            NodeView(
                name,
                [Row.of(each, sla, now) for each in reports],
                saturation.describe() if saturation else "not judged",
                bool(saturation and saturation.suspected),
                all(each.stale for each in reports),
                Moment.of(newest, now) if newest else None,
            )
        )
    return nodes


def monitor_view(request: Request) -> MonitorView:
    settings = request.app.state.settings
    now = utcnow()
    report = health_of(request, now)
    data = request.app.state.monitor_charts.read(now, HOURS, DAYS)
    engines = engine_order(
        {*(row.engine for row in report.engines if row.state is not None), *data.cycles, *data.hours, *data.days}
    )
    charts = [
        engine_charts(engine, now, data.cycles.get(engine, ()), data.hours.get(engine, ()), data.days.get(engine, ()))
        for engine in engines
    ]
    return MonitorView(now, nodes_of(report, settings.sla, now), report.routes, charts)


def health_of(request: Request, now: datetime | None = None) -> HealthReport:
    """Every node's health report, from the app's read-only database."""
    settings = request.app.state.settings
    return build_report(
        request.app.state.reader.db,
        node=settings.node,
        enabled=settings.enabled,
        policy=settings.policy,
        all_nodes=True,
        now=now or utcnow(),
        lease_interval=settings.lease_interval,
    )


# ---- the views ------------------------------------------------------------------------------------------------


@router.get("/monitor", include_in_schema=False, response_class=HTMLResponse)
def monitor_page(
    request: Request,
    partial: bool = False,
    resumed: Annotated[str | None, Query(max_length=64)] = None,
    node: Annotated[str | None, Query(max_length=256)] = None,
) -> Response:
    """The monitor; with ``partial``, only its live part (what ``monitor.js`` swaps in)."""
    view = monitor_view(request)
    notice = None
    if resumed in ENGINES and node:
        notice = (resumed, node)
    settings = request.app.state.settings
    return request.app.state.pages.render(
        "monitor_live.html" if partial else "monitor.html",
        view=view,
        section="monitor",
        notice=notice,
        refresh=REFRESH_SECONDS,
        resume_enabled=bool(settings.admin_token),
        sla=settings.sla,
        now_text=view.now.strftime("%Y-%m-%d %H:%M:%S UTC"),
    )


class RouteItem(BaseModel):
    engine: str
    verdict: str
    nodes: list[str]


class HealthAnswer(BaseModel):
    nodes: list[dict]
    routes: list[RouteItem]


class ResumeAnswer(BaseModel):
    engine: str
    node: str
    state: str


class Problem(BaseModel):
    detail: Any


@router.get(
    "/api/health",
    response_model=HealthAnswer,
    tags=["health"],
    summary="Every node's engines: score, band, state, latency, reasons; saturation; route vs site",
)
def health_api(request: Request) -> JSONResponse:
    return JSONResponse(health_of(request).as_api_json())


class ResumeRefused(Exception):
    def __init__(self, status: int, title: str, message: str, headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.status, self.title, self.message, self.headers = status, title, message, headers or {}


def is_form(request: Request) -> bool:
    return request.headers.get("content-type", "").split(";")[0].strip().lower() == (
        "application/x-www-form-urlencoded"
    )


async def form_token(request: Request) -> str | None:
    """The ``token`` field of a urlencoded form body (the monitor's Resume form)."""
    body = b""
    async for chunk in request.stream():
        body += chunk
        if len(body) > MAX_FORM_BYTES:
            raise ResumeRefused(413, "Form too large", f"a Resume form is at most {MAX_FORM_BYTES} bytes")
    fields = parse_qs(body.decode("utf-8", "replace"), keep_blank_values=True)
    values = fields.get("token") or [None]
    return values[0] or None


async def check_resume(request: Request, engine: str, node: str | None) -> str:
    """The node to resume ``engine`` on, once the request may do it; else :class:`ResumeRefused`."""
    settings = request.app.state.settings
    if "token" in request.query_params:
        raise ResumeRefused(
            400,
            "Token in the URL",
            "the token goes in an `Authorization: Bearer` header or the "
            "form's field, never in the URL (access logs keep URLs); this request was not used",
        )
    if not settings.admin_token:
        raise ResumeRefused(
            403,
            "Resuming from the web is off",
            (
                "no admin token is configured: set `web.admin_token` in the configuration and restart `scrapy serve`, "
                f"or run `scrapy health resume {engine if engine in ENGINES else 'ENGINE'} --node NODE`"
            ),
        )
    token = bearer_token(request)
    if token is None and is_form(request):
        token = await form_token(request)
    client = client_of(request)
    if not same_token(token, settings.admin_token):
        failures, delay = request.app.state.token_check.failed(client)
        logger.warning(
            "Refused to resume %r on node %r for %s: %s token (%d failure(s) in a row%s)",
            engine[:64],
            (node or "")[:64],
            client,
            "no" if token is None else "a wrong",
            failures,
            f"; answered after {delay:g} s" if delay else "",
        )
        await asyncio.sleep(delay)
        raise ResumeRefused(
            401,
            "Wrong token",
            "the admin token is missing or wrong (`web.admin_token`)",
            {"WWW-Authenticate": 'Bearer realm="topicstreams"'},
        )
    request.app.state.token_check.succeeded(client)
    if node is None or not node.strip():
        raise ResumeRefused(400, "No node", "name the node to resume the engine on: `?node=NODE`")
    if engine not in ENGINES:
        raise ResumeRefused(404, "Unknown engine", f"no engine {engine[:64]!r}: expected one of {', '.join(ENGINES)}")
    return node.strip()


@router.post(
    "/api/engines/{engine}/resume",
    tags=["health"],
    response_model=ResumeAnswer,
    summary="Lift an engine's pause on a node (Bearer web.admin_token)",
    responses={
        400: {"model": Problem},
        401: {"model": Problem},
        403: {"model": Problem},
        404: {"model": Problem},
        409: {"model": Problem},
    },
)
async def resume_engine(
    request: Request, engine: str, node: Annotated[str | None, Query(max_length=256)] = None
) -> Response:
    from_form = is_form(request)
    try:
        node = await check_resume(request, engine, node)
        status = await run_in_threadpool(read_status, request.app.state.reader.db, engine, node)
        if status is None:
            raise ResumeRefused(404, "Unknown node", f"{engine} has no status on node {node[:64]!r}")
        if status.state != PAUSED:
            raise ResumeRefused(
                409, "Not paused", f"{engine} is not paused on node {node[:64]!r} (it is {status.state_at(utcnow())})"
            )
        writer = database_for(request.app.state.settings.database_url)
        if not await run_in_threadpool(resume, writer, engine, node, utcnow()):
            raise ResumeRefused(409, "Not paused", f"{engine} is no longer paused on node {node[:64]!r}")
    except ResumeRefused as refused:
        if from_form:
            response = request.app.state.pages.error(request, refused.status, refused.title, refused.message)
            response.headers.update(refused.headers)
            return response
        return JSONResponse({"detail": refused.message}, status_code=refused.status, headers=refused.headers)
    logger.info(
        "Resumed %s on node %r from the web (for %s): it restarts at the slowed pace",
        engine,
        node[:64],
        client_of(request),
    )
    if from_form:
        return RedirectResponse(f"/monitor?{urlencode({'resumed': engine, 'node': node})}", status_code=303)
    return JSONResponse({"engine": engine, "node": node, "state": "running"})
