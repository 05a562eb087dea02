"""The topics table: the standing list of topics followed, and one-off topics.

Every function takes an Engine and runs in one transaction. Names are trimmed of surrounding
white space; an empty name raises ``ValueError``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import Connection, Engine, select, update

from topicstreams.storage.db import immediate, insert_ignore
from topicstreams.storage.models import topics_table as topics


@dataclass(frozen=True, slots=True)
class TopicInfo:
    id: int
    name: str
    active: bool
    created_at: datetime


def clean_names(names: Iterable[str]) -> list[str]:
    """*names* trimmed, without repeats, in their first order; ``ValueError`` on an empty one."""
    if isinstance(names, str):
        raise TypeError("expected an iterable of topic names, got a single string")
    cleaned: dict[str, None] = {}
    for position, name in enumerate(names, 1):
        if not isinstance(name, str):
            raise TypeError(f"topic name #{position} is a {type(name).__name__}, not a string")
        stripped = name.strip()
        if not stripped:
            raise ValueError(f"topic name #{position} is empty")
        cleaned[stripped] = None
    return list(cleaned)


def add_topics(db: Engine, names: Iterable[str]) -> list[str]:
    """Put *names* on the standing list: insert them active, re-activate inactive ones.

    Returns the names newly added or re-activated (names already active are left out).
    """
    wanted = clean_names(names)
    if not wanted:
        return []
    with immediate(db.connect()) as conn, conn.begin():
        existing = _existing(conn, wanted)
        _insert_missing(conn, [n for n in wanted if n not in existing], active=True)
        reactivate = [n for n, (_, active) in existing.items() if not active]
        if reactivate:
            conn.execute(update(topics).where(topics.c.name.in_(reactivate)).values(active=True))
    return [n for n in wanted if n not in existing or not existing[n][1]]


def seed_topics(db: Engine, names: Iterable[str]) -> list[str]:
    """Insert the missing ones of *names* as active; never re-activate a deactivated topic.

    Returns the names inserted.
    """
    wanted = clean_names(names)
    if not wanted:
        return []
    with immediate(db.connect()) as conn, conn.begin():
        existing = _existing(conn, wanted)
        missing = [n for n in wanted if n not in existing]
        _insert_missing(conn, missing, active=True)
    return missing


def ensure_topics(db: Engine, names: Iterable[str], active: bool = False) -> dict[str, int]:
    """Insert the missing ones of *names* (inactive by default); return name → id for all of them.

    Existing topics keep their state. For one-off runs on topics off the standing list.
    """
    wanted = clean_names(names)
    if not wanted:
        return {}
    with immediate(db.connect()) as conn, conn.begin():
        return topic_ids(conn, wanted, active=active)


def topic_ids(conn: Connection, names: list[str], *, active: bool = False) -> dict[str, int]:
    """name → id of already clean *names*, inserting missing ones with *active*, on *conn*'s transaction."""
    existing = _existing(conn, names)
    missing = [n for n in names if n not in existing]
    if missing:
        _insert_missing(conn, missing, active=active)
        existing.update(_existing(conn, missing))
    return {name: existing[name][0] for name in names}


def set_active(db: Engine, names: Iterable[str], active: bool) -> list[str]:
    """Activate or deactivate the topics *names*; return the names that do not exist."""
    wanted = clean_names(names)
    if not wanted:
        return []
    with immediate(db.connect()) as conn, conn.begin():
        existing = _existing(conn, wanted)
        found = [n for n in wanted if n in existing]
        if found:
            conn.execute(update(topics).where(topics.c.name.in_(found)).values(active=active))
    return [n for n in wanted if n not in existing]


def list_topics(db: Engine) -> list[TopicInfo]:
    """All topics, ordered by name."""
    query = select(topics.c.id, topics.c.name, topics.c.active, topics.c.created_at).order_by(topics.c.name)
    with db.connect() as conn:
        return [TopicInfo(*row) for row in conn.execute(query)]


def active_topics(db: Engine) -> list[tuple[int, str]]:
    """(id, name) of the active topics, ordered by name."""
    query = select(topics.c.id, topics.c.name).where(topics.c.active.is_(True)).order_by(topics.c.name)
    with db.connect() as conn:
        return [(row.id, row.name) for row in conn.execute(query)]


# SQLite allows at most 32766 host parameters per statement (999 before 3.32); stay well below.
_CHUNK = 500


def _existing(conn: Connection, names: list[str]) -> dict[str, tuple[int, bool]]:
    found: dict[str, tuple[int, bool]] = {}
    for start in range(0, len(names), _CHUNK):
        query = select(topics.c.name, topics.c.id, topics.c.active).where(
            topics.c.name.in_(names[start : start + _CHUNK])
        )
        found.update((row.name, (row.id, bool(row.active))) for row in conn.execute(query))
    return found


def _insert_missing(conn: Connection, names: list[str], *, active: bool) -> None:
    """Insert *names* unless they exist. SQLite: in the order given (ids follow it; writers take turns anyway).
    PostgreSQL: in name order, since an insert waits for another transaction's uncommitted row of the same name:
    two writers inserting the same new names in different orders would wait for each other (a deadlock)."""
    if not names:
        return
    if conn.dialect.name != "sqlite":
        names = sorted(names)
    conn.execute(insert_ignore(conn.dialect, topics, ["name"]), [{"name": n, "active": active} for n in names])
