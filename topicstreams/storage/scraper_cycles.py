"""The cycle accounting tables: ``scraper_cycles`` rows written, and the windows past retention purged.

Every function takes an Engine and runs in one short transaction. Any number of processes may purge at the same
time: a ``DELETE … WHERE window_end < cutoff`` is idempotent (a row already gone is not deleted twice).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import Engine, and_, case, delete, insert, or_

from topicstreams.storage.db import dialect_insert
from topicstreams.storage.models import engine_totals_table as engine_totals
from topicstreams.storage.models import health_windows_table as health_windows
from topicstreams.storage.models import scraper_cycles_table as scraper_cycles


TOTALS = ("requests", "ok", "hard_blocks", "challenges", "soft_blocks", "errors", "cooldowns", "topics_count",
          "entries", "new_events")
"""The ``scraper_cycles`` counts that ``engine_totals`` adds up."""


def save_cycle(db: Engine, /, **row: Any) -> None:
    """Keep one window of one engine's work as a ``scraper_cycles`` row (``row``: its columns), and add its counts
    to the engine's ``engine_totals`` row on the node, in the same transaction (the cumulative counts that outlive
    the purge: what the Prometheus counters read).

    The database handle is positional-only: ``engine=`` is the row's column, the search engine's name."""
    totals = {"engine": row["engine"], "node": row["node"], "last_cycle_end": row.get("window_end"),
              **{name: int(row.get(name) or 0) for name in TOTALS}}
    with db.begin() as conn:
        conn.execute(insert(scraper_cycles).values(**row))
        statement = dialect_insert(conn.dialect, engine_totals).values(totals)
        later = statement.excluded.last_cycle_end
        conn.execute(statement.on_conflict_do_update(
            index_elements=["engine", "node"],
            set_={**{name: engine_totals.c[name] + statement.excluded[name] for name in TOTALS},
                  "last_cycle_end": case((engine_totals.c.last_cycle_end.is_(None), later),
                                         (later > engine_totals.c.last_cycle_end, later),
                                         else_=engine_totals.c.last_cycle_end)}))


def purge_older_than(db: Engine, cutoff: datetime) -> dict[str, int]:
    """Delete the ``scraper_cycles`` and ``health_windows`` rows whose window ended before ``cutoff``.

    Returns the rows deleted per table. A cycle row without an end (never written by this project, but the column
    allows it) goes when its window started before the cutoff."""
    deleted: dict[str, int] = {}
    with db.begin() as conn:
        deleted[scraper_cycles.name] = conn.execute(delete(scraper_cycles).where(or_(
            scraper_cycles.c.window_end < cutoff,
            and_(scraper_cycles.c.window_end.is_(None), scraper_cycles.c.window_start < cutoff)))).rowcount
        deleted[health_windows.name] = conn.execute(
            delete(health_windows).where(health_windows.c.window_end < cutoff)).rowcount
    return deleted
