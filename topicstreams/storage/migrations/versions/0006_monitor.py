"""Monitor: stored logs, the daily health history, cumulative counts per engine and node, each window's smoothed
score, each engine's last canary check.

* ``scraper_logs`` — the WARNING-and-above records of every crawl process, and its per-window INFO lines, in the
  order the page and the API read them (newest first, by ``at`` then ``id``);
* ``health_daily`` — one row per engine, node and UTC day, rolled up from ``health_windows`` before those are
  purged, kept ``health.history_days`` (an index holding every column the monitor's 12 months read);
* ``engine_totals`` — the counts of every cycle row of an engine on a node added up, never purged: what the
  Prometheus counters read (a sum over purgeable rows would fall);
* ``health_windows.score`` — the smoothed score in force when the window was stored (the history's mean and
  minimum), with an index on ``window_end`` for the monitor's last 24 hours;
* ``engine_status.last_canary`` — the engine's latest canary check (query, time, matched, results, problem);
* ``ix_scraper_cycles_timeline`` — the monitor's cycle timeline (the last 24 hours) read from an index alone.

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-02 14:30:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0006"
down_revision: str | Sequence[str] | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

UTC_TIME = sa.DateTime(timezone=True)
BIG_ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")  # SQLite's rowid alias must be INTEGER


def _count(name: str) -> sa.Column:
    return sa.Column(name, sa.BigInteger(), server_default=sa.text("0"), nullable=False)


COUNTS = ("requests", "ok", "hard_blocks", "challenges", "soft_blocks", "errors")


def upgrade() -> None:
    op.create_table(
        "scraper_logs",
        sa.Column("id", BIG_ID, autoincrement=True, nullable=False),
        sa.Column("at", UTC_TIME, nullable=False),
        sa.Column("node", sa.String(), nullable=False),
        sa.Column("engine", sa.String(length=32), nullable=True),
        sa.Column("level", sa.String(length=16), nullable=False),
        sa.Column("logger", sa.String(), nullable=False),
        sa.Column("message", sa.Text(), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_scraper_logs"),
        sqlite_autoincrement=True,
    )
    op.create_index("ix_scraper_logs_at_id", "scraper_logs", ["at", "id"])
    op.create_index("ix_scraper_logs_engine_at_id", "scraper_logs", ["engine", "at", "id"])
    op.create_index("ix_scraper_logs_node_at_id", "scraper_logs", ["node", "at", "id"])
    op.create_index("ix_scraper_logs_level_at_id", "scraper_logs", ["level", "at", "id"])

    op.create_table(
        "health_daily",
        sa.Column("engine", sa.String(length=32), nullable=False),
        sa.Column("node", sa.String(), nullable=False),
        sa.Column("day", sa.Date(), nullable=False),
        sa.Column("windows", sa.Integer(), server_default=sa.text("0"), nullable=False),
        sa.Column("score_mean", sa.Float(), nullable=True),
        sa.Column("score_min", sa.Integer(), nullable=True),
        *(_count(name) for name in COUNTS),
        *(_count(name) for name in ("items", "valid_items", "result_pages", "yielding_pages")),
        sa.Column("p95_ms", sa.Float(), nullable=True),
        sa.Column("parser_score", sa.Integer(), nullable=True),
        sa.PrimaryKeyConstraint("engine", "node", "day", name="pk_health_daily"),
    )
    op.create_index(
        "ix_health_daily_day_engine",
        "health_daily",
        [
            "day",
            "engine",
            "windows",
            "score_mean",
            "score_min",
            "requests",
            "p95_ms",
            "result_pages",
            "yielding_pages",
            "items",
            "valid_items",
        ],
    )

    op.create_table(
        "engine_totals",
        sa.Column("engine", sa.String(length=32), nullable=False),
        sa.Column("node", sa.String(), nullable=False),
        *(_count(name) for name in (*COUNTS, "cooldowns", "topics_count", "entries", "new_events")),
        sa.Column("last_cycle_end", UTC_TIME, nullable=True),
        sa.PrimaryKeyConstraint("engine", "node", name="pk_engine_totals"),
    )

    op.add_column("health_windows", sa.Column("score", sa.Integer(), nullable=True))
    op.create_index("ix_health_windows_window_end", "health_windows", ["window_end"])
    op.add_column("engine_status", sa.Column("last_canary", sa.JSON(), nullable=True))
    op.create_index(
        "ix_scraper_cycles_timeline",
        "scraper_cycles",
        ["window_end", "engine", "topics_count", "entries", "new_events"],
    )


def downgrade() -> None:
    op.drop_index("ix_scraper_cycles_timeline", "scraper_cycles")
    with op.batch_alter_table("engine_status") as batch:
        batch.drop_column("last_canary")
    op.drop_index("ix_health_windows_window_end", "health_windows")
    with op.batch_alter_table("health_windows") as batch:
        batch.drop_column("score")
    op.drop_table("engine_totals")
    op.drop_index("ix_health_daily_day_engine", "health_daily")
    op.drop_table("health_daily")
    for name in (
        "ix_scraper_logs_level_at_id",
        "ix_scraper_logs_node_at_id",
        "ix_scraper_logs_engine_at_id",
        "ix_scraper_logs_at_id",
    ):
        op.drop_index(name, "scraper_logs")
    op.drop_table("scraper_logs")
