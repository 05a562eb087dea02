"""The stored logs' read half: ``scraper_logs`` read back newest first by the web app (a crawl process writes
them with :mod:`topicstreams.storage.log_records`).

With the web app's read-only handle (:func:`read_logs`): newest first by ``(at, id)``, filtered by engine,
node, a minimum level and a text, paged by an opaque keyset cursor (:class:`LogCursor`), never OFFSET and never a
count. One filter is served by its index (``(engine, at, id)``, ``(node, at, id)``, ``(level, at, id)`` or
``(at, id)``); the others (a text, a second filter, a minimum level that spans several names) are checked on at
most :data:`SCAN_ROWS` rows of that index per request, so a request costs the same on a million rows as on a
thousand. A page may therefore hold fewer than ``limit`` records, or none, and still have a ``next`` cursor: the
records older than those looked at have not been looked at yet.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from sqlalchemy import Engine, select, tuple_

from topicstreams.storage.cursors import decode_key, encode_key
from topicstreams.storage.log_records import LEVELS
from topicstreams.storage.models import scraper_logs_table as scraper_logs

__all__ = ["LEVELS", "LogCursor", "LogCursorError", "LogEntry", "LogFilter", "LogPage", "read_logs"]

SCAN_ROWS = 10_000
"""Rows of the driving index a read looks at, at most, to find the records of its other filters."""


class LogCursorError(ValueError):
    """A cursor that is not one this app gave out for the logs."""


@dataclass(frozen=True, slots=True, order=True)
class LogCursor:
    """A record's place in the logs' order, ``(at, id)``; opaque to clients (URL-safe base64 of a JSON array)."""

    at: datetime
    id: int

    def encode(self) -> str:
        return encode_key(self.at, self.id)

    @classmethod
    def decode(cls, value: str) -> LogCursor:
        try:
            moment, row_id = decode_key(value, 2)
        except ValueError:
            raise LogCursorError("not a cursor of these logs") from None
        if moment.tzinfo is None or not isinstance(row_id, int) or isinstance(row_id, bool) or not 0 <= row_id < 2**63:
            raise LogCursorError("not a cursor of these logs")
        try:
            return cls(moment.astimezone(UTC), row_id)
        except (OverflowError, ValueError):  # a time at the end of the calendar, moved past it by its offset
            raise LogCursorError("not a cursor of these logs") from None


@dataclass(frozen=True)
class LogFilter:
    """Which records: of ``engine``, of ``node``, at ``level`` or above (a name of :data:`LEVELS`), whose message
    holds ``text`` (case ignored). None: any."""

    engine: str | None = None
    node: str | None = None
    level: str | None = None
    text: str | None = None

    def levels(self) -> tuple[str, ...] | None:
        """The level names at or above ``level`` (None: any level)."""
        if not self.level or self.level == LEVELS[0]:
            return None
        return LEVELS[LEVELS.index(self.level) :]


@dataclass(frozen=True, slots=True)
class LogEntry:
    id: int
    at: datetime
    node: str
    engine: str | None
    level: str
    logger: str
    message: str

    @property
    def cursor(self) -> LogCursor:
        return LogCursor(self.at, self.id)


@dataclass(slots=True)
class LogPage:
    items: list[LogEntry]
    next: LogCursor | None
    """Where to go on (older), None when nothing older matches."""


_COLUMNS = (
    scraper_logs.c.id,
    scraper_logs.c.at,
    scraper_logs.c.node,
    scraper_logs.c.engine,
    scraper_logs.c.level,
    scraper_logs.c.logger,
    scraper_logs.c.message,
)
_NEWEST_FIRST = (scraper_logs.c.at.desc(), scraper_logs.c.id.desc())


def _holds(dialect: str, text: str):
    """The message holds *text*, case ignored, ``%`` and ``_`` plain characters. SQLite's LIKE ignores the case of
    ASCII letters by itself (``ilike`` would lower every message first); PostgreSQL's ILIKE does."""
    if dialect == "sqlite":
        return scraper_logs.c.message.contains(text, autoescape=True)
    return scraper_logs.c.message.icontains(text, autoescape=True)


def _split(filters: LogFilter, dialect: str) -> tuple[list, list]:
    """The condition the index serves (at most one equality), and the others, checked row by row."""
    conditions: list = []
    if filters.engine:
        conditions.append(scraper_logs.c.engine == filters.engine)
    if filters.node:
        conditions.append(scraper_logs.c.node == filters.node)
    levels = filters.levels()
    if levels:
        conditions.append(scraper_logs.c.level == levels[0] if len(levels) == 1 else scraper_logs.c.level.in_(levels))
    if filters.text:
        conditions.append(_holds(dialect, filters.text))
    # An equality first (engine, node, a single level): its (x, at, id) index gives the order; else (at, id).
    if conditions and (filters.engine or filters.node or (levels and len(levels) == 1)):
        return conditions[:1], conditions[1:]
    return [], conditions


def read_logs(
    db: Engine, filters: LogFilter, *, limit: int, before: LogCursor | None = None, scan_rows: int = SCAN_ROWS
) -> LogPage:
    """A page of records, newest first by ``(at, id)``: the newest, or those older than *before* (see the module
    docstring: at most *scan_rows* rows looked at per page)."""
    if limit < 1:
        raise ValueError(f"limit must be at least 1, not {limit}")
    indexed, checked = _split(filters, db.dialect.name)
    keyset = []
    if before is not None:
        # A plain range of the index first; the row value then drops the ties it let in.
        keyset = [
            scraper_logs.c.at <= before.at,
            tuple_(scraper_logs.c.at, scraper_logs.c.id) < tuple_(before.at, before.id),
        ]
    with db.connect() as conn:
        if not checked:
            rows = conn.execute(
                select(*_COLUMNS).where(*indexed, *keyset).order_by(*_NEWEST_FIRST).limit(limit + 1)
            ).all()
            items = [LogEntry(*row) for row in rows[:limit]]
            return LogPage(items, items[-1].cursor if len(rows) > limit else None)
        # The rows the index gives, newest first, at most scan_rows of them; the other filters checked on those.
        window = (
            select(scraper_logs.c.id, scraper_logs.c.at)
            .where(*indexed, *keyset)
            .order_by(*_NEWEST_FIRST)
            .limit(scan_rows)
            .subquery()
        )
        rows = conn.execute(
            select(*_COLUMNS)
            .where(scraper_logs.c.id.in_(select(window.c.id)), *checked)
            .order_by(*_NEWEST_FIRST)
            .limit(limit + 1)
        ).all()
        items = [LogEntry(*row) for row in rows[:limit]]
        if len(rows) > limit:
            return LogPage(items, items[-1].cursor)
        last = conn.execute(select(window.c.at, window.c.id).order_by(window.c.at, window.c.id).limit(1)).first()
        if last is None:
            return LogPage(items, None)
        # Rows older than those looked at, not looked at yet (one step of the index): go on from the oldest seen.
        older = conn.execute(
            select(scraper_logs.c.id)
            .where(
                *indexed,
                scraper_logs.c.at <= last.at,
                tuple_(scraper_logs.c.at, scraper_logs.c.id) < tuple_(last.at, last.id),
            )
            .limit(1)
        ).first()
        return LogPage(items, LogCursor(last.at, last.id) if older is not None else None)
