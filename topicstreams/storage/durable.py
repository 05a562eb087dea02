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
* **the journal cannot be written** (an append fails with any ``OSError``: no space left, a read-only or
  over-quota disk): nothing is lost and nothing stops. The batch waits in memory, behind what the journal holds;
  later batches wait behind it. While the database cannot take them either (or memory reaches ``buffer_items``),
  the writer holds its engine (:mod:`topicstreams.storage.store_hold`: one ERROR, ``on_hold``: the spider takes no
  new topic); the thread tries the journal again every ``retry_max`` seconds at most, and the database with its
  backoff. Whichever takes items first releases the engine (one INFO): the journal takes what waited in memory,
  or the database writes the journal out, empties it, and writes what waited in memory;
* **the crawl ends** (:meth:`DurableWriter.close`): what waits in memory is written while the database takes it
  (however long that is, as long as no write waits longer than ``close_timeout`` seconds), else journaled; the
  journal is written at the next start (before anything else: new batches queue behind it) or by
  ``scrapy db replay``. What neither took is **lost**: counted in :attr:`DurableWriter.lost` (why in
  :attr:`DurableWriter.lost_why`), for the store pipeline to report (stat ``topicstreams/store/lost``, an ERROR, the
  loss recorded, an alert, a non-zero exit).

The thread never dies quietly: an exception in its loop is logged (an ERROR with its traceback, once per writer;
later ones at DEBUG) and the loop goes on after the backoff.

