"""Freshness: ``topic_rates``, each (topic, engine) pair's learnt rate and schedule.

Revision ID: 0013
Revises: 0012
Create Date: 2026-12-04 14:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0013"
down_revision: str | Sequence[str] | None = "0012"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

UTC_TIME = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "topic_rates",
        sa.Column("topic_id", sa.Integer(), sa.ForeignKey("topics.id", ondelete="CASCADE"), primary_key=True),
        sa.Column("engine", sa.String(32), primary_key=True),
        sa.Column("rate_per_hour", sa.Float(), nullable=True),
        sa.Column("evidence", sa.Float(), nullable=False),
        sa.Column("exposure_hours", sa.Float(), nullable=False),
        sa.Column("visits", sa.Integer(), nullable=False),
        sa.Column("page_items", sa.Integer(), nullable=False),
        sa.Column("interval_seconds", sa.Float(), nullable=True),
        sa.Column("next_due_at", UTC_TIME, nullable=True),
        sa.Column("last_visit_at", UTC_TIME, nullable=True),
        sa.Column("holes", sa.BigInteger(), server_default=sa.text("0"), nullable=False),
        sa.Column("burst_pages", sa.BigInteger(), server_default=sa.text("0"), nullable=False),
        sa.Column("last_hole_at", UTC_TIME, nullable=True),
        sa.Column("updated_at", UTC_TIME, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("topic_rates")
