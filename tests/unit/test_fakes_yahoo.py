"""The fake Yahoo News search: results markup per ENGINES.md, redirector links, paging, sidebar noise,
no-results / blank / small pages, the consent interstitials, scripted steps and routes."""

from __future__ import annotations

import re
import time
from urllib.parse import parse_qsl, unquote, urlencode, urlsplit

import pytest
from parsel import Selector

from fake_engines import FakeEngines, catalogue, yahoo
from tests.support.fakes_http import fetch, reset_fakes_per_test, running_fakes
from topicstreams.engines.news_urls import is_tracking_param, normalize_url

TOPIC = "climate summit"
RESULT_SELECTOR = "#web ol.searchCenterMiddle div.NewsArticle"


fakes = running_fakes("yahoo")
_clean = reset_fakes_per_test()


def search_url(fakes: FakeEngines, topic: str = TOPIC, page: int = 0, **extra: str) -> str:
    query = {"p": topic, "b": page * 10 + 1, "pz": 10, "btf": "d", **extra}
    return f"{fakes.base_url('yahoo')}/search?{urlencode(query)}"


def parse(body: str) -> list[dict]:
    """A parser written from ENGINES.md alone."""
    items = []
    for node in Selector(text=body).css(RESULT_SELECTOR):
        source = node.css("span.s-source::text").get("").strip()
        source = source.removesuffix("· via Yahoo News").strip()
        items.append(
            {
                "href": node.css("h4.s-title > a::attr(href)").get(),
                "title": node.css("h4.s-title > a::text").get(),
                "source": source,
                "time": node.css("span.s-time::text").get("").strip().rstrip("·").strip(),
                "snippet": node.css("p.s-desc::text").get(),
                "raw_source": node.css("span.s-source::text").get(),
                "raw_time": node.css("span.s-time::text").get(),
            }
        )
    return items


def redirect_target(href: str) -> str:
    """The percent-decoded text between /RU= and /RK= (ENGINES.md)."""
    return unquote(re.search(r"/RU=([^/]+)/RK=", href).group(1))


# -- module-level data ----------------------------------------------------------------------------------


def test_expected_articles_are_the_catalogue_pages():
    for topic in (TOPIC, "Élections 2025", "x"):
        pages = catalogue.page_count(topic)
        for page in range(pages):
            expected = yahoo.expected_articles(topic, page)
            assert expected == [a.url for a in catalogue.articles_for(topic, page)]
            assert expected == yahoo.expected_articles(topic, page)
        assert yahoo.expected_articles(topic, pages) == []
    assert all(is_tracking_param(name) for name in yahoo.TRACKING_PARAMS)
    assert yahoo.page_of("1") == 0 and yahoo.page_of("11") == 1 and yahoo.page_of("21") == 2
    assert yahoo.page_of(None) == 0 and yahoo.page_of("junk") == 0 and yahoo.page_of("-5") == 0


def test_layout_roles_per_page():
    for topic in (TOPIC, "AI", "rail strike", "Élections 2025"):
        for page in range(catalogue.page_count(topic)):
            slots = yahoo.layout(topic, page).slots
            direct = [s for s in slots if s.direct]
            assert 1 <= len(direct) <= 2
            bare = [s for s in slots if not s.via]
            assert 1 <= len(bare) <= 2 and len(bare) < len(slots) / 2
            assert sum(1 for s in slots if s.thumb) >= 2
            for slot in direct:
                assert ";_ylt=Awr" in slot.target and ";_ylu=" in slot.target
                assert normalize_url(slot.target) == normalize_url(slot.article.url)
                if "?id=" in slot.article.url:
                    assert re.search(r"/story;_ylt=[^;/?]+;_ylu=[^;/?]+\?id=\d+$", slot.target)


# -- results pages --------------------------------------------------------------------------------------


