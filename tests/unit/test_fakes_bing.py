"""The fake Bing News: full page and infinite-scroll fragments, tracking, localised times, sidebar, blocks."""

from __future__ import annotations

import re
from urllib.parse import parse_qsl, urlencode, urlsplit

import pytest
from parsel import Selector

from fake_engines import FakeEngines, bing, catalogue
from tests.support.fakes_http import fetch, reset_fakes_per_test, running_fakes
from topicstreams.engines.news_urls import is_tracking_param, normalize_url

TOPIC = "climate summit"
CARDS = "div.news-card.newsitem"
QFT = 'interval="4" sortbydate="1"'


fakes = running_fakes("bing")
_clean = reset_fakes_per_test()


def search_url(fakes: FakeEngines, topic: str = TOPIC, **extra: str) -> str:
    query = {"q": topic, "qft": QFT, "form": "PTFTNR", **extra}
    return f"{fakes.base_url('bing')}/news/search?{urlencode(query)}"


def scroll_url(fakes: FakeEngines, page: int, topic: str = TOPIC) -> str:
    query = {"q": topic, "InfiniteScroll": 1, "first": page * 10 + 1, "SFX": page, "qft": QFT, "form": "PTFTNR"}
    return f"{fakes.base_url('bing')}/news/infinitescrollajax?{urlencode(query)}"


def card_urls(sel: Selector) -> list[str]:
    return sel.css(f"{CARDS} a.title::attr(href)").getall()


def check_cards(sel: Selector, articles: list[catalogue.Article], lang: str = "en") -> None:
    """The ENGINES.md selectors find exactly ``articles``, with every field."""
    cards = sel.css(CARDS)
    assert len(cards) == len(articles)
    for card, article in zip(cards, articles, strict=False):
        href = card.css("a.title::attr(href)").get()
        assert card.attrib["url"] == card.attrib["data-url"] == href
        assert normalize_url(href) == normalize_url(article.url)
        assert card.attrib["data-title"] == card.css("a.title::text").get() == article.title
        assert card.attrib["data-author"] == article.source
        assert card.css("div.source a::text, div.source span.publabel::text").get() == article.source
        assert card.css("div.snippet::text").get() == card.css("div.snippet::attr(title)").get() == article.snippet
        assert card.css("div.source span::attr(aria-label)").get() == bing.aria_label(article.age_seconds, lang)
        assert card.css("div.source span[tabindex='0']::text").get() == bing.compact_age(article.age_seconds, lang)
        assert not card.css("h1, h2, h3, h4, [role=heading]")  # Bing puts no heading around the title
        for link in card.css("div.source a::attr(href)").getall():
            assert link.startswith("/news/search?q=site%3A")  # on-engine, never the publisher
        thumb = card.css("a.image")
        if thumb:
            assert thumb.attrib["href"] == href and thumb.css("img::attr(src)").get().startswith("/thumbs/")


def tracking_names(url: str) -> set[str]:
    return {name for name, _ in parse_qsl(urlsplit(url).query)} - {"id"}


# -- the full page ----------------------------------------------------------------------------------------


def test_full_page_cards_fields_and_tracking(fakes):
    status, headers, body, _ = fetch(search_url(fakes))
    sel = Selector(text=body)
    assert status == 200 and sel.css("html::attr(lang)").get() == "en"
    assert headers["Content-Language"] == "en-US"
    articles = catalogue.articles_for(TOPIC, 0)
    assert len(articles) == 10
    check_cards(sel.css("div#algocore"), articles)
    assert len(sel.css(CARDS)) == 10  # every card is under #algocore
    links = card_urls(sel)
    assert [normalize_url(u) for u in links] == [normalize_url(u) for u in bing.expected_articles(TOPIC, 0)]
    assert bing.expected_articles(TOPIC, 0) == [a.url for a in articles]
    # every added parameter is tracking, the links do carry some, and they vary per card
    names = set().union(*(tracking_names(u) for u in links))
    assert names and names <= set(bing.TRACKING_PARAMS) and all(is_tracking_param(n) for n in names)
    assert all(tracking_names(u) for u in links)
    assert len({frozenset(tracking_names(u)) for u in links}) >= 3
    # a story?id= URL keeps its id
    for url in links:
        if "/story" in url:
            assert re.search(r"[?&]id=\d+", url) and "id=" in normalize_url(url)
    # both source spellings, some thumbnails, page weight, nothing off-machine
    assert sel.css(f"{CARDS} div.source a") and sel.css(f"{CARDS} div.source span.publabel")
    assert 3 <= len(sel.css(f"{CARDS} a.image img[src^='/thumbs/']")) < 10
    assert len(body) > 30_000 and "@font-face" in body and "/fonts/" in body
    for url in sel.css("[src]::attr(src), link::attr(href)").getall():
        host = urlsplit(url).hostname
        assert host is None or host.endswith(".invalid")
    # the next page is announced as the infinite-scroll URL (no script fetches it)
    ajax = sel.css("#ns_infinitescroll::attr(data-ajaxurl)").get()
    assert ajax == bing.scroll_path(TOPIC, 1) and "first=11" in ajax and "SFX=1" in ajax
    assert [e["step"] for e in fakes.requests("bing")] == ["results"]


