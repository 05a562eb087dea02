"""The fake engines' consent walls (fake_engines.consent_pages): every engine, mode and language over real HTTP, and
the country-domain links in the Google and Yahoo chrome (the command line and the whole answer in real Chromium:
tests/system/test_fake_consent_browser.py)."""

from __future__ import annotations

import json
import os
import re
from urllib.parse import parse_qsl, urlencode, urljoin, urlsplit

import pytest
from parsel import Selector

from fake_engines import FakeEngines, bing, brave, google, yahoo
from fake_engines.catalogue import all_articles
from tests.support.fakes_http import fetch, reset_fakes_per_test, running_fakes

CHROMIUM = "/usr/lib/chromium/chromium-headless-shell"
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TOPIC = "alpha"
ENGINES = ("google", "yahoo", "bing", "brave")
SECOND = {"google": "de", "yahoo": "it", "bing": "fr", "brave": "es"}
COOKIES = {"google": "SOCS", "yahoo": "A1", "bing": "BCP", "brave": "brave_consent"}
CONSENT_PATHS = {"google": "/ml", "yahoo": "/v2/collectConsent", "bing": "/cookieconsent", "brave": "/privacy-notice"}
CONTINUE_PARAM = {"google": "continue", "bing": "ru", "brave": "redirect"}
"""The query parameter of the consent host's URL that holds the results URL (Yahoo keeps it in its session)."""

TEXTS = {  # title, reject label, accept label
    ("google", "en"): ("Before you continue to Google", "Reject all", "Accept all"),
    ("google", "de"): ("Bevor Sie zu Google weitergehen", "Alle ablehnen", "Alle akzeptieren"),
    ("yahoo", "en"): ("Yahoo is part of the Yahoo family of brands", "Reject all", "Accept all"),
    ("yahoo", "it"): ("Yahoo fa parte della famiglia di brand Yahoo", "Rifiuta tutto", "Accetta tutto"),
    ("bing", "en"): ("Bing", "Reject", "Accept"),
    ("bing", "fr"): ("Bing", "Refuser", "Accepter"),
    ("brave", "en"): ("Brave Search - Privacy notice", "Reject all", "Accept all"),
    ("brave", "es"): ("Brave Search - Aviso de privacidad", "Rechazar todo", "Aceptar todo"),
}

BUTTONS = {  # the buttons a person presses, as XPath (the CSS the crawler uses is in the Chromium test)
    ("google", "reject"): "//form[.//input[@name='set_eom' and @value='true']]//*[@type='submit']",
    ("google", "accept"): "//form[.//input[@name='set_eom' and @value='false']]//*[@type='submit']",
    ("yahoo", "reject"): "//form[contains(concat(' ', @class, ' '), ' consent-form ')]//button[@name='reject']",
    ("yahoo", "accept"): "//form[contains(concat(' ', @class, ' '), ' consent-form ')]//button[@name='agree']",
    ("bing", "reject"): "//*[@id='bnp_btn_reject']",
    ("bing", "accept"): "//*[@id='bnp_btn_accept']",
    ("brave", "reject"): "//*[@data-notice='consent']//button[@data-consent='reject']",
    ("brave", "accept"): "//*[@data-notice='consent']//button[@data-consent='accept']",
}
CSS_BUTTONS = {
    "google": 'form:has(input[name="set_eom"][value="true"]) [type="submit"]',
    "yahoo": 'form.consent-form button[name="reject"]',
    "bing": "#bnp_btn_reject",
    "brave": '[data-notice="consent"] button[data-consent="reject"]',
}
RESULT_ITEMS = {  # each engine's known layout
    "google": "#rso div[data-news-doc-id]",
    "yahoo": "#web ol.searchCenterMiddle div.NewsArticle",
    "bing": "div.news-card.newsitem",
    "brave": 'div.snippet[data-type="news"]',
}
RESULTS_PATHS = {
    "google": google.search_path(TOPIC),
    "yahoo": yahoo.search_path(TOPIC),
    "bing": bing.search_path(TOPIC),
    "brave": brave.search_path(TOPIC),
}
ITEMS_IN_HTML = {  # what a page of TOPIC holds without running its scripts
    "google": len(google.layout(TOPIC, 0).html_slots),
    "yahoo": len(yahoo.expected_articles(TOPIC, 0)),
    "bing": len(bing.layout(TOPIC, 0).cards),
    "brave": len(brave.expected_articles(TOPIC, 0)),
}

