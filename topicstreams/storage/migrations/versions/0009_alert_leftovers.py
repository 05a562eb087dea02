"""Alert leftovers: an alert a stopping process could not deliver is kept for the next start of its node.

* ``alerts.title`` — the message's title (a later delivery sends it again with ``message``);
* ``alerts.sender_node`` — the node whose process owes the delivery;
* ``alerts.targets`` — where the alert goes, each target masked (matched again to the configured URLs);
* ``alerts.claimed_until`` — while ``delivery`` is empty, until when a live process holds it; empty once a stopping
  process left it for the next start of ``sender_node``;
* ``ix_alerts_pending`` — the few alerts whose ``delivery`` is still empty, by node (what a start takes up).

Revision ID: 0009
Revises: 0008
Create Date: 2026-12-03 22:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0009"
down_revision: str | Sequence[str] | None = "0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

UTC_TIME = sa.DateTime(timezone=True)


def upgrade() -> None:
    with op.batch_alter_table("alerts", table_kwargs={"sqlite_autoincrement": True}) as batch:
        batch.add_column(sa.Column("title", sa.String(), nullable=True))
        batch.add_column(sa.Column("sender_node", sa.String(), nullable=True))
        batch.add_column(sa.Column("targets", sa.JSON(), nullable=True))
        batch.add_column(sa.Column("claimed_until", UTC_TIME, nullable=True))
    op.create_index(
        "ix_alerts_pending",
        "alerts",
        ["sender_node", "id"],
        postgresql_where=sa.text("delivery IS NULL"),
        sqlite_where=sa.text("delivery IS NULL"),
    )


def downgrade() -> None:
    op.drop_index("ix_alerts_pending", table_name="alerts")
    with op.batch_alter_table("alerts", table_kwargs={"sqlite_autoincrement": True}) as batch:
        batch.drop_column("claimed_until")
        batch.drop_column("targets")
        batch.drop_column("sender_node")
        batch.drop_column("title")
