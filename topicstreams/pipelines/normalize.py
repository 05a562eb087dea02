"""The normalize pipeline: each item's URL normalized (:mod:`topicstreams.engines.news_urls`), its ``news_id`` set, its
text cleaned."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, NoReturn

from itemadapter import ItemAdapter
from scrapy.exceptions import DropItem

from topicstreams.engines.news_urls import engine_hosts, news_id, normalize_url

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.statscollectors import StatsCollector

MEANINGLESS_CHARACTERS = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\ud800-\udfff\ufffe\uffff]")
"""Characters scraped text may carry that mean nothing to a reader and that a store may refuse."""


class NormalizePipeline:
    """Normalizes each item's URL, sets its ``news_id`` and cleans its text fields: surrounding white space, and
    characters no text means (control characters but tab and line breaks, lone surrogates, non-characters), which
    would make a database refuse the whole batch (PostgreSQL stores no NUL; no database encodes a lone surrogate).

    Drops (``DropItem``) items without a URL or a title, and items whose URL cannot be
    normalized, counting them under ``topicstreams/<engine>/items_dropped``.
    """

    TEXT_FIELDS = ("title", "source", "snippet")

    def __init__(self, stats: StatsCollector, redirector_hosts: Iterable[str] = ()) -> None:
        self.stats = stats
        self.redirector_hosts = frozenset(redirector_hosts)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> NormalizePipeline:
        engines = crawler.settings.getdict("TOPICSTREAMS_ENGINES")
        return cls(crawler.stats, engine_hosts(engines))

    def process_item(self, item: Any) -> Any:
        adapter = ItemAdapter(item)
        engine = adapter.get("engine") or "unknown"
        for field in self.TEXT_FIELDS:
            value = adapter.get(field)
            if isinstance(value, str):
                adapter[field] = MEANINGLESS_CHARACTERS.sub("", value).strip()
        url = adapter.get("url")
        if not isinstance(url, str) or not url.strip():
            self._drop(engine, f"Item without a URL from {engine}: {adapter.get('title')!r}")
        if not adapter.get("title"):
            self._drop(engine, f"Item without a title from {engine}: {url!r}")
        try:
            normalized = normalize_url(url, self.redirector_hosts)
        except ValueError as exc:
            self._drop(engine, f"Item with a bad URL from {engine}: {exc}")
        adapter["url"] = normalized
        adapter["news_id"] = news_id(normalized)
        return item

    def _drop(self, engine: str, message: str) -> NoReturn:
        self.stats.inc_value(f"topicstreams/{engine}/items_dropped")
        raise DropItem(message)
