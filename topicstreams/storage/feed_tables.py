"""The feed's tables: the topics, the articles (each stored once), the feed events (an article first found for a
topic) and which engines found each."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import Boolean, ForeignKey, ForeignKeyConstraint, Index, Integer, String, func, true
from sqlalchemy.orm import Mapped, mapped_column

from topicstreams.storage.table_base import Base, UTCDateTime


class Topic(Base):
    """A topic followed on the news engines. Only active topics are crawled on schedule."""

    __tablename__ = "topics"
    __table_args__ = {"sqlite_autoincrement": True}

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    name: Mapped[str] = mapped_column(String, unique=True)
    active: Mapped[bool] = mapped_column(Boolean, server_default=true())
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), server_default=func.now())

    def __repr__(self) -> str:
        return f"Topic(id={self.id!r}, name={self.name!r}, active={self.active!r})"


class News(Base):
    """An article, stored once whatever topics and engines found it. ``id`` is the news id."""

    __tablename__ = "news"
    __table_args__ = (Index("ix_news_first_seen_at", "first_seen_at"),)

    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    url: Mapped[str] = mapped_column(String)
    title: Mapped[str] = mapped_column(String)
    source: Mapped[str | None] = mapped_column(String)
    snippet: Mapped[str | None] = mapped_column(String)
    published_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    first_seen_at: Mapped[datetime] = mapped_column(UTCDateTime(), server_default=func.now())

    def __repr__(self) -> str:
        return f"News(id={self.id!r}, url={self.url!r})"


class TopicNews(Base):
    """A feed event: an article first found for a topic (once per topic and article)."""

    __tablename__ = "topic_news"
    __table_args__ = (
        # The feed's order (newest first, ties by topic and news id): a page is a range of one of these.
        Index("ix_topic_news_topic_id_first_seen_at", "topic_id", "first_seen_at", "news_id"),
        Index("ix_topic_news_news_id", "news_id"),
        Index("ix_topic_news_first_seen_at_topic_id", "first_seen_at", "topic_id", "news_id"),
    )

    topic_id: Mapped[int] = mapped_column(ForeignKey("topics.id", ondelete="CASCADE"), primary_key=True)
    news_id: Mapped[str] = mapped_column(String(32), ForeignKey("news.id", ondelete="CASCADE"), primary_key=True)
    first_seen_at: Mapped[datetime] = mapped_column(UTCDateTime(), server_default=func.now())


class TopicNewsEngine(Base):
    """Which engines found a feed event, each when first."""

    __tablename__ = "topic_news_engines"
    __table_args__ = (
        ForeignKeyConstraint(
            ["topic_id", "news_id"],
            ["topic_news.topic_id", "topic_news.news_id"],
            ondelete="CASCADE",
            name="fk_topic_news_engines_topic_id_news_id_topic_news",
        ),
        Index("ix_topic_news_engines_engine_first_seen_at", "engine", "first_seen_at"),
    )

    topic_id: Mapped[int] = mapped_column(Integer, primary_key=True)
    news_id: Mapped[str] = mapped_column(String(32), primary_key=True)
    engine: Mapped[str] = mapped_column(String(32), primary_key=True)
    first_seen_at: Mapped[datetime] = mapped_column(UTCDateTime(), server_default=func.now())