def test_sidebar_noise_is_outside_the_cards(fakes):
    sel = Selector(text=fetch(search_url(fakes))[2])
    sidebar = bing.sidebar_urls(TOPIC, 0)
    assert len(sidebar) >= 3
    catalogue_urls = {normalize_url(a.url) for a in catalogue.all_articles(TOPIC)}
    assert not {normalize_url(u) for u in sidebar} & catalogue_urls
    hrefs = sel.css("a::attr(href)").getall()
    assert set(sidebar) <= set(hrefs)
    assert not set(sidebar) & set(sel.css(f"#algocore a::attr(href), {CARDS} a::attr(href)").getall())
    assert not set(sidebar) & set(sel.css(f"{CARDS}::attr(url), {CARDS}::attr(data-url)").getall())
    for url in sidebar:  # bare <li><a>: no card, heading, snippet or time around it
        li = sel.xpath(f'//li[a[@href="{url}"]]')
        assert len(li) == 1 and len(li.xpath("./*")) == 1
        assert not li.xpath("ancestor::div[contains(@class, 'newsitem')] | ancestor::*[@id='algocore']")
    related = sel.css("#relatedSearches a::attr(href)").getall()
    assert len(related) >= 3 and all(u.startswith("/news/search?q=") for u in related)
    assert "Related searches" in sel.css("#relatedSearches").get() and "Trending now" in sel.get()


def test_expected_articles_cover_the_catalogue():
    for topic in (TOPIC, "harbour strike", "Zürich <b>vote</b>"):
        pages = catalogue.page_count(topic)
        seen = []
        for page in range(pages):
            expected = bing.expected_articles(topic, page)
            assert expected == [a.url for a in catalogue.articles_for(topic, page)]
            seen += expected
        assert seen == [a.url for a in catalogue.all_articles(topic)]
        last = bing.expected_articles(topic, pages - 1)
        assert bing.expected_articles(topic, pages) == bing.expected_articles(topic, pages + 7) == last
    assert bing.expected_articles(TOPIC, -1) == [] and bing.expected_articles("  ", 0) == []
    assert bing.LAST_PAGE_REPEATS is True


# -- paging ---------------------------------------------------------------------------------------------


def test_infinite_scroll_pages_are_fragments(fakes):
    pages = catalogue.page_count(TOPIC)
    for page in range(1, pages):
        status, _, body, _ = fetch(scroll_url(fakes, page))
        assert status == 200
        assert not re.search(r"<(html|head|body)\b", body, re.IGNORECASE) and "#algocore" not in body
        sel = Selector(text=body)
        check_cards(sel, catalogue.articles_for(TOPIC, page))
        assert [normalize_url(u) for u in card_urls(sel)] == [
            normalize_url(u) for u in bing.expected_articles(TOPIC, page)
        ]
        assert all(tracking_names(u) <= set(bing.TRACKING_PARAMS) for u in card_urls(sel))
        sidebar = bing.sidebar_urls(TOPIC, page)
        assert len(sidebar) >= 3 and set(sidebar) <= set(sel.css("a::attr(href)").getall())
        assert not set(sidebar) & set(card_urls(sel))
    log = fakes.requests("bing")
    assert [(e["path"], e["kind"], e["step"]) for e in log] == [("/news/infinitescrollajax", "results", "results")] * (
        pages - 1
    )
    assert log[0]["query"]["first"] == "11" and log[0]["query"]["SFX"] == "1"


