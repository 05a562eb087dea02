"""The fake Brave News: results markup and kit.start data per ENGINES.md, paging, sidebar noise, block pages."""

from __future__ import annotations

import calendar
import json
import re
import time
from urllib.parse import parse_qs, parse_qsl, urlencode, urlsplit

import pytest
from parsel import Selector

from fake_engines import FakeEngines, brave, catalogue
from tests.support.fakes_http import fetch, reset_fakes_per_test, running_fakes
from topicstreams.engines import markers_for
from topicstreams.engines.classify import ResponseClass, classify_response
from topicstreams.engines.news_urls import is_tracking_param, normalize_url

TWO_PAGES = "climate summit"  # 27 articles: 20 + 7
ONE_PAGE = "election results"  # 19 articles
ITEM = 'div.snippet[data-type="news"]'
MARKERS = markers_for("brave")


fakes = running_fakes("brave")
_clean = reset_fakes_per_test()


def news_url(fakes: FakeEngines, topic: str = TWO_PAGES, page: int | None = 0, **extra: str) -> str:
    query = {"q": topic, "tf": "pd"}
    if page is not None:
        query["offset"] = str(page)
    query["source"] = "web"
    query.update(extra)
    return f"{fakes.base_url('brave')}/news?{urlencode(query)}"


def verdict(status: int, body: str, url: str = "http://127.0.0.1/news") -> ResponseClass:
    items = len(Selector(text=body).css(ITEM))
    return classify_response(MARKERS, status=status, url=url, html=body, item_count=items).cls


# -- a small reader for JavaScript object literals (unquoted keys, void 0) ------------------------------

_DECODER = json.JSONDecoder()
_WORD = re.compile(r"[A-Za-z_$][\w$]*")
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")


def _skip(text: str, i: int) -> int:
    while text[i].isspace():
        i += 1
    return i


def js_value(text: str, i: int) -> tuple[object, int]:
    """Parse the JavaScript literal at ``text[i:]``: (value, end)."""
    i = _skip(text, i)
    char = text[i]
    if char == '"':
        return _DECODER.raw_decode(text, i)
    if char in "{[":
        close = "}" if char == "{" else "]"
        out: dict | list = {} if char == "{" else []
        i = _skip(text, i + 1)
        while text[i] != close:
            if isinstance(out, dict):
                if text[i] == '"':
                    key, i = _DECODER.raw_decode(text, i)
                else:
                    match = _WORD.match(text, i)
                    key, i = match.group(), match.end()
                i = _skip(text, i)
                assert text[i] == ":", text[i - 20 : i + 20]
                out[key], i = js_value(text, i + 1)
            else:
                value, i = js_value(text, i)
                out.append(value)
            i = _skip(text, i)
            if text[i] == ",":
                i = _skip(text, i + 1)
        return out, i + 1
    if text.startswith("void 0", i):
        return None, i + 6
    for word, value in (("true", True), ("false", False), ("null", None)):
        if text.startswith(word, i):
            return value, i + len(word)
    match = _NUMBER.match(text, i)
    assert match, text[i : i + 40]
    return json.loads(match.group()), match.end()


def kit_data(body: str) -> dict:
    """The page node's ``data`` of the ``kit.start(app, element, {...})`` call."""
    scripts = [s for s in Selector(text=body).css("script::text").getall() if "kit.start(" in s]
    assert len(scripts) == 1
    script = scripts[0]
    start = script.index("{", script.index("kit.start("))
    options, end = js_value(script, start)
    assert script[end:].lstrip().startswith(")")
    nodes = [node for node in options["data"] if node]
    return nodes[-1]["data"]


# -- the module's helpers -------------------------------------------------------------------------------


