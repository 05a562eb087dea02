"""The alerts' tables: the alerts and each attempt to deliver them, the states alerts stand for, and the digests'
progress."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import JSON, BigInteger, Boolean, ForeignKey, Index, Integer, String, func, text
from sqlalchemy.orm import Mapped, mapped_column

from topicstreams.storage.table_base import Base, UTCDateTime


class Alert(Base):
    """A call for a person: an engine's transition (paused, resumed, recovered, degraded, …), a node's saturation or
    network, a topic's silence, a digest, a test message. ``engine``, ``node`` and ``band`` are empty where the event
    has none; ``details`` holds its facts; ``delivery`` sums up how its deliveries went (each attempt is a row of
    ``alert_deliveries``), empty while it is pending; an alert a stopping process could not deliver is kept for the
    next start of its node (``sender_node``, ``targets``, ``claimed_until``: :mod:`topicstreams.alerts.leftovers`)."""

    __tablename__ = "alerts"
    __table_args__ = (
        Index("ix_alerts_engine_node_created_at", "engine", "node", "created_at"),
        Index("ix_alerts_created_at_id", "created_at", "id"),
        Index(
            "ix_alerts_pending",
            "sender_node",
            "id",
            postgresql_where=text("delivery IS NULL"),
            sqlite_where=text("delivery IS NULL"),
        ),
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
    title: Mapped[str | None] = mapped_column(String)
    """The message's title (migration 0009): what a later delivery sends again with ``message``."""
    sender_node: Mapped[str | None] = mapped_column(String)
    """The node whose process owes the delivery (None: nobody's to take up, such as a test message)."""
    targets: Mapped[list | None] = mapped_column(JSON)
    """Where the alert goes, each target masked (the next start of ``sender_node`` matches them to its URLs)."""
    claimed_until: Mapped[datetime | None] = mapped_column(UTCDateTime())
    """While ``delivery`` is empty: until when a live process holds the delivery (renewed at each attempt); None
    once a stopping process left it for the next start of ``sender_node``."""


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
