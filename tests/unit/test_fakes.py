"""The fake engines: pages, scripting, log, control endpoints, extensions, the serve command and one real
Chromium check."""

from __future__ import annotations

import base64
import json
import os
import re
import subprocess
import sys
import time
import urllib.request
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import pytest
import yaml
from parsel import Selector
from scrapy.http import HtmlResponse

from fake_engines import FakeEngines, catalogue, google
from fake_engines.server import Extension, Reply
from tests.support.fakes_http import fetch, reset_fakes_per_test, running_fakes
from tests.support.parsing import parsing_reader, reading_of
from topicstreams.engines import Google
from topicstreams.engines.classify import ResponseClass

CHROMIUM = "/usr/lib/chromium/chromium-headless-shell"
TOPIC = "climate summit"
REPO = Path(__file__).resolve().parents[2]


fakes = running_fakes("google")
_clean = reset_fakes_per_test()


def search_url(fakes: FakeEngines, topic: str = TOPIC, page: int = 0) -> str:
    query = {"q": topic, "tbm": "nws", "tbs": "qdr:h,sbd:1"}
    if page:
        query["start"] = page * 10
    return f"{fakes.base_url('google')}/search?{urlencode(query)}"


def clean(url: str) -> str:
    """Unwrap /url?… links and drop the tracking parameters: what a normalizer would store."""
    parts = urlsplit(url)
    if parts.path == "/url":
        params = dict(parse_qsl(parts.query))
        return clean(params.get("q") or params["url"])
    kept = [(k, v) for k, v in parse_qsl(parts.query) if k not in google.TRACKING_PARAMS]
    return urlunsplit(parts._replace(query=urlencode(kept)))


def control(fakes: FakeEngines, action: str, payload=None) -> tuple[int, object]:
    url = f"{fakes.base_url('google')}/__fakes__/{action}"
    data = None if payload is None and action == "requests" else json.dumps(payload).encode()
    status, _, body, _ = fetch(url, data=data)
    return status, json.loads(body)


# -- catalogue ------------------------------------------------------------------------------------------


def test_catalogue_is_deterministic_and_paged():
    for topic in ("climate summit", "Élections 2025", "AI", "x"):
        pages = catalogue.page_count(topic)
        assert 2 <= pages <= 3
        all_urls = []
        previous_age = 0
        for page in range(pages):
            articles = catalogue.articles_for(topic, page)
            assert articles == catalogue.articles_for(topic, page)
            assert 6 <= len(articles) <= 10 and (len(articles) == 10 or page == pages - 1)
            for article in articles:
                assert topic in article.title
                assert article.age_seconds > previous_age  # newest first, across pages
                previous_age = article.age_seconds
                assert re.fullmatch(r"https://www\.[a-z]+\.example/(\d{4}/[a-z0-9-]+-\d+|story\?id=\d+)", article.url)
                all_urls.append(article.url)
        assert len(set(all_urls)) == len(all_urls)
        assert catalogue.articles_for(topic, pages) == []
        assert 60 <= catalogue.all_articles(topic)[0].age_seconds <= 600
        assert catalogue.all_articles(topic)[-1].age_seconds < 8 * 3600


def test_catalogue_is_the_same_in_another_process():
    code = "from fake_engines.google import expected_articles; print(expected_articles('climate summit', 1))"
    env = dict(os.environ, PYTHONHASHSEED="123")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=REPO, check=True)
    assert out.stdout.strip() == str(google.expected_articles(TOPIC, 1))


def test_expected_articles_match_the_catalogue_and_layout():
    for page in range(catalogue.page_count(TOPIC)):
        expected = google.expected_articles(TOPIC, page)
        assert sorted(expected) == sorted(a.url for a in catalogue.articles_for(TOPIC, page))
        lay = google.layout(TOPIC, page)
        assert set(lay.roles) == set(google.ROLES)
        assert len({a.url for a in lay.roles.values()}) == 5
        assert lay.slots[-1].role == "js" and expected[-1] == lay.roles["js"].url
    assert google.expected_articles(TOPIC, catalogue.page_count(TOPIC)) == []


