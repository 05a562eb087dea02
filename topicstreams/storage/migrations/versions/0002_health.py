"""Health: engine_status (the live state of each engine per node), alerts, health_windows (the baseline's history).

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-29 21:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0002"
down_revision: str | Sequence[str] | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

UTC_TIME = sa.DateTime(timezone=True)
EMPTY_LIST = sa.text("'[]'")


def _count(name: str) -> sa.Column:
    return sa.Column(name, sa.Integer(), server_default=sa.text("0"), nullable=False)


def upgrade() -> None:
    op.create_table(
        "engine_status",
        sa.Column("engine", sa.String(length=32), nullable=False),
        sa.Column("node", sa.String(), nullable=False),
        sa.Column("score", sa.Integer(), nullable=True),
        sa.Column("band", sa.String(length=16), server_default=sa.text("'unknown'"), nullable=False),
        sa.Column("state", sa.String(length=16), server_default=sa.text("'running'"), nullable=False),
        sa.Column("cooling_until", UTC_TIME, nullable=True),
        sa.Column("reasons", sa.JSON(), server_default=EMPTY_LIST, nullable=False),
        sa.Column("updated_at", UTC_TIME, server_default=sa.func.now(), nullable=False),
        sa.Column("raw_score", sa.Integer(), nullable=True),
        sa.Column("p50_ms", sa.Float(), nullable=True),
        sa.Column("p95_ms", sa.Float(), nullable=True),
        sa.Column("window_counts", sa.JSON(), nullable=True),
        sa.Column("paused_at", UTC_TIME, nullable=True),
        sa.Column("resumed_at", UTC_TIME, nullable=True),
        sa.Column("pace_multiplier", sa.Float(), nullable=True),
        sa.PrimaryKeyConstraint("engine", "node", name="pk_engine_status"),
    )
    op.create_table(
        "alerts",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("engine", sa.String(length=32), nullable=False),
        sa.Column("node", sa.String(), nullable=False),
        sa.Column("score", sa.Integer(), nullable=True),
        sa.Column("band", sa.String(length=16), nullable=False),
        sa.Column("reasons", sa.JSON(), server_default=EMPTY_LIST, nullable=False),
        sa.Column("message", sa.String(), nullable=False),
        sa.Column("created_at", UTC_TIME, server_default=sa.func.now(), nullable=False),
        sa.Column("delivery", sa.String(), nullable=True),
        sa.Column("resolved_at", UTC_TIME, nullable=True),
        sa.PrimaryKeyConstraint("id", name="pk_alerts"),
        sqlite_autoincrement=True,
    )
    op.create_index("ix_alerts_engine_node_created_at", "alerts", ["engine", "node", "created_at"])
    op.create_table(
        "health_windows",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("engine", sa.String(length=32), nullable=False),
        sa.Column("node", sa.String(), nullable=False),
        sa.Column("window_start", UTC_TIME, nullable=False),
        sa.Column("window_end", UTC_TIME, nullable=False),
        *(
            _count(name)
            for name in (
                "requests",
                "ok",
                "hard_blocks",
                "challenges",
                "soft_blocks",
                "errors",
                "items",
                "valid_items",
                "parse_errors",
            )
        ),
        sa.Column("bytes", sa.BigInteger(), server_default=sa.text("0"), nullable=False),
        sa.Column("browser_seconds", sa.Float(), server_default=sa.text("0"), nullable=False),
        sa.Column("p50_latency_ms", sa.Float(), nullable=True),
        sa.Column("p95_latency_ms", sa.Float(), nullable=True),
        sa.PrimaryKeyConstraint("id", name="pk_health_windows"),
        sqlite_autoincrement=True,
    )
    op.create_index("ix_health_windows_engine_node_window_end", "health_windows", ["engine", "node", "window_end"])


def downgrade() -> None:
    op.drop_table("health_windows")
    op.drop_table("alerts")
    op.drop_table("engine_status")
