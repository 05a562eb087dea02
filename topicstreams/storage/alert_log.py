"""The rows of alerts told to a person: ``alerts`` (one per alert: the event, where, what it said, how its
delivery went) and ``alert_deliveries`` (one per attempt to deliver it to one target, the target masked).

Plain functions, each one short transaction on a database handle, for the delivery thread
(:mod:`topicstreams.alerts.delivery`), the alerts command (``scrapy alerts list``) and whoever opens and resolves
an alert of a lasting state. The older writers of :mod:`topicstreams.storage.engine_status` (``add_alert``,
``set_alert_delivery``, ``read_alerts``) write and read the same table.

An alert's delivery state (:func:`delivery_state`) is read from its ``delivery`` summary: empty while it is
``pending``; ``delivered …``, ``failed …`` (a target never took it), ``abandoned: why`` (left over by a stopped
process and no longer worth sending, or its URLs are gone), ``no target``. A pending alert is held by the live
process that delivers it (``claimed_until``, renewed at each attempt); a stopping process hands what it could not
deliver to the next start of its node (:func:`release`), which takes each one (:func:`leftovers`, :func:`claim`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import datetime
from typing import Any, Protocol

from sqlalchemy import ColumnElement, Engine, insert, or_, select, update

from topicstreams.storage.db import immediate
from topicstreams.storage.models import alert_deliveries_table as deliveries
from topicstreams.storage.models import alerts_table as alerts


class StoredAlert(Protocol):
    """What the ``alerts`` row of an alert is made of (:class:`topicstreams.alerts.events.Alert` has it)."""

    event: str
    title: str
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


PENDING, DELIVERED, FAILED, ABANDONED, NO_TARGET = "pending", "delivered", "failed", "abandoned", "no_target"
"""The delivery states of an alert (:func:`delivery_state`)."""


def delivery_state(summary: str | None) -> str:
    """The state an alert's ``delivery`` summary tells: :data:`PENDING` (empty), :data:`ABANDONED`, :data:`FAILED`
    (some target never took it), :data:`NO_TARGET`, else :data:`DELIVERED` (the older writer's ``webhook 204`` too)."""
    if summary is None:
        return PENDING
    if summary.startswith("abandoned"):
        return ABANDONED
    if summary.startswith("failed") or "; failed: " in summary:
        return FAILED
    if summary == "no target":
        return NO_TARGET
    return DELIVERED


def record_alert(
    db: Engine,
    alert: StoredAlert,
    *,
    sender: str | None = None,
    targets: list[str] | None = None,
    held_until: datetime | None = None,
) -> int:
    """Store ``alert`` (its text as the message, ``created_at`` its time); returns its id. ``sender``: the node
    whose process owes its delivery to ``targets`` (masked), held by that process until ``held_until`` (None: left
    for the node's next start)."""
    with db.begin() as conn:
        return conn.execute(
            insert(alerts)
            .values(
                event=alert.event,
                title=alert.title,
                sender_node=sender,
                targets=targets,
                claimed_until=held_until,
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
    db: Engine,
    alert_id: int,
    target: str,
    attempt: int,
    ok: bool,
    detail: str | None,
    at: datetime,
    held_until: datetime | None = None,
) -> None:
    """Store one attempt to deliver the alert ``alert_id`` to ``target`` (already masked); ``held_until`` renews
    the delivering process's hold on a pending alert (not one it already left for the next start)."""
    with db.begin() as conn:
        conn.execute(
            insert(deliveries).values(alert_id=alert_id, target=target, attempt=attempt, ok=ok, detail=detail, at=at)
        )
        if held_until is not None:
            conn.execute(
                update(alerts)
                .where(alerts.c.id == alert_id, alerts.c.delivery.is_(None), alerts.c.claimed_until.is_not(None))
                .values(claimed_until=held_until)
            )


def set_delivery(db: Engine, alert_id: int, summary: str) -> bool:
    """Sum up how the alert's deliveries went (``delivered 2/2``, ``failed: … (after 4 attempts)``, ``abandoned:
    why``), unless it is summed up already (the first summary stays); whether this one was written."""
    with db.begin() as conn:
        return (
            conn.execute(
                update(alerts).where(alerts.c.id == alert_id, alerts.c.delivery.is_(None)).values(delivery=summary)
            ).rowcount
            == 1
        )


def release(db: Engine, alert_ids: list[int]) -> int:
    """Leave the pending alerts ``alert_ids`` to the next start of their node (a stopping process); how many were
    still pending."""
    if not alert_ids:
        return 0
    with db.begin() as conn:
        return conn.execute(
            update(alerts).where(alerts.c.id.in_(alert_ids), alerts.c.delivery.is_(None)).values(claimed_until=None)
        ).rowcount


LEFTOVER_LIMIT = 500
"""The most leftovers one start takes up (the oldest first)."""


def leftovers(db: Engine, node: str, now: datetime, limit: int = LEFTOVER_LIMIT) -> list[dict[str, Any]]:
    """The pending alerts of ``node`` no live process holds at ``now`` (left at a stop, or held by a process that
    died), oldest first; each a mapping of the ``alerts`` columns with ``done``: the targets that took it already,
    and ``tried``: attempts made per target."""
    query = (
        select(alerts)
        .where(
            alerts.c.sender_node == node,
            alerts.c.delivery.is_(None),
            or_(alerts.c.claimed_until.is_(None), alerts.c.claimed_until < now),
        )
        .order_by(alerts.c.id)
        .limit(limit)
    )
    with db.connect() as conn:
        rows = [dict(row._mapping) for row in conn.execute(query)]
        ids = [row["id"] for row in rows]
        attempts = (
            conn.execute(
                select(deliveries.c.alert_id, deliveries.c.target, deliveries.c.attempt, deliveries.c.ok).where(
                    deliveries.c.alert_id.in_(ids)
                )
            ).all()
            if ids
            else []
        )
    for row in rows:
        row["done"], row["tried"] = set(), {}
    by_id = {row["id"]: row for row in rows}
    for alert_id, target, attempt, ok in attempts:
        row = by_id[alert_id]
        row["tried"][target] = max(row["tried"].get(target, 0), attempt)
        if ok:
            row["done"].add(target)
    return rows


def claim(db: Engine, alert_id: int, until: datetime, now: datetime) -> bool:
    """Take the pending alert ``alert_id`` for this process until ``until``, unless a live process holds it (another
    start took it first): whether this caller has it. A compare-and-set, as :mod:`~topicstreams.storage.alert_states`
    does it (one of two processes starting at once gets it)."""
    with immediate(db.connect()) as conn, conn.begin():
        return (
            conn.execute(
                update(alerts)
                .where(
                    alerts.c.id == alert_id,
                    alerts.c.delivery.is_(None),
                    or_(alerts.c.claimed_until.is_(None), alerts.c.claimed_until < now),
                )
                .values(claimed_until=until)
            ).rowcount
            == 1
        )


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
