"""``route_status``: each (engine, route) pair's live state on each node (CONTRACT "Routes"), kept by the health
extension beside the engine's own row (:mod:`topicstreams.storage.engine_status`), read by ``scrapy routes``,
``scrapy health --json`` (``route_states``), ``/api/health``, ``/monitor`` and ``/metrics``.

A pair's ``state`` is ``ok``, ``cooling`` (benched until ``cooling_until``) or ``down`` (its route fails on every
engine it serves); ``score`` and ``band`` are the pair's own health from the same model as the engine's; ``proxy``
is the route's exit as it may be shown (``direct`` or the proxy's scheme, host and port: never its credentials).
A row unwritten for three of its heartbeats reads ``stale``; a closed crawl's ``stopped`` (as engine rows do).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Engine, Float, Integer, String, select, update
from sqlalchemy.orm import Mapped, mapped_column

from topicstreams.engines.states import COOLING, ROUTE_DOWN, ROUTE_OK, STALE, STOPPED
from topicstreams.storage.db import upsert, utcnow
from topicstreams.storage.heartbeats import stale_after
from topicstreams.storage.table_base import Base, ClassCounts, UTCDateTime, count_column

COUNTS = ("requests", "ok", "hard_blocks", "challenges", "soft_blocks", "errors", "cooldowns")
"""The pair's counters: added up over every crawl and never reset (the ``/metrics`` counters with a ``route``)."""


class RouteStatus(ClassCounts, Base):
    """The live state of one engine on one route on one node (see the module docstring), and its counters
    (:data:`COUNTS`), added up over every crawl."""

    __tablename__ = "route_status"

    node: Mapped[str] = mapped_column(String, primary_key=True)
    route: Mapped[str] = mapped_column(String(32), primary_key=True)
    engine: Mapped[str] = mapped_column(String(32), primary_key=True)
    proxy: Mapped[str] = mapped_column(String, default="direct")
    state: Mapped[str] = mapped_column(String(16), default=ROUTE_OK)
    score: Mapped[int | None] = mapped_column(Integer)
    band: Mapped[str] = mapped_column(String(16), default="unknown")
    cooling_until: Mapped[datetime | None] = mapped_column(UTCDateTime())
    reason: Mapped[str | None] = mapped_column(String)
    """What the pair's latest failure was (a route's failure when down; a block's when cooling), None after an ok."""
    cooldowns: Mapped[int] = count_column()
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime())
    heartbeat_seconds: Mapped[float | None] = mapped_column(Float)
    stopped_at: Mapped[datetime | None] = mapped_column(UTCDateTime())


route_status_table = RouteStatus.__table__


@dataclass(frozen=True)
class RouteStatusRow:
    node: str
    route: str
    engine: str
    proxy: str
    state: str
    score: int | None
    band: str
    cooling_until: datetime | None
    reason: str | None
    updated_at: datetime
    heartbeat_seconds: float | None
    stopped_at: datetime | None
    requests: int = 0
    ok: int = 0
    hard_blocks: int = 0
    challenges: int = 0
    soft_blocks: int = 0
    errors: int = 0
    cooldowns: int = 0

    def state_at(self, now: datetime) -> str:
        """The pair's state at ``now``: ``stopped`` / ``stale`` once no crawl is behind it; a cooldown (or a route's
        bench) that has ended reads ``ok``."""
        if self.stopped_at is not None:
            return STOPPED
        if now - self.updated_at > stale_after(self.heartbeat_seconds):
            return STALE
        if self.state == COOLING and (self.cooling_until is None or self.cooling_until <= now):
            return ROUTE_OK
        return self.state


def save_route_status(
    db: Engine, node: str, route: str, engine: str, *, counts: Mapping[str, int] | None = None, **values: Any
) -> None:
    """Insert or update the pair's row (``updated_at`` defaults to now, ``stopped_at`` to None); ``counts`` (of
    :data:`COUNTS`) are added to its counters."""
    values = {"updated_at": utcnow(), "stopped_at": None, **values}
    row = {"node": node, "route": route, "engine": engine, **values}
    table = route_status_table
    with db.begin() as conn:
        conn.execute(upsert(conn.dialect, table, ["node", "route", "engine"], row, update=list(values)))
        added = {name: table.c[name] + count for name, count in (counts or {}).items() if count}
        if added:
            conn.execute(
                update(table)
                .where(table.c.node == node, table.c.route == route, table.c.engine == engine)
                .values(**added)
            )


def read_route_statuses(
    db: Engine, node: str | None = None, engines: Iterable[str] | None = None
) -> list[RouteStatusRow]:
    """The pairs' rows of ``node`` (every node when None), by node, route, engine."""
    table = route_status_table
    query = select(table).order_by(table.c.node, table.c.route, table.c.engine)
    if node is not None:
        query = query.where(table.c.node == node)
    if engines is not None:
        query = query.where(table.c.engine.in_(list(engines)))
    with db.connect() as conn:
        return [RouteStatusRow(**row._mapping) for row in conn.execute(query)]


def mark_routes_stopped(db: Engine, engine: str, node: str, at: datetime | None = None) -> None:
    """The engine's crawl on the node closed: its pairs read ``stopped``."""
    table = route_status_table
    with db.begin() as conn:
        conn.execute(
            update(table).where(table.c.engine == engine, table.c.node == node).values(stopped_at=at or utcnow())
        )


def route_state(rows: Iterable[RouteStatusRow], now: datetime) -> str:
    """A route's own state from its engines' rows on one node: ``down`` when it is down for every engine running on
    it, ``cooling`` when any engine cools on it, ``stale``/``stopped`` when no crawl is behind any row, else ``ok``."""
    states = [row.state_at(now) for row in rows]
    live = [state for state in states if state not in (STALE, STOPPED)]
    if not live:
        return STOPPED if states and all(state == STOPPED for state in states) else STALE
    if all(state == ROUTE_DOWN for state in live):
        return ROUTE_DOWN
    if any(state == COOLING for state in live):
        return COOLING
    return ROUTE_OK
