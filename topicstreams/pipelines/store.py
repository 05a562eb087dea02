"""Store items in the database, in batches, each row once, and never drop one.

Settings (defaults in :mod:`topicstreams.settings`):

* ``TOPICSTREAMS_DATABASE_URL``: absolute SQLAlchemy URL; the pipeline is disabled when empty.
* ``TOPICSTREAMS_STORE_BATCH_SIZE``: items per transaction (a full batch is handed to the writer at once).
* ``TOPICSTREAMS_STORE_FLUSH_SECONDS``: the longest an item waits for its batch to fill (0: no timer).
* ``TOPICSTREAMS_STORE_BUFFER_ITEMS``: the most items waiting in memory for the database; past it, the journal.
* ``TOPICSTREAMS_STORE_RETRY_INITIAL`` / ``…_RETRY_MAX``: the backoff between tries while the database is away.
* ``TOPICSTREAMS_STORE_CLOSE_TIMEOUT``: at the end, how long the database has to take what waits in memory.
* ``TOPICSTREAMS_JOURNAL_DIR``: the node's journal folder (the add-on sets it: ``browser.profile_dir/<node>/journal``).

The batches are written by a :class:`~topicstreams.storage.durable.DurableWriter`, in a thread of its own: through
a database outage they wait in the crawler's journal (``<engine>.jsonl`` in that folder) and are written, in order,
when the database is back; items the database refuses for good go to the reject file beside it. The journal is
held for the crawl: the items an earlier run left in it are written before any new one.

When the journal cannot be written either (a full disk), the writer holds the engine (no new topic, put on the
engine's state as ``held``) until the journal or the database takes items again. Items the crawl had to stop
without storing or journaling are reported by :class:`~topicstreams.pipelines.loss_report.LossReport` (stat
``topicstreams/store/lost``, an ERROR, a recorded loss, the ``data_loss`` alert); a loss an earlier run kept beside
the journal is recorded when the crawl opens.

Background work never dies quietly: the periodic flush (every ``TOPICSTREAMS_STORE_FLUSH_SECONDS``, so an item waits
in memory no longer than that while the database takes writes) logs an exception once and goes on; a batch it could
not hand over stays for the next flush.

Stats, per engine: ``topicstreams/<engine>/items_stored`` (items committed to the store, duplicates included),
``new_events`` (feed events added), ``new_news`` (articles added), ``items_invalid`` (items not storable, never
handed over); and the writer's ``topicstreams/store/buffered``, ``journaled``, ``replayed``, ``rejected``, and
``topicstreams/store/lost`` (items the crawl stopped without storing or journaling).

Signal: after a write added feed events, :data:`topicstreams.crawl.signals.events_stored` (an
:class:`~topicstreams.crawl.signals.EventsStored`), sent on the crawl's event loop (the write ends in the writer's
thread). The pipeline only announces; whoever listens (the as-it-happens digests) reads what it needs. The events of
the writes that close the crawl are announced before ``close_spider`` returns, so before ``spider_closed``.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any, Self

from itemadapter import ItemAdapter
from scrapy.crawler import Crawler
from scrapy.exceptions import NotConfigured
from scrapy.signalmanager import SignalManager
from scrapy.statscollectors import StatsCollector
from scrapy.utils.asyncio import create_looping_call

from topicstreams.alerts.delivery import options_from_settings
from topicstreams.config.setting_names import sections_from
from topicstreams.crawl.engine_state import EngineState
from topicstreams.crawl.runtime import Runtime
from topicstreams.crawl.signals import EventsStored, events_stored
from topicstreams.pipelines.loss_report import LossReport
from topicstreams.storage.batch_writes import Backoff
from topicstreams.storage.db import utcnow
from topicstreams.storage.durable import DurableWriter
from topicstreams.storage.journal import Journal, journal_path
from topicstreams.storage.writer import NewsWriter, WriteResult, item_problem

logger = logging.getLogger(__name__)

STORED_FIELDS = ("news_id", "url", "title", "source", "snippet", "published_at", "topic", "engine")


class StorePipeline:
    def __init__(
        self,
        url: str,
        stats: StatsCollector,
        batch_size: int,
        flush_seconds: float,
        *,
        journal_dir: str,
        name: str,
        buffer_items: int,
        backoff: Backoff,
        close_timeout: float,
        signals: SignalManager | None = None,
        runtime: Runtime | None = None,
        state: EngineState | None = None,
        losses: LossReport | None = None,
    ) -> None:
        if batch_size < 1:
            raise ValueError(f"TOPICSTREAMS_STORE_BATCH_SIZE must be at least 1, not {batch_size}")
        if buffer_items < batch_size:
            raise ValueError(
                f"TOPICSTREAMS_STORE_BUFFER_ITEMS ({buffer_items}) must hold at least one batch "
                f"(TOPICSTREAMS_STORE_BATCH_SIZE, {batch_size})"
            )
        if not journal_dir:
            raise ValueError(
                "TOPICSTREAMS_JOURNAL_DIR is empty: name the folder of the store's journal (the "
                "add-on sets it to browser.profile_dir/<node>/journal)"
            )
        self.url = url
        self.runtime = runtime or Runtime()
        """The process's shared objects: the database handle and its outage state."""
        self.stats = stats
        self.batch_size = batch_size
        self.flush_seconds = flush_seconds
        self.journal_dir = journal_dir
        self.name = name
        self.buffer_items = buffer_items
        self.backoff = backoff
        self.close_timeout = close_timeout
        self.store: DurableWriter | None = None
        self._buffer: list[dict[str, Any]] = []
        self._looping_call: Any = None
        self.signals = signals
        """Where :data:`~topicstreams.crawl.signals.events_stored` goes (None: nowhere)."""
        self._loop: asyncio.AbstractEventLoop | None = None
        """The crawl's event loop, which the signal is sent on (None: the pipeline driven by hand)."""
        self.state = state
        """The engine's live state, where the writer's hold goes (None: nowhere)."""
        self.losses = losses or LossReport(
            name, "", journal_dir, stats, lambda: self.runtime.database(url), lambda: None
        )
        self._flush_failed = False

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        settings = crawler.settings
        url = (settings.get("TOPICSTREAMS_DATABASE_URL") or "").strip()
        if not url:
            raise NotConfigured("TOPICSTREAMS_DATABASE_URL is empty: items are not stored")
        assert crawler.stats is not None
        runtime, sections, name = Runtime.of(crawler), sections_from(settings), crawler.spidercls.name
        node, journal_dir = sections.node.id, (settings.get("TOPICSTREAMS_JOURNAL_DIR") or "").strip()

        def notifier():
            return runtime.notifier(url, sections.alerting.delivery(), node, **options_from_settings(settings))

        return cls(
            url,
            crawler.stats,
            batch_size=settings.getint("TOPICSTREAMS_STORE_BATCH_SIZE"),
            flush_seconds=settings.getfloat("TOPICSTREAMS_STORE_FLUSH_SECONDS"),
            journal_dir=journal_dir,
            name=name,
            buffer_items=settings.getint("TOPICSTREAMS_STORE_BUFFER_ITEMS"),
            backoff=Backoff(
                settings.getfloat("TOPICSTREAMS_STORE_RETRY_INITIAL"), settings.getfloat("TOPICSTREAMS_STORE_RETRY_MAX")
            ),
            close_timeout=settings.getfloat("TOPICSTREAMS_STORE_CLOSE_TIMEOUT"),
            signals=crawler.signals,
            runtime=runtime,
            state=runtime.engine_state(crawler),
            losses=LossReport(name, node, journal_dir, crawler.stats, lambda: runtime.database(url), notifier),
        )

    @property
    def journal_path(self):
        return journal_path(self.journal_dir, self.name)

    def open_spider(self) -> None:
        # The schema is in place: the schema extension upgraded the database when the crawler was made.
        try:
            self._loop = asyncio.get_running_loop()
        except RuntimeError:
            self._loop = None
        self.store = DurableWriter(
            NewsWriter(self.runtime.database(self.url)),
            Journal(self.journal_path),
            self.runtime.availability(self.url),
            name=self.name,
            batch_size=self.batch_size,
            buffer_items=self.buffer_items,
            backoff=self.backoff,
            close_timeout=self.close_timeout,
            on_written=self._count,
            inc=self.stats.inc_value,
            on_hold=self._hold,
        )
        self.losses.record_earlier()
        self.store.open()
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

    async def close_spider(self) -> None:
        if self._looping_call is not None and self._looping_call.running:
            self._looping_call.stop()
        self._looping_call = None
        self.flush()
        if self.store is not None:
            store, self.store = self.store, None
            await asyncio.to_thread(store.close)  # may wait for the database: never on the event loop
            self._hold(None)
            if store.lost:
                await self.losses.report(store.lost, store.lost_why)

    def flush(self) -> None:
        """Hand the buffered items to the writer as one batch."""
        if not self._buffer:
            return
        if self.store is None:
            raise RuntimeError("StorePipeline.flush() before open_spider()")
        batch, self._buffer = self._buffer, []
        try:
            self.store.submit(batch)
        except BaseException:
            self._buffer[:0] = batch  # not handed over: kept for the next flush
            raise

    def _periodic_flush(self) -> None:
        """The looping call's flush: an exception is logged (once with its traceback, later at DEBUG) and the loop
        goes on — Scrapy's looping call would stop for good after one."""
        try:
            self.flush()
        except Exception:
            if self._flush_failed:
                logger.debug("[%s] the periodic flush failed again", self.name, exc_info=True)
                return
            self._flush_failed = True
            logger.exception(
                "[%s] the store's periodic flush failed; it goes on every %g s (the items stay for the next flush; "
                "later failures are logged at DEBUG)",
                self.name,
                self.flush_seconds,
            )

    def _hold(self, why: str | None) -> None:
        """The writer's hold (its thread): the engine takes no new topic while ``why`` is set."""
        if self.state is not None:
            self.state.held = why

    def _count(self, result: WriteResult) -> None:
        """The writer's thread: what a write added (only these stats keys are set from it)."""
        for name, counts in (
            ("items_stored", result.items),
            ("new_events", result.new_events),
            ("new_news", result.new_news),
        ):
            for engine, count in counts.items():
                self.stats.inc_value(f"topicstreams/{engine}/{name}", count)
        logger.debug("Stored %s", result.totals())
        if result.event_keys and self.signals is not None:
            self._announce(EventsStored(self.name, tuple(result.event_keys), result.written_at or utcnow()))

    def _announce(self, stored: EventsStored) -> None:
        """The writer's thread: send :data:`~topicstreams.crawl.signals.events_stored` on the crawl's event loop (in
        this thread when the pipeline runs without one)."""
        loop = self._loop
        if loop is None:
            self._send(stored)
            return
        try:
            loop.call_soon_threadsafe(self._send, stored)
        except RuntimeError:  # the loop is closed: the process is ending, nobody is left to listen
            logger.debug("Not announcing %d stored events: the event loop is closed", len(stored.keys))

    def _send(self, stored: EventsStored) -> None:
        assert self.signals is not None
        self.signals.send_catch_log(signal=events_stored, stored=stored)

    def _start_periodic_flush(self) -> None:
        try:
            self._looping_call = create_looping_call(self._periodic_flush)
        except RuntimeError:
            # Neither a reactor nor an asyncio loop (the pipeline driven by hand): batches are
            # still written when full and on close.
            logger.debug("No event loop: the store flushes only full batches and on close")
            return
        self._looping_call.start(self.flush_seconds, now=False)