def test_expected_articles_pages_and_helpers():
    assert brave.PER_PAGE == 20
    assert catalogue.page_count(TWO_PAGES, 20) == 2 and catalogue.page_count(ONE_PAGE, 20) == 1
    everything = [a.url for a in catalogue.all_articles(TWO_PAGES)]
    first, second = brave.expected_articles(TWO_PAGES, 0), brave.expected_articles(TWO_PAGES, 1)
    assert first == everything[:20] and second == everything[20:] and len(second) == 7
    assert first == [a.url for a in catalogue.articles_from(TWO_PAGES, 0, 20)]
    assert brave.expected_articles(TWO_PAGES, 2) == [] and brave.expected_articles(TWO_PAGES, -1) == []
    assert brave.expected_articles(ONE_PAGE, 0) == [a.url for a in catalogue.all_articles(ONE_PAGE)]
    assert [brave.more_results_available(TWO_PAGES, p) for p in range(3)] == [True, False, False]
    assert brave.more_results_available(ONE_PAGE, 0) is False
    assert all(is_tracking_param(name) for name in brave.TRACKING_PARAMS)

    side = brave.sidebar_urls(TWO_PAGES, 0)
    assert len(side) >= 3 and len(set(side)) == len(side)
    assert all(re.fullmatch(r"https://www\.[a-z]+\.example/trending/[\w-]+", url) for url in side)
    assert not {normalize_url(u) for u in side} & {normalize_url(u) for u in everything}
    assert brave.sidebar_urls(TWO_PAGES, 2) == []
    assert brave.brave_age(59) == "1 minute ago" and brave.brave_age(2 * 3600 + 5) == "2 hours ago"
    assert brave.brave_age(8 * 86400) == "1 week ago" and brave.brave_age(3 * 86400) == "3 days ago"


# -- results pages --------------------------------------------------------------------------------------


def test_results_page_items_match_the_catalogue(fakes):
    status, headers, body, _ = fetch(news_url(fakes))
    assert status == 200 and headers["Content-Type"].startswith("text/html")
    sel = Selector(text=body)
    assert sel.css("html::attr(lang)").get() == "en" and len(body) > 30_000
    assert "@font-face" in body and sel.css("title::text").get() == f"{TWO_PAGES} - Brave Search"

    items = sel.css(ITEM)
    articles = catalogue.articles_from(TWO_PAGES, 0, 20)
    assert len(items) == 20
    hrefs = []
    ages_in_header = 0
    for item, article in zip(items, articles, strict=False):
        href = item.css("a.l1::attr(href)").get()
        hrefs.append(href)
        assert href.startswith("https://") and urlsplit(href).hostname == urlsplit(article.url).hostname
        assert item.css("a.l1 div.title::text").get() == article.title
        assert not item.css("h1, h2, h3, h4, h5, h6, [role=heading]")
        spans = item.css(".site-name-content span::text").getall()
        assert spans[0] == article.source and spans[1] == urlsplit(article.url).hostname
        assert item.css("div.description::text").get() == article.snippet
        times = item.css("div.age-snippet::text, .age-header::text").getall()
        assert times == [brave.brave_age(article.age_seconds)]
        assert re.fullmatch(r"\d+ (minute|hour)s? ago", times[0])
        ages_in_header += bool(item.css(".age-header"))
    assert 1 <= ages_in_header < 20

    # links: direct, normalizing to the expected articles; tracking parameters on some only
    assert [normalize_url(h) for h in hrefs] == [normalize_url(u) for u in brave.expected_articles(TWO_PAGES, 0)]
    tracked = 0
    for href, article in zip(hrefs, articles, strict=False):
        added = set(dict(parse_qsl(urlsplit(href).query))) - set(dict(parse_qsl(urlsplit(article.url).query)))
        assert added <= set(brave.TRACKING_PARAMS) and all(is_tracking_param(name) for name in added)
        tracked += bool(added)
    assert 3 <= tracked < 20
    for href, article in zip(hrefs, articles, strict=False):  # the meaningful id parameter of id-style URLs is kept
        if "?id=" in article.url:
            assert parse_qs(urlsplit(href).query)["id"] == parse_qs(urlsplit(article.url).query)["id"]

    # thumbnails on some, every image on this machine or on a .invalid host
    thumbs = sel.css(f"{ITEM} a.thumbnail img::attr(src)").getall()
    assert 2 <= len(thumbs) < 20 and all(re.fullmatch(r"/thumbs/[\w-]+\.png", src) for src in thumbs)
    for ref in sel.css("img::attr(src), link::attr(href), script::attr(src)").getall():
        host = urlsplit(ref).hostname
        assert host is None or host.endswith(".invalid"), ref
    assert re.findall(r'import\("([^"]+)"\)', body) and all(
        urlsplit(u).hostname.endswith(".invalid") for u in re.findall(r'import\("([^"]+)"\)', body)
    )

    # pager: Next to offset=1, no Previous on the first page
    nxt = sel.xpath('//a[normalize-space()="Next"]/@href').getall()
    assert len(nxt) == 1 and urlsplit(nxt[0]).path == "/news"
    query = parse_qs(urlsplit(nxt[0]).query)
    assert query["offset"] == ["1"] and query["q"] == [TWO_PAGES] and query["tf"] == ["pd"]
    assert not sel.xpath('//a[normalize-space()="Previous"]')

    assert verdict(status, body) is ResponseClass.OK
    assert "no results found" not in body.lower() and "challengeset" not in body.lower()