# -- pages ----------------------------------------------------------------------------------------------


def test_results_page_structure(fakes):
    before = time.time()
    status, headers, body, _ = fetch(search_url(fakes))
    assert status == 200 and headers["Content-Type"].startswith("text/html")
    sel = Selector(text=body)
    lay = google.layout(TOPIC, 0)

    assert "google.sn='newssearch'" in body
    results = sel.css("div#rso div[data-news-doc-id]")
    assert len(results) == 10  # 9 distinct in the HTML + the duplicate; the JS one is not in the source
    js = lay.roles["js"]
    assert js.url not in body and lay.js_slot.doc_id not in body
    assert body.rstrip().endswith("</html>") and 'document.getElementById("rso").appendChild' in body

    hrefs = [r.css("a.WlydOe[jsname=YKoRaf]::attr(href)").get() for r in results]
    assert all(hrefs)
    cleaned = [clean(h) for h in hrefs]
    assert len(set(cleaned)) == 9 and len(cleaned) == 10
    dup = lay.roles["duplicate"].url
    assert cleaned.count(dup) == 2
    first, second = [h for h, c in zip(hrefs, cleaned, strict=False) if c == dup]
    assert first != second  # different tracking parameters
    assert set(cleaned) | {js.url} == set(google.expected_articles(TOPIC, 0))

    # tracking parameters on every link (inside the wrapper for wrapped ones)
    for href in hrefs:
        target = href
        if href.startswith("/url?"):
            params = dict(parse_qsl(urlsplit(href).query))
            target = params.get("q") or params["url"]
        names = {k for k, _ in parse_qsl(urlsplit(target).query)}
        assert names & set(google.TRACKING_PARAMS), href
    assert len({tuple(sorted(k for k, _ in parse_qsl(urlsplit(h).query))) for h in hrefs}) > 2  # varying

    q_wrapped = [h for h in hrefs if h.startswith("/url?q=")]
    url_wrapped = [h for h in hrefs if h.startswith("/url?sa=t&url=")]
    assert len(q_wrapped) == 1 and "&sa=U&ved=" in q_wrapped[0] and "https%3A%2F%2F" in q_wrapped[0]
    assert len(url_wrapped) == 1 and "&usg=" in url_wrapped[0]
    assert clean(q_wrapped[0]) == lay.roles["wrapped_q"].url
    assert clean(url_wrapped[0]) == lay.roles["wrapped_url"].url
    plain = [r for r in results if not r.css("a.WlydOe::attr(href)").get().startswith("/url")]
    assert all("url=https%3A%2F%2F" in r.css("a.WlydOe::attr(ping)").get() for r in plain)

    # fields
    for result, slot in zip(results, lay.html_slots, strict=False):
        assert result.css("div[role=heading]::text").get() == slot.article.title
        assert result.css("div.MgUUmf span::text").get() == slot.article.source
        assert result.css("div.UqSP2b::text").get() == slot.article.snippet
        stamp = result.css("div.OSrXXb span[data-ts]::attr(data-ts)").get()
        text = result.css("div.OSrXXb span::text").get()
        assert re.fullmatch(r"\d+ (minutes?|hours?) ago", text)
        if slot.role == "no_ts":
            assert stamp is None
        else:
            assert abs(int(stamp) - (before - slot.article.age_seconds)) <= 2
    assert sum(1 for r in results if not r.css("span[data-ts]")) == 1

    # next page, page weight
    assert sel.css("a#pnnext::attr(href)").get().endswith("start=10")
    assert len(sel.css("img[src^='/thumbs/']")) >= 3
    assert "@font-face" in body and "/fonts/" in body
    assert sel.css("link[rel=stylesheet]::attr(href)").get().startswith("http://assets.fake-engine.invalid/")
    assert sel.css("img[src^='http://assets.fake-engine.invalid/']")
    assert len(body) > 30_000


