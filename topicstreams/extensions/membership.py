"""Membership: every crawl process tells the ``nodes`` table it is there, in either assignment (``scrapy nodes``).

One :class:`Membership` per process and database, shared by the crawlers of the process (``crawlall`` runs four):
its row is written when the first engine opens, every ``TOPICSTREAMS_NODE_HEARTBEAT`` seconds after (its engines, and
per engine the topics swept within the last scrape interval), and when the last engine closes — with the time of that
clean stop. A process that dies leaves its last heartbeat: ``scrapy nodes`` calls it stale. Writes run in the
membership's own thread, never on the reactor; a database that is away loses a heartbeat or two, nothing else.

Disabled with ``TOPICSTREAMS_MEMBERSHIP_ENABLED = False``.
"""

from __future__ import annotations

import logging
import os
import secrets
import socket
import threading
import time
from collections import defaultdict, deque
from collections.abc import Callable
from importlib import metadata

from scrapy import signals
from scrapy.crawler import Crawler
from scrapy.exceptions import NotConfigured
from sqlalchemy import Engine
from sqlalchemy.exc import SQLAlchemyError

from topicstreams.config.setting_names import sections_from
from topicstreams.crawl import signals as topicstreams_signals
from topicstreams.crawl.runtime import Runtime
from topicstreams.storage import node_rows as rows
from topicstreams.storage.failures import describe

logger = logging.getLogger(__name__)


def version() -> str:
    try:
        return metadata.version("topicstreams")
    except metadata.PackageNotFoundError:
        return "unknown"


PROCESS = f"{socket.gethostname()[:12]}-{os.getpid()}-{secrets.token_hex(3)}"
"""This process's token in the ``nodes`` table."""


class Membership:
    """This process's row of ``nodes`` (see the module docstring)."""

    def __init__(
        self,
        database_url: str,
        node: str,
        *,
        assignment: str,
        interval: float,
        heartbeat: float,
        database: Callable[[str], Engine],
        clock=time.monotonic,
    ) -> None:
        self.database_url = database_url
        self.database = database
        """Where its thread gets the database's handle (the process runtime's)."""
        self.node = node
        self.assignment = assignment
        self.interval = interval
        self.heartbeat = heartbeat
        self.clock = clock
        self.engines: dict[str, int] = defaultdict(int)
        """Engine -> its crawlers open in this process."""
        self.swept: dict[str, deque[tuple[float, str]]] = defaultdict(deque)
        self.lock = threading.Lock()
        self.stopping = threading.Event()
        self.thread: threading.Thread | None = None
        self.failing = False

    # ---- from the reactor ----------------------------------------------------------------------------
    def join(self, engine: str) -> None:
        with self.lock:
            self.engines[engine] += 1
            first = self.thread is None
            if first:
                self.stopping.clear()
                self.thread = threading.Thread(target=self.run, name="membership", daemon=True)
        if first:
            self.thread.start()

    def leave(self, engine: str) -> None:
        with self.lock:
            self.engines[engine] -= 1
            if self.engines[engine] <= 0:
                del self.engines[engine]
            thread = self.thread if not self.engines else None
            if thread is not None:
                self.thread = None
        if thread is not None:
            self.stopping.set()
            thread.join(timeout=10)

    def topic_swept(self, engine: str, topic: str) -> None:
        with self.lock:
            self.swept[engine].append((self.clock(), topic))

    def scraped(self) -> dict[str, int]:
        """Per engine of the process, the distinct topics swept within the last interval."""
        since = self.clock() - self.interval
        with self.lock:
            counts = {}
            for engine in sorted(set(self.engines) | set(self.swept)):
                recent = self.swept[engine]
                while recent and recent[0][0] < since:
                    recent.popleft()
                counts[engine] = len({topic for _, topic in recent})
            return counts

    # ---- in its own thread ---------------------------------------------------------------------------
    def run(self) -> None:
        self.write(rows.join, engines=self.current_engines(), version=version(), assignment=self.assignment)
        while not self.stopping.wait(self.heartbeat):
            self.write(rows.beat, engines=self.current_engines(), scraped=self.scraped())
        self.write(rows.stop, scraped=self.scraped())

    def current_engines(self) -> list[str]:
        with self.lock:
            return sorted(self.engines)

    def write(self, action, **values) -> None:
        try:
            action(self.database(self.database_url), node=self.node, process=PROCESS, **values)
        except SQLAlchemyError as exc:
            if not self.failing:
                logger.warning(
                    "could not write this node's row of the nodes table (%s); trying at the next heartbeat",
                    describe(exc),
                )
            self.failing = True
            return
        self.failing = False


def membership_for(crawler: Crawler) -> Membership:
    """The process's membership of the crawler's database and node, kept in the process's runtime."""
    settings = crawler.settings
    sections = sections_from(settings)
    url, node = sections.database.url, sections.node.id
    runtime = Runtime.of(crawler)
    return runtime.shared(
        (Membership, url, node),
        lambda: Membership(
            url,
            node,
            assignment=sections.scraper.assignment,
            interval=sections.scraper.scrape_interval,
            heartbeat=settings.getfloat("TOPICSTREAMS_NODE_HEARTBEAT"),
            database=runtime.database,
        ),
    )


class MembershipExtension:
    """Joins the engine's crawler to the process's :class:`Membership` while its spider runs."""

    def __init__(self, crawler: Crawler, membership: Membership) -> None:
        self.crawler = crawler
        self.membership = membership

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> MembershipExtension:
        settings = crawler.settings
        if not settings.getbool("TOPICSTREAMS_MEMBERSHIP_ENABLED"):
            raise NotConfigured("TOPICSTREAMS_MEMBERSHIP_ENABLED is off")
        engine = getattr(crawler.spidercls, "name", None)
        if not settings.get("TOPICSTREAMS_DATABASE_URL") or engine not in sections_from(settings).engines:
            raise NotConfigured("not an engine's crawl")
        extension = cls(crawler, membership_for(crawler))
        crawler.signals.connect(extension.spider_opened, signal=signals.spider_opened)
        crawler.signals.connect(extension.spider_closed, signal=signals.spider_closed)
        crawler.signals.connect(extension.topic_swept, signal=topicstreams_signals.topic_swept)
        return extension

    def spider_opened(self, spider) -> None:
        self.membership.join(spider.name)

    def spider_closed(self, spider) -> None:
        self.membership.leave(spider.name)

    def topic_swept(self, engine: str, topic: str) -> None:
        self.membership.topic_swept(engine, topic)
