"""``GET /metrics``: the Prometheus text exposition of every engine's health and counts, read from the database at
each scrape.

Nothing is counted in this process: a custom collector (:class:`DatabaseCollector`) reads the database when
Prometheus asks, so the app holds no series of its own and none outlives its row (an engine whose status row is
gone is gone from the next scrape). It reads small tables only — ``engine_status`` (through the health report,
:func:`topicstreams.reports.health_report.build_report`, so states, staleness and saturation are judged as
``scrapy health`` judges them) and ``engine_totals`` — and counts ``news`` once
(:mod:`topicstreams.storage.metric_counts`).

* **Gauges** (what holds now): each engine's smoothed health score and parser score, its state (one series per
  state — ``running``, ``cooling``, ``paused``, ``stale``, ``stopped`` — 1 for the current one: a cooldown that has
  ended reads ``running``, a crawl gone silent ``stale``, one that closed ``stopped``), its p50/p95 latency, when its
  last cycle ended; each node's saturation verdict and heartbeat (the newest ``updated_at`` of its status rows).
* **Counters** (families ending in ``_total``): read from ``engine_totals``, which ``save_cycle`` adds every cycle
  row to and nothing purges, so they never go down while the database lives (a sum over ``scraper_cycles`` would
  fall when old windows are purged). ``topicstreams_news_total`` counts the stored articles.

Every ``topicstreams_engine_*`` and ``topicstreams_cycle_*`` series is labelled ``engine`` and ``node`` and exists
for each engine and node with an ``engine_status`` row (an enabled engine that has none yet gets no series). A
value that is not known (no score yet, no latency yet, no cycle yet) is left out rather than made up.

* **Routes** (CONTRACT "Routes"), from the ``route_status`` rows (one per node, route and engine): the gauge
  ``topicstreams_route_up{node,route}`` (1 while the route carries requests — ``ok`` or ``cooling`` — 0 when it is
  ``down``, ``stale`` or ``stopped``) and the counters ``topicstreams_route_requests_total{engine,node,route}``,
  ``topicstreams_route_responses_total{engine,node,route,class}`` and ``topicstreams_route_cooldowns_total``, which
  the rows add up over every crawl and never reset. Their labels are the route's name (``[a-z0-9_-]{1,32}``), never
  its proxy: a node has as many series as routes, and no credential can reach a label. A database without
  ``route_status`` rows has none of these families (its exposition is what it was before routes).
* **Holes** (CONTRACT "Freshness"): the counter ``topicstreams_holes_total{engine}``, the visits that ended in a hole
  on each engine, from ``topic_rates`` (each pair's holes, never purged:
  :func:`topicstreams.storage.schedule_hours.hole_totals`); absent while no engine has a learnt pair.

With ``web.metrics_token`` set, the request must carry ``Authorization: Bearer TOKEN`` (401 and
``WWW-Authenticate: Bearer`` otherwise); the token is compared in constant time and never logged. A database that
does not answer is the app's 503, as for every other path.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from fastapi import APIRouter, FastAPI, Request
from fastapi.responses import PlainTextResponse, Response
from prometheus_client import CollectorRegistry
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.exposition import CONTENT_TYPE_LATEST, generate_latest
from sqlalchemy import Engine

from topicstreams import ENGINES
from topicstreams.engines.classify import ResponseClass
from topicstreams.engines.states import COOLING, PAUSED, ROUTE_OK, RUNNING, STALE, STOPPED
from topicstreams.reports.health_report import EngineReport, HealthReport, build_report
from topicstreams.storage import utcnow
from topicstreams.storage.metric_counts import read_metric_counts
from topicstreams.storage.schedule_hours import hole_totals
from topicstreams.web.tokens import bearer_token, same_token

PREFIX = "topicstreams_"
ENGINE_LABELS = ("engine", "node")
"""The labels of every ``topicstreams_engine_*`` and ``topicstreams_cycle_*`` series."""

ROUTE_LABELS = ("engine", "node", "route")
"""The labels of the ``topicstreams_route_*_total`` counters."""

ROUTE_UP_STATES = (ROUTE_OK, COOLING)
"""The route states ``topicstreams_route_up`` reads 1 for (it carries requests, a benched pair aside)."""

STATES = (RUNNING, COOLING, PAUSED, STALE, STOPPED)
"""The states ``topicstreams_engine_state`` has a series for, whatever the current one."""

QUANTILES = (("0.5", "p50_ms"), ("0.95", "p95_ms"))
"""``topicstreams_engine_latency_seconds{quantile}`` and the report's field each reads (milliseconds)."""