def test_assets_are_served_and_logged(fakes):
    _, _, body, _ = fetch(search_url(fakes))
    sel = Selector(text=body)
    base = fakes.base_url("google")
    thumb = sel.css("img[src^='/thumbs/']::attr(src)").get()
    with urllib.request.urlopen(base + thumb) as response:
        assert response.headers["Content-Type"] == "image/png" and response.read().startswith(b"\x89PNG")
    font = re.search(r"url\((/fonts/[^)]+)\)", body).group(1)
    with urllib.request.urlopen(base + font) as response:
        assert response.headers["Content-Type"] == "font/woff2"
    kinds = [(e["kind"], e["path"]) for e in fakes.requests("google")]
    assert kinds == [("results", "/search"), ("asset", thumb), ("asset", font)]


def test_pages_to_the_end_then_empty(fakes):
    pages = catalogue.page_count(TOPIC)
    last = Selector(text=fetch(search_url(fakes, page=pages - 1))[2])
    assert len(last.css("#rso div[data-news-doc-id]")) == len(catalogue.articles_for(TOPIC, pages - 1))
    assert not last.css("a#pnnext") and last.css("a#pnprev")
    status, _, body, _ = fetch(search_url(fakes, page=pages))
    assert status == 200 and "did not match any news results" in body
    assert not Selector(text=body).css("div[data-news-doc-id]")
    assert [e["step"] for e in fakes.requests("google")] == ["results", "empty"]


def test_empty_page(fakes):
    fakes.script("google", [{"page": "empty"}])
    status, _, body, _ = fetch(search_url(fakes, "<b>odd</b> topic"))
    sel = Selector(text=body)
    assert status == 200
    assert "Your search - <b>&lt;b&gt;odd&lt;/b&gt; topic</b> - did not match any news results." in body
    assert not sel.css("div[data-news-doc-id]") and not sel.css("a#pnnext")
    assert "google.sn='newssearch'" in body


def test_sorry_flow(fakes):
    fakes.script("google", ["sorry"])
    url = search_url(fakes)
    status, headers, _, _ = fetch(url, follow=False)
    assert status == 302
    location = headers["Location"]
    assert location.startswith(fakes.base_url("google") + "/sorry/index?continue=")
    assert dict(parse_qsl(urlsplit(location).query))["continue"] == url

    status, _, body, _ = fetch(location)
    sel = Selector(text=body)
    assert status == 429
    assert sel.css("form#captcha-form") and sel.css("div#recaptcha.g-recaptcha")
    assert google.CAPTCHA_SENTENCE in " ".join(body.split())
    # following redirects lands on the same 429 page; the step was consumed by the first request only
    fakes.script("google", ["sorry"])
    status, _, body, final = fetch(url)
    assert status == 429 and "/sorry/index" in final and 'id="captcha-form"' in body
    log = fakes.requests("google")
    assert [(e["kind"], e["step"], e["status"]) for e in log] == [
        ("results", "sorry", 302),
        ("other", "sorry", 429),
        ("results", "sorry", 302),
        ("other", "sorry", 429),
    ]


