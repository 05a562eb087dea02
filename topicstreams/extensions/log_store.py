"""The stored logs of a crawl: its WARNING-and-above records and its per-window INFO lines, kept in ``scraper_logs``
for ``/logs`` and ``GET /api/logs``.

A Scrapy extension (``TOPICSTREAMS_LOGS_ENABLED``, on by default; ``NotConfigured`` when it is off or when
``TOPICSTREAMS_DATABASE_URL`` is empty). It installs one :class:`StoredLogHandler` on the root logger per process
and database: ``crawlall`` runs four crawlers in one process, and they share it (reference-counted: the first
crawler to open installs it, the last to close flushes it and takes it off). The handler keeps:

* every record at WARNING or above, and every record logged with ``extra=STORED``
  (:data:`topicstreams.extensions.timing.STORED`: the cycle accounting's per-window INFO line), whatever its level;
* never a record of the ``apprise`` logger or its children, whatever its level: that notification library prints
  the URLs it notifies, tokens and all, at debug level, and its errors may carry them too;
* never a record of the log store itself (:mod:`topicstreams.storage.log_records`), nor one logged on its writing
  thread:
  writing a log can never make a log to write.

Each record is stored with this node's id (``node.id``), its engine — the ``spider`` Scrapy puts on
its records, else a logger named like an engine (a spider's own logger is named after it), else a message
starting ``[engine]`` (the project's own lines), else none — its level name, its logger's name and its message
with its traceback, masked (:mod:`topicstreams.config.secrets`, with the configuration's secrets).

Emitting is cheap, on whatever thread logs: the flood cap is asked first (a refused record is not even
formatted), then the record is formatted, masked and appended to the sink's queue; the sink's own thread writes
the batches (:class:`~topicstreams.storage.log_records.LogSink`: batches, the database away and back, the flood's
summary, the purge after ``scraper.retention_days``).

Stats (on close, each crawler's): ``topicstreams/logs/stored`` and ``topicstreams/logs/dropped``, what the
process stored and dropped while that crawler ran (in ``crawlall`` the four crawlers share the process's records).
"""

from __future__ import annotations

import asyncio
import logging
import re
import threading
from dataclasses import dataclass

from scrapy import Spider, signals
from scrapy.crawler import Crawler
from scrapy.exceptions import NotConfigured

from topicstreams import ENGINES
from topicstreams.config.loading import load_config
from topicstreams.config.secrets import Masker
from topicstreams.config.setting_names import sections_from
from topicstreams.crawl.runtime import Runtime
from topicstreams.extensions.timing import STORED_LINE, wall
from topicstreams.storage import log_records as stored_logs
from topicstreams.storage.log_records import LogSink, clip, level_name

logger = logging.getLogger(__name__)

STATS_PREFIX = "topicstreams/logs/"

NEVER_STORED = ("apprise", stored_logs.__name__)
"""Loggers (with their children) whose records are never stored, whatever their level (see the module docstring)."""

_ENGINE_PREFIX = re.compile(r"\[({})\]".format("|".join(ENGINES)))


def never_stored(name: str) -> bool:
    """Whether the records of the logger *name* stay out of the store."""
    return any(name == root or name.startswith(root + ".") for root in NEVER_STORED)


def engine_of(record: logging.LogRecord, message: str) -> str | None:
    """The engine a record is about (see the module docstring), or None."""
    name = getattr(getattr(record, "spider", None), "name", None)
    if name in ENGINES:
        return name
    tail = record.name.rpartition(".")[2]
    if tail in ENGINES:
        return tail
    found = _ENGINE_PREFIX.match(message)
    return found[1] if found else None


class StoredLogHandler(logging.Handler):
    """Hands the records worth keeping to a :class:`~topicstreams.storage.log_records.LogSink` (see the module
    docstring).

    ``handle`` is overridden so that a record not kept costs a few attribute reads, without the handler's lock:
    Scrapy lets every DEBUG record of every library reach the root logger's handlers."""

    def __init__(self, sink: LogSink, node: str, masker: Masker) -> None:
        super().__init__(logging.NOTSET)
        self.sink = sink
        self.node = node
        self.masker = masker
        self.setFormatter(logging.Formatter("%(message)s"))
        self._local = threading.local()

    @staticmethod
    def wanted(record: logging.LogRecord) -> bool:
        """Whether the record is one to keep: its level or mark, and its logger."""
        return (record.levelno >= logging.WARNING or getattr(record, STORED_LINE, False)) and not never_stored(
            record.name
        )

    def handle(self, record: logging.LogRecord) -> bool:
        if not self.wanted(record):
            return False
        if threading.get_ident() == self.sink.thread_ident or getattr(self._local, "busy", False):
            return False  # logged while writing, or while handling a record: never fed back
        self._local.busy = True
        try:
            if self.sink.admit():
                self.emit(record)
        except Exception:  # a log that cannot be stored must never break the code that logged it
            self.sink.count_dropped()
        finally:
            self._local.busy = False
        return True

    def emit(self, record: logging.LogRecord) -> None:
        message = self.format(record)
        self.sink.put(
            {
                "at": wall(record.created),
                "node": self.node,
                "engine": engine_of(record, message),
                "level": level_name(record.levelno),
                "logger": clip(record.name)[:255],
                "message": clip(self.masker.mask(message)),
            }
        )


