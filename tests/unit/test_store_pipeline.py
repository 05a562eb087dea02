"""StorePipeline through a Scrapy crawler, on real SQLite files."""

from __future__ import annotations

import asyncio
import logging
import sqlite3
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest
from scrapy import Spider
from scrapy.exceptions import NotConfigured
from scrapy.utils.reactor import is_reactor_installed
from scrapy.utils.test import get_crawler

from topicstreams import settings as project_settings
from topicstreams.engines.items import NewsItem
from topicstreams.engines.news_urls import news_id
from topicstreams.pipelines.store import StorePipeline


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


SCHEMA = {"topicstreams.extensions.schema_upgrade.SchemaExtension": 0}
"""The one component that upgrades the database in a crawl (the project's settings have it; get_crawler's do not)."""


def count(db: Path, table: str) -> int:
    with sqlite3.connect(db) as conn:
        return conn.execute(f"select count(*) from {table}").fetchone()[0]


def store_settings(db: Path, **settings) -> dict:
    """The store's settings for a crawler made without the project's (get_crawler): the project's defaults, a
    journal folder beside the database."""
    defaults = {
        name: getattr(project_settings, name)
        for name in dir(project_settings)
        if name.startswith("TOPICSTREAMS_STORE_")
    }
    return {
        **defaults,
        "TOPICSTREAMS_DATABASE_URL": f"sqlite:///{db}",
        "EXTENSIONS": SCHEMA,
        "TOPICSTREAMS_JOURNAL_DIR": str(db.parent / "journal"),
        **settings,
    }


def make_pipeline(db: Path, **settings) -> tuple[StorePipeline, dict]:
    crawler = get_crawler(NewsSpider, store_settings(db, **settings))
    return StorePipeline.from_crawler(crawler), crawler.stats


def eventually(check, timeout: float = 10.0) -> None:
    """Wait until ``check()`` is true (the store writes in a thread of its own)."""
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "not within the timeout"
        time.sleep(0.02)


def close(pipeline: StorePipeline) -> None:
    asyncio.run(pipeline.close_spider())


def run(pipeline: StorePipeline, items: list, pause: float = 0) -> None:
    """open, process, (pause inside the event loop), close: as a crawl does."""

    async def crawl() -> None:
        pipeline.open_spider()
        for item in items:
            assert pipeline.process_item(item) is item
        if pause:
            await asyncio.sleep(pause)
        await pipeline.close_spider()

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
    close(pipeline)
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
    eventually(lambda: count(db, "news") == 4)
    eventually(lambda: stats.get_value("topicstreams/google/items_stored") == 4)
    close(pipeline)
    assert count(db, "news") == 5


def test_buffer_is_flushed_periodically(db: Path) -> None:
    pipeline, _ = make_pipeline(db, TOPICSTREAMS_STORE_FLUSH_SECONDS=0.05)
    seen: list[int] = []

    async def crawl() -> None:
        pipeline.open_spider()
        pipeline.process_item(news_item(1))
        await asyncio.sleep(0.3)
        seen.append(count(db, "news"))
        await pipeline.close_spider()

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


def test_a_write_that_can_pass_is_journaled_and_written_once_the_table_is_back(
    db: Path, caplog: pytest.LogCaptureFixture
) -> None:
    pipeline, stats = make_pipeline(
        db,
        TOPICSTREAMS_STORE_BATCH_SIZE=2,
        TOPICSTREAMS_STORE_FLUSH_SECONDS=0,
        TOPICSTREAMS_STORE_RETRY_INITIAL=0.05,
        TOPICSTREAMS_STORE_RETRY_MAX=0.1,
    )
    pipeline.open_spider()
    pipeline.process_item(news_item(1))
    pipeline.process_item(news_item(2))
    eventually(lambda: count(db, "news") == 2)
    with sqlite3.connect(db) as conn:  # the next batch cannot be written: "no such table" can pass (a fix)
        create = conn.execute("select sql from sqlite_master where name = 'topic_news_engines'").fetchone()[0]
        conn.execute("drop table topic_news_engines")
    with caplog.at_level(logging.INFO):
        pipeline.process_item(news_item(3))
        pipeline.process_item(news_item(4))
        eventually(lambda: stats.get_value("topicstreams/store/journaled") == 2)
        assert count(db, "news") == 2
        with sqlite3.connect(db) as conn:
            conn.execute(create)
        eventually(lambda: count(db, "news") == 4)
        close(pipeline)
    assert count(db, "topic_news_engines") == 2  # the two written before the table went away are gone with it
    assert stats.get_value("topicstreams/google/items_stored") == 4
    assert stats.get_value("topicstreams/store/buffered") == 2
    assert stats.get_value("topicstreams/store/replayed") == 2
    [away] = [r for r in caplog.records if "cannot be written" in r.getMessage()]
    assert away.levelno == logging.WARNING and "topic_news_engines" in away.getMessage()
    [back] = [r for r in caplog.records if "is back after" in r.getMessage()]
    assert back.levelno == logging.INFO and "2 items" in back.getMessage()
    assert not (db.parent / "journal" / "news.jsonl").read_bytes()


@pytest.mark.skipif(is_reactor_installed(), reason="runs a crawl without a reactor, in an asyncio loop")
def test_a_crawl_stores_its_items(db: Path) -> None:
    class ItemsSpider(Spider):
        name = "items"

        async def start(self):
            for n in range(30):
                yield news_item(n, engine=("google", "bing")[n % 2])

    crawler = get_crawler(
        ItemsSpider,
        store_settings(db, TOPICSTREAMS_STORE_BATCH_SIZE=8, ITEM_PIPELINES={StorePipeline: 300}),
    )
    asyncio.run(crawler.crawl_async())
    assert count(db, "news") == 30
    assert crawler.stats.get_value("topicstreams/google/items_stored") == 15
    assert crawler.stats.get_value("topicstreams/bing/new_events") == 15
