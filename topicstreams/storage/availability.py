"""Whether a process can reach its database, as its writers find out: one WARNING when it goes away, one INFO when
everything kept meanwhile is written.

Every writer that keeps what it could not write (the news store, :mod:`topicstreams.storage.durable`; the small
writes of health and cycles, :mod:`topicstreams.storage.outbox`) reports to the :class:`Availability` of its
database URL, one per process (the four crawlers of ``crawlall`` share it):

* :meth:`~Availability.went_away` when a write failed in a way that can pass. The first report of an outage
  logs the WARNING: what failed, and what is kept where. It says "nothing is lost" only when that is true: when
  no writer keeps items in memory alone (a news store whose journal cannot be written, ``at_risk``), else what
  would be lost if the process stopped;
* :meth:`~Availability.passed` when a write passes again (the first one ends the outage's time);
* :meth:`~Availability.caught_up` when that writer has written everything it kept. When no writer that reported
  the outage is still behind, the INFO says how long the database was away — from the first write that failed to
  the first that passed again (what the writers saw: an outage no write ran into is not seen) — and how much was
  written since.

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
from datetime import UTC, datetime

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
        """When the first write of this outage failed (``clock``), and on the wall clock: ``failed_at``."""
        self.failed_at: datetime | None = None
        self.back_at: float | None = None
        """When the first write passed again (``clock``): the outage's end, however long catching up takes."""
        self.behind: set[str] = set()
        """The writers that reported the outage and have not caught up."""
        self.written: Counter[str] = Counter()
        """What was written once back, by kind ("items", "status writes", ...)."""
        self.outages = 0
        self.lost = 0
        """Items the writers of this process lost (they said so when they left)."""
        self.damage_told = False
        """Whether the ERROR of a damaged database file was logged in this outage."""
        self.backlogs: dict[str, Callable[[], str]] = {}
        """Each writer's account of what it keeps (for the WARNING): "" when nothing."""
        self.risks: dict[str, Callable[[], bool]] = {}
        """Each writer's answer to "would a stop now lose what you keep?"."""

    @property
    def away(self) -> bool:
        return self.away_since is not None

    def shown_url(self) -> str:
        try:
            return make_url(self.url).render_as_string(hide_password=True)
        except Exception:  # an unparsable URL never got this far; never let a log line fail
            return "the database"

    def register(self, writer: str, backlog: Callable[[], str], at_risk: Callable[[], bool] | None = None) -> None:
        """``writer`` keeps what it cannot write; ``backlog()`` says what it keeps now ("" when nothing), ``at_risk()``
        whether some of it is in memory alone (lost if the process stopped now; never, by default)."""
        with self._lock:
            self.backlogs[writer] = backlog
            if at_risk is not None:
                self.risks[writer] = at_risk

    def unregister(self, writer: str, lost: int = 0) -> None:
        """``writer`` is gone (its crawl ended; what it kept is in its journal, but for ``lost`` items): it is waited
        for no more. When it was the last one behind, the outage is no longer this process's to report; a loss is
        remembered: no later WARNING of this process says "nothing is lost"."""
        with self._lock:
            self.lost += lost
            self.backlogs.pop(writer, None)
            self.risks.pop(writer, None)
            if writer in self.behind:
                self.behind.discard(writer)
                if not self.behind:
                    self.away_since = self.failed_at = self.back_at = None
                    self.written.clear()

    def went_away(
        self, writer: str, reason: str, kept: str, cause: BaseException | None = None, *, at_risk: bool = False
    ) -> None:
        """``writer`` could not write (``reason``, one line) and keeps ``kept`` (what and where) to write later;
        ``cause``: the error, to tell a damaged database file (an ERROR, once) from a passing outage; ``at_risk``:
        some of what it keeps is in memory alone."""
        damage = damaged_file(cause) if cause is not None else None
        with self._lock:
            self.behind.add(writer)
            tell_damage = damage is not None and not self.damage_told
            self.damage_told = self.damage_told or tell_damage
            if self.away_since is not None:
                self.back_at = None  # failing again: not back yet
                if not tell_damage:
                    return
            else:
                self.away_since = self.clock()
                self.failed_at = datetime.now(UTC)
                self.back_at = None
                self.outages += 1
                self.written.clear()
            others = [(backlog, self.risks.get(name)) for name, backlog in self.backlogs.items() if name != writer]
        accounts = [kept, *(account for account in (_safe(backlog) for backlog, _ in others) if account)]
        at_risk = at_risk or any(risk is not None and _safe_risk(risk) for _, risk in others)
        if damage is not None:
            # No outage to wait out: a person must restore or recover the file; until then the writers keep what
            # they cannot write.
            logger.error(
                "%s. Until then what cannot be written is kept: %s%s",
                damage_message(self.url, damage),
                "; ".join(accounts),
                " (what waits in memory alone is lost if the process stops)" if at_risk else "",
            )
            return
        if at_risk or self.lost:
            risks = [f"{self.lost} item(s) of this process were lost already (see its ERROR)"] if self.lost else []
            if at_risk:
                risks.append(
                    "what waits in memory alone is lost if the process stops before the database or a journal takes it"
                )
            logger.warning(
                "The database %s cannot be written (%s): %s; %s; retrying with backoff until it is back",
                self.shown_url(),
                reason,
                "; ".join(accounts),
                "; ".join(risks),
            )
            return
        logger.warning(
            "The database %s cannot be written (%s): nothing is lost — %s; retrying with backoff until it is back",
            self.shown_url(),
            reason,
            "; ".join(accounts),
        )

    def passed(self) -> None:
        """A write passed: if the database was away, it is back from now (the first such write ends the outage)."""
        with self._lock:
            if self.away_since is not None and self.back_at is None:
                self.back_at = self.clock()

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
            back_at = self.back_at if self.back_at is not None else self.clock()
            away_for = back_at - self.away_since
            failed_at = self.failed_at
            self.away_since = self.failed_at = self.back_at = None
            self.damage_told = False
            written_now = +self.written
            self.written.clear()
        summary = ", ".join(f"{count} {kind}" for kind, count in sorted(written_now.items())) or "nothing was waiting"
        logger.info(
            "The database %s is back after %.1f s away (from the first write that failed, at %s, to the first that "
            "passed again): written what was kept meanwhile (%s)",
            self.shown_url(),
            away_for,
            f"{failed_at:%H:%M:%S}Z" if failed_at is not None else "an unknown time",
            summary,
        )


def _safe_risk(risk: Callable[[], bool]) -> bool:
    try:
        return bool(risk())
    except Exception:  # as for an account: a question of the log line only
        return False


def _safe(backlog: Callable[[], str]) -> str:
    try:
        return backlog()
    except Exception:  # an account is a courtesy of the log line, never a reason for it to fail
        return ""
