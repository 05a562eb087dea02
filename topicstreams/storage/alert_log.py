"""The rows of alerts told to a person: ``alerts`` (one per alert: the event, where, what it said, how its
delivery went) and ``alert_deliveries`` (one per attempt to deliver it to one target, the target masked).

Plain functions, each one short transaction on a database handle, for the delivery thread
(:mod:`topicstreams.alerts.delivery`), the alerts command (``scrapy alerts list``) and whoever opens and resolves
an alert of a lasting state. The older writers of :mod:`topicstreams.storage.engine_status` (``add_alert``,
``set_alert_delivery``, ``read_alerts``) write and read the same table.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import datetime
from typing import Any, Protocol

from sqlalchemy import ColumnElement, Engine, insert, select, update

from topicstreams.storage.models import alert_deliveries_table as deliveries
from topicstreams.storage.models import alerts_table as alerts


class StoredAlert(Protocol):
    """What the ``alerts`` row of an alert is made of (:class:`topicstreams.alerts.events.Alert` has it)."""

    event: str
    engine: str | None
    node: str | None
    topic: str | None
    score: int | None
    band: str | None
    reasons: tuple[str, ...]
    text: str
    details: dict[str, Any]
    at: datetime


DELIVERY_COLUMNS = ("target", "attempt", "at", "ok", "detail")
"""The columns of a delivery attempt as :func:`read_recent` gives them."""


def jsonable(details: Mapping[str, Any] | None) -> dict[str, Any]:
    """``details`` as a JSON column holds it: dates and other objects as their text."""
    return json.loads(json.dumps(dict(details or {}), default=str))


def record_alert(db: Engine, alert: StoredAlert) -> int:
    """Store ``alert`` (its text as the message, ``created_at`` its time); returns its id."""
    with db.begin() as conn:
        return conn.execute(
            insert(alerts)
            .values(
                event=alert.event,
                engine=alert.engine,
                node=alert.node,
                topic=alert.topic,
                score=alert.score,
                band=alert.band,
                reasons=list(alert.reasons),
                message=alert.text,
                details=jsonable(alert.details),
                created_at=alert.at,
            )
            .returning(alerts.c.id)
        ).scalar_one()


def record_attempt(
    db: Engine, alert_id: int, target: str, attempt: int, ok: bool, detail: str | None, at: datetime
) -> None:
    """Store one attempt to deliver the alert ``alert_id`` to ``target`` (already masked)."""
    with db.begin() as conn:
        conn.execute(
            insert(deliveries).values(alert_id=alert_id, target=target, attempt=attempt, ok=ok, detail=detail, at=at)
        )


def set_delivery(db: Engine, alert_id: int, summary: str) -> None:
    """Sum up how the alert's deliveries went (``delivered 2/2``, ``failed: … (after 4 attempts)``)."""
    with db.begin() as conn:
        conn.execute(update(alerts).where(alerts.c.id == alert_id).values(delivery=summary))


def read_recent(db: Engine, since: datetime | None, limit: int = 100) -> list[dict[str, Any]]:
    """The alerts created at or after ``since`` (every one when None), newest first, at most ``limit``; each a
    mapping of the ``alerts`` columns with ``deliveries``: its attempts in order (``target``, ``attempt``, ``at``,
    ``ok``, ``detail``)."""
    query = select(alerts).order_by(alerts.c.created_at.desc(), alerts.c.id.desc()).limit(limit)
    if since is not None:
        query = query.where(alerts.c.created_at >= since)
    with db.connect() as conn:
        rows = [dict(row._mapping) for row in conn.execute(query)]
        attempts: dict[int, list[dict[str, Any]]] = {row["id"]: [] for row in rows}
        if rows:
            found = conn.execute(
                select(deliveries.c.alert_id, *(deliveries.c[name] for name in DELIVERY_COLUMNS))
                .where(deliveries.c.alert_id.in_(list(attempts)))
                .order_by(deliveries.c.alert_id, deliveries.c.id)
            )
            for row in found:
                values = dict(row._mapping)
                attempts[values.pop("alert_id")].append(values)
    for row in rows:
        row["deliveries"] = attempts[row["id"]]
    return rows


def _same(column: Any, value: str | None) -> ColumnElement[bool]:
    return column.is_(None) if value is None else column == value


def open_alert(db: Engine, event: str, engine: str | None, node: str | None) -> dict[str, Any] | None:
    """The newest unresolved alert of ``event`` for ``engine`` on ``node`` (None matching an empty column), or
    None."""
    query = (
        select(alerts)
        .where(
            alerts.c.event == event,
            _same(alerts.c.engine, engine),
            _same(alerts.c.node, node),
            alerts.c.resolved_at.is_(None),
        )
        .order_by(alerts.c.created_at.desc(), alerts.c.id.desc())
        .limit(1)
    )
    with db.connect() as conn:
        row = conn.execute(query).first()
    return dict(row._mapping) if row is not None else None


def resolve(db: Engine, event: str, engine: str | None, node: str | None, at: datetime) -> int:
    """Mark every unresolved alert of ``event`` for ``engine`` on ``node`` resolved at ``at``; how many were."""
    with db.begin() as conn:
        return conn.execute(
            update(alerts)
            .where(
                alerts.c.event == event,
                _same(alerts.c.engine, engine),
                _same(alerts.c.node, node),
                alerts.c.resolved_at.is_(None),
            )
            .values(resolved_at=at)
        ).rowcount