fakes = running_fakes(*ENGINES)
_clean = reset_fakes_per_test()


def results_url(fakes: FakeEngines, engine: str) -> str:
    return fakes.base_url(engine) + RESULTS_PATHS[engine]


def items(engine: str, body: str) -> int:
    return len(Selector(text=body).css(RESULT_ITEMS[engine]))


def last(fakes: FakeEngines, engine: str) -> dict:
    return fakes.requests(engine)[-1]


def visible_text(sel: Selector) -> str:
    return " ".join(
        " ".join(sel.xpath("//body//text()[not(ancestor::script) and not(ancestor::style)]").getall()).split()
    )


def check_wall(engine: str, lang: str, body: str, origin: str, cont: str) -> None:
    """Every marker the crawler's recogniser relies on, the visible texts in ``lang``, nothing of the results."""
    sel = Selector(text=body)
    title, reject, accept = TEXTS[engine, lang]
    assert sel.css("title::text").get() == title
    assert sel.xpath("/html/@lang").get().split("-")[0] == lang
    if engine == "google":
        forms = sel.xpath("//form")
        assert len(forms) == 2
        for form, set_eom, label in zip(forms, ("true", "false"), (reject, accept), strict=True):
            assert (form.attrib["action"], form.attrib["method"]) == (origin + "/save", "POST")
            fields = {i.attrib["name"]: i.attrib["value"] for i in form.css("input[type=hidden]")}
            assert sorted(fields) == sorted(["gl", "m", "pc", "continue", "hl", "src", "cm", "set_eom"])
            assert (fields["set_eom"], fields["continue"], fields["hl"]) == (set_eom, cont, lang)
            buttons = form.css("button")
            assert len(buttons) == 1 and buttons.attrib["type"] == "submit"
            assert buttons.css("::text").get() == label and buttons.attrib["aria-label"] == label
        more = {"en": "More options", "de": "Weitere Optionen"}[lang]
        assert sel.xpath("//a[normalize-space()=$text]/@href", text=more).get().startswith("/ml?")
        assert any("consent.google.com" in script for script in sel.css("script:not([src])::text").getall())
    elif engine == "yahoo":
        form = sel.css("form.consent-form")
        assert len(form) == 1 and form.attrib["method"] == "post"
        assert urljoin(origin + "/", form.attrib["action"]).startswith(origin + "/v2/collectConsent?sessionId=")
        fields = {i.attrib["name"]: i.attrib["value"] for i in form.css("input[type=hidden]")}
        assert sorted(fields) == ["csrfToken", "namespace", "originalDoneUrl", "sessionId"]
        assert (fields["namespace"], fields["originalDoneUrl"]) == ("yahoo", cont)
        assert fields["sessionId"].startswith("3_cc-session_") and fields["csrfToken"]
        assert form.css("button[type=submit][name=reject][value=reject]::text").get() == reject
        assert form.css("button[type=submit][name=agree][value=agree]::text").get() == accept
    elif engine == "bing":
        body_children = sel.xpath("/html/body/*")
        assert len(body_children) == 1 and body_children.attrib["id"] == "bnp_container"
        assert body_children.attrib["class"].split() == ["bnp_cookie_banner"]
        form = body_children.css("form")
        assert len(form) == 1 and form.attrib["method"] == "post" and form.attrib["action"]
        assert form.css("input[name=ru]::attr(value)").get() == cont
        assert form.css("button#bnp_btn_reject[type=submit][name=choice][value=reject]::text").get() == reject
        assert form.css("button#bnp_btn_accept[type=submit][name=choice][value=accept]::text").get() == accept
    else:
        notice = sel.css("div.privacy-notice[data-notice=consent]")
        assert len(notice) == 1
        form = notice.css("form")
        assert len(form) == 1 and form.attrib["method"] == "post" and form.attrib["action"]
        assert form.css("input[name=redirect]::attr(value)").get() == cont
        assert form.css("button[type=submit][name=choice][value=reject][data-consent=reject]::text").get() == reject
        assert form.css("button[type=submit][name=choice][value=accept][data-consent=accept]::text").get() == accept
    text = visible_text(sel)
    assert reject in text and accept in text
    if lang != "en":  # translated: the English labels are not on the page
        _, en_reject, en_accept = TEXTS[engine, "en"]
        assert not re.search(rf"\b{en_reject}\b", text) and not re.search(rf"\b{en_accept}\b", text)
    # no result item, no publisher: links stay on this machine's hosts or on hosts that never resolve
    assert items(engine, body) == 0
    assert not any(article.url in body for article in all_articles(TOPIC))
    for url in sel.css(
        "a::attr(href), form::attr(action), img::attr(src), link::attr(href), script::attr(src)"
    ).getall():
        host = urlsplit(urljoin(origin + "/", url)).hostname
        assert host in ("127.0.0.1", "localhost") or host.endswith(".invalid"), url


