"""Text that cannot spoof: the bidirectional embeddings, overrides and isolates (U+202A–U+202E, U+2066–U+2069) are
dropped from stored titles, sources and snippets (the normalize pipeline), and again from what the page and the
feeds show (rows an older version stored); the page isolates each scraped text (``dir="auto"``). The same in a real
browser, with screenshots: tests/system/test_bidi_views.py."""

from __future__ import annotations

import json

import feedparser
from hypothesis import given
from hypothesis import strategies as st
from parsel import Selector
from scrapy.utils.test import get_crawler

from tests.support.feed_data import client
from tests.support.spoofing import CONTROLS, SHOWN, SPOOF, store_spoofed
from topicstreams.engines.items import NewsItem
from topicstreams.pipelines.normalize import NormalizePipeline
from topicstreams.text.scraped_text import BIDI_CONTROLS, clean_text, without_bidi_controls


def test_the_controls_are_exactly_the_embeddings_overrides_and_isolates():
    assert BIDI_CONTROLS == CONTROLS
    assert clean_text(SPOOF) == without_bidi_controls(SPOOF) == "Harmless gpj.exe"
    # the marks order no strong character and right-to-left text needs them: kept
    assert clean_text("\u05e9\u05dc\u05d5\u05dd\u200f!\u200e") == "\u05e9\u05dc\u05d5\u05dd\u200f!\u200e"


@given(st.text(st.characters(codec="utf-8") | st.sampled_from(CONTROLS)))
def test_clean_text_leaves_no_control_and_everything_else_in_order(text):
    cleaned = clean_text(text)
    assert not set(cleaned) & set(CONTROLS)
    assert clean_text(cleaned) == cleaned
    assert without_bidi_controls(text) == "".join(char for char in text if char not in CONTROLS)
    assert cleaned == clean_text(without_bidi_controls(text))


def test_the_normalize_pipeline_stores_titles_sources_and_snippets_without_them():
    pipeline = NormalizePipeline.from_crawler(get_crawler(settings_dict={"TOPICSTREAMS_ENGINES": {}}))
    item = pipeline.process_item(
        NewsItem(
            url="https://news.example/1",
            title=f" {SPOOF} ",
            source="Daily \u202eTrusted\u202c News",
            snippet="\u2067Open\u2069 the \u202dattachment\u202c",
            engine="google",
            topic="t",
        )
    )
    assert (item["title"], item["source"], item["snippet"]) == (
        "Harmless gpj.exe",
        "Daily Trusted News",
        "Open the attachment",
    )


def test_the_page_shows_no_control_and_isolates_every_scraped_text(sqlite_url):
    store_spoofed(sqlite_url)
    html = client(sqlite_url).get("/").text
    assert not set(html) & set(CONTROLS)
    page = Selector(text=html)
    titles = [" ".join(li.css(".title ::text").getall()).strip() for li in page.css("#entries > li.entry")]
    assert titles == [title for title, _, _ in SHOWN]
    assert page.css(".source::text").getall() == [source for _, source, _ in SHOWN]
    assert [text.strip() for text in page.css(".snippet::text").getall()] == [snippet for *_, snippet in SHOWN]
    for css in ("a.title-link", ".source", ".snippet", "a.topic", ".topic-choices .choice-name"):
        found = page.css(css)
        assert found and all(node.attrib.get("dir") == "auto" for node in found), css
    css = client(sqlite_url).get(page.css("link[rel=stylesheet]::attr(href)").get()).text
    assert '[dir="auto"] { unicode-bidi: isolate; }' in css


def test_the_feeds_carry_no_control(sqlite_url):
    store_spoofed(sqlite_url)
    web = client(sqlite_url)
    for kind in ("atom", "rss", "json"):
        body = web.get(f"/feed.{kind}").content.decode("utf-8")
        assert not set(body) & set(CONTROLS), kind
        if kind == "json":
            items = json.loads(body)["items"]
            found = [(item["title"], item["authors"][0]["name"], item["content_text"]) for item in items]
        else:
            entries = feedparser.parse(body).entries
            found = [(entry.title, entry.author, entry.summary) for entry in entries]
        assert found == SHOWN, kind
