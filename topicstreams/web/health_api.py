"""``GET /api/health``: the object of ``scrapy health --json --all-nodes`` (``route_states`` among it), plus
``routes`` (each engine's route-vs-site verdict, with ``pairs`` when judged over (node, route) pairs); and the health
report of every node that it and the monitor's page read."""

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
    pairs: list[str] | None = None
    """``node/route`` where the engine is in trouble, when judged over (node, route) pairs."""


class RouteEngine(BaseModel):
    state: str
    score: int | None
    band: str
    cooling_until: str | None


class RouteState(BaseModel):
    node: str
    route: str
    state: str
    engines: dict[str, RouteEngine]


class HealthAnswer(BaseModel):
    nodes: list[dict]
    route_states: list[RouteState]
    routes: list[RouteItem]


@router.get(
    "/api/health",
    response_model=HealthAnswer,
    tags=["health"],
    summary="Every node's engines: score, band, state, latency, reasons; saturation; routes; route vs site",
)
def health_api(request: Request) -> JSONResponse:
    return JSONResponse(health_of(request).as_api_json())