def submission(engine: str, body: str, choice: str, page_url: str) -> tuple[str, dict[str, str]]:
    """What a browser submits when the ``choice`` button is pressed: the form's URL and fields."""
    sel = Selector(text=body)
    button = sel.xpath(BUTTONS[engine, choice])
    assert len(button) == 1
    form = button.xpath("ancestor::form[1]")
    fields = {i.attrib["name"]: i.attrib.get("value", "") for i in form.css("input[name]")}
    if button.attrib.get("name"):
        fields[button.attrib["name"]] = button.attrib.get("value", "")
    return urljoin(page_url, form.attrib["action"]), fields


def parse_set_cookie(header: str) -> tuple[str, str, dict[str, str]]:
    pair, *attributes = [part.strip() for part in header.split(";")]
    name, _, value = pair.partition("=")
    attrs = {}
    for attribute in attributes:
        key, _, val = attribute.partition("=")
        attrs[key.lower()] = val
    return name, value, attrs


def meet_the_wall(fakes: FakeEngines, engine: str, mode: str, lang: str) -> tuple[str, str]:
    """A results request without the cookie: the wall's URL and page (checked)."""
    url = results_url(fakes, engine)
    status, headers, body, _ = fetch(url, follow=False)
    entry = last(fakes, engine)
    assert (entry["kind"], entry["consent_cookie"], entry["host"]) == ("results", False, "127.0.0.1")
    if mode == "redirect":
        assert status == 302 and entry["step"] == "consent_redirect"
        wall_url = headers["Location"]
        parts = urlsplit(wall_url)
        assert (parts.scheme, parts.hostname, parts.port) == ("http", "localhost", fakes.port(engine))
        assert wall_url.startswith(fakes.consent_base_url(engine) + CONSENT_PATHS[engine] + "?")
        query = dict(parse_qsl(parts.query))
        if engine in CONTINUE_PARAM:
            assert query[CONTINUE_PARAM[engine]] == url
        if engine == "google":
            assert (query["gl"], query["hl"]) == ("DE", lang)
        status, _, body, _ = fetch(wall_url, follow=False)
        wall = last(fakes, engine)
        assert (wall["kind"], wall["step"], wall["host"], wall["status"]) == ("other", "consent_wall", "localhost", 200)
    else:
        assert status == 200 and entry["step"] == "consent_wall"
        wall_url = url
    assert status == 200 and last(fakes, engine)["consent_language"] == lang
    origin = "http://" + urlsplit(wall_url).netloc
    check_wall(engine, lang, body, origin, url)
    return wall_url, body


# -- every engine, mode and language over HTTP --------------------------------------------------------------


