"""Elastic: the shared schedule of lease mode and the nodes' membership.

* ``schedule`` — one row per (engine, topic): the slot its rhythm is anchored to, when it is due, and while a node
  works on it the lease (node, token, until); the last node that re-armed it and when. Claimed with
  ``FOR UPDATE SKIP LOCKED`` (:mod:`topicstreams.storage.leases`);
* ``nodes`` — one row per crawl process of a node: its engines, start, heartbeat, version, assignment, clean stop,
  and the topics it scraped in the last interval per engine (``scrapy nodes`` groups them by node id).

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-02 19:20:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0008"
down_revision: str | Sequence[str] | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

UTC_TIME = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "schedule",
        sa.Column("engine", sa.String(length=32), nullable=False),
        sa.Column("topic_id", sa.Integer(), nullable=False),
        sa.Column("slot_at", UTC_TIME, nullable=False),
        sa.Column("due_at", UTC_TIME, nullable=False),
        sa.Column("lease_node", sa.String(), nullable=True),
        sa.Column("lease_token", sa.String(length=32), nullable=True),
        sa.Column("lease_until", UTC_TIME, nullable=True),
        sa.Column("last_done_at", UTC_TIME, nullable=True),
        sa.Column("last_node", sa.String(), nullable=True),
        sa.Column("scrapes", sa.Integer(), server_default=sa.text("0"), nullable=False),
        sa.ForeignKeyConstraint(["topic_id"], ["topics.id"], name="fk_schedule_topic_id_topics", ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("engine", "topic_id", name="pk_schedule"),
    )
    op.create_index("ix_schedule_engine_due_at", "schedule", ["engine", "due_at"])
    # the few rows held at any moment, for the next lease to expire (schedule.next_due)
    op.create_index(
        "ix_schedule_leased",
        "schedule",
        ["engine", "lease_until"],
        postgresql_where=sa.text("lease_token IS NOT NULL"),
        sqlite_where=sa.text("lease_token IS NOT NULL"),
    )
    op.create_table(
        "nodes",
        sa.Column("node", sa.String(), nullable=False),
        sa.Column("process", sa.String(length=32), nullable=False),
        sa.Column("engines", sa.JSON(), nullable=False),
        sa.Column("started_at", UTC_TIME, nullable=False),
        sa.Column("heartbeat_at", UTC_TIME, nullable=False),
        sa.Column("version", sa.String(length=32), nullable=False),
        sa.Column("assignment", sa.String(length=16), nullable=False),
        sa.Column("stopped_at", UTC_TIME, nullable=True),
        sa.Column("scraped", sa.JSON(), nullable=True),
        sa.PrimaryKeyConstraint("node", "process", name="pk_nodes"),
    )


def downgrade() -> None:
    op.drop_table("nodes")
    op.drop_index("ix_schedule_leased", "schedule")
    op.drop_index("ix_schedule_engine_due_at", "schedule")
    op.drop_table("schedule")
