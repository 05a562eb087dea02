"""Freshness: ``schedule_hours``, each engine's schedule per node and UTC hour (visits, requests, burst pages, holes,
budget), and ``engine_status.window_holes`` (the health reason ``holes``).

Revision ID: 0014
Revises: 0013
Create Date: 2026-12-04 14:30:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0014"
down_revision: str | Sequence[str] | None = "0013"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

UTC_TIME = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "schedule_hours",
        sa.Column("node", sa.String(), primary_key=True),
        sa.Column("engine", sa.String(32), primary_key=True),
        sa.Column("hour", UTC_TIME, primary_key=True),
        *(
            sa.Column(name, sa.BigInteger(), server_default=sa.text("0"), nullable=False)
            for name in ("visits", "requests", "burst_pages", "holes")
        ),
        sa.Column("budget_per_hour", sa.Float(), nullable=True),
        sa.Column("updated_at", UTC_TIME, nullable=False),
    )
    op.create_index("ix_schedule_hours_hour", "schedule_hours", ["hour"])
    with op.batch_alter_table("engine_status") as batch:
        batch.add_column(sa.Column("window_holes", sa.Integer(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("engine_status") as batch:
        batch.drop_column("window_holes")
    op.drop_index("ix_schedule_hours_hour", table_name="schedule_hours")
    op.drop_table("schedule_hours")