@pytest.mark.parametrize("choice", ["reject", "accept"])
@pytest.mark.parametrize("lang", ["en", "second"])
@pytest.mark.parametrize("mode", ["wall", "redirect", "broken"])
@pytest.mark.parametrize("engine", ENGINES)
def test_wall_answer_and_results(fakes, engine, mode, lang, choice):
    lang = SECOND[engine] if lang == "second" else lang
    fakes.consent(engine, mode, lang)
    assert fakes.consent_state(engine) == {"mode": mode, "language": lang}
    url = results_url(fakes, engine)
    wall_url, body = meet_the_wall(fakes, engine, mode, lang)

    action, fields = submission(engine, body, choice, wall_url)
    assert urlsplit(action).netloc == urlsplit(wall_url).netloc  # posted to the host that served the wall
    status, headers, _, _ = fetch(action, data=urlencode(fields).encode(), follow=False)
    save = last(fakes, engine)
    assert status == 302 and save["method"] == "POST" and save["consent_choice"] == choice
    assert save["host"] == urlsplit(wall_url).hostname

    if mode == "broken":
        assert headers["Location"] == url and "Set-Cookie" not in headers
        assert (save["step"], save["cookie_set"]) == ("consent_dropped", None)
        status, _, again, _ = fetch(url, follow=False)  # and the wall is met again
        assert status == 200 and last(fakes, engine)["step"] == "consent_wall" and items(engine, again) == 0
        assert not [e for e in fakes.requests(engine) if e.get("cookie_set")]
        return

    assert save["step"] == "consent_saved"
    if mode == "redirect":  # the consent host sets nothing: it hands over to the results host
        assert "Set-Cookie" not in headers and save["cookie_set"] is None
        hop = headers["Location"]
        assert hop.startswith(fakes.base_url(engine) + "/consent/set?")
        assert dict(parse_qsl(urlsplit(hop).query)) == {"choice": choice, "continue": url}
        status, headers, _, _ = fetch(hop, follow=False)
        setter = last(fakes, engine)
        assert (setter["step"], setter["consent_choice"], setter["host"]) == ("consent_set", choice, "127.0.0.1")
    else:
        setter = save
        assert save["host"] == "127.0.0.1"
    assert status == 302 and headers["Location"] == url
    name, value, attrs = parse_set_cookie(headers["Set-Cookie"])
    assert name == COOKIES[engine] and value and setter["cookie_set"] == name
    assert attrs["path"] == "/" and int(attrs["max-age"]) >= 180 * 86400  # months: it outlives restarts
    assert "domain" not in attrs  # a host-only cookie of the host that answered: 127.0.0.1
    if engine == "google":
        assert value.startswith("CAES" if choice == "reject" else "CAIS")
    if engine == "bing":
        assert value == ("AD=0&AL=0&SM=0" if choice == "reject" else "AD=1&AL=1&SM=1")

    status, _, page, _ = fetch(url, headers={"Cookie": f"{name}={value}"}, follow=False)
    entry = last(fakes, engine)
    assert status == 200 and items(engine, page) == ITEMS_IN_HTML[engine] > 0
    assert (entry["kind"], entry["step"], entry["consent_cookie"]) == ("results", "results", True)


@pytest.mark.parametrize("engine", ENGINES)
def test_off_serves_results_as_before(fakes, engine):
    url = results_url(fakes, engine)
    assert fakes.consent_state(engine) == {"mode": "off", "language": "en"}
    status, _, page, _ = fetch(url, follow=False)
    assert status == 200 and items(engine, page) == ITEMS_IN_HTML[engine]
    fakes.consent(engine, "wall", SECOND[engine])
    assert fetch(url, follow=False)[0] == 200 and items(engine, fetch(url)[2]) == 0
    fakes.consent(engine, "off")
    status, _, again, _ = fetch(url, follow=False)
    assert status == 200 and items(engine, again) == ITEMS_IN_HTML[engine]
    assert [(e["step"], e["consent_cookie"]) for e in fakes.results_requests(engine)] == [
        ("results", False),
        ("consent_wall", False),
        ("consent_wall", False),
        ("results", False),
    ]
    fakes.consent(engine, "redirect")
    fakes.reset(engine)  # reset turns the walls off too
    assert fakes.consent_state(engine)["mode"] == "off" and fetch(url, follow=False)[0] == 200


