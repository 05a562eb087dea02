"""A real crawl of a news world: ``scrapy crawlall`` of Google and Bing in real Chromium against fake engines that
serve a :class:`~fake_engines.world.NewsWorld`, one continuous run into SQLite.

The world's clock stands still (speed 0), so what each engine shows is known in advance. Google and Bing each show
their own part of the topic's articles: what each stores overlaps the other's but differs. Once Bing's first round is
stored, Bing goes stale (over the control endpoint, as a test of alerts would): from then on it stores only yesterday's
articles, none of today's, dated a day back, while its pages still parse perfectly.
"""

from __future__ import annotations

import json
import signal
import sqlite3
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from fake_engines import FakeEngines, NewsWorld
from fake_engines.world import DAY
from tests.support.crawl_checks import crawl_config
from tests.support.fakes_http import fetch
from topicstreams.engines.news_urls import normalize_url

pytestmark = pytest.mark.timeout(90)

TOPIC = "alpha"
ORIGIN = 1_767_225_600.0
"""2026-01-01T00:00:00Z, the world's (frozen) time."""
INTERVAL = 8
"""Seconds between two rounds of an engine: room to turn Bing stale between its first round and its second."""


def stored(db: Path, engine: str) -> dict[str, tuple[datetime, datetime | None]]:
    """URL -> (the engine's first_seen_at, the article's published_at) of what ``engine`` stored; {} before the
    crawl made the database."""
    if not db.exists():
        return {}
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
            found = conn.execute(
                "select n.url, tne.first_seen_at, n.published_at from topic_news_engines tne "
                "join news n on n.id = tne.news_id where tne.engine = ?",
                (engine,),
            ).fetchall()
    except sqlite3.OperationalError:  # the schema is not there yet
        return {}
    return {url: (when(first), when(published) if published else None) for url, first, published in found}


def when(value: str) -> datetime:
    moment = datetime.fromisoformat(value)
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def wait_for(condition, process: subprocess.Popen, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert process.poll() is None, f"the crawl ended before {what}"
        assert time.monotonic() < deadline, f"no {what} within {timeout:g} s"
        time.sleep(0.2)


def test_two_engines_store_overlapping_parts_and_a_stale_one_only_yesterdays(scrapy_cmd, tmp_path):
    world = NewsWorld(speed=0, origin=ORIGIN)
    today = {article.url for article in world.topic_articles(TOPIC)}
    google_sees = {article.url for article in world.articles("google", TOPIC)}
    bing_sees = {article.url for article in world.articles("bing", TOPIC)}
    assert google_sees & bing_sees and google_sees - bing_sees and bing_sees - google_sees
    with FakeEngines(("google", "bing"), world=world) as fakes:
        config = crawl_config(
            tmp_path,
            fakes,
            floor=0.2,
            engines=("google", "bing"),
            scraper={"scrape_interval": INTERVAL, "max_pages": 3},
        )
        db = tmp_path / "news.db"
        process = subprocess.Popen(
            [sys.executable, "-m", "scrapy", "crawlall", "-a", f"topics={TOPIC}"],
            cwd=scrapy_cmd.folder,
            env={**scrapy_cmd.env, "TOPICSTREAMS_CONFIG": str(config)},
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            # Bing's first round: its pages read (one past a full last page, which repeats it) and stored
            pages = min(len(bing_sees) // 10 + 1, 3)
            wait_for(
                lambda: len(fakes.results_requests("bing")) >= pages and set(stored(db, "bing")) >= bing_sees,
                process,
                45,
                "first round of Bing stored",
            )
            status, _, body, _ = fetch(
                f"{fakes.base_url('google')}/__fakes__/world", data=json.dumps({"stale": "bing", "on": True}).encode()
            )
            switched = datetime.now(UTC)
            assert status == 200 and json.loads(body)["stale"] == ["bing"], body
            yesterday = {article.url for article in world.articles("bing", TOPIC)}
            wait_for(
                lambda: set(stored(db, "bing")) >= bing_sees | yesterday, process, 30, "stale round of Bing stored"
            )
            process.send_signal(signal.SIGINT)
            _, stderr = process.communicate(timeout=30)
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()
        bing_requests = fakes.results_requests("bing")
    assert process.returncode == 0, stderr[-3000:]
    assert "Traceback" not in stderr and "structural fallback" not in stderr, stderr[-3000:]

    google, bing = stored(db, "google"), stored(db, "bing")
    assert all(normalize_url(url) == url for url in google | bing)
    # each engine stored its part of today's articles: they overlap, but each has some the other lacks
    assert set(google) == google_sees  # every page, the JavaScript-added results too
    first_round = {url for url, (first, _) in bing.items() if first < switched}
    assert first_round == bing_sees
    assert google.keys() & first_round and google.keys() - first_round and first_round - google.keys()

    # stale, Bing found only yesterday's articles: none of today's, each published a day ago or more
    later = {url: published for url, (first, published) in bing.items() if first >= switched}
    assert set(later) == yesterday and yesterday and not yesterday & today and not yesterday & set(google)
    # Bing says "1 day ago" for ages of one to two days: a day before it was read, and read before now
    assert all(
        published is not None and published <= datetime.now(UTC) - timedelta(seconds=DAY)
        for published in later.values()
    ), later
    assert all(
        google_published and google_published > switched - timedelta(hours=3) for _, google_published in google.values()
    )
    assert len([entry for entry in bing_requests if entry["time"] < switched.timestamp()]) == pages
    assert all(entry["status"] == 200 and entry["step"] == "results" for entry in bing_requests)  # perfect pages
