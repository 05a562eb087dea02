"""The web app: the feed page, its JSON API and its feeds, on one database, read-only.

``create_app(WebSettings.from_config(config))`` gives the ASGI app that ``scrapy serve`` runs on uvicorn. It
reads through its own read-only connection pool, never migrates (a database without the schema answers 503
naming ``scrapy db upgrade``), fetches nothing from the network, and answers a bad parameter with 400 or 422 and
JSON naming it, a database that does not answer with 503: never a 500 or a traceback. A damaged database file is no
schema to upgrade and no passing outage: its 503 says so in the words of
:func:`~topicstreams.storage.damage_notice.damage_message`, and the log says it once (:class:`DamageWatch`).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from http import HTTPStatus
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from sqlalchemy.exc import DBAPIError, SQLAlchemyError
from starlette.exceptions import HTTPException as StarletteHTTPException

from topicstreams import ENGINES
from topicstreams.config.loading import Config
from topicstreams.config.packaged import load_defaults
from topicstreams.config.secrets import mask_url
from topicstreams.config.sections import ScraperSection, SlaSection, build_section
from topicstreams.health.saturation import SaturationPolicy, saturation_policy
from topicstreams.reports.health_report import lease_interval_of
from topicstreams.storage.cycle_timeline import KEEP_SECONDS, ChartReads
from topicstreams.storage.damage_notice import damage_of
from topicstreams.storage.db import Databases, make_reader
from topicstreams.storage.feed_reads import FeedReader
from topicstreams.web.guard import Guard, is_loopback
from topicstreams.web.params import BadParameter
from topicstreams.web.tokens import TokenCheck

logger = logging.getLogger(__name__)

UPGRADE_HINT = "run `scrapy db upgrade`"
DAMAGED_TITLE = "Database file damaged"
STATIC_PREFIX = "/static/"


def packaged(dotted: str, kind: Callable[[Any], Any]) -> Callable[[], Any]:
    """A field's ``default_factory``: the packaged default of the configuration key ``dotted`` (``defaults.yml``,
    the one place of the defaults) as ``kind``, for an app built without a configuration (a test's, a benchmark's)."""

    def default() -> Any:
        value: Any = load_defaults()
        for part in dotted.split("."):
            value = value[part]
        return kind(value)

    return default


def packaged_policy() -> SaturationPolicy:
    """The saturation policy of the packaged ``scraper`` section."""
    return saturation_policy(build_section(ScraperSection, load_defaults()["scraper"], "scraper"))


@dataclass(frozen=True)
class ServiceLevels:
    """``web.sla.*``: the monitor colours a p95 latency below ``latency_good_ms`` good, above
    ``latency_critical_ms`` critical, a warning between; likewise the window's error share with ``errors_*``."""

    latency_good_ms: float = field(default_factory=packaged("web.sla.latency_good_ms", float))
    latency_critical_ms: float = field(default_factory=packaged("web.sla.latency_critical_ms", float))
    errors_good: float = field(default_factory=packaged("web.sla.errors_good", float))
    errors_critical: float = field(default_factory=packaged("web.sla.errors_critical", float))

    @classmethod
    def of(cls, sla: SlaSection) -> ServiceLevels:
        return cls(sla.latency_good_ms, sla.latency_critical_ms, sla.errors_good, sla.errors_critical)


@dataclass(frozen=True)
class WebSettings:
    """What the app is built with: ``web.*``, the database, and what the monitor's health report needs. Built
    from a configuration (:meth:`from_config`, what ``scrapy serve`` does), else the keys not given are the packaged
    defaults."""

    database_url: str
    host: str = field(default_factory=packaged("web.host", str))
    port: int = field(default_factory=packaged("web.port", int))
    page_size: int = field(default_factory=packaged("web.page_size", int))
    admin_token: str = field(default_factory=packaged("web.admin_token", str), repr=False)
    """``web.admin_token``: lets a person resume a paused engine (empty: nobody can, from the web)."""
    metrics_token: str = field(default_factory=packaged("web.metrics_token", str), repr=False)
    """``web.metrics_token``: when set, ``/metrics`` asks for it as a Bearer token."""
    sla: ServiceLevels = field(default_factory=ServiceLevels)
    node: str = "local"
    """This node's id (``node.id``): the health report lists its enabled engines even without a status row."""
    enabled: tuple[str, ...] = ENGINES
    """This node's enabled engines."""
    policy: SaturationPolicy = field(default_factory=packaged_policy)
    """How each node's exit-IP saturation is judged (``scraper.saturation``, the pacing floors)."""
    chart_keep_seconds: float = KEEP_SECONDS
    """How long the monitor keeps its charts' closed hours and days (:mod:`topicstreams.storage.cycle_timeline`); 0
    reads everything at each request (the benchmark's cold figures)."""
    schedule: str = field(default_factory=packaged("scraper.schedule", str))
    """``scraper.schedule`` (``adaptive`` or ``fixed``): what the monitor's schedule panel says is in force."""
    lease_interval: float | None = None
    """The scrape interval in lease mode (``scraper.assignment: lease``): the health report then says which nodes
    carry each engine (``carried_by``); None in shard mode."""

    @classmethod
    def from_config(cls, config: Config) -> WebSettings:
        sections = config.sections
        web = sections.web
        return cls(
            sections.database.url,
            host=web.host,
            port=web.port,
            page_size=web.page_size,
            admin_token=web.admin_token,
            metrics_token=web.metrics_token,
            sla=ServiceLevels.of(web.sla),
            node=sections.node.id,
            enabled=tuple(sections.enabled_engines()),
            policy=saturation_policy(sections.scraper),
            lease_interval=lease_interval_of(config),
            schedule=sections.scraper.schedule,
        )

    @property
    def url(self) -> str:
        host = self.host.strip("[]")
        host = f"[{host}]" if ":" in host else host
        return f"http://{host}:{self.port}/"

    @property
    def loopback(self) -> bool:
        return is_loopback(self.host)


