"""StorePipeline through a Scrapy crawler, on real SQLite files."""

from __future__ import annotations

import asyncio
import logging
import sqlite3
from datetime import UTC, datetime
from pathlib import Path

import pytest
from scrapy import Spider
from scrapy.exceptions import NotConfigured
from scrapy.utils.reactor import is_reactor_installed
from scrapy.utils.test import get_crawler

from topicstreams import settings as project_settings
from topicstreams.items import NewsItem
from topicstreams.pipelines.store import StorePipeline
from topicstreams.urls import news_id


class NewsSpider(Spider):
    name = "news"


def news_item(n: int, engine: str = "google", topic: str = "climate") -> NewsItem:
    url = f"https://news.example/{n}"
    return NewsItem(
        url=url,
        title=f"Story {n}",
        source="Example News",
        snippet="Something happened.",
        published_at=datetime(2025, 3, 1, 12, n % 60, tzinfo=UTC),
        topic=topic,
        engine=engine,
        rank=n,
        fetched_at=datetime(2025, 3, 1, 13, 0, tzinfo=UTC),
        news_id=news_id(url),
    )


SCHEMA = {"topicstreams.extensions.schema.SchemaExtension": 0}
"""The one component that upgrades the database in a crawl (the project's settings have it; get_crawler's do not)."""


def count(db: Path, table: str) -> int:
    with sqlite3.connect(db) as conn:
        return conn.execute(f"select count(*) from {table}").fetchone()[0]


def make_pipeline(db: Path, **settings) -> tuple[StorePipeline, dict]:
    defaults = {"TOPICSTREAMS_STORE_BATCH_SIZE": project_settings.TOPICSTREAMS_STORE_BATCH_SIZE,
                "TOPICSTREAMS_STORE_FLUSH_SECONDS": project_settings.TOPICSTREAMS_STORE_FLUSH_SECONDS}
    crawler = get_crawler(NewsSpider, {**defaults, "TOPICSTREAMS_DATABASE_URL": f"sqlite:///{db}",
                                       "EXTENSIONS": SCHEMA, **settings})
    return StorePipeline.from_crawler(crawler), crawler.stats


def run(pipeline: StorePipeline, items: list, pause: float = 0) -> None:
    """open, process, (pause inside the event loop), close: as a crawl does."""

    async def crawl() -> None:
        pipeline.open_spider()
        for item in items:
            assert pipeline.process_item(item) is item
        if pause:
            await asyncio.sleep(pause)
        pipeline.close_spider()

    asyncio.run(crawl())


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "db" / "store.db"


def test_not_configured_without_a_database_url() -> None:
    with pytest.raises(NotConfigured):
        StorePipeline.from_crawler(get_crawler(NewsSpider, {"TOPICSTREAMS_DATABASE_URL": ""}))


def test_settings_are_read(db: Path) -> None:
    pipeline, _ = make_pipeline(db, TOPICSTREAMS_STORE_BATCH_SIZE="7", TOPICSTREAMS_STORE_FLUSH_SECONDS="0.5")
    assert (pipeline.batch_size, pipeline.flush_seconds) == (7, 0.5)


def test_items_are_flushed_on_close_and_counted(db: Path) -> None:
    pipeline, stats = make_pipeline(db, TOPICSTREAMS_STORE_FLUSH_SECONDS=0)
    pipeline.open_spider()  # the schema extension made the database with the crawler
    items = [news_item(1), news_item(2), news_item(1, engine="bing"), news_item(3, engine="bing")]
    for item in items:
        pipeline.process_item(item)
    assert count(db, "news") == 0
    pipeline.close_spider()
    assert (count(db, "news"), count(db, "topic_news"), count(db, "topic_news_engines")) == (3, 3, 4)
    assert stats.get_value("topicstreams/google/items_stored") == 2
    assert stats.get_value("topicstreams/bing/items_stored") == 2
    assert stats.get_value("topicstreams/google/new_events") == 2
    assert stats.get_value("topicstreams/bing/new_events") == 1


