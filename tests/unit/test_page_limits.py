"""Bounds on what one results page brings (``scraper.limits``): cutting text, the configuration, the page reader that
applies them and the blocks middleware that reports them (plain responses of the fake Google's hostile pages, no
browser; the real crawl is tests/system/test_page_limits_crawl.py)."""

from __future__ import annotations

import logging
import time
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from scrapy import Request
from scrapy.http import HtmlResponse
from scrapy.utils.test import get_crawler

from fake_engines.google import render_consent
from fake_engines.google.google_extremes import extreme_articles, render_extreme
from tests.support.project import write_config
from topicstreams.config.errors import ConfigError
from topicstreams.config.loading import load_config
from topicstreams.config.packaged import load_defaults
from topicstreams.crawl import meta as keys
from topicstreams.engines.classify import OVERSIZED, ResponseClass, Verdict, oversized_verdict
from topicstreams.engines.google import Google
from topicstreams.engines.page_limits import PageLimits
from topicstreams.engines.reader import Page, PageReader
from topicstreams.engines.results import ParsedResult
from topicstreams.middlewares.blocks import BlocksMiddleware
from topicstreams.spiders.google import GoogleSpider
from topicstreams.text.scraped_text import CUT_MARK, cut

SMALL = {"items_per_page": 3, "title_chars": 30, "snippet_chars": 40, "page_bytes": 5_000_000}
"""Limits small enough for the fake pages of a unit test."""


# --- cutting ------------------------------------------------------------------------------------------------------


@given(st.text(), st.integers(min_value=1, max_value=60))
def test_a_cut_text_fits_its_limit_is_marked_and_cutting_again_changes_nothing(text, limit):
    shown = cut(text, limit)
    assert len(shown) <= limit
    if len(text) <= limit:
        assert shown == text
    else:
        assert shown.endswith(CUT_MARK) and text.startswith(shown.removesuffix(CUT_MARK))
    assert cut(shown, limit) == shown


def test_a_cut_drops_the_white_space_before_its_mark():
    assert cut("word   and more words", 7) == "word…"
    assert cut("abcdef", 1) == "…"


def test_titles_and_sources_share_the_title_limit_and_snippets_have_their_own():
    limits = PageLimits(**SMALL)
    parsed = ParsedResult("https://a.example/1", "t" * 31, "s" * 31, "n" * 41, "2 hours ago", "1")
    bounded = limits.bounded(parsed)
    assert (bounded.title, bounded.source, bounded.snippet) == ("t" * 29 + "…", "s" * 29 + "…", "n" * 39 + "…")
    assert (bounded.url, bounded.time_text, bounded.timestamp) == (parsed.url, parsed.time_text, parsed.timestamp)
    assert limits.cut_fields(parsed) == 3
    within = ParsedResult("https://a.example/2", "t" * 30, None, "")
    assert limits.bounded(within) is within and limits.cut_fields(within) == 0


def test_a_page_above_its_byte_limit_is_a_soft_block_named_oversized():
    assert oversized_verdict(10_000_000, 10_000_000) is None
    assert oversized_verdict(10_000_001, 10_000_000) == Verdict(ResponseClass.SOFT_BLOCK, OVERSIZED)
    assert OVERSIZED == "oversized" and Verdict(ResponseClass.SOFT_BLOCK, OVERSIZED).benches


# --- configuration ------------------------------------------------------------------------------------------------


def test_the_limits_are_configured_with_their_documented_defaults(tmp_path: Path):
    assert load_defaults()["scraper"]["limits"] == {
        "items_per_page": 100,
        "title_chars": 500,
        "snippet_chars": 2000,
        "page_bytes": 10_000_000,
    }
    config = tmp_path / "config.yml"
    config.write_text("scraper:\n  limits:\n    items_per_page: 7\n")
    limits = load_config({"TOPICSTREAMS_CONFIG": str(config)}, environ={}).sections.scraper.limits
    assert limits == PageLimits(items_per_page=7, title_chars=500, snippet_chars=2000, page_bytes=10_000_000)


@pytest.mark.parametrize("key", ["items_per_page", "title_chars", "snippet_chars", "page_bytes"])
@pytest.mark.parametrize("value", [0, -1, 2.5, "many", True])
def test_a_limit_is_an_integer_of_at_least_one(tmp_path: Path, key, value):
    config = tmp_path / "config.yml"
    config.write_text(f"scraper:\n  limits:\n    {key}: {value!r}\n".replace("'", '"'))
    with pytest.raises(ConfigError, match=f"scraper.limits.{key}: .*an integer >= 1"):
        load_config({"TOPICSTREAMS_CONFIG": str(config)}, environ={})


# --- the page reader ----------------------------------------------------------------------------------------------


def reader(limits: dict | None = None) -> PageReader:
    return PageReader(Google("http://127.0.0.1:9"), {"127.0.0.1"}, PageLimits(**(limits or SMALL)))


def read(kind: str, limits: dict | None = None):
    return reader(limits).read(Page("http://127.0.0.1:9/search?q=alpha", 200, render_extreme(kind, "alpha", 0)))


def test_of_a_crowded_page_the_first_items_are_read_and_the_others_counted():
    reading = read("crowded", {**SMALL, "items_per_page": 100, "page_bytes": 10_000_000})
    wanted = [article.url for article in extreme_articles("crowded", "alpha")]
    assert len(wanted) == 5000
    assert reading.verdict.cls is ResponseClass.OK
    assert [result.url for result in reading.results] == wanted[:100]
    assert reading.items_over_limit == 4900


