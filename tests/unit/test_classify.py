"""The response classifier, in the contract's order, on plain values."""

import pytest
from twisted.internet import error as net_error

from topicstreams import ENGINES
from topicstreams.engines import REGISTRY, Google, markers_for
from topicstreams.engines.classify import (
    WALL_MARKERS,
    ResponseClass,
    RunningMedian,
    Verdict,
    classify_failure,
    classify_response,
    is_connection_level,
    size_verdict,
)
from topicstreams.spiders.bing import BingSpider
from topicstreams.spiders.brave import BraveSpider
from topicstreams.spiders.google import GoogleSpider
from topicstreams.spiders.yahoo import YahooSpider

MARKERS = Google.markers
RESULTS = "<div id='rso'><div data-news-doc-id='1'>a result</div></div>"


def classify(status=200, url="https://www.google.com/search?q=x", html=RESULTS, items=1, headers=None):
    return classify_response(MARKERS, status=status, url=url, html=html, item_count=items, headers=headers)


@pytest.mark.parametrize(
    ("kwargs", "expected"),
    [
        ({}, ResponseClass.OK),
        # 1. challenge, whatever the status
        (
            {"status": 429, "url": "https://www.google.com/sorry/index?continue=x", "html": "", "items": 0},
            ResponseClass.CHALLENGE,
        ),
        ({"html": '<form id="captcha-form"></form>', "items": 0}, ResponseClass.CHALLENGE),
        (
            {"html": "Our systems have detected unusual traffic from your computer network", "items": 0},
            ResponseClass.CHALLENGE,
        ),
        ({"html": "<title>Just a moment...</title>", "items": 0, "status": 403}, ResponseClass.CHALLENGE),
        ({"headers": {"CF-Mitigated": "challenge"}}, ResponseClass.CHALLENGE),
        (
            {"html": "<script src='https://geo.captcha-delivery.com/c.js'></script>", "items": 0},
            ResponseClass.CHALLENGE,
        ),
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
    ],
)
def test_classes_in_the_contracts_order(kwargs, expected):
    assert classify(**kwargs).cls is expected


def test_verdicts_say_why_and_which_bench():
    verdict = classify(status=429, html="", items=0)
    assert verdict.reason == "HTTP 429" and verdict.benches
    assert not classify().benches
    assert not classify(status=500, items=0).benches


@pytest.mark.parametrize(
    ("exception", "expected"),
    [
        (net_error.ConnectionRefusedError(), ResponseClass.HARD_BLOCK),
        (net_error.TimeoutError(), ResponseClass.HARD_BLOCK),
        (Exception("Page.goto: net::ERR_CONNECTION_RESET at https://x"), ResponseClass.HARD_BLOCK),
        (Exception("Page.goto: Timeout 30000ms exceeded."), ResponseClass.HARD_BLOCK),
        (Exception("Page.goto: net::ERR_NAME_NOT_RESOLVED at https://x"), ResponseClass.HARD_BLOCK),
        (net_error.DNSLookupError(), ResponseClass.HARD_BLOCK),
        (ValueError("something else"), ResponseClass.ERROR),
    ],
)
def test_failures_without_a_response(exception, expected):
    assert classify_failure(exception).cls is expected


@pytest.mark.parametrize(
    ("exception", "connection_level"),
    [
        (net_error.ConnectionRefusedError(), True),
        (net_error.DNSLookupError(), True),
        (Exception("Page.goto: net::ERR_NAME_NOT_RESOLVED at https://x"), True),
        (Exception("Page.goto: net::ERR_CONNECTION_REFUSED at https://x"), True),
        (Exception("Page.goto: net::ERR_ADDRESS_UNREACHABLE at https://x"), True),
        (Exception("Page.goto: net::ERR_CONNECTION_RESET at https://x"), False),  # the engine hung up: its answer
        (Exception("Page.goto: Timeout 30000ms exceeded."), False),
        (ValueError("something else"), False),
    ],
)
def test_connection_level_failures_say_the_way_out_is_broken(exception, connection_level):
    assert is_connection_level(classify_failure(exception).reason) is connection_level


# -- every engine has its markers ------------------------------------------------------------------------


def test_every_engine_has_its_markers_and_every_spider_drives_its_engine():
    assert tuple(REGISTRY) == ENGINES
    for spider in (GoogleSpider, BingSpider, YahooSpider, BraveSpider):
        engine = spider.engine_class
        assert spider.name == engine.name and markers_for(spider.name) is engine.markers
        assert engine.markers.no_results, f"{engine.name} has no 'no results' phrasing"
        assert engine.markers != type(WALL_MARKERS)(), f"{engine.name} has no markers of its own"
    assert markers_for("altavista") == type(WALL_MARKERS)()  # an unknown engine: only the walls apply


