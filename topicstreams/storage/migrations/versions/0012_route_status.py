"""Routes: ``route_status``, the live state of each (engine, route) pair on each node.

Revision ID: 0012
Revises: 0011
Create Date: 2026-12-04 10:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0012"
down_revision: str | Sequence[str] | None = "0011"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

UTC_TIME = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "route_status",
        sa.Column("node", sa.String(), primary_key=True),
        sa.Column("route", sa.String(32), primary_key=True),
        sa.Column("engine", sa.String(32), primary_key=True),
        sa.Column("proxy", sa.String(), nullable=False),
        sa.Column("state", sa.String(16), nullable=False),
        sa.Column("score", sa.Integer(), nullable=True),
        sa.Column("band", sa.String(16), nullable=False),
        sa.Column("cooling_until", UTC_TIME, nullable=True),
        sa.Column("reason", sa.String(), nullable=True),
        sa.Column("updated_at", UTC_TIME, nullable=False),
        sa.Column("heartbeat_seconds", sa.Float(), nullable=True),
        sa.Column("stopped_at", UTC_TIME, nullable=True),
        *(
            sa.Column(name, sa.BigInteger(), server_default=sa.text("0"), nullable=False)
            for name in ("requests", "ok", "hard_blocks", "challenges", "soft_blocks", "errors", "cooldowns")
        ),
    )


def downgrade() -> None:
    op.drop_table("route_status")
