"""``GET /api/health``: the object of ``scrapy health --json --all-nodes``, plus ``routes`` (each engine's
route-vs-site verdict); and the health report of every node that it and the monitor's page read."""

from __future__ import annotations

from datetime import datetime

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel

from topicstreams.reports.health_report import HealthReport, build_report
from topicstreams.storage import utcnow

router = APIRouter()


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


class RouteItem(BaseModel):
    engine: str
    verdict: str
    nodes: list[str]


class HealthAnswer(BaseModel):
    nodes: list[dict]
    routes: list[RouteItem]


@router.get(
    "/api/health",
    response_model=HealthAnswer,
    tags=["health"],
    summary="Every node's engines: score, band, state, latency, reasons; saturation; route vs site",
)
def health_api(request: Request) -> JSONResponse:
    return JSONResponse(health_of(request).as_api_json())
