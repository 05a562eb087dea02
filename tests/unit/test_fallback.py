"""Parsers that survive redesigns: every class name of a fake page scrambled, the same results still found.

The pages are the fake engines' own (fetched without a browser); the engines' readers read them as in a crawl
(``PageReader.read``): the known layout first, then the structural fallback.
"""

from __future__ import annotations

import hashlib
import re
import urllib.request
from datetime import UTC, datetime

import pytest
from scrapy.http import HtmlResponse

from fake_engines import FakeEngines
from fake_engines.catalogue import all_articles
from tests.support.parsing import parsing_reader, reading_of
from topicstreams import ENGINES
from topicstreams.engines import REGISTRY as ENGINE_CLASSES
from topicstreams.engines.classify import ResponseClass
from topicstreams.engines.fallback import structural_results
from topicstreams.engines.news_urls import normalize_url

TOPIC = "alpha"
CATALOGUE = {normalize_url(article.url): article for article in all_articles(TOPIC)}


@pytest.fixture(scope="module")
def fakes():
    with FakeEngines(engines=ENGINES) as engines:
        yield engines


def make_reader(engine: str, fakes: FakeEngines):
    return parsing_reader(engine, fakes.base_url(engine))


def fetch(reader, page: int = 0) -> HtmlResponse:
    url = reader.engine.results_url(TOPIC, page)
    with urllib.request.urlopen(url, timeout=10) as reply:
        return HtmlResponse(url, body=reply.read(), encoding="utf-8", status=reply.status)


def _scrambled(value: str, salt: str) -> str:
    return " ".join("s" + hashlib.sha256(f"{salt}/{name}".encode()).hexdigest()[:7] for name in value.split())


def scramble_classes(html: str) -> str:
    """Every class name replaced by a meaningless one (consistently, as a minifier's rename would)."""
    return re.sub(r'(\sclass=)(["\'])(.*?)\2', lambda m: f'{m[1]}"{_scrambled(m[3], "class")}"', html, flags=re.DOTALL)


def scramble_everything(html: str) -> str:
    """Class names, ids and data-* attribute names all renamed: nothing but the page's shape is left."""
    html = scramble_classes(html)
    html = re.sub(r'(\sid=)(["\'])(.*?)\2', lambda m: f'{m[1]}"{_scrambled(m[3], "id")}"', html, flags=re.DOTALL)
    return re.sub(r"\sdata-([a-z-]+)=", lambda m: f" data-{_scrambled(m[1], 'data')}=", html)


def results_of(reader, response: HtmlResponse):
    reading = reading_of(reader, response, 0, datetime.now(UTC))
    parsed = reading.results
    assert reading.fallback == ("fallback" in reading.verdict.reason)
    return reading.verdict, [(normalize_url(response.urljoin(p.url), {"127.0.0.1"}), p.title) for p in parsed], parsed


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("scramble", [scramble_classes, scramble_everything])
def test_a_scrambled_page_still_gives_the_same_results(fakes, engine, scramble):
    reader = make_reader(engine, fakes)
    original = fetch(reader)
    verdict, known, _ = results_of(reader, original)
    assert verdict.cls is ResponseClass.OK and "fallback" not in verdict.reason
    assert len(known) >= 8 and {url for url, _ in known} <= set(CATALOGUE)

    changed = original.replace(body=scramble(original.text).encode("utf-8"))
    assert changed.text != original.text
    verdict, found, parsed = results_of(reader, changed)
    assert verdict.cls is ResponseClass.OK, verdict
    assert found == known  # same URLs, same titles, same order
    if "fallback" in verdict.reason:
        # the fallback reads the other fields by shape too: every result has its time, most their snippet
        assert all(p.time_text or p.timestamp for p in parsed)
        assert (
            sum(p.snippet == CATALOGUE[url].snippet for p, (url, _) in zip(parsed, found, strict=False))
            >= len(found) - 1
        )
        assert (
            sum(p.source == CATALOGUE[url].source for p, (url, _) in zip(parsed, found, strict=False)) >= len(found) - 1
        )
    else:
        assert scramble is scramble_classes  # only a layout not built on class names survives as itself


@pytest.mark.parametrize("engine", ENGINES)
def test_the_fallback_does_not_take_the_sidebar_or_the_engines_own_links(fakes, engine):
    reader = make_reader(engine, fakes)
    response = fetch(reader)
    found = structural_results(
        response.selector.root, response.url, owns_host=reader.engine.owns_host, redirector_hosts={"127.0.0.1"}
    )
    urls = [result.url for result in found]
    assert set(urls) <= set(CATALOGUE)
    assert not any(urls.count(url) > 1 and engine != "google" for url in urls)


