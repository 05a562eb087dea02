"""Consent walls recognised by what does not depend on the language, read as a challenge (reason consent) and
never as news; the choice of browser.consent in the config and the health reasons."""

from __future__ import annotations

import pytest
from scrapy.exceptions import NotConfigured
from scrapy.utils.test import get_crawler

from topicstreams.config.errors import ConfigError
from topicstreams.config.loading import load_config
from topicstreams.engines import REGISTRY, make_engine
from topicstreams.engines.classify import ResponseClass
from topicstreams.engines.consent_walls import CONSENT, CONSENT_HOST_WALL, blank_query_values
from topicstreams.engines.reader import Page, PageReader
from topicstreams.health.band import EngineHealth, HealthSettings
from topicstreams.health.window import Sample
from topicstreams.middlewares.consent_answers import ConsentMiddleware

ENGINES = {
    name: {"base_url": f"https://{host}"}
    for name, host in (
        ("google", "www.google.de"),
        ("bing", "www.bing.com"),
        ("yahoo", "news.search.yahoo.com"),
        ("brave", "search.brave.com"),
    )
}


def reader(name: str) -> PageReader:
    return PageReader(make_engine(name, ENGINES))


def page(html: str, url: str = "https://www.google.de/search?q=x&tbm=nws") -> Page:
    return Page(url, 200, html)


# Walls as the engines serve them, in a language other than English, with a link a naive parser would take for a
# result (the Yahoo page that was once stored as one article titled "guce", pointing at it.yahoo.com).
GOOGLE_DE = """<html lang="de"><head><title>Bevor Sie zu Google weitergehen</title>
<script>var c = "https://consent.google.com/ml";</script></head><body>
<h1>Bevor Sie zu Google weitergehen</h1><p>Wir verwenden Cookies und Daten, um Google-Dienste bereitzustellen.</p>
<form action="https://consent.google.com/save" method="POST"><input type="hidden" name="gl" value="DE">
<input type="hidden" name="continue" value="https://www.google.de/search?q=x"><input type="hidden" name="set_eom"
value="true"><button aria-label="Alle ablehnen">Alle ablehnen</button></form>
<form action="https://consent.google.com/save" method="POST"><input type="hidden" name="set_eom" value="false">
<input type="submit" value="Alle akzeptieren"></form>
<h3><a href="https://policies.example/privacy?hl=de">Datenschutzerklärung und Nutzungsbedingungen lesen</a></h3>
<p>Weitere Informationen über die Verwendung von Cookies finden Sie hier, jederzeit.</p></body></html>"""

YAHOO_IT = """<html lang="it"><head><title>Yahoo fa parte della famiglia di brand Yahoo</title></head><body>
<div class="con-wizard"><h2>Yahoo fa parte della famiglia di brand Yahoo</h2>
<form class="consent-form" action="https://consent.yahoo.com/v2/collectConsent?sessionId=3_cc-x" method="post">
<input type="hidden" name="csrfToken" value="t"><input type="hidden" name="sessionId" value="3_cc-x">
<input type="hidden" name="originalDoneUrl" value="https://it.yahoo.com/"><input type="hidden" name="namespace"
value="yahoo"><button type="submit" name="reject" value="reject">Rifiuta tutto</button>
<button type="submit" name="agree" value="agree">Accetta tutto</button></form>
<h4><a href="https://it.yahoo.com/">guce</a></h4><p>Torna alla pagina che stavi visitando, dopo la scelta.</p>
<h4><a href="https://privacy.example/it/">Informativa sulla privacy della famiglia Yahoo</a></h4>
<p>Puoi cambiare le tue scelte in qualsiasi momento dalle impostazioni.</p></div></body></html>"""

BING_FR = """<html lang="fr"><body><div id="bnp_container" class="bnp_cookie_banner"><p>Nous utilisons des
cookies.</p><form method="post" action="/cookieconsent/save"><button id="bnp_btn_reject" name="choice"
value="reject">Refuser</button><button id="bnp_btn_accept" name="choice" value="accept">Accepter</button></form>
</div></body></html>"""

BRAVE_ES = """<html lang="es"><body><div class="privacy-notice" data-notice="consent"><h2>Tu privacidad</h2>
<form method="post" action="/privacy-notice/save"><button name="choice" value="reject"
data-consent="reject">Rechazar</button><button name="choice" value="accept" data-consent="accept">Aceptar</button>
</form></div></body></html>"""

WALLS = {"google": GOOGLE_DE, "yahoo": YAHOO_IT, "bing": BING_FR, "brave": BRAVE_ES}


@pytest.mark.parametrize("name", sorted(WALLS))
def test_each_engines_wall_in_another_language_is_a_consent_challenge_and_nothing_is_read(name):
    wall = WALLS[name]
    reading = reader(name).read(page(wall, ENGINES[name]["base_url"] + "/search?q=x"))
    assert (reading.verdict.cls, reading.verdict.reason) == (ResponseClass.CHALLENGE, CONSENT)
    assert reading.results == () and not reading.fallback
    engine = REGISTRY[name]("https://x.example")
    found = engine.consent_wall("https://x.example/search?q=x", wall)
    assert found is not None and found.name == name
    assert found.button("reject") and found.button("accept")