def test_results_page_structure(fakes):
    status, headers, body, _ = fetch(search_url(fakes))
    assert status == 200 and headers["Content-Type"].startswith("text/html")
    sel = Selector(text=body)
    assert sel.css("html::attr(lang)").get() == "en"
    assert sel.css("title::text").get() == f"{TOPIC} - Yahoo News Search Results"
    articles = catalogue.articles_for(TOPIC, 0)
    items = parse(body)
    assert len(items) == len(articles) == 10

    for item, article in zip(items, articles, strict=False):
        assert item["title"] == article.title
        assert item["source"] == article.source
        assert item["snippet"] == article.snippet
        assert item["raw_time"].endswith(" · ")
        assert re.fullmatch(r"\d+ (minutes?|hours?) ago", item["time"])
        assert item["time"] == yahoo.relative_age(article.age_seconds)
        # the link normalizes to the article, whatever its form
        assert normalize_url(item["href"]) == normalize_url(article.url) == article.url
    assert [normalize_url(i["href"]) for i in items] == yahoo.expected_articles(TOPIC, 0)

    # most sources carry " · via Yahoo News", at least one is bare
    with_via = [i for i in items if i["raw_source"].endswith(" · via Yahoo News")]
    assert len(items) / 2 < len(with_via) < len(items)

    # each result sits in an li (carrying ov-a, like the trending items) of #web ol.searchCenterMiddle
    assert len(sel.css("#web ol.searchCenterMiddle > li > div.NewsArticle")) == 10
    assert sel.css("ol.searchCenterMiddle::attr(class)").get().split()[-1] == "searchCenterMiddle"
    ov_a = sel.css("li.ov-a")
    assert len(ov_a) > 10 and len(sel.css("#right li.ov-a")) >= 3
    assert all(li.css("a::attr(href)").get().startswith("/search?p=") for li in sel.css("#right li.ov-a"))

    # thumbnails: an anchor with an img and the same href as the title
    thumbs = sel.css(f"{RESULT_SELECTOR} a.thmb")
    assert len(thumbs) >= 2 and len(thumbs) < 10
    for thumb in thumbs:
        assert thumb.css("img::attr(src)").get().startswith("/thumbs/")
        title_href = thumb.xpath("..").css("h4.s-title > a::attr(href)").get()
        assert thumb.attrib["href"] == title_href

    # pager, page weight, nothing leaves the machine but the redirector and the publishers
    assert sel.css("div.compPagination a.next::attr(href)").get() == "/search?p=climate+summit&b=11&pz=10&btf=d"
    assert sel.css("div.compPagination strong::text").get() == "1"
    assert len(body) > 30_000 and "@font-face" in body
    # (and the footer's links to Yahoo country sites, which no known-layout parser reads)
    country = [href for href, _, _ in yahoo.COUNTRY_LINKS]
    assert sel.css("#footer a::attr(href)").getall()[: len(country)] == country
    assert not sel.css("#web").xpath(".//a[contains(@href, '.yahoo.com/') and not(contains(@href, '//r.search.'))]")
    for url in sel.css("a::attr(href), img::attr(src), link::attr(href)").getall():
        host = urlsplit(url).hostname
        assert (
            host is None or host == "r.search.yahoo.com" or host.endswith((".invalid", ".example")) or url in country
        ), url


def test_redirector_and_direct_links(fakes):
    before = int(time.time())
    _, _, body, _ = fetch(search_url(fakes))
    items = parse(body)
    lay = yahoo.layout(TOPIC, 0)
    redirected = [i for i in items if urlsplit(i["href"]).hostname == "r.search.yahoo.com"]
    direct = [i for i in items if urlsplit(i["href"]).hostname != "r.search.yahoo.com"]
    assert len(direct) == sum(1 for s in lay.slots if s.direct) and 1 <= len(direct) <= 2
    assert len(redirected) + len(direct) == 10

    shapes = re.compile(
        r"https://r\.search\.yahoo\.com/_ylt=Awr[\w-]+;_ylu=[\w-]+/RV=2/RE=(\d+)/RO=10/RU=([^/]+)/RK=2/RS=[\w-]+-"
    )
    names_seen = set()
    for item in redirected:
        match = shapes.fullmatch(item["href"])
        assert match, item["href"]
        assert int(match.group(1)) >= before
        assert match.group(2).startswith("https%3a%2f%2fwww.")  # Yahoo's lowercase escapes
        target = redirect_target(item["href"])
        names = [name for name, _ in parse_qsl(urlsplit(target).query)]
        tracking = [name for name in names if name != "id"]
        assert tracking and all(is_tracking_param(name) for name in tracking), target
        assert set(tracking) <= set(yahoo.TRACKING_PARAMS)
        names_seen.update(tracking)
        assert normalize_url(target) == normalize_url(item["href"])
    assert len(names_seen) >= 4  # the tracking varies between items

    for item in direct:
        parts = urlsplit(item["href"])
        assert parts.hostname.endswith(".example")
        assert re.search(r";_ylt=Awr[\w-]+;_ylu=[\w-]+$", parts.path)
        assert item["href"].split(";_ylt=")[0] + (f"?{parts.query}" if parts.query else "") in yahoo.expected_articles(
            TOPIC, 0
        )


