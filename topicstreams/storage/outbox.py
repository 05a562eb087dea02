"""The small writes of a crawl (status rows, health windows, cycle rows, alerts), in order, off the event loop, kept
in memory while the database is away.

The health and cycle extensions write a few rows a second at most, but they write them from the crawl's event
loop: a database that is away (a PostgreSQL restart) or slow (an SQLite file locked by another process, waited
for up to its busy timeout) must hold up neither the crawl nor the signal handlers that write. So they hand
their writes to the :class:`Outbox` of their database, one per process and URL (the process's
:class:`~topicstreams.crawl.runtime.Runtime` keeps it: the crawlers of ``crawlall`` share it), and a thread of its
own runs them in the order they came:

* a write that fails in a way that can pass (:func:`~topicstreams.storage.failures.can_pass`) stays first in line
  and is tried again with capped exponential backoff; the outage is reported to the process's
  :class:`~topicstreams.storage.availability.Availability` (one WARNING, one INFO when all is written);
* consecutive saves of the same status row are merged into one (the newest values win; a state of None keeps
  the earlier one): an outage of an hour keeps one pending save per engine, not one per response;
* a write that can never pass (the data breaks a constraint) is dropped with an ERROR naming it;
* :meth:`Outbox.flush` waits until everything is written (the extensions call it when their spider closes, with a
  timeout: what a database still away has not taken by then is lost with the process — only the latest status
  and history rows, never an article).
"""

from __future__ import annotations

import logging
import threading
import time
from collections import Counter, deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import Engine

from topicstreams.storage import engine_status
from topicstreams.storage.availability import Availability
from topicstreams.storage.batch_writes import Backoff
from topicstreams.storage.failures import can_pass, describe

logger = logging.getLogger(__name__)

MAX_PENDING = 100_000
"""Writes kept at most while the database is away; past it the oldest are dropped (with one ERROR)."""

CLOSE_FLUSH_SECONDS = 10.0
"""How long a closing extension waits for its writes to be taken."""

GAVE_UP_FLUSH_SECONDS = 1.0
"""How long a flush waits once an earlier flush of the same outage waited in vain (several crawlers closing)."""


@dataclass
class Write:
    """One pending write: ``run(db)``, or (``run`` None) a save of the status row ``row`` (engine, node)."""

    what: str
    run: Callable[[Engine], Any] | None = None
    row: tuple[str, str] | None = None
    """The status row the write changes, if any."""
    state: str | None = None
    values: dict[str, Any] = field(default_factory=dict)

    def __call__(self, db: Engine) -> Any:
        if self.run is not None:
            return self.run(db)
        assert self.row is not None
        engine, node = self.row
        return engine_status.save_status(db, engine, node, state=self.state, **self.values)


