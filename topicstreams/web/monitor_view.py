"""``GET /monitor``: the monitor's page — at its top the one-line verdict of every node
(:mod:`topicstreams.web.crawl_verdict`: the words of ``scrapy health``) and a banner for each node whose network is
down; then per node its engines' rows (:mod:`topicstreams.web.monitor_rows`), the route-vs-site verdict of each engine
(:mod:`topicstreams.health.route_verdict`), the schedule (:mod:`topicstreams.web.monitor_schedule`: budget used,
holes, the busiest topics) and per engine its charts (:mod:`topicstreams.web.monitor_charts`).
Server-rendered and complete without JavaScript (a plain reload every :data:`REFRESH_SECONDS`); with it,
``/static/monitor.js`` swaps in ``/monitor?partial=1`` (the verdict with the rest) every :data:`REFRESH_SECONDS`
instead, unless a person is typing in a Resume form."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Annotated

from fastapi import APIRouter, Query, Request
from fastapi.responses import HTMLResponse, Response

from topicstreams import ENGINES
from topicstreams.health.route_verdict import RouteVerdict
from topicstreams.reports.health_report import engine_order
from topicstreams.storage import utcnow
from topicstreams.web.crawl_verdict import CrawlVerdict, verdict_of
from topicstreams.web.health_api import health_of
from topicstreams.web.monitor_charts import DAYS, HOURS, EngineCharts, engine_charts
from topicstreams.web.monitor_rows import NodeView, nodes_of
from topicstreams.web.monitor_schedule import SchedulePanel, schedule_panel

REFRESH_SECONDS = 15
"""How often the page refreshes itself."""

router = APIRouter()


@dataclass(frozen=True)
class MonitorView:
    now: datetime
    nodes: list[NodeView]
    routes: list[RouteVerdict]
    charts: list[EngineCharts]
    verdict: CrawlVerdict
    schedule: SchedulePanel


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
    schedule = schedule_panel(request.app.state.reader.db, settings.schedule, now)
    return MonitorView(
        now, nodes_of(report, settings.sla, now), report.routes, charts, verdict_of(report, now), schedule
    )


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
