"""Store items in the database, in batches, each row once.

Settings:

* ``TOPICSTREAMS_DATABASE_URL``: absolute SQLAlchemy URL; the pipeline is disabled when empty.
* ``TOPICSTREAMS_STORE_BATCH_SIZE``: items per transaction (a full batch is written at once).
* ``TOPICSTREAMS_STORE_FLUSH_SECONDS``: the longest an item waits in the buffer (0: no timer).

Batches are written in the crawler's thread: a batch is one short transaction (milliseconds),
and writing in a thread of its own measured slower in bulk (the GIL) for no gain at crawl rates.

Stats, per engine: ``topicstreams/<engine>/items_stored`` (items committed to the store,
duplicates included), ``new_events`` (feed events added), ``new_news`` (articles added),
``items_failed`` (items of batches whose write failed), ``items_invalid`` (items not storable).
"""

from __future__ import annotations

import logging
from collections import Counter
from typing import Any, Self

from itemadapter import ItemAdapter
from scrapy.crawler import Crawler
from scrapy.exceptions import NotConfigured
from scrapy.statscollectors import StatsCollector
from scrapy.utils.asyncio import create_looping_call

from topicstreams.storage.db import database_for
from topicstreams.storage.writer import NewsWriter, WriteResult, item_problem

logger = logging.getLogger(__name__)

STORED_FIELDS = ("news_id", "url", "title", "source", "snippet", "published_at", "topic", "engine")


class StorePipeline:
    def __init__(self, url: str, stats: StatsCollector, batch_size: int, flush_seconds: float) -> None:
        if batch_size < 1:
            raise ValueError(f"TOPICSTREAMS_STORE_BATCH_SIZE must be at least 1, not {batch_size}")
        self.url = url
        self.stats = stats
        self.batch_size = batch_size
        self.flush_seconds = flush_seconds
        self.writer: NewsWriter | None = None
        self._buffer: list[dict[str, Any]] = []
        self._looping_call: Any = None

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        settings = crawler.settings
        url = (settings.get("TOPICSTREAMS_DATABASE_URL") or "").strip()
        if not url:
            raise NotConfigured("TOPICSTREAMS_DATABASE_URL is empty: items are not stored")
        assert crawler.stats is not None
        return cls(
            url,
            crawler.stats,
            batch_size=settings.getint("TOPICSTREAMS_STORE_BATCH_SIZE"),
            flush_seconds=settings.getfloat("TOPICSTREAMS_STORE_FLUSH_SECONDS"),
        )

    def open_spider(self) -> None:
        # The schema is in place: the schema extension upgraded the database when the crawler was made.
        self.writer = NewsWriter(database_for(self.url))
        if self.flush_seconds > 0:
            self._start_periodic_flush()

    def process_item(self, item: Any) -> Any:
        adapter = ItemAdapter(item)
        row = {name: adapter.get(name) for name in STORED_FIELDS}
        problem = item_problem(row)
        if problem:
            engine = row["engine"] or "unknown"
            logger.error("Not storing an item of %s: %s (url %r)", engine, problem, row["url"])
            self.stats.inc_value(f"topicstreams/{engine}/items_invalid")
            return item
        self._buffer.append(row)
        if len(self._buffer) >= self.batch_size:
            self.flush()
        return item

    def close_spider(self) -> None:
        if self._looping_call is not None and self._looping_call.running:
            self._looping_call.stop()
        self._looping_call = None
        self.flush()

    def flush(self) -> None:
        """Write the buffered items in one transaction; on failure, log an ERROR and drop them."""
        if not self._buffer:
            return
        if self.writer is None:
            raise RuntimeError("StorePipeline.flush() before open_spider()")
        batch, self._buffer = self._buffer, []
        try:
            result = self.writer.write(batch)
        except Exception as exc:
            failed = Counter(row["engine"] for row in batch)
            for engine, count in failed.items():
                self.stats.inc_value(f"topicstreams/{engine}/items_failed", count)
            logger.error(
                "Could not store %d items (%s); earlier batches are stored: %s: %s",
                len(batch),
                ", ".join(f"{engine} {count}" for engine, count in sorted(failed.items())),
                type(exc).__name__,
                exc,
                exc_info=logger.isEnabledFor(logging.DEBUG),
            )
            return
        self._count(result)

    def _count(self, result: WriteResult) -> None:
        for name, counts in (
            ("items_stored", result.items),
            ("new_events", result.new_events),
            ("new_news", result.new_news),
        ):
            for engine, count in counts.items():
                self.stats.inc_value(f"topicstreams/{engine}/{name}", count)
        logger.debug("Stored %s", result.totals())

    def _start_periodic_flush(self) -> None:
        try:
            self._looping_call = create_looping_call(self.flush)
        except RuntimeError:
            # Neither a reactor nor an asyncio loop (the pipeline driven by hand): batches are
            # still written when full and on close.
            logger.debug("No event loop: the store flushes only full batches and on close")
            return
        self._looping_call.start(self.flush_seconds, now=False)
