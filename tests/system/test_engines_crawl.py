"""End to end for every engine: the real spiders, in real Chromium, against the fake engines, into SQLite.

Google's own paths (paging, retries, continuous mode) are in test_google_crawl; here every engine goes through
the same checks, and all of them together through ``scrapy crawlall``.
"""

from __future__ import annotations

import importlib
import json
import sqlite3
from pathlib import Path

import pytest
import yaml

from fake_engines import FakeEngines
from fake_engines.catalogue import all_articles
from tests.support.crawl_checks import expected_urls
from tests.support.project import write_config
from topicstreams import ENGINES
from topicstreams.engines.news_urls import normalize_url

pytestmark = pytest.mark.timeout(300)

BLOCK_PAGES = {"google": "sorry", "bing": "captcha", "yahoo": "consent", "brave": "pow"}
"""Each fake engine's own block page (its page kind)."""


def fake(engine: str):
    return importlib.import_module(f"fake_engines.{engine}")


@pytest.fixture(scope="module")
def fakes():
    with FakeEngines(engines=ENGINES) as engines:
        yield engines


@pytest.fixture
def engines(fakes):
    fakes.reset()
    return fakes


def crawl_config(folder: Path, fakes: FakeEngines, only: tuple[str, ...], **scraper) -> Path:
    return write_config(
        folder,
        {
            "database": {"url": "sqlite:///news.db"},
            "engines": {name: {"base_url": fakes.base_url(name), "enabled": name in only} for name in ENGINES},
            "scraper": {
                "schedule": "fixed",
                "pacing": {"default_min_interval": 0.2, "per_engine": {"brave": 0.2}},
                "cooldown": {"initial": 1, "max": 5},
                **scraper,
            },
            "browser": {"profile_dir": "profiles"},
        },
    )


def rows(db: Path, sql: str) -> list[tuple]:
    with sqlite3.connect(db) as conn:
        return conn.execute(sql).fetchall()


ARTICLES = {normalize_url(a.url): a for topic in ("alpha", "beta") for a in all_articles(topic)}