RESPONSE_COLUMNS = (
    (ResponseClass.OK, "ok"),
    (ResponseClass.HARD_BLOCK, "hard_blocks"),
    (ResponseClass.CHALLENGE, "challenges"),
    (ResponseClass.SOFT_BLOCK, "soft_blocks"),
    (ResponseClass.ERROR, "errors"),
)
"""``topicstreams_engine_responses_total{class}``: each response class and its ``engine_totals`` column."""

HELP = {
    "engine_health_score": "Target health score of the engine on the node, 0-100, smoothed (the band is taken "
    "from it: ok 80-100, degraded 50-79, critical below 50; a critical engine is paused). "
    "No series while there is no score (too few requests in the window).",
    "engine_parser_score": "Parser health of the engine on the node, 0-100: share of result pages that yielded "
    "items times the share of items with every required field. Low means a layout change, "
    "not a block.",
    "engine_state": "State of the engine on the node: 1 for the current state, 0 for the others (running; cooling "
    "= benched after a block until its cooldown ends; paused = held by the health score until a "
    "person runs `scrapy health resume`; stale = its crawl stopped writing without closing, killed "
    "or hung, for 3 heartbeats; stopped = its crawl closed).",
    "engine_latency_seconds": "Response time of the engine's pages on the node over the current health window, "
    "by quantile (0.5 = median, 0.95 = p95), in seconds.",
    "engine_requests": "Requests sent to the engine from the node (probes and canary queries included), "
    "counted at the end of each cycle.",
    "engine_responses": "Responses of the engine on the node by class: ok, hard_block (403/429/503, reset, "
    "timeout), challenge (CAPTCHA or wall), soft_block (a 200 page without results or "
    "too small), error (anything else), counted at the end of each cycle.",
    "engine_cooldowns": "Cooldowns (benches after a block) the engine started on the node.",
    "cycle_last_end_timestamp_seconds": "Unix time the engine's latest recorded cycle on the node ended "
    "(`time() - this`: how long since the node last accounted for its work).",
    "feed_events": "Feed events (a topic and an article, new to the feed) each engine was the first to find, "
    "over every node; the engines add up to the feed's events.",
    "news": "Articles stored (each once, whatever the number of engines and topics that found it).",
    "saturation_suspected": "1 when the node's exit IP looks saturated (enough robust engines cooling at once: "
    "the remedy is another node, not a slower crawl), else 0.",
    "node_heartbeat_timestamp_seconds": "Unix time a crawl on the node last wrote an engine's status "
    "(every response and at least every 15 s: `time() - this` above 3 "
    "heartbeats means no crawl runs there, and its engines read stale).",
    "route_up": "1 while the route carries requests on the node (its state is ok, or cooling: an engine benched on "
    "it after a block, the others going on), 0 when it is down (its proxy or the way to it fails on every engine it "
    "serves: benched until its probe passes), stale (its crawl stopped writing without closing) or stopped (its "
    "crawl closed).",
    "route_requests": "Requests the engine sent through the route from the node, over every crawl.",
    "route_responses": "Responses of the engine through the route on the node by class (ok, hard_block, challenge, "
    "soft_block, error, as in topicstreams_engine_responses_total), over every crawl.",
    "route_cooldowns": "Cooldowns (benches after a block) of the engine on the route only, on the node.",
    "holes": "Topic visits on the engine whose last results page held only new articles and could go no deeper "
    "(articles may have been missed between two visits), over every node and crawl.",
}
"""Each family's HELP text, by its name after the prefix (counters without ``_total``)."""


@dataclass(frozen=True)
class Snapshot:
    """What one scrape read: the health report of every node, ``engine_totals`` by (engine, node), the articles."""

    report: HealthReport
    totals: Mapping[tuple[str, str], Mapping[str, Any]] = field(default_factory=dict)
    news: int = 0
    holes: Mapping[str, int] = field(default_factory=dict)
    """Engine -> its holes (only engines with ``topic_rates`` rows)."""

    @classmethod
    def empty(cls) -> Snapshot:
        return cls(HealthReport("", [], {}, all_nodes=True))