def test_id_style_links_keep_their_id(fakes):
    # find a topic whose first page has an id-style article behind a direct link
    for n in range(200):
        topic = f"harbour works {n}"
        if any(s.direct and "?id=" in s.article.url for s in yahoo.layout(topic, 0).slots):
            break
    else:
        pytest.fail("no topic with a direct id-style link")
    _, _, body, _ = fetch(search_url(fakes, topic))
    hrefs = [i["href"] for i in parse(body)]
    direct_id = [h for h in hrefs if "/story;_ylt=" in h]
    assert direct_id and all(re.search(r"/story;_ylt=[\w-]+;_ylu=[\w-]+\?id=\d+$", h) for h in direct_id)
    assert [normalize_url(h) for h in hrefs] == yahoo.expected_articles(topic, 0)
    assert all("?id=" in normalize_url(h) for h in direct_id)


def test_sidebar_noise_is_outside_the_results(fakes):
    for page in range(catalogue.page_count(TOPIC)):
        _, _, body, _ = fetch(search_url(fakes, page=page))
        sel = Selector(text=body)
        sidebar = yahoo.sidebar_urls(TOPIC, page)
        assert len(sidebar) >= 3
        top = sel.css("#right li > a[href^='https://']")
        assert [a.attrib["href"] for a in top] == sidebar
        for anchor in top:  # bare li > a, nothing around
            li = anchor.xpath("..")
            assert li.xpath("count(./*)").get() == "1.0" and anchor.xpath("./*").get() is None
        catalogue_urls = {a.url for a in catalogue.all_articles(TOPIC)}
        stored = {normalize_url(i["href"]) for i in parse(body)}
        assert not {normalize_url(u) for u in sidebar} & (stored | catalogue_urls)
        # the trending searches are on-engine links; a naive li.ov-a parser would take them
        trending = sel.css("#right li.ov-a a::attr(href)").getall()
        assert len(trending) == len(yahoo.trending_terms(TOPIC, page)) >= 3
        assert not sel.css("#right div.NewsArticle") and not sel.css("#right h2, #right h3, #right h4")


def test_paging_to_the_end_then_no_results(fakes):
    pages = catalogue.page_count(TOPIC)
    url = search_url(fakes)
    seen = []
    for page in range(pages):
        _, _, body, _ = fetch(url)
        sel = Selector(text=body)
        hrefs = [i["href"] for i in parse(body)]
        assert [normalize_url(h) for h in hrefs] == yahoo.expected_articles(TOPIC, page)
        seen += hrefs
        nxt = sel.css("div.compPagination a.next::attr(href)").get()
        if page < pages - 1:
            assert nxt == f"/search?p=climate+summit&b={(page + 1) * 10 + 1}&pz=10&btf=d"
            url = fakes.base_url("yahoo") + nxt
        else:
            assert nxt is None and sel.css("div.compPagination a.prev")
            assert sel.css("div.compPagination strong::text").get() == str(pages)
    assert {normalize_url(h) for h in seen} == {a.url for a in catalogue.all_articles(TOPIC)}

    status, _, body, _ = fetch(search_url(fakes, page=pages))
    sel = Selector(text=body)
    assert status == 200 and not sel.css(RESULT_SELECTOR) and not sel.css("div.compPagination")
    assert "We did not find results for: <strong>climate summit</strong>" in body
    assert [e["step"] for e in fakes.results_requests("yahoo")] == ["results"] * pages + ["empty"]