class SchemaCheck:
    """Whether the database can be read; once it could, it is not asked again."""

    def __init__(self, reader: FeedReader) -> None:
        self.reader = reader
        self.ready = False
        self._lock = threading.Lock()

    def problem(self) -> str | None:
        if self.ready:
            return None
        with self._lock:
            problem = self.reader.schema_problem()
            self.ready = problem is None
            return problem


class DamageWatch:
    """Whether an error of the database says its file is damaged; the first time (and when what SQLite says
    changes), one ERROR in the log: the app answers every request that meets it with 503 and the same message."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.told: str | None = None
        self._lock = threading.Lock()

    def damage(self, exc: BaseException) -> str | None:
        """The message of the damaged database file when *exc* says so, else None."""
        message = damage_of(self.url, exc)
        if message is None:
            return None
        with self._lock:
            first, self.told = message != self.told, message
        if first:
            logger.error("Answering 503 where the database is read: %s", message)
        return message


def wants_json(request: Request) -> bool:
    path = request.url.path
    return path.startswith("/api/") or path.startswith("/feed.")


def error_response(request: Request, status: int, detail: Any, title: str) -> Response:
    """JSON for the API and the feeds; a short page for a person elsewhere (escaped by the template)."""
    pages = getattr(request.app.state, "pages", None)
    if wants_json(request) or pages is None:
        return JSONResponse({"detail": detail}, status_code=status)
    message = detail if isinstance(detail, str) else "; ".join(f"{item['loc'][-1]}: {item['msg']}" for item in detail)
    return pages.error(request, status, title, message)


def create_app(settings: WebSettings) -> FastAPI:
    """The app for *settings* (its database opened lazily: the app starts whatever state the database is in)."""
    databases = Databases()

    @asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        try:
            yield
        finally:
            databases.dispose()

    app = FastAPI(
        lifespan=lifespan,
        title="topicstreams feed",
        version="1",
        openapi_url="/api/openapi.json",
        docs_url=None,
        redoc_url=None,
        description=(
            "Every article stored once, with every engine that found it. Filters are query parameters; "
            "paging is by cursor (`before`, `after`)."
        ),
    )
    db = make_reader(settings.database_url)
    app.state.settings = settings
    app.state.page_size = settings.page_size
    app.state.reader = FeedReader(db)
    app.state.databases = databases  # its writing handle (resume: topicstreams.web.engine_resume)
    app.state.token_check = TokenCheck()  # the admin token's failures per client (topicstreams.web.tokens)
    app.state.monitor_charts = ChartReads(db, settings.chart_keep_seconds)
    schema = SchemaCheck(app.state.reader)
    damage = app.state.damage = DamageWatch(settings.database_url)
    logger.info("Reading %s", mask_url(settings.database_url))

    from topicstreams.web import api

    app.include_router(api.router)
    _mount_views(app)

    @app.middleware("http")
    async def require_schema(request: Request, call_next):
        from starlette.concurrency import run_in_threadpool

        if request.url.path.startswith(STATIC_PREFIX):  # the error page's own stylesheet
            return await call_next(request)
        try:
            problem = await run_in_threadpool(schema.problem)
        except SQLAlchemyError as exc:
            message = damage.damage(exc)
            if message is None:
                raise
            return error_response(request, 503, message, DAMAGED_TITLE)
        if problem is not None:
            return error_response(request, 503, f"{problem}: {UPGRADE_HINT}", "No feed yet")
        return await call_next(request)

    @app.exception_handler(BadParameter)
    async def bad_parameter(request: Request, exc: BadParameter) -> Response:
        return error_response(request, 400, exc.detail(), "Bad request")

    @app.exception_handler(RequestValidationError)
    async def invalid_request(request: Request, exc: RequestValidationError) -> Response:
        detail = [
            {
                "loc": [str(part) for part in error.get("loc", ())],
                "msg": str(error.get("msg", "invalid")),
                "type": str(error.get("type", "value_error")),
            }
            for error in exc.errors()
        ]
        return error_response(request, 422, detail, "Bad request")

    @app.exception_handler(SQLAlchemyError)
    async def database_error(request: Request, exc: SQLAlchemyError) -> Response:
        message = damage.damage(exc)
        if message is not None:
            return error_response(request, 503, message, DAMAGED_TITLE)
        reason = str(exc.orig).splitlines()[0] if isinstance(exc, DBAPIError) and exc.orig else type(exc).__name__
        logger.warning("The database did not answer %s: %s", request.url.path, reason)
        return error_response(
            request, 503, f"the database did not answer ({reason}); try again shortly", "Database unavailable"
        )

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> Response:
        title = HTTPStatus(exc.status_code).phrase if exc.status_code in HTTPStatus._value2member_map_ else "Error"
        message = f"nothing at {request.url.path}" if exc.status_code == 404 else exc.detail
        return error_response(request, exc.status_code, message, title)

    names = [] if settings.loopback else [settings.host]
    app.add_middleware(Guard, names=names)
    return app


def _mount_views(app: FastAPI) -> None:
    """The feeds, the monitor (its page, the health API, resume), the metrics, the logs and the feed page (with the
    static files), each from its own module."""
    from topicstreams.web import feeds, metrics, pages
    from topicstreams.web import log_pages as logs
    from topicstreams.web import monitor_pages as monitor

    app.include_router(feeds.router)
    app.include_router(monitor.router)
    metrics.install(app)
    app.include_router(logs.router)
    pages.install(app)
