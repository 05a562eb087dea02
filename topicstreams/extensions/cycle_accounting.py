"""Cycle accounting: what each engine did, one window of ``scraper.scrape_interval`` seconds at a time.

A Scrapy extension, one per engine crawler (``TOPICSTREAMS_CYCLES_ENABLED``, on by default). Like Scrapy's own
LogStats it only reads the crawl's stats (``topicstreams/<engine>/…``) and diffs them at each window's end; it
writes:

* one ``scraper_cycles`` row per engine, node and window: ``topics_count`` (topics swept with an ok outcome),
  ``entries`` (items the spider yielded), ``new_events`` (``topic_news`` rows newly inserted) and the window's
  health counts (``requests``, ``ok``, ``hard_blocks``, ``challenges``, ``soft_blocks``, ``errors``,
  ``cooldowns``). A window with nothing in it still gets its row: an idle, benched or paused engine is
  information too;
* one INFO line per row, ``[google] swept 50 topics, 312 entries, 47 new events`` (the row's numbers);
* the purge: when the spider opens and about once an hour, the ``health_windows`` are rolled up into the daily
  history (``health_daily``), then the ``scraper_cycles`` rows that ended more than ``scraper.retention_days``
  days ago are deleted, the ``health_windows`` of the days that ended that long ago, and the daily rows older than
  ``health.history_days``. Any process may purge at any time (the rollup recomputes the same rows, a
  ``DELETE … WHERE window_end < cutoff`` is idempotent), so no process has to be the one that does. Without a
  retention nothing but the history is purged, and the rollup still runs: the monitor's months read it.

The tables are there when it opens: the schema extension (:mod:`topicstreams.extensions.schema_upgrade`) upgraded the
database before any other component was built.

The windows are wall-clock and aligned to the interval: window *k* covers ``[k·I, (k+1)·I)`` in Unix seconds, so
the rows of every engine, run and node line up and add up per window. A run's first window starts when the
spider opens and its last ends when it closes; the ones between are whole aligned windows, each row's end the
next one's start.

Timing. The clock is looked at every ``min(1 s, interval / 4)`` (:data:`TICK`); a window is closed, its counters
read, at the first look after its end, so a row counts what was counted up to at most one tick after its end.
``new_events`` lags a little more: the store pipeline counts an item's new events when it writes its batch, at
most ``TOPICSTREAMS_STORE_FLUSH_SECONDS`` (1 s) after the item, so an item scraped in a window's last second may
have its events in the next row (while the database is away, the events count in the window they are written in).
The rows go through the process's outbox (:mod:`topicstreams.storage.outbox`): written off the event loop, and
kept through a database outage. Nothing is lost or counted twice: over a run, the rows add up to the stats
(on close the store's final flush has run — Scrapy closes the pipelines before it sends ``spider_closed`` — and
the last row takes the rest).

Several boundaries at once. When the process did not look at the clock across several boundaries (a suspended
machine, an event loop blocked for longer than an interval), one row covers the whole span, from the last end to
the latest boundary passed: its bounds stay aligned and the rows consecutive, and the counts are not spread over
windows they cannot be attributed to (zeros there would claim an idle engine where the process was not running).
A WARNING says how many intervals the row spans.
"""

from __future__ import annotations

import asyncio
import logging
import math
import time
from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Any, NamedTuple

from scrapy import Spider, signals
from scrapy.crawler import Crawler
from scrapy.utils.asyncio import create_looping_call

from topicstreams.config.setting_names import sections_from
from topicstreams.crawl.runtime import Runtime
from topicstreams.extensions.timing import STORED, engine_database_url, wall
from topicstreams.storage.health_history import history_start, purge_history, roll_up
from topicstreams.storage.models import health_daily_table as health_daily
from topicstreams.storage.outbox import Outbox
from topicstreams.storage.scraper_cycles import purge_older_than, save_cycle
from topicstreams.text.counts import counted

logger = logging.getLogger(__name__)

MAX_TICK = 1.0
"""Seconds between two looks at the clock at most (a quarter of the interval when that is shorter)."""

PURGE_EVERY = 3600.0
"""Seconds between two purges of the rows past retention."""

COUNTERS: dict[str, str] = {
    "topics_count": "topics_swept",
    "entries": "items_scraped",
    "new_events": "new_events",
    "requests": "requests",
    "ok": "ok",
    "hard_blocks": "hard_blocks",
    "challenges": "challenges",
    "soft_blocks": "soft_blocks",
    "errors": "errors",
    "cooldowns": "cooldowns",
}
"""``scraper_cycles`` column -> the stat it is the window's difference of (under ``topicstreams/<engine>/``)."""