@pytest.mark.parametrize("mode", ["wall", "redirect"])
@pytest.mark.parametrize("engine", ENGINES)
def test_the_wall_does_not_use_up_steps_or_routes(fakes, engine, mode):
    fakes.consent(engine, mode)
    fakes.script(engine, ["empty"])
    fakes.route(engine, "quiet", ["small"])
    url = results_url(fakes, engine)
    quiet = fakes.base_url(engine) + RESULTS_PATHS[engine].replace(f"={TOPIC}", "=quiet")
    assert fetch(url, follow=False)[0] == fetch(quiet, follow=False)[0] == (302 if mode == "redirect" else 200)
    cookie = {"Cookie": f"{COOKIES[engine]}=given"}
    _, _, body, _ = fetch(quiet, headers=cookie)
    assert len(body) < 200  # the route's step
    fetch(url, headers=cookie)
    fetch(url, headers=cookie)
    steps = [e["step"] for e in fakes.results_requests(engine)]
    wall = "consent_redirect" if mode == "redirect" else "consent_wall"
    assert steps == [wall, wall, "small", "empty", "results"]


def test_other_cookies_do_not_pass_the_wall(fakes):
    for engine in ENGINES:
        fakes.consent(engine, "wall")
        others = "; ".join(f"{name}=x" for other, name in COOKIES.items() if other != engine)
        _, _, body, _ = fetch(results_url(fakes, engine), headers={"Cookie": others})
        assert items(engine, body) == 0 and last(fakes, engine)["step"] == "consent_wall"
    # Yahoo's older GUCE cookie counts as a consent too
    _, _, body, _ = fetch(results_url(fakes, "yahoo"), headers={"Cookie": "GUC=AQEBCAFx"})
    assert items("yahoo", body) == ITEMS_IN_HTML["yahoo"]


SAVES = {  # engine: (save path, continue field, other fields)
    "google": ("/save", "continue", {"set_eom": "true"}),
    "yahoo": ("/v2/collectConsent?sessionId=3_cc-session_x", "originalDoneUrl", {"reject": "reject"}),
    "bing": ("/cookieconsent/save", "ru", {"choice": "reject"}),
    "brave": ("/privacy-notice/save", "redirect", {"choice": "reject"}),
}


@pytest.mark.parametrize("engine", ENGINES)
def test_an_answer_never_leaves_the_machine(fakes, engine):
    path, field, others = SAVES[engine]
    base = fakes.base_url(engine)
    for target in ("https://evil.example/search", "//evil.example/", f"{base}@evil.example/", "javascript:alert(1)"):
        data = urlencode({field: target, **others}).encode()
        status, headers, _, _ = fetch(base + path, data=data, follow=False)
        assert status == 302 and headers["Location"] == base + "/", target
        status, headers, _, _ = fetch(fakes.consent_base_url(engine) + path, data=data, follow=False)
        assert status == 302 and dict(parse_qsl(urlsplit(headers["Location"]).query))["continue"] == base + "/"
        status, headers, _, _ = fetch(
            f"{base}/consent/set?{urlencode({'choice': 'reject', 'continue': target})}", follow=False
        )
        assert status == 302 and headers["Location"] == base + "/"
    # a path stays on the results host
    status, headers, _, _ = fetch(base + path, data=urlencode({field: "/x?y=1", **others}).encode(), follow=False)
    assert headers["Location"] == base + "/x?y=1"