def test_kit_start_data_mirrors_the_html(fakes):
    before = time.time()
    _, _, body, _ = fetch(news_url(fakes))
    assert "kit.start(app, element, {node_ids:" in body  # a JS literal: unquoted keys, not JSON
    assert "void 0" in body
    data = kit_data(body)
    items = Selector(text=body).css(ITEM)
    results = data["news"]["results"]
    assert data["query"]["original"] == TWO_PAGES
    assert data["news"]["more_results_available"] is True
    assert [r["url"] for r in results] == [i.css("a.l1::attr(href)").get() for i in items]
    for result, article in zip(results, catalogue.articles_from(TWO_PAGES, 0, 20), strict=False):
        assert (result["title"], result["description"]) == (article.title, article.snippet)
        assert result["age"] == brave.brave_age(article.age_seconds)
        assert result["profile"]["name"] == article.source
        host = urlsplit(article.url).hostname
        meta = result["meta_url"]
        assert meta["scheme"] == "https" and meta["netloc"] == meta["hostname"] == host
        assert meta["path"].startswith("›")
        stamp = calendar.timegm(time.strptime(result["page_age"], "%Y-%m-%dT%H:%M:%S"))
        assert abs(stamp - (before - article.age_seconds)) <= 3
    assert sum("thumbnail" in r for r in results) == len(Selector(text=body).css(f"{ITEM} a.thumbnail img"))


def test_sidebar_noise_is_outside_the_results(fakes):
    _, _, body, _ = fetch(news_url(fakes))
    sel = Selector(text=body)
    stories = sel.css("section.top-stories li > a")
    assert [a.attrib["href"] for a in stories] == brave.sidebar_urls(TWO_PAGES, 0)
    for li in sel.css("section.top-stories li"):  # bare: a link and its text, nothing else
        assert len(li.xpath("./*")) == 1 and not li.css("span, div, time, img")
    item_links = set(sel.css(f"{ITEM} a::attr(href)").getall())
    assert not item_links & set(brave.sidebar_urls(TWO_PAGES, 0))
    assert not sel.css("#results a[href*='/trending/']") and not sel.css(f"aside {ITEM}")
    related = sel.css("section.related-queries a::attr(href)").getall()
    assert len(related) >= 3 and all(urlsplit(h).path == "/news" and not urlsplit(h).netloc for h in related)
    assert [parse_qs(urlsplit(h).query)["q"][0] for h in related] == brave.related_searches(TWO_PAGES)


