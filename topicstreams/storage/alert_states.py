"""The states alerts stand for (``alert_states``): one row per key, changed by a compare-and-set.

Many processes watch the same things (every crawl process judges every topic's silence; every process of a node
sees its network): each may see a transition, and exactly one of them must send its alert. :func:`transition`
moves a key from one of some states to another in one short transaction and says whether this caller made the
move: ``INSERT … ON CONFLICT DO NOTHING`` of the key in its initial state, then ``UPDATE … WHERE key = ? AND state
IN (…)``. Under concurrent callers the update succeeds for one of them only: SQLite takes the write lock at
``BEGIN IMMEDIATE``, so the callers take turns; PostgreSQL makes a second ``UPDATE`` of the row wait for the first
and re-check its ``WHERE`` on the row the first left, which no longer matches.

Keys are the caller's: ``silence:<topic>`` (:mod:`topicstreams.alerts.topic_silence`), ``network:<node>``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Engine, select, update

from topicstreams.storage.db import immediate, insert_ignore
from topicstreams.storage.models import alert_states_table as alert_states

INITIAL = "ok"
"""The state a key is in before its first transition (a missing row), unless the caller names another."""


@dataclass(frozen=True)
class AlertStateRow:
    key: str
    state: str
    since: datetime | None
    """When the key entered its state (None: still the initial state it was inserted in)."""
    changed_at: datetime
    details: dict[str, Any] | None


def transition(
    db: Engine,
    key: str,
    from_states: Iterable[str],
    to_state: str,
    at: datetime,
    details: Mapping[str, Any] | None = None,
    *,
    initial: str = INITIAL,
) -> bool:
    """Move ``key`` from any of ``from_states`` to ``to_state`` at ``at`` (keeping ``details``): True for the one
    caller that made the move, False when the key was in another state (another caller moved it first).

    A key without a row is in state ``initial`` (its row is inserted so)."""
    allowed = list(from_states)
    if not allowed:
        raise ValueError("transition() needs at least one state to move from")
    with immediate(db.connect()) as conn, conn.begin():
        conn.execute(
            insert_ignore(conn.dialect, alert_states).values(
                key=key, state=initial, since=None, changed_at=at, details=None
            )
        )
        moved = conn.execute(
            update(alert_states)
            .where(alert_states.c.key == key, alert_states.c.state.in_(allowed))
            .values(state=to_state, since=at, changed_at=at, details=dict(details) if details is not None else None)
        ).rowcount
    return moved == 1


def read_state(db: Engine, key: str) -> AlertStateRow | None:
    with db.connect() as conn:
        row = conn.execute(select(alert_states).where(alert_states.c.key == key)).first()
    return AlertStateRow(**row._mapping) if row is not None else None


def read_states(db: Engine, prefix: str = "") -> dict[str, AlertStateRow]:
    """Every row whose key starts with ``prefix``, by key."""
    query = select(alert_states).order_by(alert_states.c.key)
    if prefix:
        query = query.where(alert_states.c.key.startswith(prefix, autoescape=True))
    with db.connect() as conn:
        return {row.key: AlertStateRow(**row._mapping) for row in conn.execute(query)}
