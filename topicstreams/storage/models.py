"""The database tables, as SQLAlchemy 2 typed declarative models.

All times are UTC. In Python they are timezone-aware datetimes; in the database they are
``DateTime(timezone=True)`` (PostgreSQL ``timestamptz``; on SQLite, text in UTC).
"""

from __future__ import annotations

from datetime import UTC, date, datetime
from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    Date,
    DateTime,
    Dialect,
    Float,
    ForeignKey,
    ForeignKeyConstraint,
    Index,
    Integer,
    MetaData,
    String,
    Text,
    TypeDecorator,
    func,
    text,
    true,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

NAMING_CONVENTION = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}
"""Constraint names, so that later migrations (batch mode on SQLite included) can refer to them."""


class UTCDateTime(TypeDecorator[datetime]):
    """A timezone-aware UTC datetime, stored the same way on SQLite and PostgreSQL.

    Values are converted to UTC before they are written (naive datetimes are taken to be UTC)
    and come back as aware UTC datetimes. SQLite keeps no offset, so values are written there
    without one, in UTC, which also keeps them ordered as text.
    """

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if not isinstance(value, datetime):
            raise TypeError(f"expected a datetime, got {type(value).__name__}")
        value = value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
        if dialect.name == "sqlite":
            return value.replace(tzinfo=None)
        return value

    def bind_processor(self, dialect: Dialect) -> Any:
        if dialect.name != "sqlite":
            return super().bind_processor(dialect)

        # The store writes many of these: on SQLite, one step straight to the text SQLAlchemy's
        # SQLite DATETIME writes ("YYYY-MM-DD HH:MM:SS.ffffff") instead of three.
        def process(value: datetime | None) -> str | None:
            if value is None:
                return None
            if not isinstance(value, datetime):
                raise TypeError(f"expected a datetime, got {type(value).__name__}")
            if value.tzinfo is None:
                value = value.replace(tzinfo=UTC)
            elif value.tzinfo is not UTC:
                value = value.astimezone(UTC)
            return value.isoformat(" ", "microseconds")[:26]

        return process

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            return value.replace(tzinfo=UTC)
        return value.astimezone(UTC)


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING_CONVENTION)
    type_annotation_map = {datetime: UTCDateTime()}


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


class EngineStatus(Base):
    """The live state of one engine on one node, kept by the health extension; every process and command reads it.

    ``score`` is the smoothed score (``raw_score`` the latest one before smoothing) and ``band`` its band;
    ``state`` is ``running``, ``cooling`` (benched until ``cooling_until``) or ``paused`` (until a person
    resumes it: ``paused_at`` / ``resumed_at``). ``reasons`` is a list of signal names; ``window_counts`` the
    counts of the current window; ``pace_multiplier`` the slowdown in force (1 normal, ``health.degrade_factor``
    while degraded), which a restart keeps.
    """

    __tablename__ = "engine_status"

    engine: Mapped[str] = mapped_column(String(32), primary_key=True)
    node: Mapped[str] = mapped_column(String, primary_key=True)
    score: Mapped[int | None] = mapped_column(Integer)
    band: Mapped[str] = mapped_column(String(16), server_default=text("'unknown'"))
    state: Mapped[str] = mapped_column(String(16), server_default=text("'running'"))
    cooling_until: Mapped[datetime | None] = mapped_column(UTCDateTime())
    reasons: Mapped[list] = mapped_column(JSON, server_default=text("'[]'"))
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime(), server_default=func.now())
    raw_score: Mapped[int | None] = mapped_column(Integer)
    p50_ms: Mapped[float | None] = mapped_column(Float)
    p95_ms: Mapped[float | None] = mapped_column(Float)
    window_counts: Mapped[dict | None] = mapped_column(JSON)
    paused_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    resumed_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    pace_multiplier: Mapped[float | None] = mapped_column(Float)
    parser_score: Mapped[int | None] = mapped_column(Integer)
    parser_reasons: Mapped[list] = mapped_column(JSON, server_default=text("'[]'"))
    canary_mismatches: Mapped[list] = mapped_column(JSON, server_default=text("'[]'"))
    """The canary queries whose latest answer was wrong."""
    cost: Mapped[dict | None] = mapped_column(JSON)
    """Attempts, bytes and browser seconds per valid record: the window's, the baseline's, their ratio."""
    last_canary: Mapped[dict | None] = mapped_column(JSON)
    """The engine's latest canary check: ``{"query", "at", "matched", "results", "problem"}`` (migration 0006)."""
    coverage: Mapped[dict | None] = mapped_column(JSON)
    """The coverage signal: ``{"window", "baseline", "drop"}`` (migration 0007)."""
    connection_failures_since: Mapped[datetime | None] = mapped_column(UTCDateTime())
    """When the engine's current run of connection-level failures began (None: its last answer was a response)."""