def test_second_page_then_past_the_end(fakes):
    status, _, body, _ = fetch(news_url(fakes, page=1))
    sel = Selector(text=body)
    items = sel.css(ITEM)
    assert status == 200 and len(items) == 7
    hrefs = [normalize_url(i.css("a.l1::attr(href)").get()) for i in items]
    assert hrefs == [normalize_url(u) for u in brave.expected_articles(TWO_PAGES, 1)]
    assert not sel.xpath('//a[normalize-space()="Next"]')
    prev = sel.xpath('//a[normalize-space()="Previous"]/@href').get()
    assert parse_qs(urlsplit(prev).query)["offset"] == ["0"]
    assert kit_data(body)["news"]["more_results_available"] is False
    assert [a.attrib["href"] for a in sel.css("section.top-stories li > a")] == brave.sidebar_urls(TWO_PAGES, 1)

    status, _, past, _ = fetch(news_url(fakes, page=2))
    assert status == 200 and brave.NO_RESULTS_MESSAGE in past and not Selector(text=past).css(ITEM)
    assert kit_data(past)["news"] == {
        "type": "news",
        "results": [],
        "mutated_by_goggles": False,
        "more_results_available": False,
    }
    assert verdict(status, past) is ResponseClass.OK
    assert [e["step"] for e in fakes.requests("brave")] == ["results", "empty"]


def test_one_page_topic_has_no_next(fakes):
    _, _, body, _ = fetch(news_url(fakes, ONE_PAGE))
    sel = Selector(text=body)
    assert len(sel.css(ITEM)) == 19 and not sel.xpath('//a[normalize-space()="Next"]')
    assert kit_data(body)["news"]["more_results_available"] is False


def test_missing_or_odd_parameters(fakes):
    base = fakes.base_url("brave")
    reference = Selector(text=fetch(news_url(fakes))[2]).css(f"{ITEM} a.l1::attr(href)").getall()
    for query in (
        {"q": TWO_PAGES},
        {"q": TWO_PAGES, "offset": "abc"},
        {"q": TWO_PAGES, "offset": "-3"},
        {"q": TWO_PAGES, "source": "web"},
    ):
        status, _, body, _ = fetch(f"{base}/news?{urlencode(query)}")
        assert status == 200
        assert Selector(text=body).css(f"{ITEM} a.l1::attr(href)").getall() == reference
    # without tf the pager does not invent one
    _, _, body, _ = fetch(f"{base}/news?{urlencode({'q': TWO_PAGES})}")
    nxt = Selector(text=body).xpath('//a[normalize-space()="Next"]/@href').get()
    assert "tf" not in parse_qs(urlsplit(nxt).query) and parse_qs(urlsplit(nxt).query)["offset"] == ["1"]
    log = fakes.requests("brave")
    assert [e["kind"] for e in log] == ["results"] * 6 and log[1]["query"] == {"q": TWO_PAGES}


# -- other page kinds -----------------------------------------------------------------------------------


def test_empty_page(fakes):
    odd = '<b>odd</b> "topic" & co'
    fakes.script("brave", ["empty"])
    status, _, body, _ = fetch(news_url(fakes, odd))
    sel = Selector(text=body)
    assert status == 200 and not sel.css(ITEM)
    assert sel.css("#no-results .no-results-heading::text").get() == "No results found"
    suggestion = " ".join(sel.css("#no-results p.no-results-suggestion ::text").getall())
    assert "Try different" in suggestion and odd in suggestion
    assert "<b>odd</b>" not in body and "&lt;b&gt;odd&lt;/b&gt;" in body
    assert kit_data(body)["query"]["original"] == odd
    assert not sel.xpath('//a[normalize-space()="Next"]') and not sel.css("section.top-stories")
    assert classify_response(MARKERS, status=200, url="", html=body, item_count=0).reason == "no results"