def test_missing_paging_parameters_and_path_params(fakes):
    base = fakes.base_url("yahoo")
    _, _, plain, _ = fetch(f"{base}/search?p=climate+summit")
    assert [normalize_url(i["href"]) for i in parse(plain)] == yahoo.expected_articles(TOPIC, 0)
    assert Selector(text=plain).css("a.next::attr(href)").get() == "/search?p=climate+summit&b=11&pz=10"
    _, _, odd, _ = fetch(f"{base}/search?p=climate+summit&b=15")  # not a page start: its page
    assert [normalize_url(i["href"]) for i in parse(odd)] == yahoo.expected_articles(TOPIC, 1)
    _, _, yl, _ = fetch(f"{base}/search;_ylt=AwrAbc;_ylu=Y29sbw--?p=climate+summit&b=11&pz=10")
    assert [normalize_url(i["href"]) for i in parse(yl)] == yahoo.expected_articles(TOPIC, 1)
    log = fakes.requests("yahoo")
    assert [e["kind"] for e in log] == ["results"] * 3
    assert log[0]["query"] == {"p": TOPIC}


def test_empty_page(fakes):
    fakes.script("yahoo", ["empty"])
    status, _, body, _ = fetch(search_url(fakes, "<b>odd</b> topic"))
    sel = Selector(text=body)
    assert status == 200
    assert "We did not find results for: <strong>&lt;b&gt;odd&lt;/b&gt; topic</strong>" in body
    assert "Check spelling or type a new query." in body
    assert not sel.css(RESULT_SELECTOR) and not sel.css("a.next")
    assert sel.css("#web ol.searchCenterMiddle")  # still the normal page shell
    assert fakes.results_requests("yahoo")[0]["step"] == "empty"


def test_blank_and_small_pages(fakes):
    results_size = len(fetch(search_url(fakes, "something else"))[2])
    fakes.script("yahoo", ["blank", "small"])
    status, _, blank, _ = fetch(search_url(fakes))
    sel = Selector(text=blank)
    assert status == 200 and not sel.css(RESULT_SELECTOR) and not sel.css("div.NewsArticle")
    assert "We did not find results" not in blank and "Check spelling" not in blank
    assert sel.css("#web ol.searchCenterMiddle") and sel.css("form#sf input[name=p]")
    assert len(blank) > 0.5 * results_size
    status, _, small, _ = fetch(search_url(fakes))
    assert status == 200 and len(small) < 200 and "NewsArticle" not in small
    assert [e["step"] for e in fakes.results_requests("yahoo")] == ["results", "blank", "small"]


def test_consent_flow(fakes):
    fakes.script("yahoo", ["consent"])
    target = f"/search?{urlencode({'p': TOPIC, 'b': 1, 'pz': 10, 'btf': 'd'})}"
    status, headers, _, _ = fetch(fakes.base_url("yahoo") + target, follow=False)
    assert status == 302
    location = headers["Location"]
    parts = urlsplit(location)
    assert location.startswith(fakes.base_url("yahoo") + "/v2/collectConsent?sessionId=")
    session = dict(parse_qsl(parts.query))["sessionId"]
    assert session.startswith("3_cc-session_")

    status, _, body, _ = fetch(location, follow=False)
    sel = Selector(text=body)
    assert status == 200
    assert sel.css("title::text").get() == "Yahoo is part of the Yahoo family of brands"
    assert "consent.yahoo.com" in body and not sel.css("div.NewsArticle")
    form = sel.css("form.consent-form")
    assert form.attrib["method"] == "post"
    assert form.attrib["action"].startswith("/v2/collectConsent?sessionId=")
    assert form.css("button::text").getall() == ["Reject all", "Accept all"]

    # accepting sends the client back to the search, with a cookie
    fields = {i.attrib["name"]: i.attrib.get("value", "") for i in form.css("input")}
    fields["agree"] = "agree"
    status, headers, _, _ = fetch(
        fakes.base_url("yahoo") + form.attrib["action"], follow=False, data=urlencode(fields).encode()
    )
    assert status == 302 and headers["Location"] == fakes.base_url("yahoo") + target
    assert headers["Set-Cookie"].startswith("A1=")
    log = fakes.requests("yahoo")
    assert [(e["kind"], e["step"], e["status"]) for e in log] == [
        ("results", "consent", 302),
        ("other", "consent_wall", 200),
        ("other", "consent_saved", 302),
    ]
    # following redirects lands on the consent page
    fakes.script("yahoo", ["consent"])
    status, _, body, final = fetch(search_url(fakes))
    assert status == 200 and "/v2/collectConsent" in final and "Accept all" in body


