"""The rows of an engine's health: ``engine_status`` (each engine's live state per node), ``alerts``,
``health_windows``.

Every function takes a database handle and runs in one short transaction. One process writes an engine's status
on a node (an engine's profile lock allows no second one); ``scrapy health resume`` writes only the pause's end,
and a running process never writes ``state`` over it: while it holds the engine paused, its updates leave the
``state`` column alone (:func:`save_status` with ``state=None``).

Plain values in and out: the columns as keyword values or mappings, the rows as :class:`EngineStatusRow` and
:class:`WindowTotals`. What they mean (scores, baselines, costs) is the health model's to say: the health
extension turns them into its objects (:mod:`topicstreams.extensions.watch`).
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import Engine, func, insert, select, update

from topicstreams.engines.states import COOLING, PAUSED, RUNNING, STALE, STOPPED
from topicstreams.storage.db import upsert, utcnow
from topicstreams.storage.heartbeats import HEARTBEAT, stale_after
from topicstreams.storage.models import alerts_table as alerts
from topicstreams.storage.models import engine_status_table as engine_status
from topicstreams.storage.models import health_windows_table as health_windows

VOID_BAND = "unknown"
"""The band of a row whose score is void (a resumed engine's, until a new score is computed)."""

STALE_AFTER = stale_after(HEARTBEAT)
"""A row written at the default heartbeat and not written for this long has no running crawl behind it."""


@dataclass(frozen=True)
class EngineStatusRow:
    engine: str
    node: str
    score: int | None
    band: str
    state: str
    cooling_until: datetime | None
    reasons: list[str]
    updated_at: datetime
    raw_score: int | None
    p50_ms: float | None
    p95_ms: float | None
    window_counts: dict[str, Any] | None
    paused_at: datetime | None
    resumed_at: datetime | None
    pace_multiplier: float | None
    parser_score: int | None = None
    parser_reasons: list[str] = field(default_factory=list)
    canary_mismatches: list[str] = field(default_factory=list)
    """The canary queries whose latest answer was wrong."""
    cost: dict[str, Any] | None = None
    last_canary: dict[str, Any] | None = None
    """The latest canary check: ``{"query", "at" (ISO 8601), "matched", "results", "problem"}``."""
    coverage: dict[str, Any] | None = None
    """The coverage signal: ``{"window", "baseline", "drop"}`` (None: not judged yet)."""
    connection_failures_since: datetime | None = None
    """When the engine's current run of connection-level failures began (None: its last answer was a response)."""
    stopped_at: datetime | None = None
    """When the engine's crawl closed (None while a crawl writes the row)."""
    heartbeat_seconds: float | None = None
    """How often the crawl writing the row writes it at least (None: :data:`HEARTBEAT`)."""
    window_holes: int | None = None
    """Holes within the last ``health.window`` seconds when the row was written (None: no visit told)."""

    @property
    def stale_after(self) -> timedelta:
        """How long the row may go unwritten before it is stale (see :mod:`topicstreams.storage.heartbeats`)."""
        return stale_after(self.heartbeat_seconds)

    @property
    def stopped(self) -> bool:
        """Whether the engine's crawl closed (and no crawl has written the row since)."""
        return self.stopped_at is not None

    def stale_at(self, now: datetime) -> bool:
        """Whether the row's process is gone without closing: not written for :attr:`stale_after` (it was killed,
        hangs, or cannot reach the database), and not stopped."""
        return not self.stopped and now - self.updated_at > self.stale_after

    def gone_at(self, now: datetime) -> bool:
        """Whether no running crawl is behind the row at ``now``: stopped or stale."""
        return self.stopped or self.stale_at(now)

    def state_at(self, now: datetime) -> str:
        """The state as it stands at ``now``: ``stopped`` once the crawl closed, ``stale`` once its process went
        silent (:meth:`stale_at`), whatever the stored state; a cooldown that has ended is ``running`` again."""
        if self.stopped:
            return STOPPED
        if self.stale_at(now):
            return STALE
        if self.state == COOLING and (self.cooling_until is None or self.cooling_until <= now):
            return RUNNING
        return self.state


def read_statuses(db: Engine, node: str | None = None, engines: Iterable[str] | None = None) -> list[EngineStatusRow]:
    """The status rows of ``node`` (every node when None), optionally of some engines, by node then engine."""
    query = select(engine_status).order_by(engine_status.c.node, engine_status.c.engine)
    if node is not None:
        query = query.where(engine_status.c.node == node)
    if engines is not None:
        query = query.where(engine_status.c.engine.in_(list(engines)))
    with db.connect() as conn:
        return [EngineStatusRow(**row._mapping) for row in conn.execute(query)]


def read_status(db: Engine, engine_name: str, node: str) -> EngineStatusRow | None:
    rows = read_statuses(db, node, [engine_name])
    return rows[0] if rows else None


def save_status(db: Engine, engine_name: str, node: str, *, state: str | None, **values: Any) -> None:
    """Insert or update the status of an engine on a node. ``state=None`` leaves the stored state as it is
    (a new row then starts ``running``); ``values`` are other columns (``updated_at`` defaults to now; ``stopped_at``
    to None: a crawl writing the row runs)."""
    values = {"updated_at": utcnow(), "stopped_at": None, **values}
    if state is not None:
        values["state"] = state
    row = {"engine": engine_name, "node": node, **values}
    with db.begin() as conn:
        conn.execute(upsert(conn.dialect, engine_status, ["engine", "node"], row, update=list(values)))


def mark_stopped(db: Engine, engine_name: str, node: str, at: datetime | None = None) -> None:
    """The engine's crawl on the node closed at ``at`` (now): its row reads ``stopped`` until a crawl writes it again.
    The stored state stays (a paused engine is still paused when its crawl starts again)."""
    at = at or utcnow()
    with db.begin() as conn:
        conn.execute(
            update(engine_status)
            .where(engine_status.c.engine == engine_name, engine_status.c.node == node)
            .values(stopped_at=at, updated_at=at)
        )


def pause(db: Engine, engine_name: str, node: str, at: datetime | None = None, **values: Any) -> None:
    """Hold the engine paused on the node from ``at`` (now) until :func:`resume`."""
    save_status(db, engine_name, node, state=PAUSED, paused_at=at or utcnow(), cooling_until=None, **values)


def resume(db: Engine, engine_name: str, node: str, at: datetime | None = None) -> bool:
    """Lift the engine's pause on the node; its open pause alerts are resolved. False when it was not paused.

    The score that paused it is void from then on (score and band read unknown until a new one is computed);
    the pace multiplier in force stays, so the engine comes back slowed. The row's ``updated_at`` and ``stopped_at``
    stay as they were: a person's resume says nothing of the crawl behind the row (a stale or stopped one stays so)."""
    at = at or utcnow()
    with db.begin() as conn:
        lifted = conn.execute(
            update(engine_status)
            .where(engine_status.c.engine == engine_name, engine_status.c.node == node, engine_status.c.state == PAUSED)
            .values(state=RUNNING, resumed_at=at, score=None, raw_score=None, band=VOID_BAND, reasons=[])
        ).rowcount
        if lifted:
            conn.execute(
                update(alerts)
                .where(
                    alerts.c.engine == engine_name,
                    alerts.c.node == node,
                    alerts.c.event == "paused",
                    alerts.c.resolved_at.is_(None),
                )
                .values(resolved_at=at)
            )
    return bool(lifted)


def add_alert(
    db: Engine, engine_name: str, node: str, *, score: int | None, band: str, reasons: list[str], message: str
) -> int:
    """Record an alert; returns its id."""
    with db.begin() as conn:
        return conn.execute(
            insert(alerts)
            .values(
                engine=engine_name,
                node=node,
                score=score,
                band=band,
                reasons=reasons,
                message=message,
                created_at=utcnow(),
            )
            .returning(alerts.c.id)
        ).scalar_one()


def set_alert_delivery(db: Engine, alert_id: int, delivery: str) -> None:
    with db.begin() as conn:
        conn.execute(update(alerts).where(alerts.c.id == alert_id).values(delivery=delivery))


def read_alerts(db: Engine, engine_name: str | None = None, node: str | None = None) -> list[dict[str, Any]]:
    query = select(alerts).order_by(alerts.c.id)
    if engine_name is not None:
        query = query.where(alerts.c.engine == engine_name)
    if node is not None:
        query = query.where(alerts.c.node == node)
    with db.connect() as conn:
        return [dict(row._mapping) for row in conn.execute(query)]


def save_window(
    db: Engine, engine_name: str, node: str, start: datetime, end: datetime, counts: Mapping[str, Any]
) -> None:
    """Keep one window of the engine's responses for later baselines (``counts``: the ``health_windows``
    columns of the window — requests, the counts per class, items, bytes, latency percentiles …)."""
    with db.begin() as conn:
        conn.execute(
            insert(health_windows).values(engine=engine_name, node=node, window_start=start, window_end=end, **counts)
        )


@dataclass(frozen=True)
class WindowTotals:
    """Stored windows of an engine on a node, summed; the p95 is the median of the windows' p95s (0.0 when none
    has one)."""

    requests: int = 0
    hard_blocks: int = 0
    challenges: int = 0
    soft_blocks: int = 0
    p95_latency_ms: float = 0.0
    bytes: int = 0
    browser_seconds: float = 0.0
    valid_items: int = 0


SUMMED = ("requests", "hard_blocks", "challenges", "soft_blocks", "bytes", "browser_seconds", "valid_items")
"""The ``health_windows`` columns :func:`baseline_totals` adds up."""


def baseline_totals(db: Engine, engine_name: str, node: str, days: float, now: datetime | None = None) -> WindowTotals:
    """The engine's windows on the node that ended over the last ``days`` days, the most recent day left out,
    summed (the engine's own normal)."""
    now = now or utcnow()
    period = (
        health_windows.c.engine == engine_name,
        health_windows.c.node == node,
        health_windows.c.window_end >= now - timedelta(days=days),
        health_windows.c.window_end < now - timedelta(days=1),
    )
    with db.connect() as conn:
        totals = conn.execute(
            select(*(func.coalesce(func.sum(health_windows.c[name]), 0) for name in SUMMED)).where(*period)
        ).one()
        p95s = list(
            conn.execute(
                select(health_windows.c.p95_latency_ms).where(*period, health_windows.c.p95_latency_ms.is_not(None))
            ).scalars()
        )
    total = dict(zip(SUMMED, totals, strict=True))
    return WindowTotals(
        requests=int(total["requests"]),
        hard_blocks=int(total["hard_blocks"]),
        challenges=int(total["challenges"]),
        soft_blocks=int(total["soft_blocks"]),
        p95_latency_ms=float(statistics.median(p95s) if p95s else 0.0),
        bytes=int(total["bytes"]),
        browser_seconds=float(total["browser_seconds"]),
        valid_items=int(total["valid_items"]),
    )
