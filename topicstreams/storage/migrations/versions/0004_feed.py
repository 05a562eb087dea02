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

# SQLite's index, written out here so that this revision stays what it was whatever search.py becomes: the FTS5
# table holds the words; news_search_keys gives each article the rowid of its FTS5 row (an explicit INTEGER
# PRIMARY KEY, which VACUUM never renumbers, unlike the implicit rowid of news). Triggers keep both in step.
_KEY_OF_OLD = "(SELECT id FROM news_search_keys WHERE news_id = old.id)"
_INSERT = (
    "INSERT INTO news_search (rowid, title, snippet, source) VALUES ((SELECT id FROM news_search_keys "
    "WHERE news_id = new.id), new.title, coalesce(new.snippet, ''), coalesce(new.source, ''))"
)
SQLITE_INDEX = [
    "CREATE TABLE news_search_keys (id INTEGER PRIMARY KEY, news_id VARCHAR(32) NOT NULL UNIQUE)",
    "CREATE VIRTUAL TABLE news_search USING fts5(title, snippet, source, tokenize = 'unicode61 remove_diacritics 2')",
    f"CREATE TRIGGER news_search_insert AFTER INSERT ON news BEGIN "
    f"INSERT INTO news_search_keys (news_id) VALUES (new.id); {_INSERT}; END",
    f"CREATE TRIGGER news_search_update AFTER UPDATE OF title, snippet, source ON news BEGIN "
    f"DELETE FROM news_search WHERE rowid = {_KEY_OF_OLD}; {_INSERT}; END",
    f"CREATE TRIGGER news_search_delete AFTER DELETE ON news BEGIN "
    f"DELETE FROM news_search WHERE rowid = {_KEY_OF_OLD}; DELETE FROM news_search_keys WHERE news_id = old.id; END",
    "INSERT INTO news_search_keys (news_id) SELECT id FROM news ORDER BY rowid",
    "INSERT INTO news_search (rowid, title, snippet, source) SELECT keys.id, news.title, coalesce(news.snippet, ''), "
    "coalesce(news.source, '') FROM news JOIN news_search_keys AS keys ON keys.news_id = news.id",
]


def upgrade() -> None:
    op.drop_index("ix_topic_news_first_seen_at", table_name="topic_news")
    op.drop_index("ix_topic_news_topic_id_first_seen_at", table_name="topic_news")
    op.create_index("ix_topic_news_first_seen_at_topic_id", "topic_news", ["first_seen_at", "topic_id", "news_id"])
    op.create_index("ix_topic_news_topic_id_first_seen_at", "topic_news", ["topic_id", "first_seen_at", "news_id"])
    conn = op.get_bind()
    if conn.dialect.name == "sqlite":
        for statement in SQLITE_INDEX:
            op.execute(statement)
        return
    op.create_table(
        "news_search",
        sa.Column(
            "news_id",
            sa.String(length=32),
            sa.ForeignKey("news.id", ondelete="CASCADE", name="fk_news_search_news_id_news"),
            nullable=False,
        ),
        sa.Column("document", sa.dialects.postgresql.TSVECTOR(), nullable=False),
        sa.PrimaryKeyConstraint("news_id", name="pk_news_search"),
    )
    op.create_index("ix_news_search_document", "news_search", ["document"], postgresql_using="gin")
    search.index_all(conn)  # the articles already stored, folded as the store folds them


def downgrade() -> None:
    conn = op.get_bind()
    if conn.dialect.name == "sqlite":
        for trigger in ("news_search_insert", "news_search_update", "news_search_delete"):
            op.execute(f"DROP TRIGGER IF EXISTS {trigger}")
        op.execute("DROP TABLE IF EXISTS news_search_keys")
    op.execute("DROP TABLE IF EXISTS news_search")
    op.drop_index("ix_topic_news_topic_id_first_seen_at", table_name="topic_news")
    op.drop_index("ix_topic_news_first_seen_at_topic_id", table_name="topic_news")
    op.create_index("ix_topic_news_topic_id_first_seen_at", "topic_news", ["topic_id", "first_seen_at"])
    op.create_index("ix_topic_news_first_seen_at", "topic_news", ["first_seen_at"])
