"""Each engine's parser on its fake pages, without a browser: fields, cleaning, times, paging signals."""

from __future__ import annotations

import asyncio
import urllib.request
from datetime import UTC, datetime, timedelta

import pytest
from scrapy.http import HtmlResponse, Request

from fake_engines import FakeEngines
from fake_engines.catalogue import all_articles
from tests.support.parsing import parsing_reader, parsing_spider, reading_of
from topicstreams.crawl import meta as keys
from topicstreams.crawl.topic_run import TopicRun
from topicstreams.engines.news_urls import normalize_url
from topicstreams.spiders.bing import BingSpider
from topicstreams.spiders.brave import BraveSpider
from topicstreams.spiders.yahoo import YahooSpider

SPIDERS = {"bing": BingSpider, "yahoo": YahooSpider, "brave": BraveSpider}


@pytest.fixture(scope="module")
def fakes():
    with FakeEngines(engines=tuple(SPIDERS)) as engines:
        yield engines


def page(fakes, engine: str, topic: str, number: int = 0, headers: dict | None = None):
    reader = parsing_reader(engine, fakes.base_url(engine))
    url = reader.engine.results_url(topic, number)
    request = urllib.request.Request(url, headers=headers or {})
    with urllib.request.urlopen(request, timeout=10) as reply:
        return reader, HtmlResponse(url, body=reply.read(), encoding="utf-8", status=reply.status)


def extract(reader, response, fetched=None, number=0):
    reading = reading_of(reader, response, number, fetched)
    return reading.verdict, reading.results


@pytest.mark.parametrize("engine", list(SPIDERS))
@pytest.mark.parametrize("topic", ["alpha", "beta"])
def test_every_field_of_every_result(fakes, engine, topic):
    reader, response = page(fakes, engine, topic)
    catalogue = {normalize_url(a.url): a for a in all_articles(topic)}
    fetched = datetime.now(UTC)
    reading = reading_of(reader, response, 0, fetched)
    verdict, parsed = reading.verdict, reading.results
    assert verdict.cls == "ok" and "fallback" not in verdict.reason and not reading.fallback
    assert len(parsed) == min(reader.engine.results_per_page, len(catalogue))
    languages = reading.languages
    for result in parsed:
        article = catalogue[normalize_url(response.urljoin(result.url), {"127.0.0.1"})]
        assert (result.title, result.source, result.snippet) == (article.title, article.source, article.snippet)
        published = spider_time(result, fetched, languages)
        # the pages round ages down ("1 hour ago" for 67 minutes): never earlier than the truth, never far off
        truth = fetched - timedelta(seconds=article.age_seconds)
        assert truth - timedelta(minutes=1) <= published <= truth + timedelta(hours=1), result.time_text


def spider_time(result, fetched, languages):
    from topicstreams.engines.dates import parse_result_time

    published = parse_result_time(result.time_text, fetched, timestamp=result.timestamp, languages=languages)
    assert published is not None, result.time_text
    return published


def test_yahoo_cuts_via_from_the_source_and_its_links_unwrap_to_the_publisher(fakes):
    reader, response = page(fakes, "yahoo", "alpha")
    raw = [node.css("span.s-source::text").get() for node in reader.engine.result_nodes(response.selector)]
    assert any(" · via Yahoo News" in text for text in raw)
    _, parsed = extract(reader, response, datetime.now(UTC))
    assert not any("via" in result.source for result in parsed)
    assert all("r.search.yahoo.com" in result.url or ";_ylt=" in result.url for result in parsed)
    assert {normalize_url(result.url) for result in parsed} == {
        normalize_url(a.url) for a in all_articles("alpha")[:10]
    }


def test_bing_reads_dutch_times(fakes):
    reader, english = page(fakes, "bing", "alpha")
    _, dutch = page(fakes, "bing", "alpha", headers={"Accept-Language": "nl-NL,nl;q=0.9"})
    assert reader.languages(dutch.selector) == ("nl", "en") and reader.languages(english.selector) == ("en",)
    fetched = datetime.now(UTC)
    _, in_english = extract(reader, english, fetched)
    _, in_dutch = extract(reader, dutch, fetched)
    assert any("geleden" in result.time_text for result in in_dutch)
    assert [spider_time(r, fetched, ("nl", "en")) for r in in_dutch] == [
        spider_time(r, fetched, ("en",)) for r in in_english
    ]


@pytest.mark.parametrize(
    ("engine", "topic", "number", "more"),
    [
        ("brave", "alpha", 0, False),  # 18 articles: one page of 20
        ("brave", "beta", 0, True),  # 26 articles: two pages
        ("brave", "beta", 1, False),
        ("yahoo", "alpha", 0, True),
        ("yahoo", "alpha", 1, False),
        ("bing", "alpha", 0, True),  # a full page of 10: there may be more (Bing's scroll has no end marker)
        ("bing", "alpha", 1, False),  # 8 cards: the end
    ],
)
def test_whether_an_engine_offers_a_next_page(fakes, engine, topic, number, more):
    reader, response = page(fakes, engine, topic, number)
    assert reader.engine.has_next_page(response.selector, number) is more
    assert reading_of(reader, response, number).has_next is more


def run_page(spider, response, topic="alpha", number=0):
    loop = asyncio.new_event_loop()
    try:
        run = TopicRun(topic, loop.create_future(), lane=spider.lanes[0])
        reading = reading_of(spider.reader, response, number)
        request = Request(response.url, meta={keys.TOPIC: topic, keys.PAGE: number, keys.READING: reading})
        return list(spider.parse_results(response.replace(request=request), run)), run.done.result()
    finally:
        loop.close()


def test_an_unknown_time_stays_empty_and_is_counted_never_guessed(fakes):
    spider = parsing_spider(BingSpider, fakes.base_url("bing"))
    _, response = page(fakes, "bing", "alpha")
    odd = response.text.replace('tabindex="0" aria-label="', 'tabindex="0" aria-label="around teatime, ', 1)
    items, verdict = run_page(spider, response.replace(body=odd.encode("utf-8")))
    assert verdict.cls == "ok" and len(items) == 10
    assert sum(item["published_at"] is None for item in items) == 1
    assert spider.crawler.stats.get_value("topicstreams/bing/times_unparsed") == 1
    assert spider.crawler.stats.get_value("topicstreams/bing/items_scraped") == 10


def test_the_callback_turns_the_middlewares_reading_into_items_and_never_reads_the_page_again(fakes, monkeypatch):
    spider = parsing_spider(BingSpider, fakes.base_url("bing"))
    _, response = page(fakes, "bing", "alpha")
    loop = asyncio.new_event_loop()
    try:
        run = TopicRun("alpha", loop.create_future(), lane=spider.lanes[0])
        reading = reading_of(spider.reader, response)

        def read_again(*args, **kwargs):
            raise AssertionError("the page was read a second time")

        monkeypatch.setattr(type(spider.reader), "read", read_again)
        monkeypatch.setattr(HtmlResponse, "selector", property(read_again))
        request = Request(response.url, meta={keys.TOPIC: "alpha", keys.PAGE: 0, keys.READING: reading})
        emptied = response.replace(body=b"<html></html>", request=request)  # what the reading said is all there is
        items = list(spider.parse_results(emptied, run))
    finally:
        loop.close()
    assert run.done.result().cls == "ok"
    assert [item["title"] for item in items] == [result.title for result in reading.results] and len(items) == 10