@pytest.mark.parametrize(
    ("engine", "url", "html", "status"),
    [
        ("bing", "https://www.bing.com/turing/captcha/challenge?q=x", "<div>Please solve the challenge</div>", 200),
        ("brave", "https://search.brave.com/news?q=x", "<title>Brave Search - PoW Captcha</title>", 200),
        ("brave", "https://search.brave.com/news?q=x", "kit.start({data:{challengeSet:{a:1}}})", 200),
    ],
)
def test_each_engines_own_challenge(engine, url, html, status):
    verdict = classify_response(markers_for(engine), status=status, url=url, html=html, item_count=0)
    assert verdict.cls is ResponseClass.CHALLENGE, verdict


@pytest.mark.parametrize(
    ("engine", "html"),
    [
        ("bing", "<p>There are no results for <b>x</b></p>"),
        ("yahoo", "<p>We did not find results for: <strong>x</strong></p>"),
        ("brave", "<div>No results found</div>"),
        ("google", "Your search - <b>x</b> - did not match any documents."),
    ],
)
def test_each_engines_no_results_phrasing_is_a_genuine_empty_answer(engine, html):
    markers = markers_for(engine)
    assert (
        classify_response(markers, status=200, url="https://e.example/", html=html, item_count=0).cls
        is ResponseClass.OK
    )
    # ... and another engine's phrasing is not this engine's
    other = next(
        name
        for name in ENGINES
        if name != engine and not any(phrase in html.lower() for phrase in markers_for(name).no_results)
    )
    assert (
        classify_response(markers_for(other), status=200, url="https://e.example/", html=html, item_count=0).cls
        is ResponseClass.SOFT_BLOCK
    )


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize(
    ("html", "headers"),
    [
        ("<title>Attention Required! | Cloudflare</title>", None),
        ("<div id='px-captcha'></div><p>Press &amp; Hold to confirm</p>", None),
        ("<script src='/_Incapsula_Resource?SWJIYLWA=x'></script>", None),
        ("", {"cf-mitigated": "challenge"}),
    ],
)
def test_the_walls_apply_to_every_engine(engine, html, headers):
    verdict = classify_response(
        markers_for(engine), status=403, url="https://e.example/", html=html, item_count=0, headers=headers
    )
    assert verdict.cls is ResponseClass.CHALLENGE


def test_a_results_page_that_quotes_a_marker_is_not_a_block():
    # A topic or a headline may quote a challenge or block phrase: with result items on the page it is news.
    quoting = RESULTS + "<h3>Google: 'our systems have detected unusual traffic' - g-recaptcha explained</h3>"
    assert classify(html=quoting).cls is ResponseClass.OK
    assert classify(html=RESULTS + "/httpservice/retry/enablejs").cls is ResponseClass.OK
    # ... while a marker in the URL, or a page without items, still is one
    assert classify(html=quoting, items=0).cls is ResponseClass.CHALLENGE
    assert classify(url="https://www.google.com/sorry/index?continue=x").cls is ResponseClass.CHALLENGE
    # a topic echoed in the URL's query is not a marker either; the query's keys still are
    assert (
        classify(url="https://www.google.com/search?q=consent.google.com+%2Fsorry%2F&tbm=nws").cls is ResponseClass.OK
    )


def test_a_page_far_below_the_running_median_size_is_a_soft_block():
    norm = RunningMedian(samples=5, min_samples=3)
    ok = Verdict(ResponseClass.OK, "10 results")
    assert size_verdict(ok, 100, norm.value, 0.3) is ok  # no normal yet: nothing to judge against
    for size in (50_000, 60_000, 55_000):
        norm.add(size)
    assert norm.value == 55_000
    small = size_verdict(ok, 16_000, norm.value, 0.3)
    assert small.cls is ResponseClass.SOFT_BLOCK and small.benches
    assert "16000 bytes" in small.reason and "55000" in small.reason
    assert size_verdict(ok, 16_500, norm.value, 0.3) is ok  # exactly 0.3 x the median is still normal
    blocked = Verdict(ResponseClass.HARD_BLOCK, "HTTP 429")
    assert size_verdict(blocked, 10, norm.value, 0.3) is blocked  # only ok pages are judged by size
    for size in (1, 2, 3, 4, 5):  # the median follows the recent pages only
        norm.add(size)
    assert norm.value == 3
