"""The store's journal: items waiting for the database, on local disk, and the items it will never take.

One journal per node and engine (``browser.profile_dir/<node>/journal/<engine>.jsonl``; the add-on sets
``TOPICSTREAMS_JOURNAL_DIR``), held by one process at a time (an exclusive ``flock``: the crawl of that engine, or
``scrapy db replay``). It is append-only: one JSON object per line and item, the fields the store writes
(``published_at`` in ISO 8601); every append is flushed and fsynced before it returns, so a SIGKILL or a power
cut loses at most the append under way. A line cut short by such an end (the last line, without its newline)
is dropped when the journal is opened again, with a WARNING that says what it cannot know: an append that did not
finish (the process stopped, or the disk was full). An append that fails in this process (no space left, a
read-only or over-quota disk: any ``OSError``) raises, and the journal cuts off whatever part of it reached the file
at once (and again before the next append, should that fail too): it holds only whole lines, the items appended
before.

Beside it, the reject file (``<engine>.rejected.jsonl``): items the database refused for good (a constraint
the data breaks, a value a column cannot hold), one per line with the ``reason`` and ``rejected_at``. They are
never retried by themselves; ``scrapy db replay PATH`` tries them again by hand (after a fix).

The journal is read from an offset kept in memory (:meth:`Journal.read`, :meth:`Journal.advance`) while appends
go on; once everything is read and written, :meth:`Journal.clear` empties it. A crash in between replays the
journal from its start: the store's writes are idempotent, nothing is stored twice.
"""

from __future__ import annotations

import fcntl
import json
import logging
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

logger = logging.getLogger(__name__)

JOURNAL_SUFFIX = ".jsonl"
REJECTS_SUFFIX = ".rejected.jsonl"

FIELDS = ("news_id", "url", "title", "source", "snippet", "published_at", "topic", "engine")
"""The fields of an item the journal keeps: what the store writes."""

READ_CHUNK = 1 << 20


class JournalInUse(RuntimeError):
    """Another process holds the journal."""


def journal_folder(profile_dir: str | Path, node: str) -> Path:
    """The node's journals: ``<browser.profile_dir>/<node>/journal``."""
    return Path(profile_dir) / node / "journal"


def journal_path(folder: str | Path, engine: str) -> Path:
    return Path(folder) / f"{engine}{JOURNAL_SUFFIX}"


def rejects_path(journal: Path) -> Path:
    """The reject file beside ``journal``."""
    return journal.with_name(journal.name.removesuffix(JOURNAL_SUFFIX) + REJECTS_SUFFIX)


def is_rejects(path: Path) -> bool:
    return path.name.endswith(REJECTS_SUFFIX)


def encode(item: Mapping[str, Any], **extra: Any) -> bytes:
    """One journal line (with its newline) for ``item``."""
    record = {name: item.get(name) for name in FIELDS}
    published_at = record["published_at"]
    if isinstance(published_at, datetime):
        record["published_at"] = published_at.isoformat()
    record.update(extra)
    return json.dumps(record, ensure_ascii=False, separators=(",", ":")).encode("utf-8", "surrogatepass") + b"\n"


def decode(line: bytes) -> dict[str, Any]:
    """The item of one journal line; ValueError when the line is not one."""
    record = json.loads(line.decode("utf-8", "surrogatepass"))
    if not isinstance(record, dict):
        raise ValueError("not a JSON object")
    item = {name: record.get(name) for name in FIELDS}
    published_at = item["published_at"]
    if isinstance(published_at, str):
        parsed = datetime.fromisoformat(published_at)
        item["published_at"] = parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)
    return item


@dataclass(frozen=True)
class Unreadable:
    """A journal line that is not an item (damaged by hand or by the disk): set aside with the rejects."""

    line: bytes
    problem: str


