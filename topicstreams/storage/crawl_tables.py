"""The crawl's tables: its cycles and their totals (never purged), its stored log records, lease mode's shared
schedule and the membership of the crawl processes."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import JSON, ForeignKey, Index, Integer, String, Text, text
from sqlalchemy.orm import Mapped, mapped_column

from topicstreams.storage.table_base import BIG_ID, Base, ClassCounts, UTCDateTime, count_column


class ScraperCycle(Base):
    """One scrape cycle of one engine on one node, over a time window."""

    __tablename__ = "scraper_cycles"
    __table_args__ = (
        Index("ix_scraper_cycles_engine_window_start", "engine", "window_start"),
        Index("ix_scraper_cycles_window_end", "window_end"),
        # The monitor's cycle timeline: the last 24 hours of every engine and node, read from the index alone.
        Index("ix_scraper_cycles_timeline", "window_end", "engine", "topics_count", "entries", "new_events"),
        {"sqlite_autoincrement": True},
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    engine: Mapped[str] = mapped_column(String(32))
    node: Mapped[str] = mapped_column(String)
    window_start: Mapped[datetime] = mapped_column(UTCDateTime())
    window_end: Mapped[datetime | None] = mapped_column(UTCDateTime())
    topics_count: Mapped[int] = mapped_column(Integer, server_default=text("0"))
    entries: Mapped[int] = mapped_column(Integer, server_default=text("0"))
    new_events: Mapped[int] = mapped_column(Integer, server_default=text("0"))
    # The window's health counts (migration 0003).
    requests: Mapped[int] = mapped_column(Integer, server_default=text("0"))
    ok: Mapped[int] = mapped_column(Integer, server_default=text("0"))
    hard_blocks: Mapped[int] = mapped_column(Integer, server_default=text("0"))
    challenges: Mapped[int] = mapped_column(Integer, server_default=text("0"))
    soft_blocks: Mapped[int] = mapped_column(Integer, server_default=text("0"))
    errors: Mapped[int] = mapped_column(Integer, server_default=text("0"))
    cooldowns: Mapped[int] = mapped_column(Integer, server_default=text("0"))


class EngineTotal(ClassCounts, Base):
    """The counts of every ``scraper_cycles`` row of an engine on a node, added up and never purged: the
    Prometheus counters (``topicstreams_engine_*_total``) read them."""

    __tablename__ = "engine_totals"

    engine: Mapped[str] = mapped_column(String(32), primary_key=True)
    node: Mapped[str] = mapped_column(String, primary_key=True)
    cooldowns: Mapped[int] = count_column()
    topics_count: Mapped[int] = count_column()
    entries: Mapped[int] = count_column()
    new_events: Mapped[int] = count_column()
    last_cycle_end: Mapped[datetime | None] = mapped_column(UTCDateTime())


class ScraperLog(Base):
    """A log record of a crawl process: its WARNING-and-above records and its per-window INFO lines, masked."""

    __tablename__ = "scraper_logs"
    __table_args__ = (
        Index("ix_scraper_logs_at_id", "at", "id"),
        Index("ix_scraper_logs_engine_at_id", "engine", "at", "id"),
        Index("ix_scraper_logs_node_at_id", "node", "at", "id"),
        Index("ix_scraper_logs_level_at_id", "level", "at", "id"),
        {"sqlite_autoincrement": True},
    )

    id: Mapped[int] = mapped_column(BIG_ID, primary_key=True, autoincrement=True)
    at: Mapped[datetime] = mapped_column(UTCDateTime())
    node: Mapped[str] = mapped_column(String)
    engine: Mapped[str | None] = mapped_column(String(32))
    level: Mapped[str] = mapped_column(String(16))
    logger: Mapped[str] = mapped_column(String)
    message: Mapped[str] = mapped_column(Text)


class ScheduleSlot(Base):
    """Lease mode's shared schedule: one row per (engine, topic) — when it is due, the slot its rhythm is anchored to,
    and while a node works on it, the lease (node, token, until). See :mod:`topicstreams.storage.leases`."""

    __tablename__ = "schedule"
    __table_args__ = (
        Index("ix_schedule_engine_due_at", "engine", "due_at"),
        Index(
            "ix_schedule_leased",
            "engine",
            "lease_until",
            postgresql_where=text("lease_token IS NOT NULL"),
            sqlite_where=text("lease_token IS NOT NULL"),
        ),
    )

    engine: Mapped[str] = mapped_column(String(32), primary_key=True)
    topic_id: Mapped[int] = mapped_column(ForeignKey("topics.id", ondelete="CASCADE"), primary_key=True)
    slot_at: Mapped[datetime] = mapped_column(UTCDateTime())
    """The slot the topic's rhythm is anchored to: the next one is a whole number of intervals later."""
    due_at: Mapped[datetime] = mapped_column(UTCDateTime())
    """When it may be claimed: the slot with its jitter, or earlier/later after a failure."""
    lease_node: Mapped[str | None] = mapped_column(String)
    lease_token: Mapped[str | None] = mapped_column(String(32))
    """Of the claim that holds it: only that claim can re-arm or release it."""
    lease_until: Mapped[datetime | None] = mapped_column(UTCDateTime())
    """The claim holds until then, unless its node extends it; after that any node may claim the row."""
    last_done_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    last_node: Mapped[str | None] = mapped_column(String)
    """The node whose claim re-armed it last (after its pages were read)."""
    scrapes: Mapped[int] = mapped_column(Integer, server_default=text("0"))


class NodeProcess(Base):
    """Membership: one row per crawl process of a node (``scrapy nodes`` shows one line per node id)."""

    __tablename__ = "nodes"

    node: Mapped[str] = mapped_column(String, primary_key=True)
    process: Mapped[str] = mapped_column(String(32), primary_key=True)
    """A token of the process (its host, pid and a random part)."""
    engines: Mapped[list] = mapped_column(JSON)
    started_at: Mapped[datetime] = mapped_column(UTCDateTime())
    heartbeat_at: Mapped[datetime] = mapped_column(UTCDateTime())
    version: Mapped[str] = mapped_column(String(32))
    assignment: Mapped[str] = mapped_column(String(16))
    stopped_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    """When it stopped cleanly (SIGTERM, end of a once run); None while it runs or when it died."""
    scraped: Mapped[dict | None] = mapped_column(JSON)
    """Per engine, the topics it scraped in the last scrape interval, as of its heartbeat."""
