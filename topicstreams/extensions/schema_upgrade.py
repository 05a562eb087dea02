"""The one owner of the database schema in a crawl: it brings the database to the latest revision at start.

A Scrapy extension, built with the crawler before its spider, middlewares and pipelines, so every other
component finds the schema in place. In one process (``scrapy crawlall`` runs four crawlers) the upgrade of a
database runs once (:meth:`~topicstreams.crawl.runtime.Runtime.upgrade_once`): the other crawlers find it done. The
upgrade itself is safe against other processes upgrading the same database at the same moment.

Disabled (``NotConfigured``) when ``TOPICSTREAMS_DATABASE_URL`` is empty: nothing is stored then.
"""

from __future__ import annotations

from scrapy.crawler import Crawler
from scrapy.exceptions import NotConfigured

from topicstreams.crawl.runtime import Runtime


class SchemaExtension:
    def __init__(self, url: str) -> None:
        self.url = url

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> SchemaExtension:
        url = (crawler.settings.get("TOPICSTREAMS_DATABASE_URL") or "").strip()
        if not url:
            raise NotConfigured("TOPICSTREAMS_DATABASE_URL is empty: nothing is stored")
        Runtime.of(crawler).upgrade_once(url)
        return cls(url)