def read_snapshot(
    db: Engine, *, node: str, enabled: Iterable[str], policy: Any, now: datetime | None = None
) -> Snapshot:
    """Read what the families show from ``db`` at ``now``: the health report of every node (``node``, ``enabled``
    and ``policy`` as ``scrapy health`` takes them), every ``engine_totals`` row, and the number of articles."""
    now = now or utcnow()
    report = build_report(db, node=node, enabled=enabled, policy=policy, all_nodes=True, now=now)
    counts = read_metric_counts(db)
    return Snapshot(report, counts.totals, counts.news, hole_totals(db))


def _engine_family(kind: type[Metric], name: str, *extra: str) -> Any:
    return kind(PREFIX + name, HELP[name], labels=[*ENGINE_LABELS, *extra])


def families(snapshot: Snapshot) -> list[Metric]:
    """The metric families of a snapshot (see the module docstring for what each holds)."""
    health = _engine_family(GaugeMetricFamily, "engine_health_score")
    parser = _engine_family(GaugeMetricFamily, "engine_parser_score")
    state = _engine_family(GaugeMetricFamily, "engine_state", "state")
    latency = _engine_family(GaugeMetricFamily, "engine_latency_seconds", "quantile")
    requests = _engine_family(CounterMetricFamily, "engine_requests")
    responses = _engine_family(CounterMetricFamily, "engine_responses", "class")
    cooldowns = _engine_family(CounterMetricFamily, "engine_cooldowns")
    cycle_end = _engine_family(GaugeMetricFamily, "cycle_last_end_timestamp_seconds")
    feed_events = CounterMetricFamily(PREFIX + "feed_events", HELP["feed_events"], labels=["engine"])
    articles = CounterMetricFamily(PREFIX + "news", HELP["news"], value=snapshot.news)
    saturation = GaugeMetricFamily(PREFIX + "saturation_suspected", HELP["saturation_suspected"], labels=["node"])
    heartbeat = GaugeMetricFamily(
        PREFIX + "node_heartbeat_timestamp_seconds", HELP["node_heartbeat_timestamp_seconds"], labels=["node"]
    )

    routes = route_families(snapshot.report) if snapshot.report.route_rows else []
    reports: list[EngineReport] = [each for each in snapshot.report.engines if each.state is not None]
    for report in reports:
        key = [report.engine, report.node]
        if report.score is not None:
            health.add_metric(key, report.score)
        if report.parser_score is not None:
            parser.add_metric(key, report.parser_score)
        for name in (*STATES, *([report.state] if report.state not in STATES else [])):
            state.add_metric([*key, name], 1.0 if name == report.state else 0.0)
        for quantile, attribute in QUANTILES:
            milliseconds = getattr(report, attribute)
            if milliseconds is not None:
                latency.add_metric([*key, quantile], milliseconds / 1000.0)
        totals = snapshot.totals.get((report.engine, report.node), {})
        requests.add_metric(key, totals.get("requests") or 0)
        for response_class, column in RESPONSE_COLUMNS:
            responses.add_metric([*key, response_class.value], totals.get(column) or 0)
        cooldowns.add_metric(key, totals.get("cooldowns") or 0)
        if totals.get("last_cycle_end") is not None:
            cycle_end.add_metric(key, totals["last_cycle_end"].timestamp())

    found: dict[str, int] = dict.fromkeys(ENGINES, 0)
    for (engine, _node), totals in snapshot.totals.items():
        found[engine] = found.get(engine, 0) + int(totals.get("new_events") or 0)
    for engine, count in found.items():
        feed_events.add_metric([engine], count)

    newest = snapshot.report.heartbeats()
    for node in sorted({report.node for report in reports}):
        verdict = snapshot.report.saturation.get(node)
        saturation.add_metric([node], 1.0 if verdict is not None and verdict.suspected else 0.0)
        if node in newest:
            heartbeat.add_metric([node], newest[node].timestamp())

    return [
        health,
        parser,
        state,
        latency,
        requests,
        responses,
        cooldowns,
        cycle_end,
        feed_events,
        articles,
        saturation,
        heartbeat,
        *routes,
        *hole_families(snapshot.holes),
    ]