def test_the_yahoo_wall_without_its_form_would_have_been_read_as_news():
    # What recognising the wall prevents: the same page without its form goes to the structural fallback. Its own
    # links are the engine's and the home page of an edition (privacy.example/it/), which the fallback no longer
    # takes (test_walls.py); with two ordinary links more it reads them as news.
    without_form = YAHOO_IT.split("<form", 1)[0] + YAHOO_IT.split("</form>", 1)[1]
    url = "https://news.search.yahoo.com/search?p=x"
    bare = reader("yahoo").read(page(without_form, url))
    assert bare.verdict.reason != CONSENT and bare.results == ()
    links = ["https://privacy.example/it/cookie", "https://help.example/it/account"]
    more = "".join(f'<h4><a href="{link}">Aiuto e privacy</a></h4><p>Domande e risposte.</p>' for link in links)
    reading = reader("yahoo").read(page(without_form.replace("</div></body>", more + "</div></body>"), url))
    assert reading.verdict.reason != CONSENT
    assert [result.url for result in reading.results] == links


@pytest.mark.parametrize(
    ("name", "url"),
    [
        ("google", "https://consent.google.de/ml?continue=https://www.google.de/search%3Fq%3Dx"),
        ("google", "https://consent.google.com.ng/ml?continue=x"),
        ("yahoo", "https://consent.yahoo.com/v2/collectConsent?sessionId=3_cc-session_x"),
        ("yahoo", "https://guce.yahoo.com/consent?brandType=eu&gcrumb=x"),
        ("yahoo", "http://127.0.0.1:9/v2/collectConsent?sessionId=x"),  # a consent path on any host
    ],
)
def test_a_page_on_a_consent_host_or_path_is_a_wall_whatever_it_holds(name, url):
    reading = reader(name).read(Page(url, 200, "<html><body><p>Loading…</p></body></html>"))
    assert (reading.verdict.cls, reading.verdict.reason) == (ResponseClass.CHALLENGE, CONSENT)


def test_a_consent_host_is_one_of_the_engines_own():
    google = REGISTRY["google"]("https://www.google.com")
    assert google.consent_wall("https://consent.google.co.uk/ml", "") is CONSENT_HOST_WALL
    assert CONSENT_HOST_WALL.button("reject") is None  # recognised, but no button known: left unanswered
    for url in ("https://consent.example/ml", "https://consent.googleblog.example/", "https://www.google.de/"):
        assert google.consent_wall(url, "<p>hello</p>") is None, url
    # a topic echoed in the query is no consent path
    yahoo = REGISTRY["yahoo"]("https://news.search.yahoo.com")
    assert yahoo.consent_wall("https://news.search.yahoo.com/search?p=/v2/collectConsent", "<p></p>") is None
    assert blank_query_values("https://e.example/s?p=/v2/collectConsent&b=1") == "https://e.example/s?p=&b="


RESULTS = """<html><body><div id="rso"><div data-news-doc-id="1"><a class="WlydOe" href="https://news.example/a">
<div role="heading">Consent rules for cookies tightened</div></a></div></div>
<script>window.x = "https://consent.google.com/save"; var set_eom = true;</script></body></html>"""


def test_a_results_page_is_never_a_wall():
    # Result items of a known layout: a banner or a script naming the consent host changes nothing.
    reading = reader("google").read(page(RESULTS))
    assert reading.verdict.cls is ResponseClass.OK and len(reading.results) == 1
    bing_banner = BING_FR.replace(
        "</body>",
        '<div class="news-card newsitem" url="https://news.example/b" '
        'data-title="A headline"><a class="title" href="https://news.example/b">A '
        "headline</a></div></body>",
    )
    reading = reader("bing").read(page(bing_banner, "https://www.bing.com/news/search?q=x"))
    assert reading.verdict.cls is ResponseClass.OK and [r.url for r in reading.results] == ["https://news.example/b"]


def test_a_script_naming_the_consent_host_is_no_wall():
    # Results pages carry such scripts too: without the consent form, a page is judged as before.
    html = "<html><body><script>var c = 'https://consent.google.com/ml';</script><div id='rso'></div></body></html>"
    reading = reader("google").read(page(html))
    assert reading.verdict.cls is ResponseClass.SOFT_BLOCK and reading.verdict.reason != CONSENT


def test_browser_consent_is_reject_by_default_and_checked(tmp_path):
    assert load_config(environ={}).get("browser.consent") == "reject"
    config = tmp_path / "c.yml"
    for choice in ("accept", "none"):
        config.write_text(f"browser:\n  consent: {choice}\n")
        assert load_config(environ={"TOPICSTREAMS_CONFIG": str(config)}).get("browser.consent") == choice
    config.write_text("browser:\n  consent: maybe\n")
    with pytest.raises(ConfigError) as raised:
        load_config(environ={"TOPICSTREAMS_CONFIG": str(config)})
    assert "browser.consent" in str(raised.value) and "reject, accept, none" in str(raised.value)


def test_the_middleware_is_off_when_walls_are_left_unanswered():
    with pytest.raises(NotConfigured):
        ConsentMiddleware(get_crawler(settings_dict={"TOPICSTREAMS_CONSENT": "none"}))
    assert ConsentMiddleware(get_crawler(settings_dict={"TOPICSTREAMS_CONSENT": "accept"})).choice == "accept"


def test_consent_walls_join_the_health_reasons():
    defaults = load_config(environ={}).data["health"]
    health = EngineHealth(HealthSettings.from_config({**defaults, "min_requests": 1}))
    assessment = health.observe(Sample(at=1000.0, cls=ResponseClass.OK, latency=0.1))
    assert CONSENT not in assessment.reasons
    assessment = health.observe(Sample(at=1001.0, cls=ResponseClass.CHALLENGE, latency=0.1, consent=True))
    assert assessment.stats.consent_walls == 1 and assessment.stats.challenges == 1
    assert assessment.reasons[-1] == CONSENT and "challenge" in assessment.reasons
