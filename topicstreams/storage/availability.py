"""Whether a process can reach its database, as its writers find out: one WARNING when it goes away, one INFO when
everything kept meanwhile is written.

Every writer that keeps what it could not write (the news store, :mod:`topicstreams.storage.durable`; the small
writes of health and cycles, :mod:`topicstreams.storage.outbox`) reports to the :class:`Availability` of its
database URL, one per process (the four crawlers of ``crawlall`` share it):

* :meth:`~Availability.went_away` when a write failed in a way that can pass. The first report of an outage
  logs the WARNING: what failed, and what is kept where;
* :meth:`~Availability.caught_up` when that writer has written everything it kept. When no writer that reported
  the outage is still behind, the INFO says how long the database was away and how much was written since.

The URL shown is masked (no password). A write that failed because the database file is damaged
(:func:`~topicstreams.storage.failures.damaged_file`) is no outage to wait out: it is told once as an ERROR, in the
words of :func:`~topicstreams.storage.damage_notice.damage_message`, even in an outage already told.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import Counter
from collections.abc import Callable

from sqlalchemy.engine import make_url

from topicstreams.storage.damage_notice import damage_message
from topicstreams.storage.failures import damaged_file

logger = logging.getLogger(__name__)


class Availability:
    """The outage state of one database in this process (thread-safe: writers run in threads of their own)."""

    def __init__(self, url: str, clock: Callable[[], float] = time.monotonic) -> None:
        self.url = url
        self.clock = clock
        self._lock = threading.Lock()
        self.away_since: float | None = None
        self.behind: set[str] = set()
        """The writers that reported the outage and have not caught up."""
        self.written: Counter[str] = Counter()
        """What was written once back, by kind ("items", "status writes", ...)."""
        self.outages = 0
        self.damage_told = False
        """Whether the ERROR of a damaged database file was logged in this outage."""
        self.backlogs: dict[str, Callable[[], str]] = {}
        """Each writer's account of what it keeps (for the WARNING): "" when nothing."""

    @property
    def away(self) -> bool:
        return self.away_since is not None

    def shown_url(self) -> str:
        try:
            return make_url(self.url).render_as_string(hide_password=True)
        except Exception:  # an unparsable URL never got this far; never let a log line fail
            return "the database"

    def register(self, writer: str, backlog: Callable[[], str]) -> None:
        """``writer`` keeps what it cannot write; ``backlog()`` says what it keeps now ("" when nothing)."""
        with self._lock:
            self.backlogs[writer] = backlog

    def unregister(self, writer: str) -> None:
        """``writer`` is gone (its crawl ended; what it kept is in its journal): it is waited for no more. When it
        was the last one behind, the outage is no longer this process's to report."""
        with self._lock:
            self.backlogs.pop(writer, None)
            if writer in self.behind:
                self.behind.discard(writer)
                if not self.behind:
                    self.away_since = None
                    self.written.clear()

    def went_away(self, writer: str, reason: str, kept: str, cause: BaseException | None = None) -> None:
        """``writer`` could not write (``reason``, one line) and keeps ``kept`` (what and where) to write later;
        ``cause``: the error, to tell a damaged database file (an ERROR, once) from a passing outage."""
        damage = damaged_file(cause) if cause is not None else None
        with self._lock:
            self.behind.add(writer)
            tell_damage = damage is not None and not self.damage_told
            self.damage_told = self.damage_told or tell_damage
            if self.away_since is not None and not tell_damage:
                return
            if self.away_since is None:
                self.away_since = self.clock()
                self.outages += 1
                self.written.clear()
            others = [backlog for name, backlog in self.backlogs.items() if name != writer]
        accounts = [kept, *(account for account in (_safe(backlog) for backlog in others) if account)]
        if damage is not None:
            # No outage to wait out: a person must restore or recover the file; until then the writers keep what
            # they cannot write.
            logger.error(
                "%s. Until then what cannot be written is kept: %s",
                damage_message(self.url, damage),
                "; ".join(accounts),
            )
            return
        logger.warning(
            "The database %s cannot be written (%s): nothing is lost — %s; retrying with backoff until it is back",
            self.shown_url(),
            reason,
            "; ".join(accounts),
        )

    def caught_up(self, writer: str, written: Counter[str] | None = None) -> None:
        """``writer`` has written everything it kept (``written``: how much, by kind)."""
        with self._lock:
            if written:
                self.written.update(written)
            if writer not in self.behind:
                return
            self.behind.discard(writer)
            if self.behind or self.away_since is None:
                return
            away_for = self.clock() - self.away_since
            self.away_since = None
            self.damage_told = False
            written_now = +self.written
            self.written.clear()
        summary = ", ".join(f"{count} {kind}" for kind, count in sorted(written_now.items())) or "nothing was waiting"
        logger.info(
            "The database %s is back after %.1f s away: written what was kept meanwhile (%s)",
            self.shown_url(),
            away_for,
            summary,
        )


def _safe(backlog: Callable[[], str]) -> str:
    try:
        return backlog()
    except Exception:  # an account is a courtesy of the log line, never a reason for it to fail
        return ""
