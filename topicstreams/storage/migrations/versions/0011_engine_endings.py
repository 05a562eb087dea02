"""Truth: states that end.

* ``engine_status.stopped_at`` — when the engine's crawl closed (None while a crawl writes the row): the row then
  reads ``stopped`` on every surface.
* ``engine_status.heartbeat_seconds`` — how often the crawl writing the row writes it at least (None: the default
  heartbeat): a row unwritten for three of them reads ``stale``.

Revision ID: 0011
Revises: 0010
Create Date: 2026-12-04 04:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0011"
down_revision: str | Sequence[str] | None = "0010"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

UTC_TIME = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.add_column("engine_status", sa.Column("stopped_at", UTC_TIME, nullable=True))
    op.add_column("engine_status", sa.Column("heartbeat_seconds", sa.Float(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("engine_status") as batch:
        batch.drop_column("heartbeat_seconds")
        batch.drop_column("stopped_at")
