"""Reading and setting rows of lease mode's ``schedule`` table in the tests, by topic name (what the
tests of the schedule's statements and of the leased topic supply both look at)."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import Engine, text


def rows(db: Engine, engine: str = "google") -> dict[str, dict]:
    """The engine's schedule rows by topic name."""
    with db.connect() as conn:
        found = (
            conn.execute(
                text("""
            SELECT t.name, s.* FROM schedule s JOIN topics t ON t.id = s.topic_id WHERE s.engine = :engine"""),
                {"engine": engine},
            )
            .mappings()
            .all()
        )
    return {row["name"]: dict(row) for row in found}


def set_due(db: Engine, due: dict[str, datetime], engine: str = "google") -> None:
    """Each named topic's row due (and its slot anchored) at the given moment."""
    with db.begin() as conn:
        for name, when in due.items():
            conn.execute(
                text("""
                UPDATE schedule SET due_at = :due, slot_at = :due
                WHERE engine = :engine AND topic_id = (SELECT id FROM topics WHERE name = :name)"""),
                {"due": when, "engine": engine, "name": name},
            )
