"""``topic_rates``: what the schedule has learnt of each (topic, engine) — how many new articles an hour the topic
yields on the engine, the estimator's state behind that figure, the interval the schedule gives it and when it is
due next (CONTRACT "Freshness").

The crawl writes a pair's row after each of its visits (:func:`save_topic_rates`), in either schedule; a restart, or
another node in lease mode, starts from it (:func:`read_topic_rates`). ``scrapy topics list``, ``/api/topics`` and
``/monitor`` read it. A topic deleted takes its rows with it (``ON DELETE CASCADE``).

``rate_per_hour`` is None until the pair has been visited twice (a first visit finds everything new: it says nothing of
the rate). ``evidence`` and ``exposure_hours`` are the estimator's decayed article count and hours behind the rate;
``page_items`` the most items a first page of the pair held (the engine's page size for the topic).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import Engine, Float, ForeignKey, Integer, String, select
from sqlalchemy.orm import Mapped, mapped_column

from topicstreams.storage.db import immediate, upsert, utcnow
from topicstreams.storage.feed_tables import Topic
from topicstreams.storage.table_base import Base, UTCDateTime, count_column


class TopicRate(Base):
    """One (topic, engine) pair's learnt rate and schedule (see the module docstring)."""

    __tablename__ = "topic_rates"

    topic_id: Mapped[int] = mapped_column(ForeignKey("topics.id", ondelete="CASCADE"), primary_key=True)
    engine: Mapped[str] = mapped_column(String(32), primary_key=True)
    rate_per_hour: Mapped[float | None] = mapped_column(Float)
    evidence: Mapped[float] = mapped_column(Float, default=0.0)
    exposure_hours: Mapped[float] = mapped_column(Float, default=0.0)
    visits: Mapped[int] = mapped_column(Integer, default=0)
    page_items: Mapped[int] = mapped_column(Integer, default=0)
    interval_seconds: Mapped[float | None] = mapped_column(Float)
    next_due_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    last_visit_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    holes: Mapped[int] = count_column()
    burst_pages: Mapped[int] = count_column()
    last_hole_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime())


topic_rates_table = TopicRate.__table__


@dataclass(frozen=True)
class TopicRateRow:
    """A pair's row, with its topic's name."""

    topic: str
    engine: str
    rate_per_hour: float | None
    evidence: float
    exposure_hours: float
    visits: int
    page_items: int
    interval_seconds: float | None
    next_due_at: datetime | None
    last_visit_at: datetime | None
    holes: int = 0
    burst_pages: int = 0
    last_hole_at: datetime | None = None
    updated_at: datetime | None = None


COLUMNS = (
    "rate_per_hour",
    "evidence",
    "exposure_hours",
    "visits",
    "page_items",
    "interval_seconds",
    "next_due_at",
    "last_visit_at",
    "holes",
    "burst_pages",
    "last_hole_at",
    "updated_at",
)


def read_topic_rates(db: Engine, engine: str | None = None, topics: Iterable[str] | None = None) -> list[TopicRateRow]:
    """The pairs' rows (of ``engine`` and ``topics`` when given), by topic name and engine."""
    table, topics_table = topic_rates_table, Topic.__table__
    query = (
        select(topics_table.c.name.label("topic"), table.c.engine, *(table.c[name] for name in COLUMNS))
        .join(topics_table, topics_table.c.id == table.c.topic_id)
        .order_by(topics_table.c.name, table.c.engine)
    )
    if engine is not None:
        query = query.where(table.c.engine == engine)
    if topics is not None:
        query = query.where(topics_table.c.name.in_(list(topics)))
    with db.connect() as conn:
        return [TopicRateRow(**row._mapping) for row in conn.execute(query)]


def save_topic_rates(db: Engine, rows: Iterable[TopicRateRow]) -> int:
    """Insert or replace the pairs' rows (``updated_at`` now when None); rows of a topic no longer in the table are
    skipped. Returns how many were written."""
    rows = list(rows)
    if not rows:
        return 0
    topics_table, table = Topic.__table__, topic_rates_table
    now = utcnow()
    # IMMEDIATE: this transaction reads the topics' ids before it writes; SQLite would refuse the write at once
    # (a stale snapshot, no busy wait) when the store committed in between.
    with immediate(db.connect()) as conn, conn.begin():
        ids = dict(
            conn.execute(
                select(topics_table.c.name, topics_table.c.id).where(
                    topics_table.c.name.in_({row.topic for row in rows})
                )
            ).all()
        )
        written = 0
        for row in rows:
            topic_id = ids.get(row.topic)
            if topic_id is None:
                continue
            values = {name: getattr(row, name) for name in COLUMNS}
            values["updated_at"] = row.updated_at or now
            conn.execute(
                upsert(
                    conn.dialect,
                    table,
                    ["topic_id", "engine"],
                    {"topic_id": topic_id, "engine": row.engine, **values},
                    update=list(COLUMNS),
                )
            )
            written += 1
    return written