def test_the_fields_of_a_bulky_page_are_cut_and_counted():
    reading = read("bulky", {**SMALL, "items_per_page": 100})
    assert len(reading.results) == 10 and reading.items_over_limit == 0
    assert reading.fields_cut == 30
    for result, article in zip(reading.results, extreme_articles("bulky", "alpha"), strict=True):
        assert (result.title, result.source, result.snippet) == (
            cut(article.title, 30),
            cut(article.source, 30),
            cut(article.snippet, 40),
        )
        assert result.title.endswith("…") and result.source.endswith("…") and result.snippet.endswith("…")


def test_a_page_within_every_limit_reads_as_without_them():
    bounded = read("spoofed")
    unbounded = PageReader(Google("http://127.0.0.1:9"), {"127.0.0.1"}).read(
        Page("http://127.0.0.1:9/search?q=alpha", 200, render_extreme("spoofed", "alpha", 0)),
        bounded.fetched_at,
    )
    assert bounded == unbounded and bounded.items_over_limit == bounded.fields_cut == 0
    assert reader().oversized(5_000_000) is None and reader().oversized(5_000_001).reason == OVERSIZED


def test_the_structural_fallback_is_bounded_as_the_known_layouts_are():
    items = "".join(
        f'<div><h3><a href="https://n{n}.example/{n}">{f"Headline number {n} " * 3}</a></h3><span>Source {n}</span>'
        f"<span>{n} hours ago</span></div>"
        for n in range(1, 6)
    )
    html = f'<html lang="en"><body><div id="main">{items}</div></body></html>'
    reading = reader().read(Page("http://127.0.0.1:9/search?q=alpha", 200, html))
    assert reading.fallback and reading.verdict.cls is ResponseClass.OK
    assert [result.url for result in reading.results] == [f"https://n{n}.example/{n}" for n in (1, 2, 3)]
    assert reading.items_over_limit == 2 and reading.fields_cut == 3
    assert all(len(result.title) <= 30 and result.title.endswith("…") for result in reading.results)


# --- the blocks middleware ----------------------------------------------------------------------------------------


@pytest.fixture
def middleware(tmp_path: Path) -> BlocksMiddleware:
    config = write_config(tmp_path, {"scraper": {"limits": SMALL}})
    crawler = get_crawler(GoogleSpider, {"TOPICSTREAMS_CONFIG": str(config)})
    crawler.spider = GoogleSpider.from_crawler(crawler)  # its reader is the crawl's, the middleware's too
    return BlocksMiddleware.from_crawler(crawler)


def answer(middleware: BlocksMiddleware, html: str, topic: str = "alpha") -> dict:
    request = Request(f"http://127.0.0.1:9/search?q={topic}", meta={keys.ENGINE: "google", keys.TOPIC: topic})
    request.meta[keys.SENT_AT] = time.monotonic()
    response = HtmlResponse(request.url, body=html.encode(), encoding="utf-8", request=request)
    assert middleware.process_response(request, response) is response
    return request.meta


def warnings_of(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]


def test_a_page_above_page_bytes_is_never_read_and_benches_the_engine(middleware, caplog):
    # a consent wall (a challenge, were it read) padded past the limit: the verdict is the size's, not the wall's
    wall = render_consent("http://127.0.0.1:9/search?q=alpha", "http://127.0.0.1:9", "en")
    assert answer(middleware, wall)[keys.READING].verdict.cls is ResponseClass.CHALLENGE
    html = wall.replace("</body>", f"<!-- {'x' * SMALL['page_bytes']} --></body>")
    with caplog.at_level(logging.WARNING, logger="topicstreams.middlewares.blocks"):
        meta = answer(middleware, html, topic="huge")
    reading, classification = meta[keys.READING], meta[keys.CLASSIFICATION]
    assert reading.verdict == Verdict(ResponseClass.SOFT_BLOCK, "oversized") and reading.results == ()
    assert (classification.cls, classification.reason, classification.items) == (ResponseClass.SOFT_BLOCK, OVERSIZED, 0)
    assert classification.bytes == len(html.encode())
    assert middleware.crawler.stats.get_value("topicstreams/google/soft_blocks") == 1
    assert middleware.crawler.stats.get_value("topicstreams/google/challenges") == 1  # the wall within the limit
    told = [line for line in warnings_of(caplog) if "scraper.limits.page_bytes" in line]
    assert len(told) == 1
    assert f"{len(html.encode()):,} bytes, above scraper.limits.page_bytes (5,000,000)" in told[0]
    assert "topic 'huge'" in told[0] and "not read" in told[0]


def test_a_crowded_page_keeps_its_first_items_with_one_warning_and_a_stat(middleware, caplog):
    with caplog.at_level(logging.WARNING, logger="topicstreams.middlewares.blocks"):
        answer(middleware, render_extreme("spoofed", "alpha", 0), topic="few")
        assert not warnings_of(caplog)  # two items: within the limit
        meta = answer(middleware, render_extreme("bulky", "alpha", 0), topic="crowd")
    reading = meta[keys.READING]
    assert reading.verdict.cls is ResponseClass.OK and len(reading.results) == 3
    assert [r.url for r in reading.results] == [a.url for a in extreme_articles("bulky", "alpha")[:3]]
    assert meta[keys.CLASSIFICATION].items == 3
    stats = middleware.crawler.stats
    assert stats.get_value("topicstreams/google/items_over_limit") == 7
    assert stats.get_value("topicstreams/google/fields_cut") == 9
    (told,) = warnings_of(caplog)
    assert "[google]" in told and "topic 'crowd'" in told
    assert "holds 10 result items, more than scraper.limits.items_per_page (3): the first 3 are kept" in told
    assert "the other 7 left out" in told
