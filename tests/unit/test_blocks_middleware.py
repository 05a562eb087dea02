"""The blocks middleware on plain responses (no browser): one reading per page, through the engine, into meta."""

from __future__ import annotations

import asyncio
import logging
import time

import pytest
from scrapy import Request
from scrapy.http import HtmlResponse
from scrapy.utils.test import get_crawler

from topicstreams.crawl import meta as keys
from topicstreams.crawl.signals import Classification, response_classified
from topicstreams.engines.classify import ResponseClass
from topicstreams.engines.reader import Reading
from topicstreams.middlewares.blocks import BlocksMiddleware
from topicstreams.middlewares.consent_answers import ConsentMiddleware
from topicstreams.spiders.google import GoogleSpider

SETTINGS = {
    "TOPICSTREAMS_ENGINES": {"google": {"base_url": "http://127.0.0.1:9", "freshness": "hour"}},
    "TOPICSTREAMS_MIN_INTERVAL": 1.0,
    "TOPICSTREAMS_PACING": {"jitter_ratio": 0.0},
    "TOPICSTREAMS_COOLDOWN": {"initial": 60, "factor": 2, "max": 3600},
    "TOPICSTREAMS_SOFT_BLOCK_MIN_SIZE_RATIO": 0.3,
}
REDESIGNED = """<html lang="en"><body><div id="main">
  <div><h3><a href="https://a.example/1">First headline about alpha</a></h3><span>Source A</span>
       <span>2 hours ago</span></div>
  <div><h3><a href="https://b.example/2">Second headline about alpha</a></h3><span>Source B</span>
       <span>3 hours ago</span></div>
</div></body></html>"""


@pytest.fixture
def middleware():
    crawler = get_crawler(GoogleSpider, SETTINGS)
    crawler.spider = GoogleSpider.from_crawler(crawler)  # its reader is the crawl's, the middleware's too
    return BlocksMiddleware.from_crawler(crawler)


def answer(middleware, html: str, page: int = 0):
    request = Request(
        "http://127.0.0.1:9/search?q=alpha", meta={keys.ENGINE: "google", keys.TOPIC: "alpha", keys.PAGE: page}
    )
    response = HtmlResponse(request.url, body=html.encode(), encoding="utf-8", request=request)
    assert middleware.process_response(request, response) is response
    return request.meta


def test_a_redesigned_page_is_read_by_the_fallback_counted_and_warned_of_once(middleware, caplog):
    sent: list[Classification] = []
    middleware.crawler.signals.connect(
        lambda classification: sent.append(classification), signal=response_classified, weak=False
    )
    with caplog.at_level(logging.DEBUG, logger="topicstreams.middlewares.blocks"):
        first = answer(middleware, REDESIGNED)
        answer(middleware, REDESIGNED)
    reading = first[keys.READING]
    assert isinstance(reading, Reading) and reading.fallback and reading.verdict.cls is ResponseClass.OK
    assert [result.url for result in reading.results] == ["https://a.example/1", "https://b.example/2"]
    stats = middleware.crawler.stats
    assert stats.get_value("topicstreams/google/layout_fallbacks") == 2
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING and "structural fallback" in r.message]
    assert len(warnings) == 1 and "update its layouts" in warnings[0].message
    # the classification that went out is the one in meta (a listener joins it with the parse outcome)
    assert first[keys.CLASSIFICATION] is sent[0] and sent[0].items == 2 and sent[0].cls is ResponseClass.OK


def test_meta_carries_plain_data_only(middleware):
    meta = answer(middleware, "<html><body><p>nothing here</p></body></html>")
    assert meta[keys.READING].verdict.cls is ResponseClass.SOFT_BLOCK
    plain = (str, int, float, bool, type(None), Reading, Classification)
    assert all(isinstance(value, plain) for value in meta.values()), meta


def test_both_middlewares_use_the_spiders_one_engine_object(monkeypatch):
    import topicstreams.engines.reader as reader_module

    made = []

    def engine_class(name):
        def make(*args):
            made.append(real(name)(*args))
            return made[-1]

        return make

    real = reader_module.engine_class
    monkeypatch.setattr(reader_module, "engine_class", engine_class)
    crawler = get_crawler(GoogleSpider, {**SETTINGS, "TOPICSTREAMS_CONSENT": "reject"})
    spider = crawler.spider = GoogleSpider.from_crawler(crawler)
    blocks, consent = BlocksMiddleware.from_crawler(crawler), ConsentMiddleware.from_crawler(crawler)
    request = Request("http://127.0.0.1:9/search?q=alpha", meta={keys.ENGINE: "google", keys.TOPIC: "alpha"})
    response = HtmlResponse(request.url, body=REDESIGNED.encode(), encoding="utf-8", request=request)
    assert asyncio.run(consent.process_response(request, response)) is response  # no wall: handed on as it is
    assert blocks.process_response(request, response) is response
    assert request.meta[keys.READING].results
    assert blocks.reader is consent.reader is spider.reader and made == [spider.engine]


def test_a_classification_carries_the_moment_its_request_left_and_the_latency_from_it(middleware):
    sent: list[Classification] = []
    middleware.crawler.signals.connect(
        lambda classification: sent.append(classification), signal=response_classified, weak=False
    )
    request = Request("http://127.0.0.1:9/search?q=alpha", meta={keys.ENGINE: "google", keys.TOPIC: "alpha"})
    left = time.monotonic() - 0.25
    request.meta[keys.SENT_AT] = left
    middleware.process_response(request, HtmlResponse(request.url, body=REDESIGNED.encode(), request=request))
    assert sent[0].sent_at == left and sent[0].latency >= 0.25
    answer(middleware, REDESIGNED)  # a request that never left (no send time): neither is known
    assert sent[1].sent_at is None and sent[1].latency is None