def test_captcha200_blank_small_consent_pages(fakes):
    results_size = len(fetch(search_url(fakes, "something else"))[2])
    fakes.script("google", ["captcha200", "blank", "small", "consent"])
    url = search_url(fakes)
    status, _, body, _ = fetch(url)
    assert status == 200 and 'id="captcha-form"' in body and google.CAPTCHA_SENTENCE in " ".join(body.split())

    status, _, blank, _ = fetch(url)
    assert status == 200 and not Selector(text=blank).css("div[data-news-doc-id]")
    assert "did not match" not in blank and len(blank) > 0.3 * results_size

    status, _, small, _ = fetch(url)
    assert status == 200 and len(small) < 200

    status, headers, _, _ = fetch(url, follow=False)
    assert status == 302 and urlsplit(headers["Location"]).path == "/consent"
    assert headers["Location"].startswith(fakes.base_url("google"))
    status, _, consent, _ = fetch(headers["Location"])
    assert status == 200 and "Before you continue to Google" in consent and "consent.google.com" in consent
    # accepting (the form whose set_eom is false) sends the client back where it was, with a cookie
    form = Selector(text=consent).xpath("//form[.//input[@name='set_eom' and @value='false']]")
    assert form.attrib["action"] == fakes.base_url("google") + "/save"
    fields = {i.attrib["name"]: i.attrib["value"] for i in form.css("input")}
    assert fields["continue"] == url
    status, saved, _, _ = fetch(form.attrib["action"], follow=False, data=urlencode(fields).encode())
    assert status == 302 and saved["Location"] == url and saved["Set-Cookie"].startswith("SOCS=CAIS")
    # the older save path still answers
    status, saved, _, _ = fetch(
        fakes.base_url("google") + "/consent/save",
        follow=False,
        data=urlencode({"continue": url, "set_eom": "true"}).encode(),
    )
    assert status == 302 and saved["Location"] == url and saved["Set-Cookie"].startswith("SOCS=CAES")


def spider_items(fakes: FakeEngines, body: str, url: str):
    """The page's verdict and items as a Google crawl reads them (known layout, no browser)."""
    reader = parsing_reader("google", fakes.base_url("google"))
    response = HtmlResponse(url, body=body.encode("utf-8"), encoding="utf-8")
    reading = reading_of(reader, response, 0, datetime.now(UTC))
    return reading.verdict, reader.items(reading, topic=TOPIC).items


def test_restyled_page_has_the_results_but_not_their_source_and_time(fakes):
    url = search_url(fakes)
    fakes.script("google", ["results", "restyled"])
    _, _, normal, _ = fetch(url)
    status, _, restyled, _ = fetch(url)
    assert status == 200
    log = fakes.requests("google")
    assert [(e["kind"], e["step"], e["status"]) for e in log] == [
        ("results", "results", 200),
        ("results", "restyled", 200),
    ]
    assert abs(log[1]["bytes"] - log[0]["bytes"]) <= 0.05 * log[0]["bytes"]

    # the redesign: same items, links, titles and pager; renamed source and time wrappers, no data-ts
    sel = Selector(text=restyled)
    lay = google.layout(TOPIC, 0)
    results = sel.css("#rso div[data-news-doc-id]")
    assert len(results) == len(lay.html_slots)
    assert results.css("a.WlydOe[jsname=YKoRaf]::attr(href)").getall() == [s.href for s in lay.html_slots]
    assert results.css("div[role=heading]::text").getall() == [s.article.title for s in lay.html_slots]
    assert results.css("div.CEMjEf span::text").getall() == [s.article.source for s in lay.html_slots]
    assert all(re.fullmatch(r"\d+ (minutes?|hours?) ago", t) for t in results.css("div.ZE0LJd span::text").getall())
    assert sel.css("a#pnnext::attr(href)").get().endswith("start=10")
    for gone in ("MgUUmf", "OSrXXb", "data-ts"):
        assert gone in normal and gone not in restyled
    lowered = restyled.lower()
    markers = Google.markers
    assert not any(m in lowered for m in (*markers.challenge_html, *markers.block_html, *markers.no_results))

    # the JS-added result follows the redesign too: its script builds the new markup, its payload has no ts
    script = restyled[restyled.rindex("<script") :]
    assert 'document.getElementById("rso").appendChild' in script and "data-ts" not in script
    assert '{"class": "CEMjEf NUnG9d"}' in script and '{"class": "ZE0LJd rbYSKb LfVVr"}' in script
    payload = json.loads(base64.b64decode(re.search(r'atob\("([A-Za-z0-9+/=]+)"\)', restyled)[1]))
    assert payload["href"] == lay.js_slot.href and payload["title"] == lay.roles["js"].title
    assert "ts" not in payload and payload["age"].endswith(" ago")

    # what the Google spider makes of it: every item, with url and title but no source and no time
    verdict, items = spider_items(fakes, restyled, url)
    assert verdict.cls is ResponseClass.OK and "fallback" not in verdict.reason
    _, normal_items = spider_items(fakes, normal, url)
    assert all(i["source"] and i["published_at"] for i in normal_items)
    assert [i["url"] for i in items] == [i["url"] for i in normal_items]
    assert [clean(i["url"]) for i in items] == [clean(s.href) for s in lay.html_slots]
    assert all(i["url"] and i["title"] and i["source"] is None and i["published_at"] is None for i in items)


