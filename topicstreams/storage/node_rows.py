"""Membership rows (the ``nodes`` table): one per crawl process of a node, on SQLite and PostgreSQL alike.

A process writes its row when its first engine starts (:func:`join`), again at each heartbeat with its engines and
the topics each scraped in the last interval (:func:`beat`), and once more when it stops cleanly (:func:`stop`). A
process that died keeps its last heartbeat: readers call it stale. ``scrapy nodes`` groups the rows by node id
(:func:`node_rows`). Rows whose heartbeat is older than :data:`FORGET_AFTER` are deleted when a process joins.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import Engine, delete, select, update

from topicstreams.storage.db import upsert, utcnow
from topicstreams.storage.models import nodes_table as nodes

FORGET_AFTER = timedelta(days=7)
"""A process row not heard of for this long is deleted (its node long gone or restarted since)."""


@dataclass(frozen=True)
class NodeProcessRow:
    node: str
    process: str
    engines: list[str]
    started_at: datetime
    heartbeat_at: datetime
    version: str
    assignment: str
    stopped_at: datetime | None
    scraped: dict[str, int]


def join(
    db: Engine,
    *,
    node: str,
    process: str,
    engines: Sequence[str],
    version: str,
    assignment: str,
    now: datetime | None = None,
) -> None:
    """The process's row, written anew (a restarted process has a new token, so a new row)."""
    now = now or utcnow()
    values = {
        "node": node,
        "process": process,
        "engines": sorted(engines),
        "started_at": now,
        "heartbeat_at": now,
        "version": version,
        "assignment": assignment,
        "stopped_at": None,
        "scraped": {},
    }
    with db.begin() as conn:
        conn.execute(delete(nodes).where(nodes.c.heartbeat_at < now - FORGET_AFTER))
        conn.execute(
            upsert(
                db.dialect,
                nodes,
                ["node", "process"],
                values,
                ["engines", "heartbeat_at", "version", "assignment", "stopped_at", "scraped"],
            )
        )


def beat(
    db: Engine,
    *,
    node: str,
    process: str,
    engines: Sequence[str],
    scraped: Mapping[str, int],
    now: datetime | None = None,
) -> None:
    """A heartbeat: the row's engines, the topics scraped in the last interval per engine, the time."""
    with db.begin() as conn:
        conn.execute(
            update(nodes)
            .where(nodes.c.node == node, nodes.c.process == process)
            .values(engines=sorted(engines), scraped=dict(scraped), heartbeat_at=now or utcnow())
        )


def stop(db: Engine, *, node: str, process: str, scraped: Mapping[str, int], now: datetime | None = None) -> None:
    """The process stopped cleanly: its last heartbeat and the time of the stop."""
    now = now or utcnow()
    with db.begin() as conn:
        conn.execute(
            update(nodes)
            .where(nodes.c.node == node, nodes.c.process == process)
            .values(scraped=dict(scraped), heartbeat_at=now, stopped_at=now)
        )


def node_rows(db: Engine) -> list[NodeProcessRow]:
    """Every process row, by node id, then start."""
    with db.connect() as conn:
        rows = conn.execute(select(nodes).order_by(nodes.c.node, nodes.c.started_at, nodes.c.process)).all()
    return [
        NodeProcessRow(
            row.node,
            row.process,
            list(row.engines or []),
            row.started_at,
            row.heartbeat_at,
            row.version,
            row.assignment,
            row.stopped_at,
            dict(row.scraped or {}),
        )
        for row in rows
    ]
