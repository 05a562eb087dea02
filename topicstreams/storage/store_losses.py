"""Items a crawl lost: neither written to the database nor kept in its journal when the process had to stop.

The store (:mod:`topicstreams.pipelines.store`) records each loss as a row of ``store_losses`` (node, engine, how
many items, when, why: migration 0009), read by ``scrapy health``: per node, the items lost in the last
:data:`LOST_WINDOW_DAYS` days and when last (:func:`recent_losses`).

The database may be the reason (it was away at the end): then the loss waits in a small file beside the journal,
``<engine>.lost`` (:func:`keep_for_later`), and the next start of that engine on the node records it
(:func:`record_kept`) before anything else. A loss comes with a full disk, so the file keeps its room: every start
fills it with :data:`RESERVED_BYTES` of blank lines (:func:`reserve`), which a loss overwrites without asking the
disk for more. Should even that fail (a read-only disk), the loss is in the log alone (the ERROR says so).
"""

from __future__ import annotations

import json
import logging
import os
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

from sqlalchemy import Engine, Index, Integer, String, func, insert, select
from sqlalchemy.orm import Mapped, mapped_column

from topicstreams.storage.table_base import Base, UTCDateTime

logger = logging.getLogger(__name__)

LOST_WINDOW_DAYS = 7
"""``scrapy health`` counts the items lost in this many days back."""

LOST_SUFFIX = ".lost"
"""The file beside a journal where a loss waits for the database (``<engine>.lost``)."""

RESERVED_BYTES = 4096
"""The room a loss file keeps (blank lines) so that a full disk still takes a loss or a few."""


class StoreLoss(Base):
    """Items a crawl of ``engine`` on ``node`` had to stop without storing or journaling (``reason``: why)."""

    __tablename__ = "store_losses"
    __table_args__ = (Index("ix_store_losses_node_at", "node", "at"), {"sqlite_autoincrement": True})

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    node: Mapped[str] = mapped_column(String)
    engine: Mapped[str] = mapped_column(String(32))
    items: Mapped[int] = mapped_column(Integer)
    at: Mapped[datetime] = mapped_column(UTCDateTime())
    reason: Mapped[str] = mapped_column(String)


store_losses_table = StoreLoss.__table__


@dataclass(frozen=True)
class Loss:
    """One loss: what the row (or the file) holds."""

    node: str
    engine: str
    items: int
    at: datetime
    reason: str

    def as_line(self) -> bytes:
        record = {"node": self.node, "engine": self.engine, "items": self.items, "at": self.at.isoformat()}
        return json.dumps({**record, "reason": self.reason}, ensure_ascii=False).encode() + b"\n"


@dataclass(frozen=True)
class Lost:
    """A node's losses in the window: how many items, and when the last one was (None: none)."""

    items: int = 0
    last_at: datetime | None = None


def record_losses(db: Engine, losses: list[Loss]) -> None:
    """Add ``losses`` as rows, in one transaction."""
    if not losses:
        return
    rows = [
        {"node": loss.node, "engine": loss.engine, "items": loss.items, "at": loss.at, "reason": loss.reason[:1000]}
        for loss in losses
    ]
    with db.begin() as conn:
        conn.execute(insert(store_losses_table), rows)


def recent_losses(db: Engine, now: datetime, node: str | None = None) -> dict[str, Lost]:
    """Node -> its losses in the :data:`LOST_WINDOW_DAYS` days before ``now`` (only ``node``'s when given)."""
    table = store_losses_table
    query = (
        select(table.c.node, func.sum(table.c["items"]), func.max(table.c.at))
        .where(table.c.at >= now - timedelta(days=LOST_WINDOW_DAYS))
        .group_by(table.c.node)
    )
    if node is not None:
        query = query.where(table.c.node == node)
    with db.connect() as conn:
        rows = conn.execute(query).all()
    return {row_node: Lost(int(items or 0), last_at) for row_node, items, last_at in rows}


def lost_path(folder: str | Path, engine: str) -> Path:
    return Path(folder) / f"{engine}{LOST_SUFFIX}"


def reserve(folder: str | Path, engine: str) -> None:
    """Give the engine's loss file its room (:data:`RESERVED_BYTES` of blank lines) while the disk has it: a loss
    is written into that room, so a disk that has filled up since still takes it. Best effort: a disk already full
    leaves it as it is."""
    path = lost_path(folder, engine)
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            size = os.fstat(fd).st_size
            if size < RESERVED_BYTES:
                os.pwrite(fd, b"\n" * (RESERVED_BYTES - size), size)
                os.fsync(fd)
        finally:
            os.close(fd)
    except OSError as exc:
        logger.debug("could not reserve room for a loss in %s: %s", path, exc)


def keep_for_later(folder: str | Path, loss: Loss) -> Path:
    """Write ``loss`` into the engine's loss file, after the losses already in it (in its reserved room when it
    fits: no new space needed), fsynced; raises ``OSError`` when the disk cannot take it."""
    path = lost_path(folder, loss.engine)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        used = len(_read_all(fd).rstrip(b"\n"))
        os.pwrite(fd, loss.as_line(), used + 1 if used else 0)
        os.fsync(fd)
    finally:
        os.close(fd)
    return path


def record_kept(db: Engine, folder: str | Path, engine: str) -> int:
    """Record the losses an earlier run of ``engine`` kept in its loss file, then blank the file (its room stays);
    the items recorded. A line that is not a loss is skipped with a WARNING; the file stays as it is when the
    database fails (raised)."""
    path = lost_path(folder, engine)
    try:
        fd = os.open(path, os.O_RDWR)
    except FileNotFoundError:
        return 0
    try:
        data = _read_all(fd)
        losses = []
        for line in data.splitlines():
            if not line.strip():
                continue
            try:
                record = json.loads(line)
                losses.append(
                    Loss(
                        str(record["node"]),
                        str(record["engine"]),
                        int(record["items"]),
                        datetime.fromisoformat(record["at"]),
                        str(record.get("reason") or ""),
                    )
                )
            except (ValueError, KeyError, TypeError) as exc:
                logger.warning("Skipping a line of %s that is not a recorded loss (%s)", path, exc)
        if not data.strip():
            return 0
        record_losses(db, losses)  # all or none: a file kept after a failure is recorded once, later
        os.pwrite(fd, b"\n" * len(data), 0)
        os.fsync(fd)
    finally:
        os.close(fd)
    return sum(loss.items for loss in losses)


def _read_all(fd: int) -> bytes:
    chunks, offset = [], 0
    while chunk := os.pread(fd, 1 << 16, offset):
        chunks.append(chunk)
        offset += len(chunk)
    return b"".join(chunks)