def test_restyled_past_the_last_page_is_empty(fakes):
    fakes.script("google", ["restyled"])
    status, _, body, _ = fetch(search_url(fakes, page=catalogue.page_count(TOPIC)))
    assert status == 200 and google.NO_RESULTS_MESSAGE in body
    assert [(e["kind"], e["step"]) for e in fakes.requests("google")] == [("results", "empty")]


def test_scripted_steps_in_order_then_default(fakes):
    fakes.script("google", [{"page": "empty"}, {"page": "small"}])
    fakes.script("google", {"page": "blank"})
    url = search_url(fakes)
    for _ in range(5):
        fetch(url)
    assert [e["step"] for e in fakes.requests("google")] == ["empty", "small", "blank", "results", "results"]


def test_concurrent_requests_take_each_step_once(fakes):
    from concurrent.futures import ThreadPoolExecutor

    fakes.script("google", ["small"] * 6)
    with ThreadPoolExecutor(12) as pool:
        statuses = list(pool.map(lambda i: fetch(search_url(fakes, f"topic {i}"))[0], range(12)))
    assert statuses == [200] * 12
    steps = [e["step"] for e in fakes.results_requests("google")]
    assert sorted(steps) == ["results"] * 6 + ["small"] * 6


def test_status_headers_and_body_overrides(fakes):
    fakes.script(
        "google",
        [
            {"page": "results", "status": 503, "headers": {"Retry-After": "120", "X-Fake": "yes"}},
            {"body": "<html><body><p id=custom>hello</p></body></html>", "status": 418},
        ],
    )
    status, headers, body, _ = fetch(search_url(fakes))
    assert status == 503 and headers["Retry-After"] == "120" and headers["X-Fake"] == "yes"
    assert Selector(text=body).css("#rso div[data-news-doc-id]")
    status, _, body, _ = fetch(search_url(fakes))
    assert status == 418 and Selector(text=body).css("#custom::text").get() == "hello"
    assert [e["step"] for e in fakes.results_requests("google")] == ["results", "body"]


def test_route_override(fakes):
    fakes.route("google", "Quiet Topic", "empty")
    fakes.script("google", ["small"])
    for _ in range(3):
        assert "did not match any news results" in fetch(search_url(fakes, "quiet  topic"))[2]
    assert len(fetch(search_url(fakes))[2]) < 200  # the queued step was left for the other topic
    fakes.route("google", "flaky", ["sorry", "results"])  # a list: in order, then its last step for good
    assert [fetch(search_url(fakes, "flaky"))[0] for _ in range(3)] == [429, 200, 200]
    fakes.route("google", "quiet topic", [])
    assert "did not match" not in fetch(search_url(fakes, "quiet topic"))[2]


