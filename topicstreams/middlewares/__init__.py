"""The downloader middlewares of the engine spiders: pacing (floor, jitter, bench, probe) and blocks (classify).

They act on an engine's results-page requests only (``topicstreams_engine`` in their meta, see
:mod:`topicstreams.crawl.meta`); a page's own assets are the browser's business.
"""

from __future__ import annotations

from scrapy import Request
from scrapy.crawler import Crawler

from topicstreams.crawl import meta as keys
from topicstreams.crawl.engine_state import EngineState, RouteLane
from topicstreams.crawl.runtime import Runtime
from topicstreams.engines.reader import PageReader


def is_engine_request(request: Request) -> bool:
    """Whether a request is an engine's results page."""
    return bool(request.meta.get(keys.ENGINE))


class EngineMiddleware:
    """What both middlewares share: built from the crawler, the state of its engine, its stats."""

    def __init__(self, crawler: Crawler) -> None:
        self.crawler = crawler
        self.runtime = Runtime.of(crawler)

    @classmethod
    def from_crawler(cls, crawler: Crawler):
        return cls(crawler)

    @property
    def state(self) -> EngineState:
        return self.runtime.engine_state(self.crawler)

    def lane(self, request: Request) -> RouteLane:
        """The pacing lane of a results page's request: its route's (``topicstreams_route``), else the engine's
        first (a request made without one, as a test's may be)."""
        state = self.state
        route = request.meta.get(keys.ROUTE)
        return state.lane(route) if route else next(iter(state.lanes.values()))

    def route_stat(self, route: str, key: str, count: int = 1) -> None:
        """Add to ``topicstreams/<engine>/route/<route>/<key>`` (CONTRACT "Routes")."""
        self.crawler.stats.inc_value(f"topicstreams/{self.state.engine}/route/{route}/{key}", count)

    def stat(self, key: str, count: int = 1) -> None:
        self.crawler.stats.inc_value(f"topicstreams/{self.state.engine}/{key}", count)

    @property
    def reader(self) -> PageReader:
        """The crawl's one engine object: the engine spider's page reader, never one of their own (only an engine
        spider sends the requests these middlewares act on)."""
        return self.crawler.spider.reader
