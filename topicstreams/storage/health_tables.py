"""The health tables: each engine's live status on each node, its health windows (the baseline's history) and
their daily rollup (the monitor's 12 months)."""

from __future__ import annotations

from datetime import date, datetime

from sqlalchemy import JSON, BigInteger, Date, Float, Index, Integer, String, func, text
from sqlalchemy.orm import Mapped, mapped_column

from topicstreams.storage.table_base import Base, ClassCounts, UTCDateTime, count_column


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
    stopped_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    """When the engine's crawl closed (None while a crawl writes the row; migration 0011)."""
    heartbeat_seconds: Mapped[float | None] = mapped_column(Float)
    """How often the crawl writing the row writes it at least (None: the default heartbeat; migration 0011): readers
    call the row stale after three of them."""
    window_holes: Mapped[int | None] = mapped_column(Integer)
    """The engine's holes within the last ``health.window`` seconds when the row was written (None: no visit told;
    migration 0014): the reason ``holes`` (:mod:`topicstreams.health.holes_rule`)."""


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
    items: Mapped[int] = count_column()
    valid_items: Mapped[int] = count_column()
    result_pages: Mapped[int] = count_column()
    yielding_pages: Mapped[int] = count_column()
    p95_ms: Mapped[float | None] = mapped_column(Float)
    """The windows' p95 latencies, averaged weighted by their requests."""
    parser_score: Mapped[int | None] = mapped_column(Integer)
    """The parser score of the day's counts added up (:func:`topicstreams.engines.parser_health.parser_score`)."""
