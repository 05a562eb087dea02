"""Integrity: the items a crawl lost.

* ``store_losses`` — one row per loss: the items a crawl of ``engine`` on ``node`` had to stop without storing or
  journaling (``items``), when (``at``) and why (``reason``); ``scrapy health`` sums a node's last 7 days
  (:mod:`topicstreams.storage.store_losses`).

Revision ID: 0010
Revises: 0009
Create Date: 2026-12-03 22:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0010"
down_revision: str | Sequence[str] | None = "0009"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

UTC_TIME = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "store_losses",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("node", sa.String(), nullable=False),
        sa.Column("engine", sa.String(length=32), nullable=False),
        sa.Column("items", sa.Integer(), nullable=False),
        sa.Column("at", UTC_TIME, nullable=False),
        sa.Column("reason", sa.String(), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_store_losses"),
        sqlite_autoincrement=True,
    )
    op.create_index("ix_store_losses_node_at", "store_losses", ["node", "at"])


def downgrade() -> None:
    op.drop_index("ix_store_losses_node_at", "store_losses")
    op.drop_table("store_losses")