def test_blank_and_small_pages(fakes):
    results_size = len(fetch(news_url(fakes, "something else"))[2])
    fakes.script("brave", ["blank", "small"])
    status, _, blank, _ = fetch(news_url(fakes))
    sel = Selector(text=blank)
    assert status == 200 and not sel.css(ITEM) and sel.css("#results") and sel.css("#searchbox")
    assert "no results" not in blank.lower() and len(blank) > 0.3 * results_size
    assert kit_data(blank)["news"]["results"] == []
    assert verdict(status, blank) is ResponseClass.SOFT_BLOCK

    status, _, small, _ = fetch(news_url(fakes))
    assert status == 200 and len(small) < 200 and verdict(status, small) is ResponseClass.SOFT_BLOCK
    assert [e["step"] for e in fakes.requests("brave")] == ["results", "blank", "small"]


def test_pow_challenge_page(fakes):
    fakes.script("brave", ["pow"])
    url = news_url(fakes, page=1)
    status, _, body, _ = fetch(url)
    sel = Selector(text=body)
    assert status == 200 and "PoW Captcha" in sel.css("title::text").get()
    assert sel.css("title::text").get() in brave.POW_TITLES
    assert brave.POW_MESSAGE in sel.css("h1::text").get() and not sel.css(ITEM)
    challenge = kit_data(body)["challengeSet"]
    assert challenge["challenges"] and all(c["salt"] for c in challenge["challenges"])
    assert kit_data(body)["redirect"] == url[len(fakes.base_url("brave")) :]
    assert verdict(status, body) is ResponseClass.CHALLENGE
    titles = {Selector(text=brave.render_pow("/news?q=x", t, 0)).css("title::text").get() for t in "abcdefgh"}
    assert titles == set(brave.POW_TITLES)


def test_ratelimit_page(fakes):
    fakes.script("brave", ["ratelimit"])
    status, headers, body, _ = fetch(news_url(fakes))
    assert status == 429 and len(body) < 1000 and headers["Content-Type"].startswith("text/html")
    assert Selector(text=body).css("title::text").get() == "Too Many Requests"
    assert verdict(status, body) is ResponseClass.HARD_BLOCK
    assert fakes.requests("brave")[0]["step"] == "ratelimit"


def test_scripted_steps_and_routes(fakes):
    fakes.route("brave", "Quiet  Topic", "empty")
    fakes.script("brave", ["pow", {"page": "ratelimit"}])
    assert brave.NO_RESULTS_MESSAGE in fetch(news_url(fakes, "quiet topic"))[2]
    assert fetch(news_url(fakes))[0] == 200
    assert fetch(news_url(fakes))[0] == 429
    assert len(Selector(text=fetch(news_url(fakes))[2]).css(ITEM)) == 20
    assert brave.NO_RESULTS_MESSAGE in fetch(news_url(fakes, "QUIET topic", page=1))[2]
    assert [e["step"] for e in fakes.requests("brave")] == ["empty", "pow", "ratelimit", "results", "empty"]
    with pytest.raises(ValueError):
        fakes.script("brave", ["sorry"])  # Google's kind, not Brave's


def test_home_robots_and_unknown_paths(fakes):
    base = fakes.base_url("brave")
    status, _, home, _ = fetch(base + "/")
    assert status == 200 and Selector(text=home).css("form[action='/news'] input[name=q]")
    status, headers, robots, _ = fetch(base + "/robots.txt")
    assert status == 200 and headers["Content-Type"] == "text/plain" and "Disallow: /news" in robots
    assert fetch(base + "/search?q=x")[0] == 404
    assert [(e["kind"], e["step"]) for e in fakes.requests("brave")] == [
        ("other", "home"),
        ("other", "robots"),
        ("other", "not_found"),
    ]


def test_script_data_cannot_close_the_script(fakes):
    topic = 'x </script><script>alert("hi")</script> y'
    _, _, body, _ = fetch(news_url(fakes, topic))
    assert body.count("</script>") == 1 and "\\u003c/script>" in body
    data = kit_data(body)
    assert data["query"]["original"] == topic
    assert [r["url"] for r in data["news"]["results"]] == Selector(text=body).css(f"{ITEM} a.l1::attr(href)").getall()
