"""Test-only middlewares that make an engine's request never come back, as a real middleware or browser can.

Enabled by a crawl test through ``-s`` (the crawl subprocess runs with the repository on ``PYTHONPATH``):

* :class:`DropTopicsSpiderMiddleware` (``SPIDER_MIDDLEWARES``) drops the results-page requests of the topics in
  ``TEST_DROP_TOPICS`` from the spider's output without calling their errback, as Scrapy's ``UrlLengthMiddleware``
  does with a URL over ``URLLENGTH_LIMIT`` (an INFO line, nothing else);
* :class:`HoldTopicsDownloaderMiddleware` (``DOWNLOADER_MIDDLEWARES``, after pacing: above 950) holds the requests
  of the topics in ``TEST_HOLD_TOPICS`` for ``TEST_HOLD_SECONDS`` once pacing has let them go, then lets them on —
  a browser that loses a request for a while: the answer comes, late.
"""

from __future__ import annotations

import asyncio
import logging

from scrapy.spidermiddlewares.base import BaseSpiderMiddleware

from topicstreams.crawl import meta as keys

logger = logging.getLogger(__name__)


class DropTopicsSpiderMiddleware(BaseSpiderMiddleware):
    def __init__(self, crawler) -> None:
        super().__init__(crawler)
        self.topics = set(crawler.settings.getlist("TEST_DROP_TOPICS"))

    def get_processed_request(self, request, response):
        if request.meta.get(keys.TOPIC) in self.topics:
            logger.info("test middleware: dropping the request of topic %r (%s)", request.meta[keys.TOPIC], request.url)
            return None
        return request


class HoldTopicsDownloaderMiddleware:
    def __init__(self, crawler) -> None:
        self.topics = set(crawler.settings.getlist("TEST_HOLD_TOPICS"))
        self.seconds = crawler.settings.getfloat("TEST_HOLD_SECONDS")

    @classmethod
    def from_crawler(cls, crawler):
        return cls(crawler)

    async def process_request(self, request, spider=None):
        if request.meta.get(keys.TOPIC) in self.topics:
            logger.info(
                "test middleware: holding the request of topic %r for %g s", request.meta[keys.TOPIC], self.seconds
            )
            await asyncio.sleep(self.seconds)
