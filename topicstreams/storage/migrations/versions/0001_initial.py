"""Initial schema: topics, news, topic_news, topic_news_engines, scraper_cycles.

Revision ID: 0001
Revises:
Create Date: 2025-01-01 00:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0001"
down_revision: str | Sequence[str] | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

UTC_TIME = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "topics",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("name", sa.String(), nullable=False),
        sa.Column("active", sa.Boolean(), server_default=sa.true(), nullable=False),
        sa.Column("created_at", UTC_TIME, server_default=sa.func.now(), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_topics"),
        sa.UniqueConstraint("name", name="uq_topics_name"),
        sqlite_autoincrement=True,
    )
    op.create_table(
        "news",
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.Column("url", sa.String(), nullable=False),
        sa.Column("title", sa.String(), nullable=False),
        sa.Column("source", sa.String(), nullable=True),
        sa.Column("snippet", sa.String(), nullable=True),
        sa.Column("published_at", UTC_TIME, nullable=True),
        sa.Column("first_seen_at", UTC_TIME, server_default=sa.func.now(), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_news"),
    )
    op.create_index("ix_news_first_seen_at", "news", ["first_seen_at"])
    op.create_table(
        "topic_news",
        sa.Column("topic_id", sa.Integer(), nullable=False),
        sa.Column("news_id", sa.String(length=32), nullable=False),
        sa.Column("first_seen_at", UTC_TIME, server_default=sa.func.now(), nullable=False),
        sa.ForeignKeyConstraint(["topic_id"], ["topics.id"], name="fk_topic_news_topic_id_topics", ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["news_id"], ["news.id"], name="fk_topic_news_news_id_news", ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("topic_id", "news_id", name="pk_topic_news"),
    )
    op.create_index("ix_topic_news_topic_id_first_seen_at", "topic_news", ["topic_id", "first_seen_at"])
    op.create_index("ix_topic_news_news_id", "topic_news", ["news_id"])
    op.create_index("ix_topic_news_first_seen_at", "topic_news", ["first_seen_at"])
    op.create_table(
        "topic_news_engines",
        sa.Column("topic_id", sa.Integer(), nullable=False),
        sa.Column("news_id", sa.String(length=32), nullable=False),
        sa.Column("engine", sa.String(length=32), nullable=False),
        sa.Column("first_seen_at", UTC_TIME, server_default=sa.func.now(), nullable=False),
        sa.ForeignKeyConstraint(
            ["topic_id", "news_id"],
            ["topic_news.topic_id", "topic_news.news_id"],
            name="fk_topic_news_engines_topic_id_news_id_topic_news",
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("topic_id", "news_id", "engine", name="pk_topic_news_engines"),
    )
    op.create_index("ix_topic_news_engines_engine_first_seen_at", "topic_news_engines", ["engine", "first_seen_at"])
    op.create_table(
        "scraper_cycles",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("engine", sa.String(length=32), nullable=False),
        sa.Column("node", sa.String(), nullable=False),
        sa.Column("window_start", UTC_TIME, nullable=False),
        sa.Column("window_end", UTC_TIME, nullable=True),
        sa.Column("topics_count", sa.Integer(), server_default=sa.text("0"), nullable=False),
        sa.Column("entries", sa.Integer(), server_default=sa.text("0"), nullable=False),
        sa.Column("new_events", sa.Integer(), server_default=sa.text("0"), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_scraper_cycles"),
        sqlite_autoincrement=True,
    )
    op.create_index("ix_scraper_cycles_engine_window_start", "scraper_cycles", ["engine", "window_start"])


def downgrade() -> None:
    op.drop_table("scraper_cycles")
    op.drop_table("topic_news_engines")
    op.drop_table("topic_news")
    op.drop_table("news")
    op.drop_table("topics")