def test_a_spell_answers_for_its_span_of_time_then_the_queue_and_normal_pages_again(fakes):
    def steps() -> list[str]:
        return [e["step"] for e in fakes.results_requests("google")]

    fakes.script("google", ["empty"])
    fakes.route("google", "routed", "blank")
    fakes.spell("google", ["sorry", "small"], after=30, lasting=60)
    fetch(search_url(fakes))  # before it: the queue
    fakes.spell("google", ["sorry", "small"], after=0, lasting=60)  # a later spell replaces it: now
    for topic in (TOPIC, "routed", TOPIC, TOPIC):  # during it: its steps in turn, round and round; routes first
        fetch(search_url(fakes, topic))
    assert steps() == ["empty", "sorry", "blank", "small", "sorry"]
    fakes.spell("google", "sorry", after=0, lasting=0.2)
    time.sleep(0.3)
    fetch(search_url(fakes))  # after it: the normal page
    assert steps()[-1] == "results"
    fakes.spell("google", "sorry", after=0, lasting=60)
    fakes.reset()  # forgets the spell
    assert fetch(search_url(fakes))[0] == 200


def test_a_spell_is_checked_when_it_is_cast(fakes):
    for steps, after, lasting in (([], 0, 1), (["nonsense"], 0, 1), (["sorry"], -1, 1), (["sorry"], 0, 0)):
        with pytest.raises(ValueError):
            fakes.spell("google", steps, after=after, lasting=lasting)
    assert fetch(search_url(fakes))[0] == 200


def test_delay_is_honoured(fakes):
    fakes.script("google", [{"page": "results", "delay": 0.3}])
    started = time.monotonic()
    fetch(search_url(fakes))
    assert time.monotonic() - started >= 0.3
    started = time.monotonic()
    fetch(search_url(fakes))
    assert time.monotonic() - started < 0.3


def test_request_log_clear_and_reset(fakes):
    t0 = time.time()
    fetch(search_url(fakes, page=1))
    fetch(fakes.base_url("google") + "/thumbs/x.png", errors="replace")
    fetch(fakes.base_url("google") + "/nowhere")
    log = fakes.requests("google")
    assert [(e["path"], e["kind"], e["status"]) for e in log] == [
        ("/search", "results", 200),
        ("/thumbs/x.png", "asset", 200),
        ("/nowhere", "other", 404),
    ]
    assert log[0]["query"] == {"q": TOPIC, "tbm": "nws", "tbs": "qdr:h,sbd:1", "start": "10"}
    assert t0 <= log[0]["time"] <= log[1]["time"] <= time.time()
    assert log[0]["step"] == "results"
    fakes.clear_log()
    assert fakes.requests("google") == []
    fakes.script("google", ["empty"])
    fakes.route("google", TOPIC, "small")
    fakes.reset()
    assert fetch(search_url(fakes))[0] == 200 and fakes.requests("google")[0]["step"] == "results"


def test_http_control_endpoints(fakes):
    assert control(fakes, "script", [{"page": "empty"}, "small"]) == (200, {"queued": 2})
    assert control(fakes, "route", {"query": "always quiet", "steps": [{"page": "empty"}]})[0] == 200
    assert "did not match" in fetch(search_url(fakes))[2]
    assert len(fetch(search_url(fakes))[2]) < 200
    assert "did not match" in fetch(search_url(fakes, "always quiet"))[2]
    status, log = control(fakes, "requests")
    assert status == 200 and [e["step"] for e in log] == ["empty", "small", "empty"]
    assert all("__fakes__" not in e["path"] for e in log)
    assert control(fakes, "script", [{"page": "nonsense"}])[0] == 400
    assert control(fakes, "script", [{"pgae": "empty"}])[0] == 400
    assert control(fakes, "reset", {}) == (200, {"ok": True})
    assert control(fakes, "requests") == (200, [])
    assert fakes.requests("google") == []


def test_api_errors():
    with pytest.raises(ValueError):
        FakeEngines(("altavista",))
    with FakeEngines() as fakes:
        with pytest.raises(ValueError):
            fakes.script("google", [{"page": "nonsense"}])
        with pytest.raises(ValueError):
            fakes.script("google", [{"delay": -1}])
        with pytest.raises(KeyError):
            fakes.base_url("bing")
        assert fakes.config_overrides() == {"engines": {"google": {"base_url": fakes.base_url("google")}}}
        assert yaml.safe_load(fakes.config_snippet()) == fakes.config_overrides()
        assert re.fullmatch(r"http://127\.0\.0\.1:\d+", fakes.base_url("google"))


