"""Feed: the search index (news_search) and the indexes the feed's keyset order reads.

The feed lists events newest first by ``first_seen_at``, ties broken by ``(topic_id, news_id)``: the indexes on
``topic_news`` become ``(first_seen_at, topic_id, news_id)`` and ``(topic_id, first_seen_at, news_id)``, so a page,
also a page far down by cursor, is a range of one index. The search index differs by nature between the two
databases; see :mod:`topicstreams.storage.search`.

Revision ID: 0004
Revises: 0003
Create Date: 2026-12-01 11:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from topicstreams.storage import search

revision: str = "0004"
down_revision: str | Sequence[str] | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.drop_index("ix_topic_news_first_seen_at", table_name="topic_news")
    op.drop_index("ix_topic_news_topic_id_first_seen_at", table_name="topic_news")
    op.create_index("ix_topic_news_first_seen_at_topic_id", "topic_news", ["first_seen_at", "topic_id", "news_id"])
    op.create_index("ix_topic_news_topic_id_first_seen_at", "topic_news", ["topic_id", "first_seen_at", "news_id"])
    conn = op.get_bind()
    if conn.dialect.name == "sqlite":
        for statement in search.sqlite_ddl():
            op.execute(statement)
        return
    op.create_table(
        search.SEARCH_TABLE,
        sa.Column("news_id", sa.String(length=32), sa.ForeignKey("news.id", ondelete="CASCADE",
                                                                 name="fk_news_search_news_id_news"),
                  nullable=False),
        sa.Column("document", sa.dialects.postgresql.TSVECTOR(), nullable=False),
        sa.PrimaryKeyConstraint("news_id", name="pk_news_search"),
    )
    op.create_index("ix_news_search_document", search.SEARCH_TABLE, ["document"], postgresql_using="gin")
    search.index_all(conn)


def downgrade() -> None:
    conn = op.get_bind()
    if conn.dialect.name == "sqlite":
        for trigger in ("news_search_insert", "news_search_update", "news_search_delete"):
            op.execute(f"DROP TRIGGER IF EXISTS {trigger}")
        op.execute(f"DROP TABLE IF EXISTS {search.KEYS_TABLE}")
    op.execute(f"DROP TABLE IF EXISTS {search.SEARCH_TABLE}")
    op.drop_index("ix_topic_news_topic_id_first_seen_at", table_name="topic_news")
    op.drop_index("ix_topic_news_first_seen_at_topic_id", table_name="topic_news")
    op.create_index("ix_topic_news_topic_id_first_seen_at", "topic_news", ["topic_id", "first_seen_at"])
    op.create_index("ix_topic_news_first_seen_at", "topic_news", ["first_seen_at"])
