"""The response classifier, in the contract's order, on plain values."""

import pytest
from twisted.internet import error as net_error

from topicstreams.blocks import ResponseClass, classify_failure, classify_response
from topicstreams.spiders.google import GoogleSpider

MARKERS = GoogleSpider.markers
RESULTS = "<div id='rso'><div data-news-doc-id='1'>a result</div></div>"


def classify(status=200, url="https://www.google.com/search?q=x", html=RESULTS, items=1, headers=None):
    return classify_response(MARKERS, status=status, url=url, html=html, item_count=items, headers=headers)


@pytest.mark.parametrize(("kwargs", "expected"), [
    ({}, ResponseClass.OK),
    # 1. challenge, whatever the status
    ({"status": 429, "url": "https://www.google.com/sorry/index?continue=x", "html": "", "items": 0},
     ResponseClass.CHALLENGE),
    ({"html": "<form id=\"captcha-form\"></form>", "items": 0}, ResponseClass.CHALLENGE),
    ({"html": "Our systems have detected unusual traffic from your computer network", "items": 0},
     ResponseClass.CHALLENGE),
    ({"url": "https://consent.google.com/ml?continue=x", "items": 0}, ResponseClass.CHALLENGE),
    ({"html": "<title>Just a moment...</title>", "items": 0, "status": 403}, ResponseClass.CHALLENGE),
    ({"headers": {"CF-Mitigated": "challenge"}}, ResponseClass.CHALLENGE),
    ({"html": "<script src='https://geo.captcha-delivery.com/c.js'></script>", "items": 0}, ResponseClass.CHALLENGE),
    # 2. hard block by status
    ({"status": 429, "html": "Too Many Requests", "items": 0}, ResponseClass.HARD_BLOCK),
    ({"status": 403, "items": 0}, ResponseClass.HARD_BLOCK),
    ({"status": 503, "items": 0}, ResponseClass.HARD_BLOCK),
    # 4. other statuses are errors
    ({"status": 500, "items": 0}, ResponseClass.ERROR),
    ({"status": 404, "items": 0}, ResponseClass.ERROR),
    # 3. soft blocks: a block marker on a 200, or an unexplained empty list
    ({"html": "please click <a href='/httpservice/retry/enablejs'>here</a>", "items": 0}, ResponseClass.SOFT_BLOCK),
    ({"html": "<div id='rso'></div>", "items": 0}, ResponseClass.SOFT_BLOCK),
    # ... but the engine's own "no results" message makes an empty page a genuine answer
    ({"html": "Your search - <b>x</b> - did not match any news results.", "items": 0}, ResponseClass.OK),
])
def test_classes_in_the_contracts_order(kwargs, expected):
    assert classify(**kwargs).cls is expected


def test_verdicts_say_why_and_which_bench():
    verdict = classify(status=429, html="", items=0)
    assert verdict.reason == "HTTP 429" and verdict.benches
    assert not classify().benches
    assert not classify(status=500, items=0).benches


@pytest.mark.parametrize(("exception", "expected"), [
    (net_error.ConnectionRefusedError(), ResponseClass.HARD_BLOCK),
    (net_error.TimeoutError(), ResponseClass.HARD_BLOCK),
    (Exception("Page.goto: net::ERR_CONNECTION_RESET at https://x"), ResponseClass.HARD_BLOCK),
    (Exception("Page.goto: Timeout 30000ms exceeded."), ResponseClass.HARD_BLOCK),
    (Exception("Page.goto: net::ERR_NAME_NOT_RESOLVED at https://x"), ResponseClass.ERROR),
    (ValueError("something else"), ResponseClass.ERROR),
])
def test_failures_without_a_response(exception, expected):
    assert classify_failure(exception).cls is expected
