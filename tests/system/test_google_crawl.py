"""End to end: the real Google spider, in real Chromium, against the fake Google engine, into SQLite."""

from __future__ import annotations

import json
import re
import socket
import sqlite3
from pathlib import Path

import pytest

from fake_engines import FakeEngines
from fake_engines.catalogue import articles_for
from fake_engines.google import expected_articles
from tests.support.crawl_checks import STATS_DUMP, expected_urls
from tests.support.project import write_config
from topicstreams.engines.news_urls import is_tracking_param

pytestmark = pytest.mark.timeout(240)


@pytest.fixture(scope="module")
def fakes():
    with FakeEngines(engines=("google",)) as engines:
        yield engines


@pytest.fixture
def google(fakes):
    fakes.reset()
    return fakes


def crawl_config(folder: Path, fakes: FakeEngines, **scraper) -> Path:
    return write_config(
        folder,
        {
            "database": {"url": "sqlite:///news.db"},
            "engines": {
                "google": {"base_url": fakes.base_url("google")},
                "bing": {"enabled": False},
                "yahoo": {"enabled": False},
                "brave": {"enabled": False},
            },
            "scraper": {
                "schedule": "fixed",
                "pacing": {"default_min_interval": 0.2},
                "cooldown": {"initial": 1, "max": 5},
                **scraper,
            },
            "browser": {"profile_dir": "profiles"},
        },
    )


def rows(db: Path, sql: str) -> list[tuple]:
    with sqlite3.connect(db) as conn:
        return conn.execute(sql).fetchall()


def test_once_stores_each_article_once_with_clean_urls_and_again_adds_nothing(scrapy_cmd, google, tmp_path):
    config = crawl_config(tmp_path, google, max_pages=2)
    args = ("crawl", "google", "-a", "topics= alpha ", "-a", "once=1", "-O", "out.jsonl")
    result = scrapy_cmd(*args, env={"TOPICSTREAMS_CONFIG": str(config)})
    assert result.returncode == 0, result.stderr[-3000:]
    assert "google spider starting (once" in result.stderr

    db = tmp_path / "news.db"
    expected = expected_urls("google", "alpha", pages=2)
    assert len(expected) == len(articles_for("alpha", 0)) + len(articles_for("alpha", 1))
    news = rows(db, "select id, url, title, source, published_at, first_seen_at from news")
    assert {row[1] for row in news} == expected  # the JavaScript-added result and the wrapped links included
    assert len(news) == len(expected)
    for _, url, title, source, published_at, _ in news:
        assert "?" not in url or not any(is_tracking_param(p.split("=")[0]) for p in url.split("?")[1].split("&"))
        assert "/url?" not in url and "127.0.0.1" not in url
        assert title and "alpha" in title.lower() and source
        assert published_at is not None
    assert rows(db, "select count(*), count(distinct news_id) from topic_news") == [(len(expected), len(expected))]
    assert rows(db, "select engine, count(*) from topic_news_engines group by engine") == [("google", len(expected))]
    # a one-off topic never joins the standing list
    assert rows(db, "select name, active from topics") == [("alpha", 0)]

    # Items are ordinary Scrapy items: the feed has every parsed result (duplicates too), the store each once.
    exported = [json.loads(line) for line in (tmp_path / "out.jsonl").read_text().splitlines()]
    assert {item["url"] for item in exported} == expected
    assert len(exported) > len(expected)
    assert {item["engine"] for item in exported} == {"google"}
    assert all(item["topic"] == "alpha" and item["fetched_at"] for item in exported)

    # The fake saw two results pages and nothing the parser does not need (thumbnails, fonts).
    log = google.requests("google")
    assert [entry["query"].get("start", "0") for entry in log if entry["kind"] == "results"] == ["0", "10"]
    assert [entry for entry in log if entry["kind"] == "asset"] == []
    # one tab for the engine, navigated from page 1 to page 2
    assert "'playwright/page_count': 1," in result.stderr
    first = log[0]["query"]
    assert first["q"] == "alpha" and first["tbm"] == "nws" and first["tbs"] == "qdr:h,sbd:1"

    before = rows(db, "select id, first_seen_at from news order by id")
    again = scrapy_cmd(*args, env={"TOPICSTREAMS_CONFIG": str(config)})
    assert again.returncode == 0, again.stderr[-3000:]
    assert rows(db, "select id, first_seen_at from news order by id") == before
    assert rows(db, "select count(*) from topic_news") == [(len(expected),)]
    assert rows(db, "select count(*) from topic_news_engines") == [(len(expected),)]


