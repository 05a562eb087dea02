"""The adaptive schedule in a real crawl: ``scrapy crawl google`` in real Chromium against a fake Google serving a
:class:`~fake_engines.world.NewsWorld` whose clock the test moves.

The world stands still but when the test advances it, so what each visit finds is known: a burst of 25 articles
overflows page one, and depth on demand reads pages two and three in the same visit and stores every article of the
burst; a burst of 45 overflows even three pages: a hole. The crawl then stops and starts again: the rates it learnt
are read back (its first visit after the restart is not a first visit, so it follows a burst at once). The same
world under ``scraper.schedule: fixed`` reads page one only, as it always did, and counts the hole.
"""

from __future__ import annotations

import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from fake_engines import FakeEngines, NewsWorld
from tests.support.crawl_checks import crawl_config
from topicstreams.engines.news_urls import normalize_url

pytestmark = pytest.mark.timeout(120)

TOPIC = "alpha"
ORIGIN = 1_767_225_600.0
"""2026-01-01T00:00:00Z, the world's time until the test moves it."""
EVERY = 300.0
"""Seconds between two articles of the topic, on average (the world's)."""


def rate_row(db: Path) -> dict | None:
    """The topic's ``topic_rates`` row on Google (None before the crawl wrote one)."""
    if not db.exists():
        return None
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
            conn.row_factory = sqlite3.Row
            row = conn.execute("select * from topic_rates where engine = 'google'").fetchone()
    except sqlite3.OperationalError:
        return None
    return dict(row) if row is not None else None


def stored_urls(db: Path) -> set[str]:
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
        return {url for (url,) in conn.execute("select url from news")}


def published_urls(world: NewsWorld, since: float, until: float) -> set[str]:
    """The clean URLs of the topic's articles published in (since, until] (world time)."""
    first, last = world.latest(TOPIC, since), world.latest(TOPIC, until)
    return {normalize_url(world.article(TOPIC, k, until).url) for k in range(first + 1, last + 1)}


class Crawl:
    """``scrapy crawl google`` of the topic, continuous, in the background, into ``db``."""

    def __init__(self, scrapy_cmd, config: Path, db: Path) -> None:
        self.db = db
        self.process = subprocess.Popen(
            [sys.executable, "-m", "scrapy", "crawl", "google", "-a", f"topics={TOPIC}"],
            cwd=scrapy_cmd.folder,
            env={**scrapy_cmd.env, "TOPICSTREAMS_CONFIG": str(config)},
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )

    def wait(self, condition, what: str, timeout: float = 40) -> dict:
        """The topic's row once ``condition(row, stored URLs)`` holds (polled while the crawl runs)."""
        deadline = time.monotonic() + timeout
        while True:
            row = rate_row(self.db)
            if row is not None and condition(row, stored_urls(self.db)):
                return row
            assert self.process.poll() is None, f"the crawl ended before {what}: {self.process.stderr.read()[-3000:]}"
            assert time.monotonic() < deadline, f"no {what} within {timeout:g} s: {row}"
            time.sleep(0.2)

    def stop(self) -> str:
        self.process.send_signal(signal.SIGINT)
        try:
            _, stderr = self.process.communicate(timeout=30)
        finally:
            if self.process.poll() is None:
                self.process.kill()
                self.process.wait()
        assert self.process.returncode == 0, stderr[-3000:]
        assert "Traceback" not in stderr, stderr[-3000:]
        return stderr


def config_for(tmp_path: Path, fakes: FakeEngines, schedule: str) -> Path:
    return crawl_config(
        tmp_path,
        fakes,
        floor=0.1,
        scraper={
            "scrape_interval": 1,
            "max_pages": 1,
            "schedule": schedule,
            "adaptive": {"min_interval": 0.5, "max_interval": 5, "burst_pages": 2},
        },
    )


def test_depth_on_demand_stores_a_burst_counts_a_hole_and_a_restart_keeps_the_rates(scrapy_cmd, tmp_path):
    world = NewsWorld(speed=0, origin=ORIGIN, share=1.0, every=EVERY, window=60)
    db = tmp_path / "news.db"
    with FakeEngines(("google",), world=world) as fakes:
        config = config_for(tmp_path, fakes, "adaptive")
        crawl = Crawl(scrapy_cmd, config, db)
        try:
            # the first visit (all new: it learns nothing, never a hole) and one that found nothing new
            crawl.wait(lambda row, _: row["visits"] >= 2, "two visits")
            before = world.now()
            world.advance(25 * EVERY)  # about 25 new articles: page one (10) overflows
            burst = published_urls(world, before, world.now())
            assert len(burst) > 20
            row = crawl.wait(
                lambda row, stored: burst <= stored and row["burst_pages"], "every article of the burst stored"
            )
            assert row["burst_pages"] == 2 and row["holes"] == 0, row
            starts = {entry["query"].get("start") for entry in fakes.results_requests("google")}
            assert starts == {None, "10", "20"}, "pages two and three read in the same visit"

            before = world.now()
            world.advance(45 * EVERY)  # about 45: more than three pages hold
            row = crawl.wait(lambda row, _: row["holes"] == 1, "a hole")
            assert row["burst_pages"] == 4, row
            missed = published_urls(world, before, world.now()) - stored_urls(db)
            assert missed, "the hole lost articles: the three pages held the 30 newest only"
            assert row["rate_per_hour"] is not None and row["rate_per_hour"] > 0
            stderr = crawl.stop()
        finally:
            if crawl.process.poll() is None:
                crawl.process.kill()
        assert "'topicstreams/google/holes': 1" in stderr
        assert "'topicstreams/google/burst_pages': 4" in stderr
        learnt = rate_row(db)
        assert learnt is not None

        # A restart starts from the learnt rates: its first visit is not a first visit, so a burst is followed at once.
        before = world.now()
        world.advance(15 * EVERY)
        burst = published_urls(world, before, world.now())
        crawl = Crawl(scrapy_cmd, config, db)
        try:
            row = crawl.wait(
                lambda row, stored: burst <= stored and row["burst_pages"] > learnt["burst_pages"],
                "the burst after the restart stored",
            )
            assert row["burst_pages"] == learnt["burst_pages"] + 1 and row["visits"] > learnt["visits"], row
            assert row["holes"] == learnt["holes"]
        finally:
            crawl.stop()


def test_the_fixed_schedule_reads_page_one_only_and_counts_the_hole(scrapy_cmd, tmp_path):
    world = NewsWorld(speed=0, origin=ORIGIN, share=1.0, every=EVERY, window=60)
    db = tmp_path / "news.db"
    with FakeEngines(("google",), world=world) as fakes:
        crawl = Crawl(scrapy_cmd, config_for(tmp_path, fakes, "fixed"), db)
        try:
            crawl.wait(lambda row, _: row["visits"] >= 2, "two visits")
            world.advance(25 * EVERY)
            row = crawl.wait(lambda row, _: row["holes"] == 1, "a hole")
            assert row["burst_pages"] == 0, row
            assert row["interval_seconds"] == 1
            pages = {entry["query"].get("start") for entry in fakes.results_requests("google")}
        finally:
            crawl.stop()
    assert pages == {None}, "fixed: page one only (max_pages 1), as always"
