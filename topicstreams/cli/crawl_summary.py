"""What a crawl command says of its whole process, once at the start and once at the end (at INFO).

* :class:`StartedLine`: ``crawl started: google, bing, yahoo, brave`` once every engine of the process has started
  (``make run``'s supervisor prints the feed's URL again after it, :mod:`topicstreams.cli.together`).
* :func:`log_summary`: one line when the process's crawls have ended, instead of a stats dump per engine (which
  ``crawlall`` moves to DEBUG, :mod:`topicstreams.cli.log_levels`): how it ended, after how long, and per engine its
  requests, how many came back ok, its entries and its new events.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import Any

from topicstreams.crawl.signals import engine_starting
from topicstreams.text.counts import counted, elapsed

logger = logging.getLogger(__name__)

STARTED = "crawl started: "
"""The beginning of the start line (the supervisor of ``make run`` waits for it)."""


class StartedLine:
    """Says :data:`STARTED` once, when each of the engines it was given has started its loop (after their own first
    lines)."""

    def __init__(self, crawlers: Iterable[Any]) -> None:
        crawlers = list(crawlers)
        self.names = [crawler.spidercls.name for crawler in crawlers]
        self.waiting = set(self.names)
        self.said = False
        for crawler in crawlers:  # strong references: nobody else keeps this object
            crawler.signals.connect(self.starting, signal=engine_starting, weak=False)

    def starting(self, engine: str) -> None:
        self.waiting.discard(engine)
        if not self.waiting and not self.said:
            self.said = True
            logger.info("%s%s", STARTED, ", ".join(self.names))


def stat(crawler: Any, key: str) -> Any:
    try:
        stats = crawler.stats
    except RuntimeError:  # Scrapy: "Crawler.stats is not set yet" (its crawl never began)
        return None
    return stats.get_value(key) if stats else None


def summary(crawlers: Iterable[Any]) -> str | None:
    """The one line of :func:`log_summary`; None when no crawl began."""
    began = [crawler for crawler in crawlers if stat(crawler, "start_time") is not None]
    if not began:
        return None
    reasons = sorted({str(stat(crawler, "finish_reason") or "unknown") for crawler in began})
    seconds = max(float(stat(crawler, "elapsed_time_seconds") or 0) for crawler in began)
    parts = []
    for crawler in began:
        name = crawler.spidercls.name

        def count(key: str, name: str = name, crawler: Any = crawler) -> int:
            return int(stat(crawler, f"topicstreams/{name}/{key}") or 0)

        parts.append(
            f"{name} {counted(count('requests'), 'request')} ({count('ok')} ok), "
            f"{counted(count('items_scraped'), 'entry')}, {counted(count('new_events'), 'new event')}"
        )
    return f"crawl ended ({', '.join(reasons)}) after {elapsed(seconds)}: {'; '.join(parts)}"


def log_summary(crawlers: Iterable[Any]) -> None:
    """Say :func:`summary` at INFO (nothing when no crawl began)."""
    line = summary(list(crawlers))
    if line is not None:
        logger.info("%s", line)