def test_a_captcha_yields_nothing_and_the_topic_is_tried_again_after_the_cooldown(scrapy_cmd, google, tmp_path):
    config = crawl_config(tmp_path, google, once_attempts=3)
    google.script("google", ["sorry", "captcha200"])
    result = scrapy_cmd(
        "crawl", "google", "-a", "topics=beta", "-a", "once=1", env={"TOPICSTREAMS_CONFIG": str(config)}
    )
    assert result.returncode == 0, result.stderr[-3000:]
    results = [e for e in google.requests("google") if e["kind"] == "results"]
    assert [e["step"] for e in results] == ["sorry", "captcha200", "results"]
    # the retries wait for the cooldown (1 s here)
    assert results[1]["time"] - results[0]["time"] >= 1.0
    assert results[2]["time"] - results[1]["time"] >= 1.0
    assert "challenge for topic 'beta'" in result.stderr
    assert "'topicstreams/google/challenges': 2" in result.stderr
    stored = {row[0] for row in rows(tmp_path / "news.db", "select url from news")}
    assert stored == expected_urls("google", "beta")


def test_a_topic_blocked_on_every_attempt_is_given_up_and_counted(scrapy_cmd, google, tmp_path):
    config = crawl_config(tmp_path, google, once_attempts=2)
    google.route("google", "gamma", "sorry")
    result = scrapy_cmd(
        "crawl", "google", "-a", "topics=gamma,delta", "-a", "once=1", env={"TOPICSTREAMS_CONFIG": str(config)}
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert "ERROR: gave up topic 'gamma' after 2 attempts" in result.stderr
    assert "'topicstreams/google/topics_given_up': 1" in result.stderr
    topics = rows(tmp_path / "news.db", "select distinct t.name from topic_news tn join topics t on t.id = tn.topic_id")
    assert topics == [("delta",)]


def test_a_genuine_no_results_page_stores_nothing_and_is_not_a_block(scrapy_cmd, google, tmp_path):
    config = crawl_config(tmp_path, google, once_attempts=2)  # the blank page's retries are not what is tested
    google.route("google", "nothing", "empty")
    google.route("google", "hollow", "blank")
    result = scrapy_cmd(
        "crawl",
        "google",
        "-a",
        "topics=nothing,hollow",
        "-a",
        "once=1",
        env={"TOPICSTREAMS_CONFIG": str(config)},
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert rows(tmp_path / "news.db", "select count(*) from news") == [(0,)]
    assert "'topicstreams/google/ok': 1" in result.stderr
    # an empty list without the engine's "no results" message is suspect: a soft block, tried again
    assert "soft_block for topic 'hollow'" in result.stderr
    assert "soft_block for topic 'nothing'" not in result.stderr


def test_continuous_mode_seeds_the_table_and_goes_round_again_each_interval(scrapy_cmd, google, tmp_path):
    config = write_config(
        tmp_path,
        {
            "database": {"url": "sqlite:///news.db"},
            "topics": ["alpha", "beta"],
            "engines": {
                "google": {"base_url": google.base_url("google")},
                "bing": {"enabled": False},
                "yahoo": {"enabled": False},
                "brave": {"enabled": False},
            },
            "scraper": {"schedule": "fixed", "scrape_interval": 3, "pacing": {"default_min_interval": 0.2}},
            "browser": {"profile_dir": "profiles"},
        },
    )
    result = scrapy_cmd("crawl", "google", "-s", "CLOSESPIDER_TIMEOUT=10", env={"TOPICSTREAMS_CONFIG": str(config)})
    assert result.returncode == 0, result.stderr[-3000:]
    assert "google spider starting (continuous: every 3 s" in result.stderr
    assert rows(tmp_path / "news.db", "select name, active from topics order by name") == [("alpha", 1), ("beta", 1)]
    passes = [e["query"]["q"] for e in google.requests("google") if e["kind"] == "results"]
    assert passes.count("alpha") >= 2 and passes.count("beta") >= 2
    stored = {row[0] for row in rows(tmp_path / "news.db", "select url from news")}
    assert stored == expected_urls("google", "alpha", "beta")


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_unreachable_engine_keeps_running_and_says_what_failed(scrapy_cmd, tmp_path):
    port = closed_port()
    config = write_config(
        tmp_path,
        {
            "database": {"url": "sqlite:///news.db"},
            "topics": ["alpha"],
            "engines": {
                "google": {"base_url": f"http://127.0.0.1:{port}"},
                "bing": {"enabled": False},
                "yahoo": {"enabled": False},
                "brave": {"enabled": False},
            },
            "scraper": {
                "schedule": "fixed",
                "scrape_interval": 1,
                "cooldown": {"initial": 1},
                "pacing": {"default_min_interval": 0.2},
            },
            "browser": {"profile_dir": "profiles"},
        },
    )
    result = scrapy_cmd(
        "crawlall", "-s", "CLOSESPIDER_TIMEOUT=6", *STATS_DUMP, env={"TOPICSTREAMS_CONFIG": str(config)}
    )
    assert result.returncode == 0, result.stderr[-3000:]
    failures = [
        line for line in result.stderr.splitlines() if f"for topic 'alpha' (http://127.0.0.1:{port}/search" in line
    ]
    assert len(failures) >= 2, result.stderr[-3000:]
    assert "ERR_CONNECTION_REFUSED" in failures[0]
    assert "closespider_timeout" in result.stderr
    # a tab whose navigation failed is closed: every attempt starts from a fresh one
    opened = re.search(r"'playwright/page_count': (\d+),", result.stderr)
    # (one more when the spider closed with a navigation under way)
    assert opened and int(opened[1]) in (len(failures), len(failures) + 1), result.stderr[-3000:]


def test_crawlall_writes_one_feed_file_per_engine(scrapy_cmd, google, tmp_path):
    config = crawl_config(tmp_path, google)
    result = scrapy_cmd(
        "crawlall",
        "-a",
        "topics=alpha",
        "-a",
        "once=1",
        "-O",
        "out-%(name)s.jsonl",
        env={"TOPICSTREAMS_CONFIG": str(config)},
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert sorted(p.name for p in tmp_path.glob("out-*.jsonl")) == ["out-google.jsonl"]
    assert len((tmp_path / "out-google.jsonl").read_text().splitlines()) >= len(expected_articles("alpha", 0))


def test_the_browser_context_carries_locale_and_its_own_headers(scrapy_cmd, google, tmp_path):
    config = write_config(
        tmp_path,
        {
            "database": {"url": "sqlite:///news.db"},
            "engines": {
                "google": {"base_url": google.base_url("google")},
                "bing": {"enabled": False},
                "yahoo": {"enabled": False},
                "brave": {"enabled": False},
            },
            "scraper": {"schedule": "fixed", "pacing": {"default_min_interval": 0.2}},
            "browser": {"profile_dir": "profiles"},
            "anti_detection": {"locale": "nl-NL", "timezone_id": "Europe/Amsterdam"},
        },
    )
    result = scrapy_cmd(
        "crawl", "google", "-a", "topics=alpha", "-a", "once=1", env={"TOPICSTREAMS_CONFIG": str(config)}
    )
    assert result.returncode == 0, result.stderr[-3000:]
    seen = [e for e in google.requests("google") if e["kind"] == "results"]
    assert seen and seen[0]["accept_language"].startswith("nl-NL")
    assert "Chrome/" in seen[0]["user_agent"] and "Scrapy" not in seen[0]["user_agent"]
    # the engine's context keeps its state under profile_dir/<node.id>/google
    assert list((tmp_path / "profiles").glob("*/google/storage_state.json"))