class Outbox:
    """The ordered small writes of one database (see the module docstring). Thread-safe."""

    def __init__(
        self,
        url: str,
        availability: Availability | None = None,
        backoff: Backoff | None = None,
        name: str = "health and cycle rows",
        *,
        database: Callable[[str], Engine],
    ) -> None:
        self.url = url
        self.availability = availability or Availability(url)
        self.database = database
        """Where its thread gets the database's handle (the process runtime's)."""
        self.backoff = backoff or Backoff()
        self.name = name
        self._cond = threading.Condition()
        self._pending: deque[Write] = deque()
        self._running: Write | None = None
        self._away = False
        self._retry_at: float | None = None
        self._written_since_away = 0
        self._dropped_logged = False
        self._gave_up = False
        """A flush waited in vain during this outage: later flushes do not wait again (several crawlers closing)."""
        self._thread: threading.Thread | None = None
        self.availability.register(self.name, self.backlog)

    def backlog(self) -> str:
        """What waits, for the outage's WARNING ("" when nothing)."""
        pending = self.pending()
        return f"{pending} write(s) of {self.name} in memory" if pending else ""

    # ---- handing writes over (any thread) -------------------------------------------------------------
    def put(self, what: str, run: Callable[[Engine], Any], row: tuple[str, str] | None = None) -> None:
        """Run ``run(db)`` after every write handed over before it (``row``: the status row it changes)."""
        self._add(Write(what, run=run, row=row))

    def save_status(self, engine: str, node: str, *, state: str | None, **values: Any) -> None:
        """:func:`~topicstreams.storage.engine_status.save_status`, merged with a save of the same row right before
        it."""
        with self._cond:
            last = self._pending[-1] if self._pending else None
            if last is not None and last.run is None and last.row == (engine, node):
                last.values.update(values)
                if state is not None:
                    last.state = state
                return
        self._add(Write(f"the status of {engine} on {node}", row=(engine, node), state=state, values=dict(values)))

    def _add(self, write: Write) -> None:
        with self._cond:
            self._pending.append(write)
            if len(self._pending) > MAX_PENDING:
                dropped = self._pending.popleft()
                if not self._dropped_logged:
                    self._dropped_logged = True
                    logger.error(
                        "More than %d writes of %s wait for the database: dropping the oldest (%s first)",
                        MAX_PENDING,
                        self.name,
                        dropped.what,
                    )
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, name="topicstreams-outbox", daemon=True)
                self._thread.start()
            self._cond.notify_all()

    # ---- asking -----------------------------------------------------------------------------------------
    def pending(self) -> int:
        """Writes not yet taken."""
        with self._cond:
            return len(self._pending) + (self._running is not None)

    def changing(self, engine: str, node: str) -> bool:
        """Whether a write that changes the status row of ``engine`` on ``node`` other than a save of its values
        (a pause) is not yet taken: until it is, the row does not say it."""
        with self._cond:
            writes = [*self._pending, *([self._running] if self._running is not None else [])]
            return any(write.row == (engine, node) and write.run is not None for write in writes)

    def flush(self, timeout: float = CLOSE_FLUSH_SECONDS) -> bool:
        """Wait until every write handed over is taken, at most ``timeout`` seconds; whether all were."""
        with self._cond:
            if self._gave_up:  # this outage already had its wait: one more try, no second long wait
                timeout = min(timeout, GAVE_UP_FLUSH_SECONDS)
            deadline = time.monotonic() + timeout
            if self._retry_at is not None:
                self._retry_at = time.monotonic()  # try now, not after the backoff
                self._cond.notify_all()
            while self._pending or self._running is not None:
                left = deadline - time.monotonic()
                if left <= 0:
                    self._gave_up = self._away
                    return False
                self._cond.wait(left)
            return True

    # ---- the thread -------------------------------------------------------------------------------------
    def _run(self) -> None:
        db = self.database(self.url)
        while True:
            with self._cond:
                while True:
                    now = time.monotonic()
                    if self._retry_at is not None and now < self._retry_at:
                        self._cond.wait(self._retry_at - now)
                        continue
                    if self._pending:
                        self._running = self._pending.popleft()
                        break
                    self._cond.wait()
                write = self._running
            try:
                write(db)
            except Exception as exc:
                self._failed(write, exc)
                continue
            with self._cond:
                self._running = None
                self._retry_at = None
                self.backoff.reset()
                caught_up = self._away and not self._pending
                if self._away:
                    self._written_since_away += 1
                if caught_up:
                    self._away = self._gave_up = False
                    written, self._written_since_away = self._written_since_away, 0
                    # Said before a flush() waiting for the end returns (the Availability never calls back).
                    self.availability.caught_up(self.name, Counter({"status and history writes": written}))
                self._cond.notify_all()

    def _failed(self, write: Write, exc: Exception) -> None:
        if not can_pass(exc):
            logger.error("Could not write %s (%s): the data cannot be stored; dropped", write.what, describe(exc))
            with self._cond:
                self._running = None
                self._cond.notify_all()
            return
        with self._cond:
            self._running = None
            self._pending.appendleft(write)  # first in line again: the order is kept
            self._away = True
            delay = self.backoff.next_delay()
            self._retry_at = time.monotonic() + delay
            kept = len(self._pending)
            self._cond.notify_all()
        logger.debug("could not write %s (%s); next try in %g s", write.what, describe(exc), delay)
        self.availability.went_away(self.name, describe(exc), f"{kept} write(s) of {self.name} kept in memory", exc)