def test_full_batches_are_written_at_once(db: Path) -> None:
    pipeline, stats = make_pipeline(db, TOPICSTREAMS_STORE_BATCH_SIZE=2, TOPICSTREAMS_STORE_FLUSH_SECONDS=0)
    pipeline.open_spider()
    for n in range(5):
        pipeline.process_item(news_item(n))
    assert count(db, "news") == 4
    assert stats.get_value("topicstreams/google/items_stored") == 4
    pipeline.close_spider()
    assert count(db, "news") == 5


def test_buffer_is_flushed_periodically(db: Path) -> None:
    pipeline, _ = make_pipeline(db, TOPICSTREAMS_STORE_FLUSH_SECONDS=0.05)
    seen: list[int] = []

    async def crawl() -> None:
        pipeline.open_spider()
        pipeline.process_item(news_item(1))
        await asyncio.sleep(0.3)
        seen.append(count(db, "news"))
        pipeline.close_spider()

    asyncio.run(crawl())
    assert seen == [1]


def test_running_twice_adds_nothing(db: Path) -> None:
    items = [news_item(n, engine=engine) for n in range(20) for engine in ("google", "brave")]
    first, first_stats = make_pipeline(db)
    run(first, items)
    tables = ("news", "topic_news", "topic_news_engines")
    before = [count(db, table) for table in tables]
    assert before == [20, 20, 40]
    assert first_stats.get_value("topicstreams/google/new_events") == 20

    second, second_stats = make_pipeline(db)
    run(second, items)
    assert [count(db, table) for table in tables] == before
    assert second_stats.get_value("topicstreams/google/items_stored") == 20
    assert second_stats.get_value("topicstreams/brave/items_stored") == 20
    assert not second_stats.get_value("topicstreams/google/new_events")
    assert not second_stats.get_value("topicstreams/brave/new_events")


def test_an_unstorable_item_is_reported_and_passed_on(db: Path, caplog: pytest.LogCaptureFixture) -> None:
    pipeline, stats = make_pipeline(db)
    bad = news_item(2)
    bad["news_id"] = None
    with caplog.at_level(logging.ERROR, logger="topicstreams.pipelines.store"):
        run(pipeline, [news_item(1), bad])
    assert count(db, "news") == 1
    assert stats.get_value("topicstreams/google/items_invalid") == 1
    assert "missing news_id" in caplog.text


def test_a_failed_write_is_logged_and_keeps_what_was_stored(db: Path, caplog: pytest.LogCaptureFixture) -> None:
    pipeline, stats = make_pipeline(db, TOPICSTREAMS_STORE_BATCH_SIZE=2, TOPICSTREAMS_STORE_FLUSH_SECONDS=0)
    pipeline.open_spider()
    pipeline.process_item(news_item(1))
    pipeline.process_item(news_item(2))
    with sqlite3.connect(db) as conn:  # the next batch cannot be written
        conn.execute("drop table topic_news_engines")
    with caplog.at_level(logging.ERROR, logger="topicstreams.pipelines.store"):
        pipeline.process_item(news_item(3))
        pipeline.close_spider()
    assert count(db, "news") == 2
    assert stats.get_value("topicstreams/google/items_stored") == 2
    assert stats.get_value("topicstreams/google/items_failed") == 1
    [record] = [r for r in caplog.records if r.levelno == logging.ERROR]
    assert "Could not store 1 items" in record.getMessage()
    assert "topic_news_engines" in record.getMessage()


@pytest.mark.skipif(is_reactor_installed(), reason="runs a crawl without a reactor, in an asyncio loop")
def test_a_crawl_stores_its_items(db: Path) -> None:
    class ItemsSpider(Spider):
        name = "items"

        async def start(self):
            for n in range(30):
                yield news_item(n, engine=("google", "bing")[n % 2])

    crawler = get_crawler(
        ItemsSpider,
        {
            "TOPICSTREAMS_DATABASE_URL": f"sqlite:///{db}",
            "TOPICSTREAMS_STORE_BATCH_SIZE": 8,
            "ITEM_PIPELINES": {StorePipeline: 300},
            "EXTENSIONS": SCHEMA,
        },
    )
    asyncio.run(crawler.crawl_async())
    assert count(db, "news") == 30
    assert crawler.stats.get_value("topicstreams/google/items_stored") == 15
    assert crawler.stats.get_value("topicstreams/bing/new_events") == 15