def hole_families(totals: Mapping[str, int]) -> list[Metric]:
    """``topicstreams_holes_total{engine}`` (none without a ``topic_rates`` row)."""
    if not totals:
        return []
    holes = CounterMetricFamily(PREFIX + "holes", HELP["holes"], labels=["engine"])
    for engine, count in sorted(totals.items()):
        holes.add_metric([engine], count)
    return [holes]


def route_families(report: HealthReport) -> list[Metric]:
    """``topicstreams_route_up`` and the route counters of the report's ``route_status`` rows (see the module)."""
    up = GaugeMetricFamily(PREFIX + "route_up", HELP["route_up"], labels=["node", "route"])
    requests = CounterMetricFamily(PREFIX + "route_requests", HELP["route_requests"], labels=list(ROUTE_LABELS))
    responses = CounterMetricFamily(
        PREFIX + "route_responses", HELP["route_responses"], labels=[*ROUTE_LABELS, "class"]
    )
    cooldowns = CounterMetricFamily(PREFIX + "route_cooldowns", HELP["route_cooldowns"], labels=list(ROUTE_LABELS))
    for entry in report.route_states():
        up.add_metric([entry["node"], entry["route"]], 1.0 if entry["state"] in ROUTE_UP_STATES else 0.0)
    for row in report.route_rows:
        key = [row.engine, row.node, row.route]
        requests.add_metric(key, row.requests)
        for response_class, column in RESPONSE_COLUMNS:
            responses.add_metric([*key, response_class.value], getattr(row, column))
        cooldowns.add_metric(key, row.cooldowns)
    return [up, requests, responses, cooldowns]


class DatabaseCollector:
    """A prometheus_client collector whose every ``collect()`` reads the database anew (see the module
    docstring). A database error propagates: the app answers it with 503."""

    def __init__(self, db: Engine, *, node: str, enabled: Iterable[str], policy: Any) -> None:
        self.db = db
        self.node = node
        self.enabled = tuple(enabled)
        self.policy = policy

    def describe(self) -> list[Metric]:
        """The families, without reading the database (the registry checks their names on registration)."""
        return families(Snapshot.empty())

    def collect(self) -> Iterator[Metric]:
        yield from families(read_snapshot(self.db, node=self.node, enabled=self.enabled, policy=self.policy))


class AppRegistry:
    """An app's own registry, made at its first scrape (:meth:`get`): its database collector and nothing else — no
    process or platform metrics of the web server, and nothing shared with another app in the process (tests run
    several). The app keeps it as ``app.state.metrics`` (:func:`install`). Thread-safe."""

    def __init__(self, app: FastAPI) -> None:
        self.app = app
        self._lock = threading.Lock()
        self._registry: CollectorRegistry | None = None

    def get(self) -> CollectorRegistry:
        """The registry, made the first time."""
        with self._lock:
            if self._registry is None:
                state = self.app.state
                settings = state.settings
                registry = CollectorRegistry(auto_describe=False)
                registry.register(
                    DatabaseCollector(
                        state.reader.db, node=settings.node, enabled=settings.enabled, policy=settings.policy
                    )
                )
                self._registry = registry
            return self._registry


def install(app: FastAPI) -> None:
    """Add ``GET /metrics`` to ``app``, and the registry it answers from (``app.state.metrics``)."""
    app.state.metrics = AppRegistry(app)
    app.include_router(router)


def registry_for(app: FastAPI) -> CollectorRegistry:
    """The app's own registry (:class:`AppRegistry`)."""
    return app.state.metrics.get()


router = APIRouter()


@router.get("/metrics", include_in_schema=False)
def metrics(request: Request) -> Response:
    """The exposition of every family, read from the database now."""
    expected = request.app.state.settings.metrics_token
    if expected and not same_token(bearer_token(request), expected):
        return PlainTextResponse(
            "401 Unauthorized: /metrics asks for web.metrics_token as a Bearer token",
            status_code=401,
            headers={"WWW-Authenticate": "Bearer"},
        )
    return Response(generate_latest(registry_for(request.app)), media_type=CONTENT_TYPE_LATEST)
