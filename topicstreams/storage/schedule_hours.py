"""``schedule_hours``: what each engine's schedule spent and missed on each node, one UTC hour at a time (CONTRACT
"Freshness"; ``/monitor``'s schedule panel reads it).

One row per (node, engine, hour): the topic visits of the hour, the results pages they requested (``requests``, the
burst pages among them), their ``holes`` (a visit whose last page held only new articles and could go no deeper), and
the largest request budget an hour the engine had in it (``budget_per_hour``: what the fixed schedule would send,
less while degraded, 0 while paused). The schedule's extension (:mod:`topicstreams.extensions.schedule_watch`) adds
its counts every few seconds (:func:`add_schedule_hours`: counts added, the budget the larger of the two), so several
processes of a node may write the same row. Rows go with the other hourly and windowed rows after
``scraper.retention_days`` (:func:`purge_schedule_hours`).

A count that must never go down (a Prometheus counter) cannot be read from purged rows: :func:`hole_totals` adds up
``topic_rates.holes`` instead (each pair's holes over its whole life, never purged).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from sqlalchemy import Engine, Float, Index, String, case, delete, func, select
from sqlalchemy.orm import Mapped, mapped_column

from topicstreams.storage.db import dialect_insert, utcnow
from topicstreams.storage.table_base import Base, UTCDateTime, count_column
from topicstreams.storage.topic_rates import topic_rates_table

COUNTS = ("visits", "requests", "burst_pages", "holes")
"""The columns :func:`add_schedule_hours` adds to."""


class ScheduleHour(Base):
    """One engine's schedule on one node over one UTC hour (see the module docstring)."""

    __tablename__ = "schedule_hours"
    __table_args__ = (Index("ix_schedule_hours_hour", "hour"),)

    node: Mapped[str] = mapped_column(String, primary_key=True)
    engine: Mapped[str] = mapped_column(String(32), primary_key=True)
    hour: Mapped[datetime] = mapped_column(UTCDateTime(), primary_key=True)
    """The hour's start (UTC, on the hour)."""
    visits: Mapped[int] = count_column()
    requests: Mapped[int] = count_column()
    """Results pages the hour's visits requested (burst pages included)."""
    burst_pages: Mapped[int] = count_column()
    holes: Mapped[int] = count_column()
    budget_per_hour: Mapped[float | None] = mapped_column(Float)
    """The largest request budget an hour seen in the hour (None: no visit said it)."""
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime())


schedule_hours_table = ScheduleHour.__table__


def hour_of(moment: datetime) -> datetime:
    """The start of ``moment``'s UTC hour (a naive time is taken as UTC)."""
    moment = moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)
    return moment.replace(minute=0, second=0, microsecond=0)


@dataclass
class HourCounts:
    """What one engine's schedule did in one hour (on one node), as it is added up before it is written."""

    visits: int = 0
    requests: int = 0
    burst_pages: int = 0
    holes: int = 0
    budget_per_hour: float | None = None

    def add(self, *, requests: int, burst_pages: int, hole: bool, budget_per_hour: float | None) -> None:
        """Count one visit."""
        self.visits += 1
        self.requests += requests
        self.burst_pages += burst_pages
        self.holes += int(hole)
        if budget_per_hour is not None:
            self.budget_per_hour = max(budget_per_hour, self.budget_per_hour or 0.0)


@dataclass(frozen=True)
class ScheduleHourRow:
    node: str
    engine: str
    hour: datetime
    visits: int
    requests: int
    burst_pages: int
    holes: int
    budget_per_hour: float | None


def add_schedule_hours(db: Engine, node: str, counts: Mapping[tuple[str, datetime], HourCounts]) -> None:
    """Add ``counts`` ((engine, hour start) -> what the hour saw) to the node's rows, in one transaction: each count
    added to the row's, the budget the larger of the row's and the new one."""
    if not counts:
        return
    table, now = schedule_hours_table, utcnow()
    with db.begin() as conn:
        for (engine, hour), hour_counts in counts.items():
            values = {name: getattr(hour_counts, name) for name in COUNTS}
            statement = dialect_insert(conn.dialect, table).values(
                node=node,
                engine=engine,
                hour=hour_of(hour),
                budget_per_hour=hour_counts.budget_per_hour,
                updated_at=now,
                **values,
            )
            new_budget = statement.excluded.budget_per_hour
            conn.execute(
                statement.on_conflict_do_update(
                    index_elements=["node", "engine", "hour"],
                    set_={
                        **{name: table.c[name] + statement.excluded[name] for name in COUNTS},
                        "budget_per_hour": case(
                            (table.c.budget_per_hour.is_(None), new_budget),
                            (new_budget > table.c.budget_per_hour, new_budget),
                            else_=table.c.budget_per_hour,
                        ),
                        "updated_at": statement.excluded.updated_at,
                    },
                )
            )


def read_schedule_hours(
    db: Engine, since: datetime, *, node: str | None = None, engines: Iterable[str] | None = None
) -> list[ScheduleHourRow]:
    """The rows of the hours that start at or after ``since``'s hour (of ``node`` and ``engines`` when given), by
    node, engine and hour."""
    table = schedule_hours_table
    query = (
        select(
            table.c.node,
            table.c.engine,
            table.c.hour,
            *(table.c[name] for name in COUNTS),
            table.c.budget_per_hour,
        )
        .where(table.c.hour >= hour_of(since))
        .order_by(table.c.node, table.c.engine, table.c.hour)
    )
    if node is not None:
        query = query.where(table.c.node == node)
    if engines is not None:
        query = query.where(table.c.engine.in_(list(engines)))
    with db.connect() as conn:
        return [ScheduleHourRow(**row._mapping) for row in conn.execute(query)]


def purge_schedule_hours(db: Engine, cutoff: datetime) -> int:
    """Delete the hours that ended before ``cutoff``; how many rows went. Idempotent (any process may purge)."""
    with db.begin() as conn:
        return conn.execute(
            delete(schedule_hours_table).where(schedule_hours_table.c.hour < cutoff - timedelta(hours=1))
        ).rowcount


def hole_totals(db: Engine) -> dict[str, int]:
    """Engine -> the holes of every topic on it over the pairs' lives (``topic_rates.holes`` added up: never purged, so
    the figure never goes down while the topics stay). Engines without a row are absent."""
    table = topic_rates_table
    with db.connect() as conn:
        rows = conn.execute(select(table.c.engine, func.sum(table.c.holes)).group_by(table.c.engine))
        return {engine: int(total or 0) for engine, total in rows}