@dataclass
class Installed:
    """The process's handler of one database (None while no crawler uses it) and how many crawlers use it."""

    lock: threading.Lock
    handler: StoredLogHandler | None = None
    users: int = 0


def installed_for(runtime: Runtime, url: str) -> Installed:
    """The process's handler of the database at *url* and its count of users, kept in the process's runtime."""
    return runtime.shared((Installed, url), lambda: Installed(threading.Lock()))


def acquire(runtime: Runtime, url: str, node: str, secrets: list[str], retention_days: float) -> StoredLogHandler:
    """The process's handler of the database at *url*, installed on the root logger by its first user."""
    found = installed_for(runtime, url)
    with found.lock:
        if found.handler is None:
            sink = LogSink(url, node, retention_days=retention_days, db=runtime.database(url))
            sink.start()
            found.handler = StoredLogHandler(sink, node, Masker(secrets))
            logging.getLogger().addHandler(found.handler)
        found.users += 1
        return found.handler


def release(runtime: Runtime, url: str) -> StoredLogHandler | None:
    """One user fewer; the last one takes the handler off the root logger and gets it back to close its sink
    (None while others still use it)."""
    found = installed_for(runtime, url)
    with found.lock:
        handler = found.handler
        if handler is None:
            return None
        found.users -= 1
        if found.users > 0:
            return None
        found.handler = None
    logging.getLogger().removeHandler(handler)
    return handler


class LogStoreExtension:
    def __init__(self, crawler: Crawler, url: str, node: str, secrets: list[str], retention_days: float) -> None:
        self.crawler = crawler
        self.url = url
        self.node = node
        self.secrets = secrets
        self.retention_days = retention_days
        self.handler: StoredLogHandler | None = None
        self.counts_at_open = (0, 0)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> LogStoreExtension:
        settings = crawler.settings
        if not settings.getbool("TOPICSTREAMS_LOGS_ENABLED"):
            raise NotConfigured("TOPICSTREAMS_LOGS_ENABLED is off")
        url = (settings.get("TOPICSTREAMS_DATABASE_URL") or "").strip()
        if not url:
            raise NotConfigured("TOPICSTREAMS_DATABASE_URL is empty: nowhere to keep the logs")
        sections = sections_from(settings)
        extension = cls(
            crawler,
            url,
            sections.node.id,
            load_config(settings).secrets(),
            sections.scraper.retention_days,
        )
        crawler.signals.connect(extension.spider_opened, signal=signals.spider_opened)
        crawler.signals.connect(extension.spider_closed, signal=signals.spider_closed)
        return extension

    def spider_opened(self, spider: Spider | None = None) -> None:
        self.handler = acquire(Runtime.of(self.crawler), self.url, self.node, self.secrets, self.retention_days)
        sink = self.handler.sink
        self.counts_at_open = (sink.stored, sink.dropped)

    async def spider_closed(self, spider: Spider | None = None, reason: str = "") -> None:
        """Write what this crawl logged (off the event loop); the last crawler of the process closes the sink."""
        if self.handler is None:
            return
        sink = self.handler.sink
        last = release(Runtime.of(self.crawler), self.url)
        if last is not None:
            written = await asyncio.to_thread(sink.close)
        else:
            written = await asyncio.to_thread(sink.flush)
        self.handler = None
        stored, dropped = self.counts_at_open
        self.crawler.stats.set_value(f"{STATS_PREFIX}stored", sink.stored - stored)
        self.crawler.stats.set_value(f"{STATS_PREFIX}dropped", sink.dropped - dropped)
        if not written:
            logger.warning(
                "The last log records were not stored: the database did not take them in time (%d "
                "record(s) not stored while this crawl ran)",
                sink.dropped - dropped,
            )