Writes are idempotent (``ON CONFLICT DO NOTHING``): a batch written twice (a crash between a write and the
journal's emptying, a write that committed while its answer was lost) stores nothing twice.

Stats (``inc``): ``topicstreams/store/buffered`` (items kept back because the database could not take them when
they came), ``…/journaled`` (items appended to the journal), ``…/replayed`` (items written from the journal),
``…/rejected`` (items set aside for good). ``…/lost`` is the pipeline's.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import Counter, deque
from collections.abc import Callable, Mapping
from typing import Any

from topicstreams.storage.availability import Availability
from topicstreams.storage.batch_writes import Backoff, Written, write_or_set_aside
from topicstreams.storage.failures import describe
from topicstreams.storage.journal import Journal, Unreadable
from topicstreams.storage.store_hold import StoreHold, described
from topicstreams.storage.writer import NewsWriter, WriteResult

logger = logging.getLogger(__name__)

Item = Mapping[str, Any]

BUFFERED, JOURNALED, REPLAYED, REJECTED, LOST = (
    f"topicstreams/store/{name}" for name in ("buffered", "journaled", "replayed", "rejected", "lost")
)


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
        on_hold: Callable[[str | None], None] = lambda why: None,
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
        self._held: deque[list[Item]] = deque()
        """Batches the journal could not take (the newest: behind the queue and the journal), in memory alone."""
        self._held_items = 0
        self.hold = StoreHold(name, journal.path, buffer_items, on_hold)
        self._journal_retry_at = 0.0
        self._db_failure = ""
        self._thread_failed = False
        self.lost = 0
        """Items neither written nor journaled when the writer closed (see :attr:`lost_why`)."""
        self.lost_why = ""

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
        self.availability.register(self.name, self.backlog, lambda: self._held_items > 0)

    def backlog(self) -> str:
        """What waits, for the outage's WARNING ("" when nothing)."""
        pending = self.pending
        if not pending:
            return ""
        where = f"in the journal {self.journal.path}" if self._journal_mode else "in memory"
        return f"{pending - self._held_items} item(s) of {self.name} {where}{self._alone()}"

    def _alone(self) -> str:
        """What waits in memory alone, for an account of what is kept ("" when nothing)."""
        if not self._held_items:
            return ""
        return f", {self._held_items} in memory alone (the journal cannot be written: {self.hold.error})"

    def submit(self, batch: list[Item]) -> None:
        """Hand over a batch to write (in order after every earlier one)."""
        if not batch:
            return
        with self._cond:
            if self._journal_mode or self._held:
                self._journal(batch, kept_back=self._away)
            elif self._queued_items + len(batch) > self.buffer_items:
                # A database slower than the crawl: memory stays bounded, the rest waits on disk, in order (a
                # journal that cannot take it has said so already: the hold's ERROR).
                if self.hold.error is None:
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
            self._update_hold()
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
            if self._held:  # a last try of the journal: what it cannot take now is lost
                self._retry_journal()
            self._count_lost()
            left = self.journal.unread_items if self._journal_mode else 0
            self.journal.close()  # with the lock held: a write still under way finds it closed and stops
        if left:
            logger.warning(
                "[%s] %d item(s) wait in the journal %s: the next start writes them first (or run `scrapy db replay`)",
                self.name,
                left,
                self.journal.path,
            )
        self.availability.unregister(self.name, self.lost)
        return left

    @property
    def pending(self) -> int:
        """Items handed over and not written yet."""
        with self._cond:
            return self._queued_items + (self.journal.unread_items if self._journal_mode else 0) + self._held_items

    @property
    def in_memory_alone(self) -> int:
        """Items the journal could not take, waiting in memory: lost if the process stopped now."""
        return self._held_items

    def _count_lost(self) -> None:
        """Closing, lock held: what is still held in memory is lost."""
        if not self._held_items:
            return
        self.lost += self._held_items
        self.lost_why = f"the journal {self.journal.path} could not take them ({self.hold.error})" + (
            f" and the database could not either ({self._db_failure})" if self._db_failure else ""
        )
        self._held.clear()
        self._held_items = 0

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
                if self._held and now >= self._journal_retry_at:
                    self._retry_journal()
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
                if self._held:  # the journal took none of them: written from memory, in order
                    self._held_to_queue()
                    continue
                if self._closing:
                    return None
                self._cond.wait()

    def _run(self) -> None:
        while True:
            try:
                work = self._next()
                if work is None:
                    return
                source, items, end = work
                try:
                    written = write_or_set_aside(self.writer, items)
                except Exception as exc:
                    self._failed(source, items, exc)
                    continue
                self._succeeded(source, items, end, written)
            except Exception:
                self._loop_failed()

    def _loop_failed(self) -> None:
        """Anything the loop did not expect (a journal that cannot be read, …): logged, and the loop goes on after
        the backoff (whatever was taken for this turn is where it was: a batch in flight goes back in front)."""
        if not self._thread_failed:
            self._thread_failed = True
            logger.exception(
                "[%s] the store's writing thread met an error it did not expect; it goes on after the backoff "
                "(later errors of this kind are logged at DEBUG)",
                self.name,
            )
        else:
            logger.debug("[%s] the store's writing thread met an error again", self.name, exc_info=True)
        with self._cond:
            if self._inflight is not None:
                self._queue.appendleft(self._inflight)
                self._queued_items += len(self._inflight)
                self._inflight = None
            self._retry_at = time.monotonic() + self.backoff.next_delay()

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
            self._db_failure = describe(exc)
            self._update_hold()
            account = f"{self.journal.unread_items} item(s) of {self.name} kept in the journal {self.journal.path}"
            account += self._alone()
            at_risk = self._held_items > 0
        logger.debug("[%s] write failed (%s); next try in %g s", self.name, describe(exc), delay)
        self.availability.went_away(self.name, describe(exc), account, exc, at_risk=at_risk)

    def _journal_in_front(self, batch: list[Item]) -> None:
        """A memory batch failed: it and the queue behind it go to the journal. If the journal already holds
        items (a spill), those came after this batch: keep it first by writing it before them."""
        if self._journal_mode and self.journal.unread:
            self._queue.appendleft(batch)  # retried from memory before the journal (one batch at most)
            self._queued_items += len(batch)
            return
        if self._held:  # older than what waits in memory alone: in front of it, with the queue behind it
            older = [batch, *self._queue]
            count = sum(len(each) for each in older)
            self._held.extendleft(reversed(older))
            self._held_items += count
            self.inc(BUFFERED, count)
            self._queue.clear()
            self._queued_items = 0
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
                self.availability.passed()
            self._retry_at = None
            self._db_failure = ""
            self.backoff.reset()
            self._update_hold()
            set_aside = self._set_aside(written.rejected)
        if set_aside:
            self._rejected(written.rejected)
        if result.items:
            self.on_written(result)

    def _set_aside(self, rejected: list[tuple[Any, str]]) -> bool:
        """Lock held: put items the database refused for good in the reject file; whether it took them (if it
        cannot, they are lost: neither stored nor kept)."""
        if not rejected:
            return False
        try:
            self.journal.reject(rejected)
        except OSError as exc:
            self.lost += len(rejected)
            self.lost_why = f"the reject file {self.journal.rejects} could not take them ({described(exc)})"
            logger.error(
                "[%s] The database refused %d item(s) for good and the reject file %s cannot be written (%s): "
                "they are lost (counted when the crawl stops)",
                self.name,
                len(rejected),
                self.journal.rejects,
                described(exc),
            )
            return False
        return True

    def _caught_up_with_journal(self) -> None:
        """Called with the lock held: everything journaled is written."""
        replayed_before = self.left_from_before
        self.journal.clear()
        self._journal_mode = False
        self.left_from_before = 0
        if self._held:  # what the journal could not take comes next, from memory; its room is free again
            self._held_to_queue()
            self._journal_retry_at = 0.0
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
        """Append ``batch`` to the journal, behind what waits in memory alone (in order). When the journal cannot
        take it (or could not within the last ``retry_max`` s: not tried again yet), it waits in memory."""
        if kept_back:
            self.inc(BUFFERED, len(batch))
        self._held.append(batch)
        self._held_items += len(batch)
        if self.hold.error is None or time.monotonic() >= self._journal_retry_at:
            self._retry_journal()

    def _retry_journal(self) -> None:
        """Append what waits in memory alone to the journal, oldest first, until it takes all or fails."""
        while self._held:
            batch = self._held[0]
            try:
                count = self.journal.append(batch)
            except OSError as exc:
                if self.hold.error is not None:
                    logger.debug("[%s] the journal still cannot be written: %s", self.name, described(exc))
                self.hold.journal_failed(exc)
                self._journal_retry_at = time.monotonic() + self.backoff.maximum
                break
            self._held.popleft()
            self._held_items -= count
            self._journal_mode = True
            self.inc(JOURNALED, count)
        else:
            self.hold.journal_takes()
        self._update_hold()

    def _held_to_queue(self) -> None:
        """What waited in memory alone is next to write from memory (the queue is empty, the journal too)."""
        self._queue.extend(self._held)
        self._queued_items += self._held_items
        self._held.clear()
        self._held_items = 0

    def _update_hold(self) -> None:
        self.hold.update(db_failing=self._retry_at is not None, in_memory=self._queued_items + self._held_items)

    def _move_queue_to_journal(self, *, kept_back: bool) -> None:
        while self._queue:
            batch = self._queue.popleft()
            self._queued_items -= len(batch)
            self._journal(batch, kept_back=kept_back)
        self._queued_items = 0
