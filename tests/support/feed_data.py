"""What the web app's tests share: a database filled by the real store pipeline, the app on it (test client),
and the app served by a real uvicorn on a free loopback port.

``store(url, items)`` runs items through the project's own NormalizePipeline and StorePipeline (one batch per
call, so each call is one ``first_seen_at``), as a crawl does.
"""

from __future__ import annotations

import asyncio
import tempfile
import threading
import time
from collections.abc import Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import uvicorn
from fastapi.testclient import TestClient
from scrapy import Spider
from scrapy.utils.test import get_crawler

from tests.support.ports import free_port
from topicstreams import settings as project_settings
from topicstreams.engines.items import NewsItem
from topicstreams.pipelines.normalize import NormalizePipeline
from topicstreams.pipelines.store import StorePipeline
from topicstreams.storage import make_database, upgrade
from topicstreams.web.app import WebSettings, create_app

BASE_URL = "http://127.0.0.1"
"""The test client's base: the app answers its own (loopback) names only."""


class _FeedSpider(Spider):
    name = "feed-tests"


def article(
    n: int | str,
    topic: str = "climate",
    engine: str = "google",
    *,
    title: str | None = None,
    source: str | None = "Example News",
    snippet: str | None = "Something happened.",
    url: str | None = None,
    published_at: datetime | None = None,
) -> NewsItem:
    """One engine's result *n* for *topic*, as a spider yields it (before normalization)."""
    return NewsItem(
        url=url or f"https://news.example/{n}",
        title=title if title is not None else f"Story {n}",
        source=source,
        snippet=snippet,
        published_at=published_at or datetime(2026, 11, 30, 12, 0, tzinfo=UTC),
        topic=topic,
        engine=engine,
        rank=1,
        fetched_at=datetime.now(UTC),
    )


def store(url: str, items: Iterable[NewsItem]) -> None:
    """Normalize and store *items* in one batch through the project's pipelines."""
    with tempfile.TemporaryDirectory(prefix="topicstreams-journal-") as journal:
        crawler = get_crawler(
            _FeedSpider,
            {
                **{
                    name: getattr(project_settings, name)
                    for name in dir(project_settings)
                    if name.startswith("TOPICSTREAMS_STORE_")
                },
                "TOPICSTREAMS_DATABASE_URL": url,
                "TOPICSTREAMS_STORE_BATCH_SIZE": 100_000,
                "TOPICSTREAMS_STORE_BUFFER_ITEMS": 100_000,
                "TOPICSTREAMS_STORE_FLUSH_SECONDS": 0,
                "TOPICSTREAMS_ENGINES": {},
                "TOPICSTREAMS_JOURNAL_DIR": journal,
                "EXTENSIONS": {"topicstreams.extensions.schema_upgrade.SchemaExtension": 0},
            },
        )
        normalize = NormalizePipeline.from_crawler(crawler)
        pipeline = StorePipeline.from_crawler(crawler)
        pipeline.open_spider()
        for item in items:
            pipeline.process_item(normalize.process_item(item))
        # Closing waits for the store's thread: in an event loop of its own (a test's browser may run one here).
        with ThreadPoolExecutor(1) as closer:
            closer.submit(asyncio.run, pipeline.close_spider()).result()
        if pipeline.journal_path.stat().st_size:
            raise RuntimeError(f"the feed's items could not all be stored into {url}: see the log")


# A small feed whose every topic × engine view is known: which engines found each story, batch by batch (each
# store() call is one first_seen_at), oldest first.
BATCHES = [
    [("c1", "climate", "google")],
    [("e1", "energy", "google"), ("c1", "climate", "bing")],
    [("c2", "climate", "yahoo")],
    [("e2", "energy", "bing")],
    [("s1", "space", "yahoo"), ("e2", "energy", "brave")],
    [("c3", "climate", "brave"), ("c1", "climate", "brave")],
]
STORIES = {
    "c1": ("climate", {"google", "bing", "brave"}),
    "c2": ("climate", {"yahoo"}),
    "c3": ("climate", {"brave"}),
    "e1": ("energy", {"google"}),
    "e2": ("energy", {"bing", "brave"}),
    "s1": ("space", {"yahoo"}),
}
NEWEST_FIRST = ["c3", "s1", "e2", "c2", "e1", "c1"]  # by the batch that first stored each story


def store_stories(url: str) -> str:
    """The stories of BATCHES (titled ``Story <n>``) stored batch by batch into *url*."""
    for batch in BATCHES:
        store(url, [article(n, topic, engine, title=f"Story {n}") for n, topic, engine in batch])
    return url


def expected_stories(topics=(), engines=()) -> list[str]:
    """The stories the view of *topics* × *engines* shows, newest first."""
    return [
        n
        for n in NEWEST_FIRST
        if (not topics or STORIES[n][0] in topics) and (not engines or STORIES[n][1] & set(engines))
    ]


def nid(n: int | str) -> str:
    """The news id of ``article(n)``."""
    from topicstreams.engines.news_urls import news_id, normalize_url

    return news_id(normalize_url(f"https://news.example/{n}"))


def fresh_database(url: str) -> str:
    """*url* with the schema (a fresh file or database)."""
    upgrade(url)
    return url


def client(url: str, page_size: int = 50) -> TestClient:
    """The app on *url* through Starlette's test client (as http://127.0.0.1)."""
    return TestClient(create_app(WebSettings(url, page_size=page_size)), base_url=BASE_URL)


@dataclass
class RunningApp:
    url: str
    """The app's base URL, ``http://127.0.0.1:PORT``."""
    server: uvicorn.Server


@contextmanager
def serving(database_url: str, page_size: int = 50, **settings: Any) -> Iterator[RunningApp]:
    """The app on a real uvicorn server, on a free loopback port, in a thread; stopped on exit. ``settings`` are
    more :class:`~topicstreams.web.app.WebSettings` fields (``admin_token``, ``sla``, …)."""
    port = free_port()
    settings = WebSettings(database_url, port=port, page_size=page_size, **settings)
    server = uvicorn.Server(uvicorn.Config(create_app(settings), host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, name=f"uvicorn-{port}", daemon=True)
    thread.start()
    deadline = time.monotonic() + 15
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError(f"uvicorn did not start on port {port}")
        time.sleep(0.02)
    try:
        yield RunningApp(f"http://127.0.0.1:{port}", server)
    finally:
        server.should_exit = True
        thread.join(timeout=10)


def write_rows(url: str, rows: Iterable[dict]) -> None:
    """Store rows ``{news_id, url, topic, engine, title, source, snippet, published_at}`` with the project's
    writer as they are, unnormalized: what another writer (or an older version) may have left in the database."""
    from topicstreams.storage import NewsWriter

    db = make_database(url)
    try:
        NewsWriter(db).write(list(rows))
    finally:
        db.dispose()
