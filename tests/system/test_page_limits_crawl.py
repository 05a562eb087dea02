"""Bounds on what a page brings, end to end: the real Google spider in real Chromium against the fake Google's
hostile pages (:mod:`fake_engines.google.google_extremes`), into SQLite, with the packaged ``scraper.limits``.

One crawl (once mode, one attempt a topic) of four topics, each routed to its page: ``crowded`` (5,000 results),
``huge`` (a page of more than 30 MB), ``bulky`` (100 KB titles, sources and snippets) and ``spoofed`` (bidirectional
overrides); every test reads what that crawl stored, logged and classified."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from pathlib import Path
from subprocess import CompletedProcess

import pytest

from fake_engines import FakeEngines
from fake_engines.google.google_extremes import BULKY_CHARS, CROWDED_ITEMS, HUGE_PADDING, extreme_articles
from tests.support.crawl_checks import FAST_COOLDOWN, classified, crawl_config, recording, stat_text
from tests.support.project import ScrapyRunner
from topicstreams.engines.news_urls import normalize_url
from topicstreams.text.scraped_text import cut

pytestmark = pytest.mark.timeout(300)

TOPICS = ("crowded", "huge", "bulky", "spoofed")
"""Each topic is routed to the page kind of its name."""


@dataclass
class Crawl:
    folder: Path
    result: CompletedProcess
    served: list[dict]
    """The fake Google's results requests."""

    def rows(self, sql: str, *params) -> list[tuple]:
        with sqlite3.connect(self.folder / "news.db") as conn:
            return conn.execute(sql, params).fetchall()

    def stored(self, topic: str) -> list[tuple]:
        """(url, title, source, snippet) of the topic's articles, in the order of their rank on the page."""
        return self.rows(
            "select n.url, n.title, n.source, n.snippet from news n join topic_news tn on tn.news_id = n.id "
            "join topics t on t.id = tn.topic_id where t.name = ? order by n.url",
            topic,
        )


@pytest.fixture(scope="module")
def crawl(tmp_path_factory) -> Crawl:
    folder = tmp_path_factory.mktemp("limits")
    with FakeEngines(engines=("google",)) as fakes:
        for topic in TOPICS:
            fakes.route("google", topic, topic)
        config = crawl_config(folder, fakes, floor=0.2, scraper={"once_attempts": 1, "cooldown": FAST_COOLDOWN})
        result = ScrapyRunner(folder)(
            "crawl",
            "google",
            "-a",
            f"topics={','.join(TOPICS)}",
            "-a",
            "once=1",
            *recording(folder),
            env={"TOPICSTREAMS_CONFIG": str(config)},
            timeout=240,
        )
        served = fakes.results_requests("google")
    assert result.returncode == 0, result.stderr[-4000:]
    assert [entry["step"] for entry in served] == list(TOPICS)  # each page served once, as routed
    return Crawl(folder, result, served)


def test_a_page_of_5000_items_keeps_the_first_100_with_one_warning_and_a_stat(crawl):
    wanted = [normalize_url(article.url) for article in extreme_articles("crowded", "crowded")]
    assert len(wanted) == CROWDED_ITEMS
    stored = crawl.stored("crowded")
    assert sorted(url for url, *_ in stored) == sorted(wanted[:100])
    assert crawl.rows("select count(*) from news")[0][0] == 100 + 10 + 2  # crowded, bulky, spoofed; huge: nothing
    stderr = crawl.result.stderr
    warnings = [line for line in stderr.splitlines() if "scraper.limits.items_per_page" in line]
    assert len(warnings) == 1 and "WARNING" in warnings[0], warnings
    assert "[google]" in warnings[0] and "topic 'crowded'" in warnings[0]
    assert f"holds {CROWDED_ITEMS} result items" in warnings[0]
    assert "the first 100 are kept, the other 4900 left out" in warnings[0]
    assert stat_text(stderr, "items_over_limit") == "4900"
    assert stat_text(stderr, "items_scraped") == str(100 + 10 + 2)
    (page,) = [c for c in classified(crawl.folder) if c["topic"] == "crowded"]
    assert (page["cls"], page["items"]) == ("ok", 100)


def test_a_page_of_30_mb_is_not_read_and_is_a_soft_block_named_oversized(crawl):
    (page,) = [c for c in classified(crawl.folder) if c["topic"] == "huge"]
    assert (page["cls"], page["reason"], page["items"]) == ("soft_block", "oversized", 0)
    assert page["bytes"] > HUGE_PADDING > 10_000_000
    assert page["bench"] is not None  # a soft block benches the engine, as any other
    assert crawl.stored("huge") == []
    stderr = crawl.result.stderr
    assert "soft_block for topic 'huge'" in stderr and "oversized" in stderr
    (told,) = [line for line in stderr.splitlines() if "above scraper.limits.page_bytes (10,000,000)" in line]
    assert "WARNING" in told and f"{page['bytes']:,} bytes" in told and "not read" in told
    assert "gave up topic 'huge' after 1 attempt" in stderr
    assert stat_text(stderr, "soft_blocks") == "1"
    # the topics after it went on: the bench was short, and the probe was the next topic
    assert [c["topic"] for c in classified(crawl.folder)] == list(TOPICS)


def test_100_kb_fields_are_cut_at_their_limits_and_marked(crawl):
    served = {normalize_url(article.url): article for article in extreme_articles("bulky", "bulky")}
    stored = crawl.stored("bulky")
    assert sorted(url for url, *_ in stored) == sorted(served)
    for url, title, source, snippet in stored:
        article = served[url]
        assert len(article.title) == len(article.source) == len(article.snippet) == BULKY_CHARS
        assert (title, source, snippet) == (
            cut(article.title, 500),
            cut(article.source, 500),
            cut(article.snippet, 2000),
        )
        assert len(title) <= 500 and len(source) <= 500 and len(snippet) <= 2000
        assert title.endswith("…") and source.endswith("…") and snippet.endswith("…")
    assert stat_text(crawl.result.stderr, "fields_cut") == "30"


def test_bidirectional_overrides_are_stored_removed(crawl):
    assert [(title, source, snippet) for _, title, source, snippet in crawl.stored("spoofed")] == [
        ("Harmless gpj.exe", "Daily Trusted News", "Open the attachment now"),
        ("Invoice final draft", "Harbor Times", "Read this first"),
    ]