@pytest.mark.parametrize("engine", ["bing", "yahoo", "brave"])
def test_each_engine_stores_exactly_its_pages_articles(scrapy_cmd, engines, tmp_path, engine):
    config = crawl_config(tmp_path, engines, (engine,), max_pages=2)
    result = scrapy_cmd(
        "crawl",
        engine,
        "-a",
        "topics=alpha",
        "-a",
        "once=1",
        "-O",
        "out.jsonl",
        env={"TOPICSTREAMS_CONFIG": str(config)},
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert f"{engine} spider starting (once" in result.stderr
    assert "structural fallback" not in result.stderr  # the known layout matched

    db = tmp_path / "news.db"
    wanted = expected_urls(engine, "alpha", pages=2)
    news = rows(db, "select url, title, source, snippet, published_at from news")
    assert {row[0] for row in news} == wanted
    for url, title, source, snippet, published_at in news:
        article = ARTICLES[url]
        assert (title, source, snippet) == (article.title, article.source, article.snippet), url
        assert published_at is not None, url
    # no redirector, no engine host, no tracking survives; the sidebar's links are not news
    assert not any("yahoo.com" in url or "127.0.0.1" in url or "/RU=" in url for url, *_ in news)
    sidebar = {normalize_url(url) for page in range(2) for url in fake(engine).sidebar_urls("alpha", page)}
    assert sidebar and not sidebar & {row[0] for row in news}
    assert rows(db, "select engine, count(*) from topic_news_engines group by engine") == [(engine, len(wanted))]
    assert f"'topicstreams/{engine}/times_unparsed'" not in result.stderr

    exported = [json.loads(line) for line in (tmp_path / "out.jsonl").read_text().splitlines()]
    assert {item["url"] for item in exported} == wanted and {item["engine"] for item in exported} == {engine}
    results = [entry for entry in engines.requests(engine) if entry["kind"] == "results"]
    first_page = set(map(normalize_url, fake(engine).expected_articles("alpha", 0)))
    assert len(results) == (2 if wanted > first_page else 1)  # page 2 only where the engine offers one
    assert [e for e in engines.requests(engine) if e["kind"] == "asset"] == []


@pytest.mark.parametrize("engine", ENGINES)
def test_a_no_results_page_stores_nothing_and_a_block_page_is_a_challenge(scrapy_cmd, engines, tmp_path, engine):
    config = crawl_config(tmp_path, engines, (engine,), once_attempts=2)
    engines.route(engine, "nothing", "empty")
    engines.route(engine, "walled", BLOCK_PAGES[engine])
    engines.route(engine, "hollow", "blank")
    result = scrapy_cmd(
        "crawl", engine, "-a", "topics=nothing,walled,hollow", "-a", "once=1", env={"TOPICSTREAMS_CONFIG": str(config)}
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert rows(tmp_path / "news.db", "select count(*) from news") == [(0,)]
    stderr = result.stderr
    assert "for topic 'nothing'" not in stderr  # a genuine empty answer: ok, not retried
    assert f"'topicstreams/{engine}/ok': 1" in stderr
    assert "challenge for topic 'walled'" in stderr
    assert f"'topicstreams/{engine}/challenges': 2" in stderr
    assert "soft_block for topic 'hollow'" in stderr
    assert "ERROR: gave up topic 'walled' after 2 attempts" in stderr


def test_crawlall_stores_the_union_with_every_attribution_in_one_process(scrapy_cmd, engines, tmp_path):
    config = crawl_config(tmp_path, engines, ENGINES)
    result = scrapy_cmd("crawlall", "-a", "topics=alpha", "-a", "once=1", env={"TOPICSTREAMS_CONFIG": str(config)})
    assert result.returncode == 0, result.stderr[-3000:]
    for engine in ENGINES:
        assert f"{engine} spider starting (once" in result.stderr
    db = tmp_path / "news.db"
    per_engine = {engine: expected_urls(engine, "alpha") for engine in ENGINES}
    union = set().union(*per_engine.values())
    assert {row[0] for row in rows(db, "select url from news")} == union
    assert rows(db, "select count(*) from topic_news") == [(len(union),)]
    attributions = rows(db, "select n.url, tne.engine from topic_news_engines tne join news n on n.id = tne.news_id")
    assert set(attributions) == {(url, engine) for engine, urls in per_engine.items() for url in urls}


def test_the_same_article_from_three_engines_is_one_event_with_three_attributions(scrapy_cmd, engines, tmp_path):
    config = crawl_config(tmp_path, engines, ("google", "bing", "yahoo"))
    # one after the other, so that each engine's first_seen_at is its own
    for engine in ("google", "bing", "yahoo"):
        result = scrapy_cmd(
            "crawl", engine, "-a", "topics=alpha", "-a", "once=1", env={"TOPICSTREAMS_CONFIG": str(config)}
        )
        assert result.returncode == 0, result.stderr[-3000:]
    db = tmp_path / "news.db"
    common = expected_urls("google", "alpha") & expected_urls("bing", "alpha") & expected_urls("yahoo", "alpha")
    assert common
    # every engine linked these with its own tracking parameters (and Yahoo through its redirector)
    url = min(common)
    found = rows(db, f"select id from news where url = '{url}'")
    assert len(found) == 1
    news_id = found[0][0]
    assert rows(db, f"select count(*) from topic_news where news_id = '{news_id}'") == [(1,)]
    seen = rows(
        db, f"select engine, first_seen_at from topic_news_engines where news_id = '{news_id}' order by first_seen_at"
    )
    assert [engine for engine, _ in seen] == ["google", "bing", "yahoo"]
    assert len({when for _, when in seen}) == 3
    event = rows(db, f"select first_seen_at from topic_news where news_id = '{news_id}'")[0][0]
    assert event == seen[0][1]  # the event is as old as its first finder


def test_bing_scrolls_until_its_last_page_repeats_and_reads_dutch_times(scrapy_cmd, engines, tmp_path):
    config = crawl_config(tmp_path, engines, ("bing",), max_pages=5)
    data = yaml.safe_load(config.read_text())
    data["anti_detection"] = {"locale": "nl-NL"}
    config.write_text(yaml.safe_dump(data))
    result = scrapy_cmd("crawl", "bing", "-a", "topics=alpha", "-a", "once=1", env={"TOPICSTREAMS_CONFIG": str(config)})
    assert result.returncode == 0, result.stderr[-3000:]
    requests = [entry for entry in engines.requests("bing") if entry["kind"] == "results"]
    # page 0 is the search, 1 the first scroll (8 cards: the end); 18 articles never ask for a third page
    assert [(e["path"], e["query"].get("first")) for e in requests] == [
        ("/news/search", None),
        ("/news/infinitescrollajax", "11"),
    ]
    assert requests[0]["accept_language"].startswith("nl-NL")
    news = rows(tmp_path / "news.db", "select url, published_at from news")
    assert {url for url, _ in news} == expected_urls("bing", "alpha", pages=2)
    assert all(published for _, published in news)
    assert "'topicstreams/bing/times_unparsed'" not in result.stderr


def test_bing_stops_when_the_scroll_repeats_its_last_page(scrapy_cmd, engines, tmp_path):
    # "alpha" ends with a short page; a topic whose last page is a full ten makes Bing repeat it
    topic = next(name for name in (f"topic {n}" for n in range(200)) if len(all_articles(name)) % 10 == 0)
    config = crawl_config(tmp_path, engines, ("bing",), max_pages=6)
    result = scrapy_cmd(
        "crawl", "bing", "-a", f"topics={topic}", "-a", "once=1", env={"TOPICSTREAMS_CONFIG": str(config)}
    )
    assert result.returncode == 0, result.stderr[-3000:]
    pages = len(all_articles(topic)) // 10
    requests = [entry for entry in engines.requests("bing") if entry["kind"] == "results"]
    assert len(requests) == pages + 1  # every page, then one repeat that ends the topic
    stored = {row[0] for row in rows(tmp_path / "news.db", "select url from news")}
    assert stored == expected_urls("bing", topic, pages=pages)
    assert f"'topicstreams/bing/items_scraped': {len(all_articles(topic))}" in result.stderr