def tick_every(interval: float) -> float:
    return min(MAX_TICK, interval / 4)


class Span(NamedTuple):
    """A window closed: its bounds in Unix seconds, and how many boundaries it took to close (1 for a window closed
    on time, more when the clock was not looked at across several; 0 for a run's last window)."""

    start: float
    end: float
    boundaries: int = 1


class CycleWindows:
    """The windows of one run, in Unix seconds (pure: the caller says what time it is).

    The window in progress starts at :attr:`start` (the open time, then each boundary passed) and ends at the
    next boundary, a multiple of ``interval``. Boundaries are computed as ``k * interval`` from whole ``k``, so the
    same boundary is the same float in every run and process."""

    def __init__(self, interval: float, opened_at: float) -> None:
        if interval <= 0:
            raise ValueError(f"the interval must be > 0, got {interval!r}")
        self.interval = interval
        self.start = opened_at
        self.end_index = math.floor(opened_at / interval) + 1
        if self.end_index * interval <= opened_at:  # float rounding right at a boundary
            self.end_index += 1

    @property
    def end(self) -> float:
        """Where the window in progress ends: the next boundary."""
        return self.end_index * self.interval

    def due(self, now: float) -> Span | None:
        """The window that ``now`` has closed, if any, and the next one begins.

        When several boundaries have passed since the last one closed, the window returned covers them all: it
        ends at the latest boundary at or before ``now``."""
        passed = math.floor(now / self.interval)
        if passed < self.end_index:
            return None
        window = Span(self.start, passed * self.interval, passed - self.end_index + 1)
        self.start, self.end_index = window.end, passed + 1
        return window

    def last(self, now: float) -> Span:
        """The run's last window, from the last boundary (or the open time) to ``now``, when the spider closes.

        Call :meth:`due` first, for the boundaries ``now`` may have passed. A clock gone back gives an empty
        window at the start, never one that ends before it starts."""
        window = Span(self.start, max(now, self.start), 0)
        self.start = window.end
        return window


class CounterDiffs:
    """Counters read at each window's end, and the difference since the previous reading (pure)."""

    def __init__(self, names: tuple[str, ...] | list[str]) -> None:
        self.previous: dict[str, int] = dict.fromkeys(names, 0)
        """The values at the previous reading; a run starts from zeros, so that the diffs add up to the stats."""

    def take(self, current: Mapping[str, Any]) -> dict[str, int]:
        """The difference of each counter since the previous reading; a counter absent from ``current`` is 0."""
        now = {name: int(current.get(name) or 0) for name in self.previous}
        diffs = {name: now[name] - self.previous[name] for name in self.previous}
        self.previous = now
        return diffs


CYCLE_LINE = "[%s] swept %s, %s, %s"
"""The INFO line of a window: the engine, then the row's ``topics_count``, ``entries`` and ``new_events``, counted
(:func:`cycle_counts`: ``1 topic``, ``2 entries``, ``0 new events``)."""


def cycle_counts(counts: dict[str, int]) -> tuple[str, str, str]:
    """The three counts of :data:`CYCLE_LINE`, in words."""
    return (
        counted(counts["topics_count"], "topic"),
        counted(counts["entries"], "entry"),
        counted(counts["new_events"], "new event"),
    )


