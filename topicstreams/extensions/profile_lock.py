"""Holds an engine's browser profile for the whole crawl: a second process for the same engine and profile stops.

A Scrapy extension, built with the crawler before the browser starts. The profile is
``browser.profile_dir/<node.id>/<engine>`` (``TOPICSTREAMS_PROFILE_PATH``, set by the add-on for an engine
crawler); the lock is released when the spider closes. The project's ``crawl`` and ``crawlall`` commands check
the lock before any crawler is made, so their refusal is one line; this is what holds it.

Disabled (``NotConfigured``) for a crawler that is not an engine's, and for one that is not crawling (a crawler
whose components are set up without a spider, as tests do).
"""

from __future__ import annotations

from pathlib import Path

from scrapy import signals
from scrapy.crawler import Crawler
from scrapy.exceptions import NotConfigured

from topicstreams.browser.chromium import ProfileLock


class ProfileLockExtension:
    def __init__(self, path: Path) -> None:
        self.lock = ProfileLock(path)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> ProfileLockExtension:
        path = crawler.settings.get("TOPICSTREAMS_PROFILE_PATH")
        if not path:
            raise NotConfigured("not an engine crawler: no browser profile to hold")
        if getattr(crawler, "spider", None) is None:
            # A crawler set up without a crawl (Scrapy makes the spider first when it crawls): no browser runs.
            # No reason given: Scrapy would log it as a WARNING, and nothing is amiss.
            raise NotConfigured
        extension = cls(Path(path))
        extension.lock.acquire()
        crawler.signals.connect(extension.spider_closed, signal=signals.spider_closed)
        return extension

    def spider_closed(self) -> None:
        self.lock.release()
