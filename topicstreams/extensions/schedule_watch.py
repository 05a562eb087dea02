"""The schedule's hours: what each engine's schedule spent and missed, per node and UTC hour (``schedule_hours``,
:mod:`topicstreams.storage.schedule_hours`), for ``/monitor``'s schedule panel.

A Scrapy extension, one per engine crawler (``TOPICSTREAMS_SCHEDULE_HOURS_ENABLED``, on by default; not built
without a database). It listens to ``topic_visited`` (:class:`~topicstreams.crawl.signals.TopicVisit`, one per visit
of a topic, in either schedule) and adds each visit to its hour in memory: a visit, its pages (requests), its burst
pages, a hole, the engine's budget an hour (the largest seen). Every :data:`FLUSH_EVERY` seconds, and when the spider
closes, what was added goes to the database in one write through the process's outbox
(:mod:`topicstreams.storage.outbox`: off the event loop, in order, kept through an outage): never a write per visit.

When the spider opens and every :data:`PURGE_EVERY` seconds, the hours older than ``scraper.retention_days`` go (as
the cycle rows and health windows do; nothing without a retention). Any process may purge: the delete is idempotent.
"""

from __future__ import annotations

import asyncio
import logging
import math
import time
from datetime import datetime, timedelta
from typing import Any

from scrapy import Spider, signals
from scrapy.crawler import Crawler
from scrapy.utils.asyncio import create_looping_call

from topicstreams.config.setting_names import sections_from
from topicstreams.crawl.runtime import Runtime
from topicstreams.crawl.signals import TopicVisit, topic_visited
from topicstreams.extensions.timing import engine_database_url, wall
from topicstreams.storage.outbox import Outbox
from topicstreams.storage.schedule_hours import HourCounts, add_schedule_hours, hour_of, purge_schedule_hours

logger = logging.getLogger(__name__)

FLUSH_EVERY = 5.0
"""Seconds between two writes of the hours' counts (when there is anything to write)."""

PURGE_EVERY = 3600.0
"""Seconds between two purges of the hours past retention."""


class ScheduleHoursExtension:
    """Adds up each engine's visits per hour and writes them in batches (see the module docstring)."""

    def __init__(self, crawler: Crawler, database_url: str, node: str, retention_days: float) -> None:
        self.crawler = crawler
        self.engine = crawler.spidercls.name
        self.database_url = database_url
        self.node = node
        self.retention_days = retention_days
        self.pending: dict[tuple[str, datetime], HourCounts] = {}
        """(engine, hour start) -> what its visits added since the last write."""
        self.outbox: Outbox | None = None
        self.ticker: Any = None
        self.purged_at = -math.inf
        self.clock = time.time
        """The wall clock, Unix seconds (a test's to replace)."""

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> ScheduleHoursExtension:
        database_url = engine_database_url(
            crawler,
            switch="TOPICSTREAMS_SCHEDULE_HOURS_ENABLED",
            purpose="the schedule's hours",
            keeps="the schedule's hours",
        )
        sections = sections_from(crawler.settings)
        extension = cls(crawler, database_url, sections.node.id, sections.scraper.retention_days)
        crawler.signals.connect(extension.spider_opened, signal=signals.spider_opened)
        crawler.signals.connect(extension.spider_closed, signal=signals.spider_closed)
        crawler.signals.connect(extension.topic_visited, signal=topic_visited)
        return extension

    def spider_opened(self, spider: Spider | None = None) -> None:
        self.outbox = Runtime.of(self.crawler).outbox(self.database_url)
        self.purge(self.clock())
        self.ticker = create_looping_call(self.tick)
        self.ticker.start(FLUSH_EVERY, now=False)

    async def spider_closed(self, spider: Spider | None = None, reason: str = "") -> None:
        if self.ticker is not None and self.ticker.running:
            self.ticker.stop()
        self.flush()
        if self.outbox is not None and not await asyncio.to_thread(self.outbox.flush):
            logger.warning(
                "[%s] the database did not take the schedule's last hourly counts before the end: %d write(s) not "
                "kept (the schedule panel of /monitor misses those visits)",
                self.engine,
                self.outbox.pending(),
            )

    def topic_visited(self, visit: TopicVisit) -> None:
        """Count one visit in its hour (written at the next flush)."""
        counts = self.pending.setdefault((visit.engine, hour_of(visit.at)), HourCounts())
        counts.add(
            requests=visit.pages,
            burst_pages=visit.burst_pages,
            hole=visit.hole,
            budget_per_hour=visit.budget_per_hour,
        )

    def tick(self) -> None:
        self.flush()
        now = self.clock()
        if now - self.purged_at >= PURGE_EVERY:
            self.purge(now)

    def flush(self) -> None:
        """Hand what was added since the last write to the outbox, as one write."""
        if not self.pending or self.outbox is None:
            return
        counts, self.pending = self.pending, {}
        node = self.node
        self.outbox.put(
            f"the schedule's hourly counts of {self.engine}", lambda db: add_schedule_hours(db, node, counts)
        )

    def purge(self, now: float) -> None:
        self.purged_at = now
        if not self.retention_days > 0 or self.outbox is None:
            return
        cutoff = wall(now) - timedelta(days=self.retention_days)

        def purge(db: Any) -> None:
            deleted = purge_schedule_hours(db, cutoff)
            if deleted:
                logger.info(
                    "purged %d schedule hour(s) older than %g days (before %sZ)",
                    deleted,
                    self.retention_days,
                    f"{cutoff:%Y-%m-%d %H:%M:%S}",
                )

        self.outbox.put(f"the purge of the schedule hours older than {self.retention_days:g} days", purge)
