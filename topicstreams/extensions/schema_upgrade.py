"""The one owner of the database schema in a crawl: it brings the database to the latest revision at start.

A Scrapy extension, built with the crawler before its spider, middlewares and pipelines, so every other
component finds the schema in place. In one process (``scrapy crawlall`` runs four crawlers) the upgrade of a
database runs once (:meth:`~topicstreams.crawl.runtime.Runtime.upgrade_once`): the other crawlers find it done. The
upgrade itself is safe against other processes upgrading the same database at the same moment.

A damaged database file stops the crawl before it starts: one ERROR in the words of
:func:`~topicstreams.storage.damage_notice.damage_message`, then
:class:`~topicstreams.storage.damage_notice.DatabaseDamaged` (the project's ``crawl`` and ``crawlall`` commands refuse
such a file earlier, in one line and exit 1).

Disabled (``NotConfigured``) when ``TOPICSTREAMS_DATABASE_URL`` is empty: nothing is stored then.
"""

from __future__ import annotations

import logging

from scrapy.crawler import Crawler
from scrapy.exceptions import NotConfigured

from topicstreams.crawl.runtime import Runtime
from topicstreams.storage.damage_notice import DatabaseDamaged
from topicstreams.storage.failures import damaged_file

logger = logging.getLogger(__name__)


class SchemaExtension:
    def __init__(self, url: str) -> None:
        self.url = url

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> SchemaExtension:
        url = (crawler.settings.get("TOPICSTREAMS_DATABASE_URL") or "").strip()
        if not url:
            raise NotConfigured("TOPICSTREAMS_DATABASE_URL is empty: nothing is stored")
        try:
            Runtime.of(crawler).upgrade_once(url)
        except Exception as exc:
            said = damaged_file(exc)
            if said is None:
                raise
            damaged = DatabaseDamaged(url, said)
            logger.error("Not crawling: %s", damaged)
            raise damaged from None
        return cls(url)
