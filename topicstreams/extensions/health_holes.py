"""The health extension's holes: the reason ``holes`` (:mod:`topicstreams.health.holes_rule`), fed by the crawl's
``topic_visited`` signal.

A part of :class:`~topicstreams.extensions.watch.HealthExtension` (which sets the attributes declared here). Each
visit of a topic that ended in a hole is kept for one ``health.window``; the count is written with the engine's
status row (``window_holes``, at every write of it: on every response and at least every heartbeat), and
:data:`~topicstreams.health.holes_rule.HOLES_MIN` or more of them is the reason ``holes`` wherever the reasons are
read (:mod:`topicstreams.reports.health_report`). It changes neither the score nor the band. A WARNING says when it
begins.
"""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING, Any

from topicstreams.crawl.signals import TopicVisit
from topicstreams.health.band import HealthSettings
from topicstreams.health.holes_rule import HOLES_MIN, HoleWindow, holes_reason

logger = logging.getLogger(__name__)


class HoleWatching:
    """Counts the engine's recent holes (a mixin of the health extension)."""

    engine: str
    settings: HealthSettings
    hole_window: HoleWindow | None
    """None until a visit is told (a crawl that sends no ``topic_visited`` writes no count)."""
    outbox: Any
    """Where the status row goes (None before the extension opened: a visit told then is not counted)."""

    if TYPE_CHECKING:  # the other parts' methods this one calls

        def save_status(self, *args: Any, **kwargs: Any) -> None: ...

    def window_holes(self) -> int | None:
        """The holes within the last ``health.window`` (None: no visit told yet)."""
        return None if self.hole_window is None else self.hole_window.count(time.time())

    def topic_visited(self, visit: TopicVisit) -> None:
        if visit.engine != self.engine or self.outbox is None:
            return
        if self.hole_window is None:
            self.hole_window = HoleWindow(self.settings.window)
            if not visit.hole:
                self.save_status()
                return
        if not visit.hole:
            return
        before = holes_reason(self.window_holes())
        self.hole_window.add(visit.at.timestamp())
        count = self.window_holes()
        if holes_reason(count) and not before:
            logger.warning(
                "[%s] %d visits within %g s ended in holes (at least %d make the reason holes): their last page held "
                "only new articles and could go no deeper, so articles may have fallen off the results between two "
                "visits; the schedule cannot keep up with these topics at the engine's budget (raise "
                "scraper.adaptive.burst_pages, or lower scraper.adaptive.min_interval)",
                self.engine,
                count,
                self.settings.window,
                HOLES_MIN,
            )
        self.save_status()
