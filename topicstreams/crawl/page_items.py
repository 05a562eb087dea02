"""A results page's items, from the one reading of it the blocks middleware made, and the ``page_parsed`` signal.

The blocks middleware reads each page once (:class:`~topicstreams.engines.reader.PageReader`) and hands the
:class:`~topicstreams.engines.reader.Reading` on in the request's meta (:data:`topicstreams.crawl.meta.READING`);
:class:`PageItems` turns it into :class:`~topicstreams.engines.items.NewsItem` s of the topic, never reading the
page again. Result times it could not read count as ``topicstreams/<engine>/times_unparsed``; a reader that
raises makes the page an ``error`` (``parse error: …``), never an exception in the spider's loop. Each page sends
``page_parsed`` (its items, the valid ones among them, what they lack, a parse error).
"""

from __future__ import annotations

import logging
from collections import Counter
from typing import Any

from scrapy.http import Response

from topicstreams.crawl import meta as keys
from topicstreams.crawl.signals import PageParsed, page_parsed
from topicstreams.engines.classify import Verdict, parse_error
from topicstreams.engines.items import NewsItem, missing_fields
from topicstreams.engines.reader import ItemsOfPage, PageReader, Reading


class PageItems:
    """Turns the readings of an engine's pages into items, with ``reader`` (the crawl's)."""

    def __init__(self, crawler: Any, reader: PageReader, logger: logging.LoggerAdapter) -> None:
        self.crawler = crawler
        self.reader = reader
        self.logger = logger

    def of(self, response: Response, *, topic: str, number: int) -> tuple[Verdict, list[NewsItem]]:
        """The verdict and the items of ``response``, page ``number`` of ``topic``, from its reading in meta."""
        reading: Reading = response.meta[keys.READING]
        verdict = reading.verdict
        try:
            built = self.reader.items(reading, topic=topic, number=number)
        except Exception as exc:  # a parser bug must not stall the topic loop
            self.logger.exception("could not parse %s", response.url)
            verdict, built = parse_error(exc), ItemsOfPage([], [])
        engine = self.reader.engine.name
        for time_text, timestamp in built.unparsed_times:
            self.crawler.stats.inc_value(f"topicstreams/{engine}/times_unparsed")
            self.logger.debug("unparsed time %r / %r on %s", time_text, timestamp, response.url)
        lacking = [missing_fields(item) for item in built.items]
        self.crawler.signals.send_catch_log(
            signal=page_parsed,
            outcome=PageParsed(
                response.meta.get(keys.CLASSIFICATION),
                items=len(built.items),
                valid_items=lacking.count([]),
                error=verdict.reason if verdict.parse_failed else None,
                missing=dict(Counter(name for names in lacking for name in names)),
            ),
        )
        return verdict, built.items