class Journal:
    """One journal file (see the module docstring). Not thread-safe by itself: its user serialises appends."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.rejects = rejects_path(self.path) if not is_rejects(self.path) else None
        self._fd: int | None = None
        self.offset = 0
        """Where the next :meth:`read` starts."""
        self.size = 0
        """The bytes in the file (everything appended so far)."""
        self.unread_items = 0
        """Items appended and not yet :meth:`advance`-d over."""

    # ---- holding it -----------------------------------------------------------------------------------
    def open(self) -> int:
        """Create (if missing) and hold the journal; returns the items already in it (left by an earlier run)."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise JournalInUse(
                f"the journal {self.path} is held by another process (a crawl of its engine, or `scrapy db replay`)"
            ) from None
        self._fd = fd
        self._repair_tail()
        self.size = os.fstat(fd).st_size
        self.offset = 0
        self.unread_items = self._count_lines()
        return self.unread_items

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)  # closing the descriptor releases the flock
            self._fd = None

    def __enter__(self) -> Journal:
        self.open()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    @property
    def fd(self) -> int:
        if self._fd is None:
            raise RuntimeError(f"the journal {self.path} is not open")
        return self._fd

    # ---- writing --------------------------------------------------------------------------------------
    def append(self, items: Iterable[Mapping[str, Any]]) -> int:
        """Append ``items`` and fsync; returns how many. An ``OSError`` (a full disk, …) is raised with none of
        them appended: the part that reached the file is cut off (:meth:`_cut_to_size`)."""
        lines = [encode(item) for item in items]
        if not lines:
            return 0
        data = b"".join(lines)
        self._cut_to_size()
        try:
            _write_all(self.fd, data)
            os.fsync(self.fd)
        except OSError:
            self._cut_to_size()
            raise
        self.size += len(data)
        self.unread_items += len(lines)
        return len(lines)

    def reject(self, rejected: Iterable[tuple[Mapping[str, Any] | Unreadable, str]]) -> int:
        """Set items aside in the reject file, each with its reason; returns how many."""
        now = datetime.now(UTC).isoformat(timespec="seconds")
        lines = []
        for item, reason in rejected:
            if isinstance(item, Unreadable):
                lines.append(
                    json.dumps(
                        {"line": item.line.decode("utf-8", "replace"), "reason": reason, "rejected_at": now},
                        ensure_ascii=False,
                    ).encode()
                    + b"\n"
                )
            else:
                lines.append(encode(item, reason=reason, rejected_at=now))
        if not lines:
            return 0
        if self.rejects is None:
            raise RuntimeError(f"{self.path} is a reject file: it has no reject file of its own")
        fd = os.open(self.rejects, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        try:
            _write_all(fd, b"".join(lines))
            os.fsync(fd)
        finally:
            os.close(fd)
        return len(lines)

    def _cut_to_size(self) -> None:
        """Cut the file back to the whole lines appended so far (``size``): a failed append may have left part of
        itself. Should even that fail, the next append tries again first."""
        try:
            if os.fstat(self.fd).st_size > self.size:
                os.ftruncate(self.fd, self.size)
        except OSError as exc:
            logger.debug("could not cut the failed append off the journal %s yet: %s", self.path, exc)

    def clear(self) -> None:
        """Everything is written: empty the journal."""
        os.ftruncate(self.fd, 0)
        os.fsync(self.fd)
        self.size = self.offset = self.unread_items = 0

    # ---- reading --------------------------------------------------------------------------------------
    @property
    def unread(self) -> bool:
        return self.offset < self.size

    def read(self, limit: int) -> tuple[list[dict[str, Any] | Unreadable], int]:
        """Up to ``limit`` items from the read offset, and the offset after them (for :meth:`advance`)."""
        items: list[dict[str, Any] | Unreadable] = []
        offset = self.offset
        buffer = b""
        while len(items) < limit and offset + len(buffer) < self.size:
            chunk = os.pread(self.fd, min(READ_CHUNK, self.size - offset - len(buffer)), offset + len(buffer))
            if not chunk:
                break
            buffer += chunk
            while len(items) < limit:
                end = buffer.find(b"\n")
                if end < 0:
                    break
                line, buffer = buffer[:end], buffer[end + 1 :]
                offset += end + 1
                if line.strip():
                    items.append(_read_line(line))
        return items, offset

    def advance(self, offset: int, items: int) -> None:
        """``items`` read up to ``offset`` are written."""
        self.offset = offset
        self.unread_items = max(0, self.unread_items - items)

    def _count_lines(self) -> int:
        count, position = 0, 0
        while position < self.size:
            chunk = os.pread(self.fd, READ_CHUNK, position)
            if not chunk:
                break
            count += chunk.count(b"\n")
            position += len(chunk)
        return count

    def _repair_tail(self) -> None:
        """Drop a last line cut short (no newline): an append that did not finish (the process stopped, or the
        disk was full when the process could not cut it off itself)."""
        size = os.fstat(self.fd).st_size
        if size == 0 or os.pread(self.fd, 1, size - 1) == b"\n":
            return
        start = size
        while start > 0:
            step = min(READ_CHUNK, start)
            chunk = os.pread(self.fd, step, start - step)
            newline = chunk.rfind(b"\n")
            if newline >= 0:
                start = start - step + newline + 1
                break
            start -= step
        torn = size - start
        os.ftruncate(self.fd, start)
        os.fsync(self.fd)
        logger.warning(
            "The journal %s ended in a line cut short (%d bytes): an append that did not finish (the process "
            "stopped, or the disk was full); dropped it",
            self.path,
            torn,
        )


def _read_line(line: bytes) -> dict[str, Any] | Unreadable:
    try:
        return decode(line)
    except (ValueError, UnicodeDecodeError) as exc:
        return Unreadable(line, f"unreadable journal line: {exc}")


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def pending_files(folder: str | Path) -> list[tuple[Path, int]]:
    """The non-empty journal and reject files in ``folder``, with their item counts (lines)."""
    root = Path(folder)
    if not root.is_dir():
        return []
    found = []
    for path in sorted(root.iterdir()):
        if not (path.name.endswith(JOURNAL_SUFFIX) and path.is_file()):
            continue
        try:
            with path.open("rb") as handle:
                lines = sum(chunk.count(b"\n") for chunk in iter(lambda: handle.read(READ_CHUNK), b""))
        except OSError:
            continue
        if lines:
            found.append((path, lines))
    return found