def test_guce_interstitial(fakes):
    fakes.script("yahoo", ["guce"])
    url = search_url(fakes)
    status, headers, _, _ = fetch(url, follow=False)
    assert status == 302
    parts = urlsplit(headers["Location"])
    query = dict(parse_qsl(parts.query))
    assert parts.path == "/consent" and query["brandType"] == "nonEu" and query["gcrumb"]
    assert query["done"] == url
    status, _, body, _ = fetch(headers["Location"])
    sel = Selector(text=body)
    assert status == 200 and "guce.yahoo.com" in body and not sel.css("div.NewsArticle")
    form = sel.css("form.consent-form")
    assert form.attrib["method"] == "post" and form.css("input[name=done]::attr(value)").get() == url
    status, saved, _, _ = fetch(
        fakes.base_url("yahoo") + form.attrib["action"],
        follow=False,
        data=urlencode({"done": url, "agree": "agree"}).encode(),
    )
    assert status == 302 and saved["Location"] == url
    # a done URL off this machine is never followed
    status, saved, _, _ = fetch(
        fakes.base_url("yahoo") + "/consent?brandType=nonEu&gcrumb=x",
        follow=False,
        data=urlencode({"done": "https://evil.example/"}).encode(),
    )
    assert status == 302 and saved["Location"] == fakes.base_url("yahoo") + "/"


def test_home_robots_and_404(fakes):
    status, _, home, _ = fetch(fakes.base_url("yahoo") + "/")
    assert status == 200 and Selector(text=home).css("form[action='/search'] input[name=p]")
    status, headers, robots, _ = fetch(fakes.base_url("yahoo") + "/robots.txt")
    assert status == 200 and headers["Content-Type"].startswith("text/plain") and "Disallow: /search" in robots
    assert fetch(fakes.base_url("yahoo") + "/nowhere")[0] == 404
    assert [e["kind"] for e in fakes.requests("yahoo")] == ["other", "other", "other"]


def test_scripted_steps_and_routes(fakes):
    fakes.script(
        "yahoo", ["empty", {"page": "small"}, {"page": "results", "status": 503, "headers": {"Retry-After": "60"}}]
    )
    url = search_url(fakes)
    assert "We did not find results" in fetch(url)[2]
    assert len(fetch(url)[2]) < 200
    status, headers, body, _ = fetch(url)
    assert status == 503 and headers["Retry-After"] == "60" and len(parse(body)) == 10
    assert len(parse(fetch(url)[2])) == 10  # the queue is empty: a normal page

    fakes.route("yahoo", "Quiet Topic", "empty")  # routes match the p parameter
    fakes.script("yahoo", ["small"])
    for _ in range(2):
        assert "We did not find results" in fetch(search_url(fakes, "quiet  topic"))[2]
    assert len(fetch(url)[2]) < 200  # the queued step was left for the other topic
    fakes.route("yahoo", "flaky", ["consent", "results"])
    assert [fetch(fakes.base_url("yahoo") + "/search?p=flaky", follow=False)[0] for _ in range(3)] == [302, 200, 200]
    steps = [e["step"] for e in fakes.results_requests("yahoo")]
    assert steps == ["empty", "small", "results", "results", "empty", "empty", "small", "consent", "results", "results"]