def test_a_page_with_nothing_but_links_has_no_results():
    html = """<html><body><h1>Top stories</h1><ul>
      <li><a href="https://a.example/1">First headline here</a></li>
      <li><a href="https://b.example/2">Second headline here</a></li></ul>
      <a href="/search?q=more">More searches</a></body></html>"""
    response = HtmlResponse("https://engine.example/search?q=x", body=html.encode(), encoding="utf-8")
    assert structural_results(response.selector.root, response.url) == []


def test_a_result_is_an_off_engine_link_beside_a_heading_and_redirectors_are_unwrapped():
    html = """<html><body><main>
      <div><h3><a href="/url?q=https%3A%2F%2Fnews.example%2Fstory%3Futm_source%3Dx">A headline</a></h3>
           <span>3 hours ago</span></div>
      <div><a href="https://other.example/b"><div role="heading">Another headline</div></a>
           <p>Some text long enough to be taken for the snippet of this result.</p></div>
      <div><a href="https://engine.example/about"><h3>About the engine</h3></a></div>
      <div><a href="https://maps.engine.example/"><h3>Maps</h3></a></div>
    </main></body></html>"""
    response = HtmlResponse("https://engine.example/search?q=x", body=html.encode(), encoding="utf-8")
    found = structural_results(
        response.selector.root,
        response.url,
        owns_host=lambda host: host == "engine.example" or host.endswith(".engine.example"),
        redirector_hosts=("engine.example",),
        reads_as_time=lambda text: text.endswith(" ago"),
    )
    assert [(r.url, r.title) for r in found] == [
        ("https://news.example/story", "A headline"),
        ("https://other.example/b", "Another headline"),
    ]
    assert found[0].time_text == "3 hours ago" and found[0].snippet is None
    assert found[1].snippet == "Some text long enough to be taken for the snippet of this result."


# A results page no known layout matches: two results, and around them the engine's own chrome (pages of its country
# and regional sites), each link with a heading and a line of text as a result would have. (Not their home pages:
# the fallback takes no site's home page, whoever owns it, see test_walls.py.)
CHROME = {
    "google": ["https://www.google.com.ng/intl/en/about/products", "https://www.google.de/preferences"],
    "yahoo": ["https://it.yahoo.com/notizie/", "https://uk.news.yahoo.com/world/"],
}
RESULTS = ["https://googleblog.example/2026/alpha-ships", "https://news.example/ng/alpha"]


def chrome_page(engine: str) -> str:
    header, footer = (
        f'<div><a href="{href}"><h3>Our products</h3></a><span>Everything we make, in one place</span></div>'
        for href in CHROME[engine]
    )
    return f"""<html><body><header>{header}</header><main>
      <div><a href="https://googleblog.example/2026/alpha-ships?utm_source=g"><h3>Alpha ships at last</h3></a>
           <span>The Googleblog</span><span>2 hours ago</span></div>
      <div><a href="https://www.google.com.ng/url?q=https%3A%2F%2Fnews.example%2Fng%2Falpha&amp;sa=U">
           <h3>What alpha means for Lagos</h3></a><span>News Example</span></div>
    </main><footer>{footer}</footer></body></html>"""


@pytest.mark.parametrize("engine", sorted(CHROME))
def test_the_engines_country_and_regional_sites_are_not_results(engine):
    response = HtmlResponse(
        f"https://search.{engine}.example/search?q=alpha", body=chrome_page(engine).encode(), encoding="utf-8"
    )
    root = response.selector.root
    # owning nothing, the page's chrome reads as results
    anyone = [result.url for result in structural_results(root, response.url)]
    assert anyone == [CHROME[engine][0], *RESULTS, CHROME[engine][1]]
    found = structural_results(root, response.url, owns_host=ENGINE_CLASSES[engine].owns_host)
    assert [(result.url, result.title) for result in found] == [
        (RESULTS[0], "Alpha ships at last"),
        (RESULTS[1], "What alpha means for Lagos"),
    ]


@pytest.mark.parametrize("engine", sorted(CHROME))
def test_the_reader_leaves_the_engines_own_sites_out_of_its_fallback(engine):
    reader = parsing_reader(engine, {"google": "https://www.google.com", "yahoo": "https://search.yahoo.com"}[engine])
    url = reader.engine.results_url(TOPIC, 0)
    response = HtmlResponse(url, body=chrome_page(engine).encode(), encoding="utf-8")
    reading = reading_of(reader, response)
    assert reading.fallback and reading.verdict.cls is ResponseClass.OK
    assert [result.url for result in reading.results] == RESULTS