def test_past_the_end_repeats_the_last_page(fakes):
    pages = catalogue.page_count(TOPIC)
    last_articles = catalogue.articles_for(TOPIC, pages - 1)
    last = Selector(text=fetch(scroll_url(fakes, pages - 1))[2])
    for page in (pages, pages + 4):
        status, _, body, _ = fetch(scroll_url(fakes, page))
        sel = Selector(text=body)
        assert status == 200 and "There are no results" not in body
        check_cards(sel, last_articles)
        assert [normalize_url(u) for u in card_urls(sel)] == [normalize_url(u) for u in card_urls(last)]
        assert card_urls(sel) != card_urls(last)  # the repeat carries other tracking parameters
        assert bing.expected_articles(TOPIC, page) == [a.url for a in last_articles]
        assert bing.layout(TOPIC, page).repeated
    assert not bing.layout(TOPIC, pages - 1).repeated
    # SFX is informative only: first decides the page
    body = fetch(scroll_url(fakes, 1).replace("SFX=1", "SFX=7"))[2]
    check_cards(Selector(text=body), catalogue.articles_for(TOPIC, 1))
    assert [e["step"] for e in fakes.results_requests("bing")] == ["results"] * 4


# -- locale ----------------------------------------------------------------------------------------------


def test_aria_labels_and_compact_times():
    cases = [
        (30, "1 minute ago", "1 minuut geleden", "1m", "1m"),
        (35 * 60 + 10, "35 minutes ago", "35 minuten geleden", "35m", "35m"),
        (3600, "1 hour ago", "1 uur geleden", "1h", "1u"),
        (2 * 3600 + 59, "2 hours ago", "2 uur geleden", "2h", "2u"),
        (86400, "1 day ago", "1 dag geleden", "1d", "1d"),
        (3 * 86400 + 7200, "3 days ago", "3 dagen geleden", "3d", "3d"),
    ]
    for age, en, nl, compact_en, compact_nl in cases:
        assert bing.aria_label(age, "en") == en and bing.aria_label(age, "nl-NL") == nl
        assert bing.compact_age(age, "en") == compact_en and bing.compact_age(age, "nl") == compact_nl


def test_dutch_pages(fakes):
    headers = {"Accept-Language": "nl-NL,nl;q=0.9,en;q=0.5"}
    status, response_headers, body, _ = fetch(search_url(fakes), headers=headers)
    sel = Selector(text=body)
    assert status == 200 and sel.css("html::attr(lang)").get() == "nl"
    assert response_headers["Content-Language"] == "nl-NL"
    check_cards(sel, catalogue.articles_for(TOPIC, 0), lang="nl")
    assert all(label.endswith(" geleden") for label in sel.css(f"{CARDS} div.source span::attr(aria-label)").getall())
    # the fragment, and the query-string switches
    fragment = Selector(text=fetch(scroll_url(fakes, 1), headers=headers)[2])
    check_cards(fragment, catalogue.articles_for(TOPIC, 1), lang="nl")
    for extra in ({"setlang": "nl"}, {"mkt": "nl-NL"}):
        sel = Selector(text=fetch(search_url(fakes, **extra))[2])
        assert sel.css("html::attr(lang)").get() == "nl"
        assert sel.css(f"{CARDS} div.source span::attr(aria-label)").get().endswith(" geleden")
    log = fakes.requests("bing")
    assert log[0]["accept_language"].startswith("nl-NL") and log[-1]["query"]["mkt"] == "nl-NL"


# -- other page kinds -----------------------------------------------------------------------------------


def test_empty_pages(fakes):
    fakes.script("bing", ["empty", "empty"])
    status, _, body, _ = fetch(search_url(fakes, "<b>odd</b> topic"))
    sel = Selector(text=body)
    assert status == 200 and not sel.css(CARDS) and bing.sidebar_urls("<b>odd</b> topic", 0)[0] not in body
    assert "There are no results for <b>&lt;b&gt;odd&lt;/b&gt; topic</b>" in body
    assert sel.css("html::attr(lang)").get() == "en" and sel.css("#sb_form_q::attr(value)").get() == "<b>odd</b> topic"
    status, _, fragment, _ = fetch(scroll_url(fakes, 1))
    assert status == 200 and bing.NO_RESULTS_MESSAGE in fragment and "<b>climate summit</b>" in fragment
    assert not Selector(text=fragment).css(CARDS) and "<html" not in fragment
    # a blank query is an empty page too
    assert bing.NO_RESULTS_MESSAGE in fetch(search_url(fakes, "   "))[2]
    assert [e["step"] for e in fakes.results_requests("bing")] == ["empty", "empty", "empty"]


