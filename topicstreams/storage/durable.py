"""The durable store: batches written in a thread of their own, kept through a database outage, never dropped.

:class:`DurableWriter` sits between the store pipeline (which hands it full batches, on the crawl's thread) and
the :class:`~topicstreams.storage.writer.NewsWriter`. A thread of its own writes the batches in order, so a slow
or absent database never holds up the crawl:

* **the database is there**: batches wait in memory (at most ``buffer_items`` items) and are written one after
  another;
* **a write fails in a way that can pass** (:func:`~topicstreams.storage.failures.can_pass`: the connection
  refused or lost, the server shutting down, a lock held too long, a deadlock): that batch and everything
  behind it go to the :class:`~topicstreams.storage.journal.Journal` on local disk (fsynced), and so does every
  batch handed over until the journal is written out. The thread tries again with capped exponential backoff
  (``retry_initial`` doubling to ``retry_max`` seconds) and, once the database takes a batch, writes the journal
  out in order and empties it. The first failure of an outage is reported to the process's
  :class:`~topicstreams.storage.availability.Availability` (one WARNING), catching up too (one INFO);
* **more than ``buffer_items`` items wait** for a database that is slow but there: later batches go to the
  journal as in an outage, so memory stays bounded;
* **a write that never passes** (:func:`~topicstreams.storage.failures.never_passes`: a constraint the data
  breaks, a value a column cannot hold): the batch is split in halves until the items at fault are alone;
  those go to the reject file with the reason (logged once per writer, counted); the rest is written;
* **the crawl ends** (:meth:`DurableWriter.close`): what waits in memory is written while the database takes it
  (however long that is, as long as no write waits longer than ``close_timeout`` seconds), else journaled; the
  journal is written at the next start (before anything else: new batches queue behind it) or by
  ``scrapy db replay``.

Writes are idempotent (``ON CONFLICT DO NOTHING``): a batch written twice (a crash between a write and the
journal's emptying, a write that committed while its answer was lost) stores nothing twice.

Stats (``inc``): ``topicstreams/store/buffered`` (items kept back because the database could not take them when
they came), ``…/journaled`` (items appended to the journal), ``…/replayed`` (items written from the journal),
``…/rejected`` (items set aside for good).
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections import Counter, deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from topicstreams.storage.availability import Availability
from topicstreams.storage.failures import can_pass, describe
from topicstreams.storage.journal import Journal, Unreadable, encode, is_rejects
from topicstreams.storage.writer import NewsWriter, WriteResult

logger = logging.getLogger(__name__)

Item = Mapping[str, Any]

BUFFERED, JOURNALED, REPLAYED, REJECTED = (
    f"topicstreams/store/{name}" for name in ("buffered", "journaled", "replayed", "rejected")
)


@dataclass
class Backoff:
    """Capped exponential backoff: ``initial``, twice that, … up to ``maximum`` seconds."""

    initial: float = 0.5
    maximum: float = 15.0
    failures: int = 0

    def next_delay(self) -> float:
        delay = min(self.maximum, self.initial * 2**self.failures)
        self.failures += 1
        return delay

    def reset(self) -> None:
        self.failures = 0


@dataclass
class Written:
    """What one write of a batch did: the rows it added, and the items the database refused for good."""

    result: WriteResult = field(default_factory=WriteResult)
    rejected: list[tuple[Item | Unreadable, str]] = field(default_factory=list)


def write_or_set_aside(writer: NewsWriter, items: list[Item | Unreadable]) -> Written:
    """Write ``items`` in one transaction; when the data of some can never be written, split the batch until
    those are alone and set them aside (with their reason), writing the rest.

    A failure that can pass is raised (nothing of it is set aside): the caller keeps the batch and tries again.
    """
    written = Written()
    readable: list[Item] = []
    for item in items:
        if isinstance(item, Unreadable):
            written.rejected.append((item, item.problem))
        else:
            readable.append(item)
    _write_part(writer, readable, written)
    return written


def _write_part(writer: NewsWriter, items: list[Item], written: Written) -> None:
    if not items:
        return
    try:
        result = writer.write(items)
    except Exception as exc:
        if can_pass(exc):
            raise
        if len(items) == 1:
            written.rejected.append((items[0], describe(exc)))
            return
        middle = len(items) // 2
        _write_part(writer, items[:middle], written)
        _write_part(writer, items[middle:], written)
        return
    written.result.add(result)


class DurableWriter:
    """Writes the store's batches in a thread of its own, through outages (see the module docstring)."""

    def __init__(
        self,
        writer: NewsWriter,
        journal: Journal,
        availability: Availability,
        *,
        name: str,
        batch_size: int,
        buffer_items: int,
        backoff: Backoff | None = None,
        close_timeout: float = 10.0,
        on_written: Callable[[WriteResult], None] = lambda result: None,
        inc: Callable[[str, int], None] = lambda key, count: None,
    ) -> None:
        self.writer = writer
        self.journal = journal
        self.availability = availability
        self.name = name
        self.batch_size = batch_size
        self.buffer_items = buffer_items
        self.backoff = backoff or Backoff()
        self.close_timeout = close_timeout
        self.on_written = on_written
        self.inc = inc
        self._cond = threading.Condition()
        self._queue: deque[list[Item]] = deque()
        self._queued_items = 0
        self._journal_mode = False
        """The journal holds items not written yet: every new batch goes behind them, into the journal."""
        self._away = False
        """A write failed in a way that can pass, and none has passed since."""
        self._retry_at: float | None = None
        self._inflight: list[Item] | None = None
        self._closing = False
        self._stop = False
        self._thread: threading.Thread | None = None
        self._rejects_logged = False
        self._caught_up = Counter[str]()
        self._writes = 0
        """Writes that passed: progress, for :meth:`close`."""
        self.left_from_before = 0

    # ---- life cycle (the crawl's thread) --------------------------------------------------------------
    def open(self) -> None:
        """Hold the journal (its items of an earlier run are written first) and start the writing thread."""
        self.left_from_before = self.journal.open()
        if self.left_from_before:
            self._journal_mode = True
            logger.info(
                "[%s] %d item(s) left in the journal %s by an earlier run: writing them before anything else",
                self.name,
                self.left_from_before,
                self.journal.path,
            )
        self._thread = threading.Thread(target=self._run, name=f"topicstreams-store-{self.name}", daemon=True)
        self._thread.start()
        self.availability.register(self.name, self.backlog)

    def backlog(self) -> str:
        """What waits, for the outage's WARNING ("" when nothing)."""
        pending = self.pending
        if not pending:
            return ""
        where = f"in the journal {self.journal.path}" if self._journal_mode else "in memory"
        return f"{pending} item(s) of {self.name} {where}"

    def submit(self, batch: list[Item]) -> None:
        """Hand over a batch to write (in order after every earlier one)."""
        if not batch:
            return
        with self._cond:
            if self._journal_mode:
                self._journal(batch, kept_back=self._away)
            elif self._queued_items + len(batch) > self.buffer_items:
                # A database slower than the crawl: memory stays bounded, the rest waits on disk, in order.
                logger.warning(
                    "[%s] %d item(s) wait for the database, more than TOPICSTREAMS_STORE_BUFFER_ITEMS "
                    "(%d): later items go to the journal %s until it catches up",
                    self.name,
                    self._queued_items + len(batch),
                    self.buffer_items,
                    self.journal.path,
                )
                self._move_queue_to_journal(kept_back=False)
                self._journal(batch, kept_back=False)
            else:
                self._queue.append(batch)
                self._queued_items += len(batch)
            self._cond.notify_all()

    def close(self) -> int:
        """Stop: write what waits in memory while the database takes it (no write waiting longer than
        ``close_timeout`` s), journal the rest. Blocks (run it off the event loop); returns the items left in the
        journal."""
        with self._cond:
            self._closing = True
            if self._retry_at is not None:
                self._retry_at = time.monotonic()  # one last try now, not after the backoff
            self._cond.notify_all()
        if self._thread is not None:
            # As long as writes pass, the rest is written (a database behind, not away); a write that takes
            # longer than ``close_timeout`` (a lock waited for) ends it, and what is left is journaled.
            while True:
                written_before = self._writes
                self._thread.join(self.close_timeout)
                if not self._thread.is_alive() or self._writes == written_before:
                    break
        with self._cond:
            self._stop = True
            self._cond.notify_all()
            inflight, self._inflight = self._inflight, None
            if inflight is not None:  # a write still under way: journal it too (written twice at worst)
                self._journal(inflight, kept_back=False)
            self._move_queue_to_journal(kept_back=False)
            left = self.journal.unread_items if self._journal_mode else 0
            self.journal.close()  # with the lock held: a write still under way finds it closed and stops
        if left:
            logger.warning(
                "[%s] %d item(s) wait in the journal %s: the next start writes them first (or run `scrapy db replay`)",
                self.name,
                left,
                self.journal.path,
            )
        self.availability.unregister(self.name)
        return left

    @property
    def pending(self) -> int:
        """Items handed over and not written yet."""
        with self._cond:
            return self._queued_items + (self.journal.unread_items if self._journal_mode else 0)

    # ---- the thread -----------------------------------------------------------------------------------
    def _next(self) -> tuple[str, list[Any], int] | None:
        """What to write next: ("memory", batch, 0) or ("journal", items, end offset); None to stop."""
        with self._cond:
            while True:
                if self._stop:
                    return None
                now = time.monotonic()
                if self._retry_at is not None and now < self._retry_at:
                    if self._closing:
                        return None  # the database is away at the end: what waits stays in the journal
                    self._cond.wait(self._retry_at - now)
                    continue
                if self._queue:
                    batch = self._queue.popleft()
                    self._queued_items -= len(batch)
                    self._inflight = batch
                    return "memory", batch, 0
                if self._journal_mode:
                    if self.journal.unread:
                        items, end = self.journal.read(self.batch_size)
                        return "journal", items, end
                    self._caught_up_with_journal()
                    continue
                if self._closing:
                    return None
                self._cond.wait()

    def _run(self) -> None:
        while (work := self._next()) is not None:
            source, items, end = work
            try:
                written = write_or_set_aside(self.writer, items)
            except Exception as exc:
                self._failed(source, items, exc)
                continue
            self._succeeded(source, items, end, written)

    def _failed(self, source: str, items: list[Any], exc: Exception) -> None:
        with self._cond:
            if self._stop:  # closed while this write was under way: what it held is journaled already
                return
            if source == "memory" and self._inflight is items:
                self._inflight = None
                # Order kept: the failed batch, then what queued behind it, then every later batch.
                self._journal_in_front(items)
            self._away = True
            delay = self.backoff.next_delay()
            self._retry_at = time.monotonic() + delay
            kept = self.journal.unread_items
        logger.debug("[%s] write failed (%s); next try in %g s", self.name, describe(exc), delay)
        self.availability.went_away(
            self.name, describe(exc), f"{kept} item(s) of {self.name} kept in the journal {self.journal.path}", exc
        )

    def _journal_in_front(self, batch: list[Item]) -> None:
        """A memory batch failed: it and the queue behind it go to the journal. If the journal already holds
        items (a spill), those came after this batch: keep it first by writing it before them."""
        if self._journal_mode and self.journal.unread:
            self._queue.appendleft(batch)  # retried from memory before the journal (one batch at most)
            self._queued_items += len(batch)
            return
        self._journal(batch, kept_back=True)
        self._move_queue_to_journal(kept_back=True)

    def _succeeded(self, source: str, items: list[Any], end: int, written: Written) -> None:
        result = written.result
        with self._cond:
            self._writes += 1
            if self._stop:  # closed meanwhile: written all the same (the journal may hold it too: idempotent)
                return
            if source == "memory":
                if self._inflight is items:
                    self._inflight = None
            else:
                self.journal.advance(end, len(items))
                self.inc(REPLAYED, len(items))
            if self._away:
                self._caught_up["items"] += len(items)
            self._retry_at = None
            self.backoff.reset()
            if written.rejected:
                self.journal.reject(written.rejected)
        if written.rejected:
            self._rejected(written.rejected)
        if result.items:
            self.on_written(result)

    def _caught_up_with_journal(self) -> None:
        """Called with the lock held: everything journaled is written."""
        replayed_before = self.left_from_before
        self.journal.clear()
        self._journal_mode = False
        self.left_from_before = 0
        if replayed_before and not self._away:
            logger.info("[%s] the journal's %d item(s) from an earlier run are written", self.name, replayed_before)
        if self._away:
            self._away = False
            written, self._caught_up = self._caught_up, Counter()
            self.availability.caught_up(self.name, written)

    def _rejected(self, rejected: list[tuple[Any, str]]) -> None:
        self.inc(REJECTED, len(rejected))
        if not self._rejects_logged:
            self._rejects_logged = True
            item, reason = rejected[0]
            url = item.line[:80] if isinstance(item, Unreadable) else item.get("url")
            logger.error(
                "[%s] The database refused %d item(s) for good (%s; url %r): set aside in %s with the "
                "reason; later ones are counted in %s; `scrapy db replay %s` tries them again after a fix",
                self.name,
                len(rejected),
                reason,
                url,
                self.journal.rejects,
                REJECTED,
                self.journal.rejects,
            )

    # ---- the journal (lock held) ----------------------------------------------------------------------
    def _journal(self, batch: list[Item], *, kept_back: bool) -> None:
        count = self.journal.append(batch)
        self._journal_mode = True
        self.inc(JOURNALED, count)
        if kept_back:
            self.inc(BUFFERED, count)

    def _move_queue_to_journal(self, *, kept_back: bool) -> None:
        while self._queue:
            self._journal(self._queue.popleft(), kept_back=kept_back)
        self._queued_items = 0