class Alert(Base):
    """A call for a person: an engine's transition (paused, resumed, recovered, degraded, …), a node's saturation or
    network, a topic's silence, a digest, a test message. ``engine``, ``node`` and ``band`` are empty where the event
    has none; ``details`` holds its facts; ``delivery`` sums up how its deliveries went (each attempt is a row of
    ``alert_deliveries``)."""

    __tablename__ = "alerts"
    __table_args__ = (
        Index("ix_alerts_engine_node_created_at", "engine", "node", "created_at"),
        Index("ix_alerts_created_at_id", "created_at", "id"),
        {"sqlite_autoincrement": True},
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    engine: Mapped[str | None] = mapped_column(String(32))
    node: Mapped[str | None] = mapped_column(String)
    score: Mapped[int | None] = mapped_column(Integer)
    band: Mapped[str | None] = mapped_column(String(16))
    reasons: Mapped[list] = mapped_column(JSON, server_default=text("'[]'"))
    message: Mapped[str] = mapped_column(String)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), server_default=func.now())
    delivery: Mapped[str | None] = mapped_column(String)
    resolved_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    event: Mapped[str] = mapped_column(String(32), server_default=text("'paused'"))
    """What happened (migration 0007): one of :data:`topicstreams.alerts.events.EVENTS`, ``digest`` or ``test``."""
    topic: Mapped[str | None] = mapped_column(String)
    details: Mapped[dict | None] = mapped_column(JSON)


class AlertDelivery(Base):
    """One attempt to deliver an alert to one target: its URL masked, when, whether it went through, what came back."""

    __tablename__ = "alert_deliveries"
    __table_args__ = (
        Index("ix_alert_deliveries_alert_id", "alert_id", "id"),
        {"sqlite_autoincrement": True},
    )

    id: Mapped[int] = mapped_column(
        BigInteger().with_variant(Integer(), "sqlite"), primary_key=True, autoincrement=True
    )
    alert_id: Mapped[int] = mapped_column(Integer, ForeignKey("alerts.id", ondelete="CASCADE"))
    target: Mapped[str] = mapped_column(String)
    attempt: Mapped[int] = mapped_column(Integer)
    at: Mapped[datetime] = mapped_column(UTCDateTime())
    ok: Mapped[bool] = mapped_column(Boolean)
    detail: Mapped[str | None] = mapped_column(String)


class AlertState(Base):
    """The state an alert stands for, by key (``silence:<topic>``, ``network:<node>``): changed by a compare-and-set,
    so that of many processes watching the same thing one sends the alert of a transition."""

    __tablename__ = "alert_states"

    key: Mapped[str] = mapped_column(String, primary_key=True)
    state: Mapped[str] = mapped_column(String(32))
    since: Mapped[datetime | None] = mapped_column(UTCDateTime())
    changed_at: Mapped[datetime] = mapped_column(UTCDateTime())
    details: Mapped[dict | None] = mapped_column(JSON)


