"""The Google engine on plain values: its URLs and its parser on the fake's HTML (no browser).

The browser-rendered path (with the JavaScript-added result) is covered end to end in test_google_crawl.
"""

import time
from urllib.parse import parse_qs, urlsplit

import pytest
from scrapy.http import HtmlResponse

from fake_engines.google import layout, render_search_page
from topicstreams.engines.google import Google


def engine(freshness="hour"):
    return Google("https://www.google.com", freshness)


@pytest.mark.parametrize(
    ("freshness", "tbs"),
    [
        ("hour", "qdr:h,sbd:1"),
        ("day", "qdr:d,sbd:1"),
        ("week", "qdr:w,sbd:1"),
        ("month", "qdr:m,sbd:1"),
        ("any", "sbd:1"),
    ],
)
def test_results_url_is_newest_first_in_the_freshness_window(freshness, tbs):
    url = engine(freshness).results_url("climate change", 0)
    parts = urlsplit(url)
    assert (parts.scheme, parts.netloc, parts.path) == ("https", "www.google.com", "/search")
    assert parse_qs(parts.query) == {"q": ["climate change"], "tbm": ["nws"], "tbs": [tbs]}


def test_page_n_is_an_offset_of_ten():
    assert parse_qs(urlsplit(engine().results_url("x", 2)).query)["start"] == ["20"]


def test_parser_reads_every_server_side_result_of_the_fake_page():
    html, _ = render_search_page("alpha", 0, time.time())
    response = HtmlResponse("http://127.0.0.1:8000/search?q=alpha&tbm=nws", body=html.encode(), encoding="utf-8")
    google = engine()
    nodes = google.result_nodes(response)
    # without a browser the JavaScript-added result is missing: exactly the server-side slots are found
    server_side = [slot for slot in layout("alpha", 0).slots if slot.role != "js"]
    assert len(nodes) == len(server_side)
    parsed = [google.parse_result(node, response) for node in nodes]
    assert [p.url for p in parsed] == [slot.href for slot in server_side]
    assert all(p.title and p.source and p.snippet and p.time_text for p in parsed)
    assert sum(p.timestamp is None for p in parsed) == sum(not slot.has_ts for slot in server_side)
    assert google.has_next_page(response, 0) is layout("alpha", 0).has_next
