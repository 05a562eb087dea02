"""The health extension's bands acting on the engine: the slowdown, the pause, a person's resume, the reminders.

A part of :class:`~topicstreams.extensions.watch.HealthExtension` (which sets the attributes declared here): the
engine's :class:`~topicstreams.crawl.engine_state.EngineState` changed by the assessments, the pause kept in the
engine's status row (so it survives restarts), and the alerts of those changes.
"""

from __future__ import annotations

import logging
from datetime import datetime
from typing import TYPE_CHECKING, Any

from topicstreams.alerts import transitions
from topicstreams.alerts.events import Alert
from topicstreams.crawl.engine_state import EngineState
from topicstreams.engines.states import PAUSED
from topicstreams.extensions.timing import wall
from topicstreams.health.band import PAUSE, RECOVER, SLOW_DOWN, Assessment, EngineHealth, HealthSettings
from topicstreams.health.score import CRITICAL, DEGRADED
from topicstreams.storage import engine_status as store
from topicstreams.storage import utcnow
from topicstreams.storage.outbox import Outbox

logger = logging.getLogger(__name__)


class EnginePausing:
    """Slows, pauses and resumes the engine as its health says (a mixin of the health extension)."""

    engine: str
    node: str
    settings: HealthSettings
    health: EngineHealth
    state: EngineState
    db: Any
    outbox: Outbox | None
    repeat: float
    canary_queries: tuple[str, ...]
    mismatches: set[str]
    paused_at: datetime | None
    reminded_at: datetime | None
    paused_score: int | None
    health_reasons: tuple[str, ...]
    trouble: tuple[str, datetime] | None

    if TYPE_CHECKING:  # the other parts' methods this one calls

        def alert(self, alert: Alert) -> None: ...
        def read(self, what: str, read: Any, *args: Any) -> Any: ...
        def save_status(self, *args: Any, **kwargs: Any) -> None: ...

    def restore(self) -> None:
        """Take up what the engine's status row says is in force: a pause, a slowdown."""
        row = store.read_status(self.db, self.engine, self.node)
        if row is None:
            return
        # A canary that answered wrong last time is still suspect until it answers right (if still configured).
        self.mismatches = {query for query in row.canary_mismatches if query in self.canary_queries}
        if row.state == PAUSED:
            self.health.in_force = CRITICAL
            self.state.paused = True
            self.paused_at = row.paused_at or utcnow()
            self.paused_score, self.health_reasons = row.score, tuple(row.reasons or ())
            self.trouble = ("paused", self.paused_at)
            self.reminded_at = utcnow()  # a restart is no reminder: the next one comes at its period from the pause
            self.state.pace_multiplier = max(1.0, row.pace_multiplier or self.settings.degrade_factor)
            logger.warning(
                "[%s] paused since %s (%s): it schedules no topic until a person runs `scrapy health resume %s`",
                self.engine,
                f"{row.paused_at:%Y-%m-%d %H:%M:%S}Z" if row.paused_at else "earlier",
                ", ".join(row.reasons) or "no reasons kept",
                self.engine,
            )
        elif row.pace_multiplier and row.pace_multiplier > 1:
            self.health.in_force = DEGRADED
            self.state.pace_multiplier = row.pace_multiplier
            self.trouble = ("degraded", row.updated_at)
            logger.warning(
                "[%s] slowed down when last seen: the pacing floor and re-scrape interval stay × %g "
                "until its score is ok again",
                self.engine,
                row.pace_multiplier,
            )

    def check_resumed(self) -> None:
        if self.outbox is not None and self.outbox.changing(self.engine, self.node):
            return  # the row does not say the pause yet: a resume is read from it once it does
        row = self.read("the status row", store.read_status, self.engine, self.node)
        if row is None or row.state == PAUSED:
            return
        at = (row.resumed_at or utcnow()).timestamp()
        self.health.resume(at)
        self.state.paused = False
        self.state.pace_multiplier = self.settings.degrade_factor
        logger.warning(
            "[%s] resumed by a person: judged afresh from now, at the slowed pace (× %g) until its score is ok",
            self.engine,
            self.settings.degrade_factor,
        )
        self.alert(transitions.resumed(self.engine, self.node, self.paused_at, wall(at), self.settings.degrade_factor))
        self.paused_at = self.reminded_at = None
        self.save_status()

    def remind(self, now: datetime) -> None:
        """While paused, a reminder every ``alerting.repeat`` seconds from the pause."""
        if self.paused_at is None or not transitions.reminder_due(self.paused_at, self.reminded_at, now, self.repeat):
            return
        self.reminded_at = now
        row_reasons = list(self.health_reasons or ())
        self.alert(
            transitions.paused(
                self.engine, self.node, self.paused_score, row_reasons, self.paused_at, now, reminder=True
            )
        )

    def act(self, assessment: Assessment) -> None:
        reasons = ", ".join(assessment.reasons) or "no single signal"
        now = utcnow()
        if assessment.action == SLOW_DOWN:
            self.state.pace_multiplier = self.settings.degrade_factor
            logger.warning(
                "[%s] health %s (degraded): %s; slowing down: the pacing floor and the re-scrape interval "
                "× %g until it recovers",
                self.engine,
                assessment.score,
                reasons,
                self.settings.degrade_factor,
            )
            if self.trouble is None:
                self.trouble = ("degraded", now)
            self.alert(
                transitions.degraded(
                    self.engine, self.node, assessment.score, assessment.reasons, self.settings.degrade_factor, now
                )
            )
        elif assessment.action == RECOVER:
            self.state.pace_multiplier = 1.0
            logger.info("[%s] health %s (ok): back to the normal pace", self.engine, assessment.score)
            was, since = self.trouble or ("degraded", None)
            self.trouble = None
            self.alert(transitions.recovered(self.engine, self.node, assessment.score, was, since, now))
        elif assessment.action == PAUSE:
            self.pause(assessment, reasons)

    def pause(self, assessment: Assessment, reasons: str) -> None:
        self.state.paused = True
        self.state.pace_multiplier = max(self.state.pace_multiplier, self.settings.degrade_factor)
        message = (
            f"[{self.engine}] health {assessment.score} (critical): {reasons}; engine paused on node "
            f"{self.node}: it schedules no topic until a person looks and runs "
            f"`scrapy health resume {self.engine}`"
        )
        logger.critical(message)
        at = utcnow()
        self.paused_at, self.reminded_at = at, None
        self.paused_score, self.health_reasons = assessment.score, tuple(assessment.reasons)
        self.trouble = ("paused", at)
        engine, node, multiplier = self.engine, self.node, self.state.pace_multiplier
        self.outbox.put(
            f"the pause of {engine} on {node}",
            lambda db: store.pause(db, engine, node, at, pace_multiplier=multiplier),
            row=(engine, node),
        )
        self.alert(transitions.paused(engine, node, assessment.score, assessment.reasons, at, at))