def test_blank_and_small_pages(fakes):
    results_size = len(fetch(search_url(fakes, "something else"))[2])
    fakes.script("bing", ["blank", "blank", "small", "small"])
    _, _, blank, _ = fetch(search_url(fakes))
    sel = Selector(text=blank)
    assert sel.css("div#algocore") and not sel.css(CARDS) and "no results" not in blank
    assert len(blank) > 0.3 * results_size and sel.css("#sb_form")
    _, _, blank_fragment, _ = fetch(scroll_url(fakes, 1))
    assert not Selector(text=blank_fragment).css(CARDS) and "no results" not in blank_fragment
    for url in (search_url(fakes), scroll_url(fakes, 1)):
        status, _, small, _ = fetch(url)
        assert status == 200 and len(small) < 200 and "newsitem" not in small
    assert [e["step"] for e in fakes.results_requests("bing")] == ["results", "blank", "blank", "small", "small"]


def test_captcha_redirect_and_challenge(fakes):
    fakes.script("bing", ["captcha", "captcha"])
    for url in (search_url(fakes), scroll_url(fakes, 2)):
        status, headers, _, _ = fetch(url, follow=False)
        assert status == 302
        location = headers["Location"]
        assert location.startswith(fakes.base_url("bing") + bing.CAPTCHA_PATH + "?")
        params = dict(parse_qsl(urlsplit(location).query, keep_blank_values=True))
        assert params["redirect"] == url and "q" in params
        status, _, body, _ = fetch(location)
        sel = Selector(text=body)
        assert status == 200 and sel.css("title::text").get() == "Bing"
        assert sel.css("div#turingcaptcha") and bing.CAPTCHA_SENTENCE in body and not sel.css(CARDS)
        assert sel.css("input[name=redirect]::attr(value)").get() == url
    log = fakes.requests("bing")
    assert [(e["kind"], e["step"], e["status"]) for e in log] == [
        ("results", "captcha", 302),
        ("other", "captcha", 200),
    ] * 2
    # following the redirect from scratch lands on the challenge, the step consumed once
    fakes.script("bing", ["captcha"])
    status, _, body, final = fetch(search_url(fakes))
    assert status == 200 and urlsplit(final).path == bing.CAPTCHA_PATH and 'id="turingcaptcha"' in body
    assert [e["step"] for e in fakes.results_requests("bing")] == ["captcha"] * 3


def test_steps_routes_and_overrides(fakes):
    fakes.script("bing", [{"page": "empty"}, {"page": "results", "status": 503, "headers": {"Retry-After": "9"}}])
    fakes.route("bing", "Quiet Topic", "empty")
    assert bing.NO_RESULTS_MESSAGE in fetch(search_url(fakes, "quiet  topic"))[2]  # the route, queue untouched
    assert bing.NO_RESULTS_MESSAGE in fetch(scroll_url(fakes, 1, "QUIET topic"))[2]
    assert bing.NO_RESULTS_MESSAGE in fetch(search_url(fakes))[2]  # the queue's first step
    status, headers, body, _ = fetch(scroll_url(fakes, 1))
    assert status == 503 and headers["Retry-After"] == "9" and len(Selector(text=body).css(CARDS)) == 10
    assert len(Selector(text=fetch(search_url(fakes))[2]).css(CARDS)) == 10  # back to normal
    fakes.route("bing", "flaky", ["captcha", "results"])
    assert [fetch(search_url(fakes, "flaky"), follow=False)[0] for _ in range(3)] == [302, 200, 200]
    with pytest.raises(ValueError):
        fakes.script("bing", ["sorry"])  # a Google kind, not a Bing one


def test_home_robots_and_unknown_paths(fakes):
    base = fakes.base_url("bing")
    status, _, home, _ = fetch(base + "/")
    assert status == 200 and Selector(text=home).css("form[action='/news/search'] input[name=q]")
    status, headers, robots, _ = fetch(base + "/robots.txt")
    assert status == 200 and headers["Content-Type"].startswith("text/plain") and "Disallow: /news/search" in robots
    assert fetch(base + "/nowhere")[0] == 404
    assert fetch(base + "/thumbs/bing-logo.png", errors="replace")[0] == 200
    assert [e["kind"] for e in fakes.requests("bing")] == ["other", "other", "other", "asset"]
    assert fakes.results_requests("bing") == []