class Marker(Extension):
    """Claims ``/extra/``, answers ``/extra/hello.txt`` and ``/thumbs/mine.png``, marks every results reply."""

    asset_prefixes = ("/extra/",)

    def __init__(self, mark: str, wait: float = 0.0) -> None:
        self.mark, self.wait, self.seen = mark, wait, []

    def asset(self, ctx):
        self.seen.append(ctx.path)
        if self.wait:
            time.sleep(self.wait)
            ctx.now = time.time()
        if ctx.path in ("/extra/hello.txt", "/thumbs/mine.png"):
            return Reply(200, f"{self.mark} {ctx.engine}", "text/plain", served="extra")
        return None

    def results(self, reply, ctx):
        if ctx.query.get("q") == "raise":
            raise RuntimeError("a broken hook")
        reply.body = reply.payload() + f"<!-- {self.mark} {reply.status} -->".encode()
        return reply


def test_extensions_claim_assets_and_change_every_results_reply():
    first, second = Marker("first", wait=0.05), Marker("second")
    with FakeEngines(("google",), extensions=[first, second]) as fakes:
        base = fakes.base_url("google")
        status, _, body, _ = fetch(search_url(fakes))
        assert status == 200 and body.endswith("<!-- first 200 --><!-- second 200 -->")  # in order
        fakes.script("google", ["sorry"])
        status, _, body, _ = fetch(search_url(fakes), follow=False)
        assert status == 302 and body.endswith("<!-- first 302 --><!-- second 302 -->")  # any page kind, any status
        assert fetch(base + "/extra/hello.txt")[:3:2] == (200, "first google")  # the first answer wins
        started = time.time()
        assert fetch(base + "/thumbs/mine.png")[2] == "first google"  # before the shared asset
        assert fetch(base + "/thumbs/other.png", errors="replace")[2].startswith("\ufffdPNG")  # the server's
        status, _, body, _ = fetch(base + "/extra/nothing")  # claimed, answered by nobody: a 404
        assert status == 404 and "Not Found" in body
        assert second.seen == ["/thumbs/other.png", "/extra/nothing"]  # what the first left
        assert first.seen == ["/extra/hello.txt", "/thumbs/mine.png", "/thumbs/other.png", "/extra/nothing"]
        status, _, body, _ = fetch(search_url(fakes, "raise"))
        assert status == 500 and "RuntimeError: a broken hook" in body
        log = fakes.requests("google")
        assert [(e["kind"], e["status"]) for e in log] == [
            ("results", 200),
            ("results", 302),
            ("asset", 200),
            ("asset", 200),
            ("asset", 200),
            ("asset", 404),
            ("results", 500),
        ]
        waited = [e for e in log if e["kind"] == "asset" and e["time"] >= started]
        assert len(waited) == 3 and all(e["time"] - started >= 0.05 for e in waited)  # answered after the wait
        assert fakes.extensions == (first, second)
    with FakeEngines(("google",), extensions=Marker("alone")) as fakes:  # one extension, not in a list
        assert fetch(search_url(fakes))[2].endswith("<!-- alone 200 -->")
        assert fetch(fakes.base_url("google") + "/extra/hello.txt")[2] == "alone google"
    with FakeEngines(("google",)) as fakes:  # nobody claims /extra/: not an asset path
        status, _, _, _ = fetch(fakes.base_url("google") + "/extra/hello.txt")
        assert status == 404 and [e["kind"] for e in fakes.requests("google")] == ["other"]
    for bad in ([{"thumbnails": 20}], [Marker("ok"), "nope"], 3):
        with pytest.raises(TypeError):
            FakeEngines(("google",), extensions=bad)