class DigestState(Base):
    """A digest's progress: the end of the period last sent, and the claim of the process sending the next one."""

    __tablename__ = "digest_states"

    name: Mapped[str] = mapped_column(String, primary_key=True)
    sent_until: Mapped[datetime] = mapped_column(UTCDateTime())
    """Feed events up to this moment are covered by a digest sent (or an empty period passed)."""
    claimed_by: Mapped[str | None] = mapped_column(String)
    claimed_until: Mapped[datetime | None] = mapped_column(UTCDateTime())
    """A claim expires then: a process that died mid-send leaves the period to another (sent at most twice)."""
    sent_at: Mapped[datetime | None] = mapped_column(UTCDateTime())


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


class HealthWindow(Base):
    """One engine's responses on one node over one window of ``health.window`` seconds: the baseline's history."""

    __tablename__ = "health_windows"
    __table_args__ = (
        Index("ix_health_windows_engine_node_window_end", "engine", "node", "window_end"),
        Index("ix_health_windows_window_end", "window_end"),
        {"sqlite_autoincrement": True},
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    engine: Mapped[str] = mapped_column(String(32))
    node: Mapped[str] = mapped_column(String)
    window_start: Mapped[datetime] = mapped_column(UTCDateTime())
    window_end: Mapped[datetime] = mapped_column(UTCDateTime())
    requests: Mapped[int] = mapped_column(Integer, server_default=text("0"))
    ok: Mapped[int] = mapped_column(Integer, server_default=text("0"))
    hard_blocks: Mapped[int] = mapped_column(Integer, server_default=text("0"))
    challenges: Mapped[int] = mapped_column(Integer, server_default=text("0"))
    soft_blocks: Mapped[int] = mapped_column(Integer, server_default=text("0"))
    errors: Mapped[int] = mapped_column(Integer, server_default=text("0"))
    items: Mapped[int] = mapped_column(Integer, server_default=text("0"))
    valid_items: Mapped[int] = mapped_column(Integer, server_default=text("0"))
    parse_errors: Mapped[int] = mapped_column(Integer, server_default=text("0"))
    bytes: Mapped[int] = mapped_column(BigInteger, server_default=text("0"))
    browser_seconds: Mapped[float] = mapped_column(Float, server_default=text("0"))
    p50_latency_ms: Mapped[float | None] = mapped_column(Float)
    p95_latency_ms: Mapped[float | None] = mapped_column(Float)
    result_pages: Mapped[int] = mapped_column(Integer, server_default=text("0"))
    """Pages that should carry results (ok pages other than "no results", and pages the parser failed on)."""
    yielding_pages: Mapped[int] = mapped_column(Integer, server_default=text("0"))
    """Of those, the pages the spider built items from."""
    missing_fields: Mapped[dict | None] = mapped_column(JSON)
    """Required field -> items missing it."""
    consent_walls: Mapped[int] = mapped_column(Integer, server_default=text("0"))
    """Of the challenges, the consent walls."""
    score: Mapped[int | None] = mapped_column(Integer)
    """The smoothed score in force when the window was stored (migration 0006; the daily history's mean and
    minimum)."""
    coverage_expected: Mapped[int | None] = mapped_column(Integer)
    """Articles the other engines found for the topics the engine scraped in the window (migration 0007)."""
    coverage_found: Mapped[int | None] = mapped_column(Integer)
    """Of those, the ones the engine found too."""


BIG_ID = BigInteger().with_variant(Integer(), "sqlite")
"""A 64-bit id; on SQLite an INTEGER, the rowid's alias."""


def _total() -> Mapped[int]:
    return mapped_column(BigInteger, server_default=text("0"))


class ClassCounts:
    """Requests and the responses of each class, added up (a mixin: each table gets its own columns)."""

    requests: Mapped[int] = _total()
    ok: Mapped[int] = _total()
    hard_blocks: Mapped[int] = _total()
    challenges: Mapped[int] = _total()
    soft_blocks: Mapped[int] = _total()
    errors: Mapped[int] = _total()


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


class HealthDaily(ClassCounts, Base):
    """One engine's health on one node over one UTC day, rolled up from its ``health_windows`` before they are
    purged; kept ``health.history_days``."""

    __tablename__ = "health_daily"
    # The monitor's 12 months (storage/health_history.py, health_days) read from the index alone: a third of the time.
    __table_args__ = (
        Index(
            "ix_health_daily_day_engine",
            "day",
            "engine",
            "windows",
            "score_mean",
            "score_min",
            "requests",
            "p95_ms",
            "result_pages",
            "yielding_pages",
            "items",
            "valid_items",
        ),
    )

    engine: Mapped[str] = mapped_column(String(32), primary_key=True)
    node: Mapped[str] = mapped_column(String, primary_key=True)
    day: Mapped[date] = mapped_column(Date, primary_key=True)
    windows: Mapped[int] = mapped_column(Integer, server_default=text("0"))
    score_mean: Mapped[float | None] = mapped_column(Float)
    """The mean of the day's windows' smoothed scores (None: no window had a score)."""
    score_min: Mapped[int | None] = mapped_column(Integer)
    items: Mapped[int] = _total()
    valid_items: Mapped[int] = _total()
    result_pages: Mapped[int] = _total()
    yielding_pages: Mapped[int] = _total()
    p95_ms: Mapped[float | None] = mapped_column(Float)
    """The windows' p95 latencies, averaged weighted by their requests."""
    parser_score: Mapped[int | None] = mapped_column(Integer)
    """The parser score of the day's counts added up (:func:`topicstreams.engines.parser_health.parser_score`)."""


class EngineTotal(ClassCounts, Base):
    """The counts of every ``scraper_cycles`` row of an engine on a node, added up and never purged: the
    Prometheus counters (``topicstreams_engine_*_total``) read them."""

    __tablename__ = "engine_totals"

    engine: Mapped[str] = mapped_column(String(32), primary_key=True)
    node: Mapped[str] = mapped_column(String, primary_key=True)
    cooldowns: Mapped[int] = _total()
    topics_count: Mapped[int] = _total()
    entries: Mapped[int] = _total()
    new_events: Mapped[int] = _total()
    last_cycle_end: Mapped[datetime | None] = mapped_column(UTCDateTime())


topics_table = Topic.__table__
news_table = News.__table__
topic_news_table = TopicNews.__table__
topic_news_engines_table = TopicNewsEngine.__table__
scraper_cycles_table = ScraperCycle.__table__
engine_status_table = EngineStatus.__table__
alerts_table = Alert.__table__
alert_deliveries_table = AlertDelivery.__table__
alert_states_table = AlertState.__table__
digest_states_table = DigestState.__table__
health_windows_table = HealthWindow.__table__
scraper_logs_table = ScraperLog.__table__
health_daily_table = HealthDaily.__table__
engine_totals_table = EngineTotal.__table__
schedule_table = ScheduleSlot.__table__
nodes_table = NodeProcess.__table__

TABLE_NAMES: tuple[str, ...] = (
    "topics",
    "news",
    "topic_news",
    "topic_news_engines",
    "scraper_cycles",
    "engine_status",
    "alerts",
    "health_windows",
    "scraper_logs",
    "health_daily",
    "engine_totals",
    "alert_deliveries",
    "alert_states",
    "digest_states",
    "schedule",
    "nodes",
)

__all__ = [
    "TABLE_NAMES",
    "Alert",
    "AlertDelivery",
    "AlertState",
    "DigestState",
    "Base",
    "EngineStatus",
    "EngineTotal",
    "HealthDaily",
    "HealthWindow",
    "News",
    "ScraperCycle",
    "ScraperLog",
    "Topic",
    "TopicNews",
    "TopicNewsEngine",
    "UTCDateTime",
    "alert_deliveries_table",
    "alert_states_table",
    "alerts_table",
    "digest_states_table",
    "engine_status_table",
    "engine_totals_table",
    "health_daily_table",
    "health_windows_table",
    "news_table",
    "scraper_cycles_table",
    "scraper_logs_table",
    "topic_news_engines_table",
    "topic_news_table",
    "topics_table",
]
