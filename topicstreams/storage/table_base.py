"""What every table is built on: one declarative base (one ``MetaData``, with the constraint naming convention)
and the column types the tables share.

All times are UTC. In Python they are timezone-aware datetimes; in the database they are
``DateTime(timezone=True)`` (PostgreSQL ``timestamptz``; on SQLite, text in UTC).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import BigInteger, DateTime, Dialect, Integer, MetaData, TypeDecorator, text
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

NAMING_CONVENTION = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}
"""Constraint names, so that later migrations (batch mode on SQLite included) can refer to them."""


class UTCDateTime(TypeDecorator[datetime]):
    """A timezone-aware UTC datetime, stored the same way on SQLite and PostgreSQL.

    Values are converted to UTC before they are written (naive datetimes are taken to be UTC)
    and come back as aware UTC datetimes. SQLite keeps no offset, so values are written there
    without one, in UTC, which also keeps them ordered as text.
    """

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if not isinstance(value, datetime):
            raise TypeError(f"expected a datetime, got {type(value).__name__}")
        value = value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
        if dialect.name == "sqlite":
            return value.replace(tzinfo=None)
        return value

    def bind_processor(self, dialect: Dialect) -> Any:
        if dialect.name != "sqlite":
            return super().bind_processor(dialect)

        # The store writes many of these: on SQLite, one step straight to the text SQLAlchemy's
        # SQLite DATETIME writes ("YYYY-MM-DD HH:MM:SS.ffffff") instead of three.
        def process(value: datetime | None) -> str | None:
            if value is None:
                return None
            if not isinstance(value, datetime):
                raise TypeError(f"expected a datetime, got {type(value).__name__}")
            if value.tzinfo is None:
                value = value.replace(tzinfo=UTC)
            elif value.tzinfo is not UTC:
                value = value.astimezone(UTC)
            return value.isoformat(" ", "microseconds")[:26]

        return process

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            return value.replace(tzinfo=UTC)
        return value.astimezone(UTC)


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING_CONVENTION)
    type_annotation_map = {datetime: UTCDateTime()}


BIG_ID = BigInteger().with_variant(Integer(), "sqlite")
"""A 64-bit id; on SQLite an INTEGER, the rowid's alias."""


def count_column() -> Mapped[int]:
    """A count added up over time: a 64-bit integer, 0 to begin with."""
    return mapped_column(BigInteger, server_default=text("0"))


class ClassCounts:
    """Requests and the responses of each class, added up (a mixin: each table gets its own columns)."""

    requests: Mapped[int] = count_column()
    ok: Mapped[int] = count_column()
    hard_blocks: Mapped[int] = count_column()
    challenges: Mapped[int] = count_column()
    soft_blocks: Mapped[int] = count_column()
    errors: Mapped[int] = count_column()
