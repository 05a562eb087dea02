"""Alerts: every event a person is told of, each delivery attempt, the state behind each alert, digests' periods,
and the coverage signal.

* ``alerts`` — widened: ``event`` (``paused``, ``resumed``, ``recovered``, ``degraded``, ``saturation``,
  ``canary_mismatch``, ``parser_critical``, ``coverage_drop``, ``silence``, ``network_down``, ``digest``, ``test``);
  ``engine``, ``node`` and ``band`` may be empty (a digest, a topic's silence and the network have none); ``topic``;
  ``details`` (the event's facts as JSON); an index on ``(created_at, id)`` for ``scrapy alerts list --since``;
* ``alert_deliveries`` — one row per attempt to deliver an alert to one target (its URL masked): when, whether it
  went through, what the service said;
* ``alert_states`` — the state an alert stands for, by key (a topic's silence, a node's network): the compare-and-set
  that lets one process of many send the alert of a transition;
* ``digest_states`` — per digest, the end of the period last sent and the claim of the process sending the next one
  (a compare-and-set: each period is sent once across every process and node);
* ``health_windows.coverage_expected`` / ``coverage_found`` — of the articles the other engines found for the topics
  the engine scraped in the window, how many, and how many the engine found too (the coverage baseline);
* ``engine_status.coverage`` (the window's coverage, its baseline, the drop) and
  ``engine_status.connection_failures_since`` (when the engine's current run of connection-level failures began:
  the node's network verdict reads it from every process).

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-02 16:20:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0007"
down_revision: str | Sequence[str] | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

UTC_TIME = sa.DateTime(timezone=True)
BIG_ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")  # SQLite's rowid alias must be INTEGER


def upgrade() -> None:
    with op.batch_alter_table("alerts", table_kwargs={"sqlite_autoincrement": True}) as batch:
        batch.alter_column("engine", existing_type=sa.String(length=32), nullable=True)
        batch.alter_column("node", existing_type=sa.String(), nullable=True)
        batch.alter_column("band", existing_type=sa.String(length=16), nullable=True)
        batch.add_column(sa.Column("event", sa.String(length=32), server_default=sa.text("'paused'"), nullable=False))
        batch.add_column(sa.Column("topic", sa.String(), nullable=True))
        batch.add_column(sa.Column("details", sa.JSON(), nullable=True))
    op.create_index("ix_alerts_created_at_id", "alerts", ["created_at", "id"])

    op.create_table(
        "alert_deliveries",
        sa.Column("id", BIG_ID, autoincrement=True, nullable=False),
        sa.Column("alert_id", sa.Integer(), nullable=False),
        sa.Column("target", sa.String(), nullable=False),
        sa.Column("attempt", sa.Integer(), nullable=False),
        sa.Column("at", UTC_TIME, nullable=False),
        sa.Column("ok", sa.Boolean(), nullable=False),
        sa.Column("detail", sa.String(), nullable=True),
        sa.ForeignKeyConstraint(
            ["alert_id"], ["alerts.id"], name="fk_alert_deliveries_alert_id_alerts", ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name="pk_alert_deliveries"),
        sqlite_autoincrement=True,
    )
    op.create_index("ix_alert_deliveries_alert_id", "alert_deliveries", ["alert_id", "id"])

    op.create_table(
        "alert_states",
        sa.Column("key", sa.String(), nullable=False),
        sa.Column("state", sa.String(length=32), nullable=False),
        sa.Column("since", UTC_TIME, nullable=True),
        sa.Column("changed_at", UTC_TIME, nullable=False),
        sa.Column("details", sa.JSON(), nullable=True),
        sa.PrimaryKeyConstraint("key", name="pk_alert_states"),
    )

    op.create_table(
        "digest_states",
        sa.Column("name", sa.String(), nullable=False),
        sa.Column("sent_until", UTC_TIME, nullable=False),
        sa.Column("claimed_by", sa.String(), nullable=True),
        sa.Column("claimed_until", UTC_TIME, nullable=True),
        sa.Column("sent_at", UTC_TIME, nullable=True),
        sa.PrimaryKeyConstraint("name", name="pk_digest_states"),
    )

    with op.batch_alter_table("health_windows") as batch:
        batch.add_column(sa.Column("coverage_expected", sa.Integer(), nullable=True))
        batch.add_column(sa.Column("coverage_found", sa.Integer(), nullable=True))
    with op.batch_alter_table("engine_status") as batch:
        batch.add_column(sa.Column("coverage", sa.JSON(), nullable=True))
        batch.add_column(sa.Column("connection_failures_since", UTC_TIME, nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("engine_status") as batch:
        batch.drop_column("connection_failures_since")
        batch.drop_column("coverage")
    with op.batch_alter_table("health_windows") as batch:
        batch.drop_column("coverage_found")
        batch.drop_column("coverage_expected")
    op.drop_table("digest_states")
    op.drop_table("alert_states")
    op.drop_index("ix_alert_deliveries_alert_id", "alert_deliveries")
    op.drop_table("alert_deliveries")
    op.drop_index("ix_alerts_created_at_id", "alerts")
    op.execute("DELETE FROM alerts WHERE engine IS NULL OR node IS NULL OR band IS NULL")
    with op.batch_alter_table("alerts", table_kwargs={"sqlite_autoincrement": True}) as batch:
        batch.drop_column("details")
        batch.drop_column("topic")
        batch.drop_column("event")
        batch.alter_column("band", existing_type=sa.String(length=16), nullable=False)
        batch.alter_column("node", existing_type=sa.String(), nullable=False)
        batch.alter_column("engine", existing_type=sa.String(length=32), nullable=False)