class CyclesExtension:
    def __init__(
        self,
        crawler: Crawler,
        database_url: str,
        node: str,
        interval: float,
        retention_days: float,
        history_days: float | None = None,
    ) -> None:
        self.crawler = crawler
        self.engine = crawler.spidercls.name
        self.database_url = database_url
        self.node = node
        self.interval = interval
        self.retention_days = retention_days
        self.history_days = history_days
        """``health.history_days`` (None: the daily history is kept for good)."""
        self.outbox: Outbox | None = None
        self.windows: CycleWindows | None = None
        self.counters = CounterDiffs(list(COUNTERS.values()))
        self.purged_at = -math.inf
        self.ticker: Any = None
        self.clock = time.time
        """The wall clock, Unix seconds (a test's to replace)."""

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> CyclesExtension:
        settings = crawler.settings
        database_url = engine_database_url(
            crawler, switch="TOPICSTREAMS_CYCLES_ENABLED", purpose="cycle accounting", keeps="the cycles"
        )
        sections = sections_from(settings)
        extension = cls(
            crawler,
            database_url,
            sections.node.id,
            sections.scraper.scrape_interval,  # > 0: the configuration's rule
            sections.scraper.retention_days,
            sections.health.history_days or None,
        )
        crawler.signals.connect(extension.spider_opened, signal=signals.spider_opened)
        crawler.signals.connect(extension.spider_closed, signal=signals.spider_closed)
        return extension

    # ---- life cycle -----------------------------------------------------------------------------------
    def spider_opened(self, spider: Spider | None = None) -> None:
        now = self.clock()
        self.outbox = Runtime.of(self.crawler).outbox(self.database_url)
        self.windows = CycleWindows(self.interval, now)
        self.purge(now)
        self.ticker = create_looping_call(self.tick)
        self.ticker.start(tick_every(self.interval), now=False)

    async def spider_closed(self, spider: Spider | None = None, reason: str = "") -> None:
        """The run's last window. The store's final flush has run by now (pipelines close first)."""
        if self.ticker is not None and self.ticker.running:
            self.ticker.stop()
        if self.windows is None:
            return
        now = self.clock()
        window = self.windows.due(now)
        if window is not None:
            self.close_window(window)
        self.close_window(self.windows.last(now))
        self.windows = None
        if not await asyncio.to_thread(self.outbox.flush):
            logger.warning(
                "[%s] the database did not take the last cycle rows before the end: %d write(s) not kept",
                self.engine,
                self.outbox.pending(),
            )

    def tick(self) -> None:
        now = self.clock()
        if self.windows is not None:
            window = self.windows.due(now)
            if window is not None:
                self.close_window(window)
        if now - self.purged_at >= PURGE_EVERY:
            self.purge(now)

    # ---- what it writes -------------------------------------------------------------------------------
    def read_counters(self) -> dict[str, int]:
        """The diffs since the previous window's end, by ``scraper_cycles`` column."""
        stats = self.crawler.stats
        current = {name: stats.get_value(f"topicstreams/{self.engine}/{name}", 0) for name in COUNTERS.values()}
        diffs = self.counters.take(current)
        return {column: diffs[name] for column, name in COUNTERS.items()}

    def close_window(self, window: Span) -> None:
        """Write the window's row and say its line."""
        start, end = window.start, window.end
        counts = self.read_counters()
        if window.boundaries > 1:
            logger.warning(
                "[%s] the window %s–%s passed %d boundaries of %g s: the process did not look at the "
                "clock in between (suspended, or its event loop blocked); one row covers them all",
                self.engine,
                f"{wall(start):%H:%M:%S}",
                f"{wall(end):%H:%M:%S}",
                window.boundaries,
                self.interval,
            )
        logger.info(CYCLE_LINE, self.engine, *cycle_counts(counts), extra=STORED)
        # Off the event loop, and kept through a database outage (the outbox writes it when the database is back).
        row = {"engine": self.engine, "node": self.node, "window_start": wall(start), "window_end": wall(end), **counts}
        self.outbox.put(
            f"the cycle row of {self.engine} {wall(start):%H:%M:%S}–{wall(end):%H:%M:%S}",
            lambda db: save_cycle(db, **row),
        )

    def purge(self, now: float) -> None:
        """Roll the health windows up into the daily history, then delete the rows past retention (the cycle and
        health window rows; none when retention is not set) and the daily rows past ``health.history_days``.

        The rollup runs in the purge's own transaction, before it deletes: no window goes that is not in its
        day's row."""
        self.purged_at = now
        at, history_days = wall(now), self.history_days
        if not self.retention_days > 0:

            def keep_history(db) -> None:
                roll_up(db, at)
                if history_days:
                    self.purged({health_daily.name: purge_history(db, history_start(at, history_days))}, None)

            self.outbox.put("the rollup of the daily health history", keep_history)
            return
        cutoff = at - timedelta(days=self.retention_days)
        self.outbox.put(
            f"the purge of the rows older than {self.retention_days:g} days",
            lambda db: self.purged(purge_older_than(db, cutoff, now=at, history_days=history_days), cutoff),
        )

    def purged(self, deleted: dict[str, int], cutoff: datetime | None) -> None:
        """Say what the purge deleted, when it deleted anything (``cutoff``: the retention's; None without one)."""
        if not any(deleted.values()):
            return
        what = []
        if cutoff is not None:
            what.append(f"the rows older than {self.retention_days:g} days (ended before {cutoff:%Y-%m-%d %H:%M:%S}Z)")
        if health_daily.name in deleted:
            what.append(f"the daily health older than {self.history_days:g} days")
        logger.info(
            "purged %s: %s", " and ".join(what), ", ".join(f"{count} from {table}" for table, count in deleted.items())
        )