# -- a real browser -------------------------------------------------------------------------------------


def test_js_result_present_at_domcontentloaded_in_chromium(fakes):
    sync_api = pytest.importorskip("playwright.sync_api")
    if not os.path.exists(CHROMIUM):
        pytest.skip("no Chromium at " + CHROMIUM)
    lay = google.layout(TOPIC, 0)
    left_loopback = []

    def only_loopback(route):
        host = urlsplit(route.request.url).hostname
        if host == "127.0.0.1":
            route.continue_()
        else:
            left_loopback.append(route.request.url)
            route.abort()

    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True)
        try:
            page = browser.new_page()
            page.route("**/*", only_loopback)
            page.goto(search_url(fakes), wait_until="domcontentloaded")
            html = page.content()
            count = page.locator("#rso div[data-news-doc-id]").count()
        finally:
            browser.close()
    assert count == 11
    sel = Selector(text=html)
    last = sel.css("#rso div[data-news-doc-id]")[-1]
    assert last.attrib["data-news-doc-id"] == lay.js_slot.doc_id
    assert last.css("a.WlydOe[jsname=YKoRaf]::attr(href)").get() == lay.js_slot.target
    assert last.css("div[role=heading]::text").get() == lay.roles["js"].title
    assert last.css("div.OSrXXb span[data-ts]::attr(data-ts)").get().isdigit()
    assert clean(lay.js_slot.target) == lay.roles["js"].url
    assert all(urlsplit(u).hostname == "assets.fake-engine.invalid" for u in left_loopback)


def test_restyled_js_result_in_chromium(fakes):
    sync_api = pytest.importorskip("playwright.sync_api")
    if not os.path.exists(CHROMIUM):
        pytest.skip("no Chromium at " + CHROMIUM)
    lay = google.layout(TOPIC, 0)
    fakes.script("google", ["restyled"])
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True)
        try:
            page = browser.new_page()
            page.route(
                "**/*",
                lambda route: (
                    route.continue_() if urlsplit(route.request.url).hostname == "127.0.0.1" else route.abort()
                ),
            )
            page.goto(search_url(fakes), wait_until="domcontentloaded")
            html = page.content()
        finally:
            browser.close()
    last = Selector(text=html).css("#rso div[data-news-doc-id]")[-1]
    assert last.attrib["data-news-doc-id"] == lay.js_slot.doc_id
    assert last.css("a.WlydOe[jsname=YKoRaf]::attr(href)").get() == lay.js_slot.target
    assert last.css("div[role=heading]::text").get() == lay.roles["js"].title
    assert last.css("div.CEMjEf span::text").get() == lay.roles["js"].source
    assert last.css("div.ZE0LJd span::text").get().endswith(" ago")
    assert not last.css("div.MgUUmf, div.OSrXXb, [data-ts]")


# -- the serve command ----------------------------------------------------------------------------------


def test_serve_prints_a_yaml_snippet_and_serves():
    with subprocess.Popen(
        [sys.executable, "-m", "fake_engines", "serve", "--engines", "google"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        cwd=REPO,
    ) as proc:
        try:
            lines = [proc.stdout.readline() for _ in range(3)]
            config = yaml.safe_load("".join(lines))
            base = config["engines"]["google"]["base_url"]
            assert re.fullmatch(r"http://127\.0\.0\.1:\d+", base)
            with urllib.request.urlopen(base + "/search?q=test&tbm=nws", timeout=10) as response:
                assert "google.sn='newssearch'" in response.read().decode()
        finally:
            proc.terminate()
            proc.wait(timeout=10)
    assert proc.returncode == 0


def test_serve_rejects_a_wrong_command():
    out = subprocess.run(
        [sys.executable, "-m", "fake_engines", "bogus"], capture_output=True, text=True, cwd=REPO, timeout=30
    )
    assert out.returncode == 2 and "usage" in out.stderr
