"""The stored logs' write half: ``scraper_logs`` written by a crawl process in batches off the event loop (the
web app reads them back with :mod:`topicstreams.storage.log_reads`).

**Writing.** A crawl process's log handler (:mod:`topicstreams.extensions.log_store`) hands every record it keeps
to the :class:`LogSink` of its database, one per process (the four crawlers of ``crawlall`` share it). Handing a
record over costs an append to a deque: the crawl's event loop never waits for the database. A thread of the
sink's own writes the rows in batches, one ``executemany`` INSERT per batch, at most :data:`BATCH_ROWS` rows and
at most :data:`FLUSH_SECONDS` after the oldest waiting record:

* **memory stays bounded**: at most :data:`MAX_QUEUED` records wait; past it the oldest are dropped (counted). A
  log is worth less than the crawl's memory, and the newest records say the most about now;
* **a flood is capped** (:class:`TokenBucket`): at most ``rate`` records a second are kept, with bursts of
  ``burst``; the rest are counted and dropped before they are even formatted, so thousands of warnings a second
  cost the crawl almost nothing. Once no record was dropped for :data:`FLOOD_EASED_AFTER` seconds, one WARNING
  row says how many were dropped and over what time (it is also logged, for the console);
* **the database is away**: a batch that fails in a way that can pass
  (:func:`~topicstreams.storage.failures.can_pass`) stays first in line and is tried again with capped exponential
  backoff (:class:`~topicstreams.storage.batch_writes.Backoff`), silently: an outage is reported by the store and the
  outbox, and a log line per failed write would be a record to store, per failed write. A batch that can never
  pass (a value the database refuses) is written row by row and the rows at fault are dropped (counted);
* **the sink never stores its own records**: anything logged on its thread (its flood summary, a driver warning
  during a write) is refused by the handler (:attr:`LogSink.thread_ident`), so writing can never feed writing;
* **the end** (:meth:`LogSink.close`): what waits is written, for at most :data:`CLOSE_SECONDS`, or
  :data:`AWAY_FLUSH_SECONDS` (one more try) while the database is away: a crawl's last records are not worth
  holding up its end; what is left is counted as dropped;
* **the purge**: when it starts and every :data:`PURGE_EVERY` seconds, the rows older than
  ``scraper.retention_days`` are deleted, :data:`PURGE_CHUNK` at a time (short transactions: the store's writes
  are not held up by a long delete on SQLite). Any process may purge at any time: the delete is idempotent.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import Engine, delete, insert, select

from topicstreams.storage.batch_writes import Backoff
from topicstreams.storage.failures import can_pass
from topicstreams.storage.models import scraper_logs_table as scraper_logs

logger = logging.getLogger(__name__)

LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")
"""The level names a row holds, lowest first (a record of another level is stored under the name below it)."""

BATCH_ROWS = 500
"""Rows per INSERT at most."""

FLUSH_SECONDS = 1.0
"""How long a record waits for its batch to fill at most."""

MAX_QUEUED = 10_000
"""Records waiting to be written at most (a database away or slow); past it the oldest are dropped."""

RATE = 100.0
"""Records stored per second at most, over time (the flood cap)."""

BURST = 1_000
"""Records stored in a burst above :data:`RATE` at most (a crawl's ordinary bursts: a block, its cooldown)."""

FLOOD_EASED_AFTER = 1.0
"""Seconds without a dropped record after which a flood counts as over, and its summary is stored."""

PURGE_EVERY = 3600.0
"""Seconds between two purges of the rows past retention."""

PURGE_CHUNK = 5_000
"""Rows deleted per transaction by the purge."""

CLOSE_SECONDS = 5.0
"""How long closing waits for the records handed over to be written."""

AWAY_FLUSH_SECONDS = 1.0
"""How long a flush waits at most while the database is away."""

MAX_MESSAGE = 16_000
"""Characters of a message stored at most (a traceback is kept whole up to this)."""


def level_name(levelno: int) -> str:
    """The stored name of a level number: the highest of :data:`LEVELS` at or below it."""
    if levelno >= logging.CRITICAL:
        return "CRITICAL"
    if levelno >= logging.ERROR:
        return "ERROR"
    if levelno >= logging.WARNING:
        return "WARNING"
    if levelno >= logging.INFO:
        return "INFO"
    return "DEBUG"


def clip(message: str) -> str:
    """*message* as a row can hold it: no NUL (PostgreSQL text cannot hold one), at most :data:`MAX_MESSAGE`
    characters."""
    if "\x00" in message:
        message = message.replace("\x00", "\\x00")
    if len(message) > MAX_MESSAGE:
        message = f"{message[:MAX_MESSAGE]}… ({len(message) - MAX_MESSAGE} more characters)"
    return message


# ---- writing -----------------------------------------------------------------------------------------------


def write_rows(db: Engine, rows: Sequence[Mapping[str, Any]]) -> None:
    """Insert *rows* (``at, node, engine, level, logger, message``) in one transaction, one executemany."""
    if rows:
        with db.begin() as conn:
            conn.execute(insert(scraper_logs), list(rows))


def purge_logs(db: Engine, cutoff: datetime, chunk: int = PURGE_CHUNK) -> int:
    """Delete the rows stored before *cutoff*, *chunk* rows per transaction (oldest first, by the ``(at, id)``
    index); the rows deleted."""
    deleted = 0
    while True:
        oldest = (
            select(scraper_logs.c.id)
            .where(scraper_logs.c.at < cutoff)
            .order_by(scraper_logs.c.at, scraper_logs.c.id)
            .limit(chunk)
        )
        with db.begin() as conn:
            count = conn.execute(delete(scraper_logs).where(scraper_logs.c.id.in_(oldest.scalar_subquery()))).rowcount
        deleted += count
        if count < chunk:
            return deleted


class TokenBucket:
    """At most ``rate`` admissions a second over time, ``burst`` at once; counts what it refuses (not thread-safe:
    the sink holds its lock around it)."""

    def __init__(self, rate: float, burst: int, clock: Callable[[], float] = time.monotonic) -> None:
        self.rate = rate
        self.burst = burst
        self.clock = clock
        self.tokens = float(burst)
        self.checked_at = clock()

    def take(self) -> bool:
        now = self.clock()
        self.tokens = min(float(self.burst), self.tokens + (now - self.checked_at) * self.rate)
        self.checked_at = now
        if self.tokens >= 1.0:
            self.tokens -= 1.0
            return True
        return False


@dataclass
class Flood:
    """The records dropped by the cap since the last summary: how many, the first and last drop (wall clock, and
    the monotonic time of the last)."""

    dropped: int = 0
    first_at: float = 0.0
    last_at: float = 0.0
    last_mono: float = 0.0


class LogSink:
    """The stored logs of one database in this process (see the module docstring). Thread-safe."""

    def __init__(
        self,
        url: str,
        node: str,
        *,
        retention_days: float = 0.0,
        rate: float = RATE,
        burst: int = BURST,
        max_queued: int = MAX_QUEUED,
        batch_rows: int = BATCH_ROWS,
        flush_seconds: float = FLUSH_SECONDS,
        backoff: Backoff | None = None,
        db: Engine,
        clock: Callable[[], float] = time.monotonic,
        wall: Callable[[], float] = time.time,
    ) -> None:
        self.url = url
        self.node = node
        self.retention_days = retention_days
        self.batch_rows = batch_rows
        self.flush_seconds = flush_seconds
        self.backoff = backoff or Backoff()
        self.clock = clock
        self.wall = wall
        self._db = db
        self._cond = threading.Condition()
        self._queue: deque[dict[str, Any]] = deque()
        self._max_queued = max_queued
        self._bucket = TokenBucket(rate, burst, clock)
        self._flood = Flood()
        self._oldest_at: float | None = None
        """When the oldest waiting record came (monotonic)."""
        self._inflight: list[dict[str, Any]] = []
        self._retry_at: float | None = None
        self._purge_at = clock() if retention_days > 0 else None
        self._closing = False
        self._stop = False
        self._thread: threading.Thread | None = None
        self.thread_ident: int | None = None
        """The sink's thread: what is logged on it is never stored (:meth:`put` refuses nothing by itself: the
        handler asks)."""
        self.stored = 0
        """Rows written."""
        self.dropped = 0
        """Records not stored: refused by the flood cap, pushed out of a full queue, refused by the database, or
        still waiting when the sink closed."""
        self.away = False
        """A write failed in a way that can pass and none has passed since."""

    # ---- handing records over (any thread) ----------------------------------------------------------------
    def admit(self) -> bool:
        """Whether one more record may be stored now (the flood cap); a refusal is counted. Ask before formatting
        the record: a refused one costs nothing more."""
        with self._cond:
            if self._bucket.take():
                return True
            flood = self._flood
            if not flood.dropped:
                flood.first_at = self.wall()
                self._cond.notify_all()  # the thread keeps an eye on the flood's end
            flood.dropped += 1
            flood.last_at, flood.last_mono = self.wall(), self.clock()
            self.dropped += 1
            return False

    def count_dropped(self, count: int = 1) -> None:
        """*count* records the caller could not hand over (one that failed to format)."""
        with self._cond:
            self.dropped += count

    def put(self, row: dict[str, Any]) -> None:
        """Queue *row* (``at, node, engine, level, logger, message``; already masked) for the next batch."""
        with self._cond:
            if len(self._queue) >= self._max_queued:
                self._queue.popleft()
                self.dropped += 1
            self._queue.append(row)
            if self._oldest_at is None:
                self._oldest_at = self.clock()
                self._wake()
            elif len(self._queue) >= self.batch_rows:
                self._cond.notify_all()

    def _wake(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="topicstreams-logs", daemon=True)
            self._thread.start()
        self._cond.notify_all()

    def start(self) -> None:
        """Start the thread now (the purge at start does not wait for a first record)."""
        with self._cond:
            self._wake()

    # ---- asking, flushing, closing (any thread) -------------------------------------------------------------
    def pending(self) -> int:
        with self._cond:
            return len(self._queue) + len(self._inflight)

    def flush(self, timeout: float = CLOSE_SECONDS) -> bool:
        """Write what waits now (the flood's summary too), waiting at most *timeout* seconds; whether all was."""
        with self._cond:
            if self.away:  # one more try, not a long wait: the records of a crawl ending are not worth holding it up
                timeout = min(timeout, AWAY_FLUSH_SECONDS)
            deadline = self.clock() + timeout
            self._summarize_flood(force=True)
            if self._retry_at is not None:
                self._retry_at = self.clock()  # try now, not after the backoff
            if self._queue:
                self._wake()
            while self._queue or self._inflight:
                left = deadline - self.clock()
                if left <= 0:
                    return False
                self._flushing = True
                self._cond.notify_all()
                self._cond.wait(min(left, 0.1))
            return True

    def close(self, timeout: float = CLOSE_SECONDS) -> bool:
        """Write what waits (at most *timeout* seconds), then stop the thread. What is left is dropped (counted):
        the process is ending. Whether everything was written."""
        with self._cond:
            self._closing = True
        written = self.flush(timeout)
        with self._cond:
            self._stop = True
            self.dropped += len(self._queue)
            self._queue.clear()
            self._cond.notify_all()
            thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout=1.0)  # a write still waiting on the database is left to the daemon thread
        return written

    # ---- the thread ---------------------------------------------------------------------------------------------
    _flushing = False

    def _run(self) -> None:
        self.thread_ident = threading.get_ident()
        db = self._db
        while True:
            with self._cond:
                work = self._next_work()
                if work is None:
                    return
            if work == "purge":
                self._purge(db)
            else:
                self._write(db)

    def _next_work(self) -> str | None:
        """Wait (holding the condition) for the next thing to do: "write" (``_inflight`` filled), "purge", or None
        to end."""
        while True:
            now = self.clock()
            if self._stop:
                return None
            self._summarize_flood()
            waits: list[float] = []
            if self._flood.dropped:
                waits.append(self._flood.last_mono + FLOOD_EASED_AFTER)
            if (
                self._purge_at is not None
                and now >= self._purge_at
                and (self._retry_at is None or now >= self._retry_at)
            ):
                return "purge"
            if self._purge_at is not None:
                waits.append(self._purge_at)
            if self._queue:
                if self._retry_at is not None and now < self._retry_at:
                    waits.append(self._retry_at)
                elif (
                    len(self._queue) >= self.batch_rows
                    or self._flushing
                    or self._closing
                    or now - (self._oldest_at or now) >= self.flush_seconds
                ):
                    count = min(self.batch_rows, len(self._queue))
                    self._inflight = [self._queue.popleft() for _ in range(count)]
                    self._oldest_at = self.clock() if self._queue else None
                    return "write"
                else:
                    waits.append((self._oldest_at or now) + self.flush_seconds)
            else:
                self._flushing = False
            self._cond.wait(max(0.0, min(waits) - now) if waits else None)

    def _write(self, db: Engine) -> None:
        batch = self._inflight
        failure: Exception | None = None
        try:
            write_rows(db, batch)
        except Exception as exc:  # the database's answer, whatever it is: never raised into the thread's end
            failure = exc
        if failure is not None and not can_pass(failure):
            written = self._write_one_by_one(db, batch)
            with self._cond:
                self.stored += written
                self.dropped += len(batch) - written
                self._inflight = []
                self._cond.notify_all()
            return
        with self._cond:
            if failure is None:
                self.stored += len(batch)
                self.away = False
                self._retry_at = None
                self.backoff.reset()
            elif self._stop:  # closed meanwhile: nobody waits for it any more
                self.dropped += len(batch)
            else:
                # First in line again, in order; the oldest give way if the queue is full meanwhile.
                self._queue.extendleft(reversed(batch))
                while len(self._queue) > self._max_queued:
                    self._queue.popleft()
                    self.dropped += 1
                self._oldest_at = self._oldest_at if self._oldest_at is not None else self.clock()
                self.away = True
                self._retry_at = self.clock() + self.backoff.next_delay()
            self._inflight = []
            self._cond.notify_all()

    @staticmethod
    def _write_one_by_one(db: Engine, batch: list[dict[str, Any]]) -> int:
        written = 0
        for row in batch:
            try:
                write_rows(db, [row])
                written += 1
            except Exception:  # this row is refused for good (or the database left meanwhile: it is lost too)
                continue
        return written

    def _purge(self, db: Engine) -> None:
        cutoff = datetime.fromtimestamp(self.wall(), UTC) - timedelta(days=self.retention_days)
        try:
            deleted = purge_logs(db, cutoff)
        except Exception:  # tried again at the next purge time, or sooner when writes pass again
            with self._cond:
                self._purge_at = self.clock() + min(PURGE_EVERY, 60.0)
            return
        with self._cond:
            self._purge_at = self.clock() + PURGE_EVERY
        if deleted:
            logger.info(
                "purged %d log record(s) older than %g days (before %sZ)",
                deleted,
                self.retention_days,
                f"{cutoff:%Y-%m-%d %H:%M:%S}",
            )

    def _summarize_flood(self, force: bool = False) -> None:
        """Once the flood has eased (or *force*: a flush, the end), queue its summary row and log it."""
        flood = self._flood
        if not flood.dropped or not (force or self.clock() - flood.last_mono >= FLOOD_EASED_AFTER):
            return
        self._flood = Flood()
        start, end = (datetime.fromtimestamp(moment, UTC) for moment in (flood.first_at, flood.last_at))
        message = (
            f"log flood: {flood.dropped} record(s) not stored from {start:%H:%M:%S} to {end:%H:%M:%S} UTC "
            f"({flood.last_at - flood.first_at:.1f} s); at most {self._bucket.rate:g} a second are stored, "
            f"in bursts of {self._bucket.burst}"
        )
        self._queue.append(
            {"at": end, "node": self.node, "engine": None, "level": "WARNING", "logger": __name__, "message": message}
        )
        if self._oldest_at is None:
            self._oldest_at = self.clock()
        # For the console too; never stored twice: the handler refuses this module's records.
        logger.warning("The %s", message)
