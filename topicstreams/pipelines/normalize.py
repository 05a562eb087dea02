"""The normalize pipeline: each item's URL normalized (:mod:`topicstreams.engines.news_urls`), its ``news_id`` set,
its text cleaned (:func:`topicstreams.text.scraped_text.clean_text`)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, NoReturn

from itemadapter import ItemAdapter
from scrapy.exceptions import DropItem

from topicstreams.config.setting_names import sections_from
from topicstreams.engines.news_urls import engine_hosts, news_id, normalize_url
from topicstreams.engines.results import REQUIRED_TO_KEEP
from topicstreams.text.scraped_text import clean_text

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.statscollectors import StatsCollector

FIELD_NAMES = {"url": "a URL", "title": "a title"}
"""A required field, as the line of an item dropped without it names it."""


class NormalizePipeline:
    """Normalizes each item's URL, sets its ``news_id`` and cleans its text fields: surrounding white space, and
    characters no text means (control characters but tab and line breaks, lone surrogates, non-characters), which
    would make a database refuse the whole batch (PostgreSQL stores no NUL; no database encodes a lone surrogate),
    and the bidirectional embeddings, overrides and isolates (U+202A–U+202E, U+2066–U+2069) with which a title or a
    source would read other than it is.

    Drops (``DropItem``) items without a URL or a title (the fields the step requires,
    :data:`~topicstreams.engines.results.REQUIRED_TO_KEEP`: text with something in it), and items whose URL cannot
    be normalized, counting them under ``topicstreams/<engine>/items_dropped``.
    """

    TEXT_FIELDS = ("title", "source", "snippet")

    def __init__(self, stats: StatsCollector, redirector_hosts: Iterable[str] = ()) -> None:
        self.stats = stats
        self.redirector_hosts = frozenset(redirector_hosts)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> NormalizePipeline:
        engines = sections_from(crawler.settings).engines
        return cls(crawler.stats, engine_hosts({name: engine.base_url for name, engine in engines.items()}))

    def process_item(self, item: Any) -> Any:
        adapter = ItemAdapter(item)
        engine = adapter.get("engine") or "unknown"
        for field in self.TEXT_FIELDS:
            value = adapter.get(field)
            if isinstance(value, str):
                adapter[field] = clean_text(value)
        for name in REQUIRED_TO_KEEP:
            value = adapter.get(name)
            if not isinstance(value, str) or not value.strip():
                # the item named by its URL, or by its title when the URL is what it lacks
                named_by = adapter.get("title" if name == "url" else "url")
                self._drop(engine, f"Item without {FIELD_NAMES.get(name, name)} from {engine}: {named_by!r}")
        url = adapter["url"]
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
