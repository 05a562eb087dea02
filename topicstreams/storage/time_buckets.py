"""A stored time's UTC hour or day as text, in SQL, the same on SQLite and PostgreSQL: what GROUP BY buckets on.

Times are stored by :class:`~topicstreams.storage.models.UTCDateTime`: on SQLite as UTC text
``YYYY-MM-DD HH:MM:SS.ffffff`` (its first 13 or 10 characters are the hour or the day), on PostgreSQL as
``timestamptz`` (formatted in UTC whatever the session's time zone). Both give ``YYYY-MM-DD HH`` for an hour and
``YYYY-MM-DD`` for a day, which :func:`parse_hour` and :func:`parse_day` read back.
"""

from __future__ import annotations

from datetime import date, datetime

from sqlalchemy import Dialect, func, literal_column
from sqlalchemy.sql.elements import ColumnElement

HOUR_TEXT = "%Y-%m-%d %H"


def _bucket(dialect: Dialect, column: ColumnElement, length: int, pattern: str) -> ColumnElement:
    if dialect.name == "sqlite":
        return func.substr(column, 1, length)
    if dialect.name == "postgresql":
        return func.to_char(column.op("AT TIME ZONE")(literal_column("'UTC'")), pattern)
    raise NotImplementedError(f"unsupported database dialect {dialect.name!r}: use SQLite or PostgreSQL")


def hour_bucket(dialect: Dialect, column: ColumnElement) -> ColumnElement:
    """``column``'s UTC hour, ``YYYY-MM-DD HH``."""
    return _bucket(dialect, column, 13, "YYYY-MM-DD HH24")


def day_bucket(dialect: Dialect, column: ColumnElement) -> ColumnElement:
    """``column``'s UTC day, ``YYYY-MM-DD``."""
    return _bucket(dialect, column, 10, "YYYY-MM-DD")


def parse_hour(text: str) -> datetime:
    """The naive start of the hour ``YYYY-MM-DD HH``."""
    return datetime.strptime(text, HOUR_TEXT)


def parse_day(text: str) -> date:
    return date.fromisoformat(text)