@dataclass
class Replayed:
    """What ``replay_file`` did."""

    path: Path
    items: int = 0
    result: WriteResult = field(default_factory=WriteResult)
    rejected: int = 0


def replay_file(writer: NewsWriter, path: Path, batch_size: int = 500) -> Replayed:
    """Write a journal (or a reject file) into the database by hand, then empty it.

    A journal's refused items go to its reject file. A reject file's items are tried again; those refused again
    stay in it (rewritten with the new reason). A failure that can pass stops the replay and is raised: what is
    written is written, the file keeps the rest (a replay again takes up from its start: idempotent).
    """
    done = Replayed(path)
    with Journal(path) as journal:
        still_refused: list[tuple[Any, str]] = []
        while journal.unread:
            items, end = journal.read(batch_size)
            written = write_or_set_aside(writer, items)
            if is_rejects(path):
                still_refused.extend(written.rejected)
            else:
                journal.reject(written.rejected)
            done.rejected += len(written.rejected)
            done.result.add(written.result)
            done.result.event_keys.clear()  # counted; a replay keeps no event of its own in memory
            journal.advance(end, len(items))
            done.items += len(items)
        if is_rejects(path):
            _rewrite_rejects(journal, still_refused)
        else:
            journal.clear()
    return done


def _rewrite_rejects(journal: Journal, refused: Iterable[tuple[Any, str]]) -> None:
    lines = b"".join(
        item.line + b"\n" if isinstance(item, Unreadable) else encode(item, reason=reason) for item, reason in refused
    )
    journal.clear()
    if lines:
        os.write(journal.fd, lines)
        os.fsync(journal.fd)
