"""The cycle accounting tables: ``scraper_cycles`` rows written, and the windows past retention purged.

Every function takes an Engine and runs in one short transaction. Any number of processes may purge at the same
time: a ``DELETE … WHERE window_end < cutoff`` is idempotent (a row already gone is not deleted twice), and so is
the rollup of the daily health history the purge does first (:mod:`topicstreams.storage.health_history`).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import Engine, and_, case, delete, insert, or_

from topicstreams.storage.db import dialect_insert, immediate, utcnow
from topicstreams.storage.health_history import (
    day_start,
    history_start,
    purge_history_in,
    roll_up_in,
    utc_date,
)
from topicstreams.storage.models import engine_totals_table as engine_totals
from topicstreams.storage.models import health_daily_table as health_daily
from topicstreams.storage.models import health_windows_table as health_windows
from topicstreams.storage.models import scraper_cycles_table as scraper_cycles

TOTALS = (
    "requests",
    "ok",
    "hard_blocks",
    "challenges",
    "soft_blocks",
    "errors",
    "cooldowns",
    "topics_count",
    "entries",
    "new_events",
)
"""The ``scraper_cycles`` counts that ``engine_totals`` adds up."""


def save_cycle(db: Engine, /, **row: Any) -> None:
    """Keep one window of one engine's work as a ``scraper_cycles`` row (``row``: its columns), and add its counts
    to the engine's ``engine_totals`` row on the node, in the same transaction (the cumulative counts that outlive
    the purge: what the Prometheus counters read).

    The database handle is positional-only: ``engine=`` is the row's column, the search engine's name."""
    totals = {
        "engine": row["engine"],
        "node": row["node"],
        "last_cycle_end": row.get("window_end"),
        **{name: int(row.get(name) or 0) for name in TOTALS},
    }
    with db.begin() as conn:
        conn.execute(insert(scraper_cycles).values(**row))
        statement = dialect_insert(conn.dialect, engine_totals).values(totals)
        later = statement.excluded.last_cycle_end
        conn.execute(
            statement.on_conflict_do_update(
                index_elements=["engine", "node"],
                set_={
                    **{name: engine_totals.c[name] + statement.excluded[name] for name in TOTALS},
                    "last_cycle_end": case(
                        (engine_totals.c.last_cycle_end.is_(None), later),
                        (later > engine_totals.c.last_cycle_end, later),
                        else_=engine_totals.c.last_cycle_end,
                    ),
                },
            )
        )


def purge_older_than(
    db: Engine, cutoff: datetime, *, now: datetime | None = None, history_days: float | None = None
) -> dict[str, int]:
    """Delete the ``scraper_cycles`` rows whose window ended before ``cutoff``, and the ``health_windows`` rows of
    the UTC days that ended at or before it — after rolling them up into ``health_daily``, in the same
    transaction; with ``history_days``, the ``health_daily`` rows older than that at ``now`` (default: the current
    time) go too.

    Windows go by whole days, up to a day later than the cutoff alone would say: a day's row is recomputed from
    all of its windows, so none of a day's windows may go while the day can still be rolled up again. The rollup
    covers every window the purge deletes (up to ``now``'s day, and at least to the cutoff's): none goes unrolled.

    Returns the rows deleted per table (``health_daily`` first, only with ``history_days``). A cycle row without an
    end (never written by this project, but the column allows it) goes when its window started before the
    cutoff."""
    now = now or utcnow()
    deleted: dict[str, int] = {}
    # BEGIN IMMEDIATE on SQLite: the rollup reads, then the transaction writes what it read.
    with immediate(db.connect()) as conn, conn.begin():
        roll_up_in(conn, now if utc_date(now) >= utc_date(cutoff) else cutoff)
        if history_days is not None:
            deleted[health_daily.name] = purge_history_in(conn, history_start(now, history_days))
        deleted[scraper_cycles.name] = conn.execute(
            delete(scraper_cycles).where(
                or_(
                    scraper_cycles.c.window_end < cutoff,
                    and_(scraper_cycles.c.window_end.is_(None), scraper_cycles.c.window_start < cutoff),
                )
            )
        ).rowcount
        deleted[health_windows.name] = conn.execute(
            delete(health_windows).where(health_windows.c.window_end < day_start(utc_date(cutoff)))
        ).rowcount
    return deleted
