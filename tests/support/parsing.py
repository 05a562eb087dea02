"""Engine pages read without a crawl: a page reader as a crawl builds it, its reading of a response, and an engine
spider ready to turn readings into items."""

from __future__ import annotations

from scrapy.utils.test import get_crawler

from topicstreams.browser.tabs import EngineTab
from topicstreams.config.route_table import DEFAULT_ROUTE
from topicstreams.crawl.cooldown import CooldownPolicy
from topicstreams.crawl.engine_state import EngineState
from topicstreams.crawl.page_items import PageItems
from topicstreams.crawl.topic_run import Lane
from topicstreams.engines import engine_class
from topicstreams.engines.reader import Page, PageReader

NO_COOLDOWN = CooldownPolicy(0, 1, 0)


def parsing_reader(engine: str, base_url: str, freshness: str = "hour") -> PageReader:
    """An engine's page reader, as a crawl builds it (the fake engines' 127.0.0.1 as a redirector host)."""
    return PageReader(engine_class(engine)(base_url, freshness), {"127.0.0.1"})


def reading_of(reader: PageReader, response, number: int = 0, fetched_at=None):
    """The reader's reading of a Scrapy response (as the blocks middleware makes it)."""
    return reader.read(
        Page(response.url, response.status, response.text, response.headers.to_unicode_dict(), number), fetched_at
    )


def parsing_spider(spider_class, base_url: str, freshness: str = "hour"):
    """An engine spider ready to turn readings into items without a crawl (no profile, no browser)."""
    spider = spider_class()
    spider._set_crawler(get_crawler(spider_class))
    spider.reader = parsing_reader(spider.name, base_url, freshness)
    spider.page_items = PageItems(spider.crawler, spider.reader, spider.logger)
    spider.lanes = [
        Lane(
            DEFAULT_ROUTE,
            EngineState(spider.name, floor=0, jitter_ratio=0, cooldown=NO_COOLDOWN).lane(DEFAULT_ROUTE),
            EngineTab(spider.name, {}),
        )
    ]
    spider.max_pages = 1
    return spider