def test_choices_and_errors(fakes):
    with pytest.raises(ValueError, match="en, de"):
        fakes.consent("google", "wall", "fr")
    with pytest.raises(ValueError, match="en, fr"):
        fakes.consent("bing", "wall", "de")
    with pytest.raises(ValueError, match="off, wall, redirect, broken"):
        fakes.consent("brave", "sometimes")
    assert {e: fakes.consent_languages(e) for e in ENGINES} == {e: ("en", SECOND[e]) for e in ENGINES}
    assert fakes.consent_state("google") == {"mode": "off", "language": "en"}  # nothing changed by a refusal

    # the control endpoint, for a fakes server in another process
    control = fakes.base_url("yahoo") + "/__fakes__/consent"
    status, _, body, _ = fetch(control, data=json.dumps({"mode": "redirect", "language": "it"}).encode())
    assert (status, json.loads(body)) == (200, {"mode": "redirect", "language": "it"})
    assert json.loads(fetch(control)[2]) == {"mode": "redirect", "language": "it"}
    status, headers, _, _ = fetch(results_url(fakes, "yahoo"), follow=False)
    assert status == 302 and urlsplit(headers["Location"]).hostname == "localhost"
    status, _, body, _ = fetch(control, data=json.dumps({"mode": "wall", "language": "de"}).encode())
    assert status == 400 and "en, it" in json.loads(body)["error"]
    assert fetch(control, data=b"[1]")[0] == 400
    assert all("__fakes__" not in e["path"] for e in fakes.requests("yahoo"))


def test_old_page_kinds_serve_the_new_walls(fakes):
    fakes.script("google", ["consent"])
    url = results_url(fakes, "google")
    status, headers, _, _ = fetch(url, follow=False)
    assert status == 302 and headers["Location"].startswith(fakes.base_url("google") + "/consent?continue=")
    status, _, body, _ = fetch(headers["Location"])
    check_wall("google", "en", body, fakes.base_url("google"), url)
    fakes.script("yahoo", ["consent"])
    url = results_url(fakes, "yahoo")
    status, headers, _, _ = fetch(url, follow=False)
    assert status == 302 and headers["Location"].startswith(fakes.base_url("yahoo") + "/v2/collectConsent?")
    status, _, body, _ = fetch(headers["Location"])
    check_wall("yahoo", "en", body, fakes.base_url("yahoo"), url)
    assert [e["step"] for e in fakes.requests("yahoo")] == ["consent", "consent_wall"]


# -- the country-domain links of the chrome -----------------------------------------------------------------


@pytest.mark.parametrize(
    "engine, links, results, chrome",
    [
        ("google", google.COUNTRY_LINKS, "#rso", "#footcnt"),
        ("yahoo", yahoo.COUNTRY_LINKS, "#web", "#footer"),
    ],
)
def test_country_domain_links_sit_in_the_chrome(fakes, engine, links, results, chrome):
    hrefs = [href for href, _, _ in links]
    if engine == "google":
        assert hrefs == [
            "https://www.google.com.ng/intl/en/about/products",
            "https://www.google.de/",
            "https://policies.google.co.uk/privacy",
        ]
    else:
        assert hrefs == ["https://it.yahoo.com/", "https://uk.news.yahoo.com/"]
    for page in ("results", "empty"):
        fakes.script(engine, [page])
        sel = Selector(text=fetch(results_url(fakes, engine))[2])
        for href, heading, text in links:
            link = sel.css(chrome).xpath(".//a[@href=$href]", href=href)
            assert len(link) == 1 and link.css("::text").get() == heading  # a heading in the link
            assert link.xpath("normalize-space(following-sibling::*[1])").get() == text  # words beside it
            assert not sel.css(results).xpath(".//a[@href=$href]", href=href)
    # the known layout reads the same items as ever, none of them a country link
    sel = Selector(text=fetch(results_url(fakes, engine))[2])
    assert len(sel.css(RESULT_ITEMS[engine])) == ITEMS_IN_HTML[engine]
    assert not set(sel.css(RESULT_ITEMS[engine]).css("a::attr(href)").getall()) & set(hrefs)
    module = google if engine == "google" else yahoo
    assert not set(module.expected_articles(TOPIC, 0)) & set(hrefs)
