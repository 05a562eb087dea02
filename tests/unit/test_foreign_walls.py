"""No wall becomes news, whoever's wall it is: another engine's or a publisher's consent form, a login form, a
network's portal or a proxy's notice at an engine's results URL is read as a challenge (reason consent or wall) or
as an empty page, never as results; the structural fallback takes no site's home page and no page's only link, and
still reads every redesigned results page it read before.

The walls are the fake engines' (their consent walls, fetched from the fakes; :mod:`fake_engines.wall_pages`)."""

from __future__ import annotations

from urllib.parse import urljoin

import pytest
from parsel import Selector

from fake_engines import FakeEngines, wall_pages
from fake_engines.scripted_engine import load_pages
from tests.support.fakes_http import fetch
from tests.support.parsing import parsing_reader
from tests.unit.test_fallback import scramble_everything
from topicstreams import ENGINES
from topicstreams.engines import REGISTRY
from topicstreams.engines.classify import WALL, ResponseClass
from topicstreams.engines.consent_walls import CONSENT
from topicstreams.engines.fallback import is_home_page, structural_results
from topicstreams.engines.foreign_walls import find_foreign_wall
from topicstreams.engines.reader import Page

CONSENT_KINDS = {"google": {"consent"}, "yahoo": {"consent", "guce"}}
"""The fake engines' page kinds that are the engine's own consent wall."""


@pytest.fixture(scope="module")
def fakes():
    with FakeEngines(engines=ENGINES) as engines:
        yield engines


@pytest.fixture(scope="module")
def engine_walls(fakes) -> dict[str, str]:
    """Each fake engine's consent wall, as served at its results URL, in each of its languages: name -> HTML."""
    walls = {}
    for engine in ENGINES:
        for language in fakes.consent_languages(engine):
            fakes.consent(engine, "wall", language)
            url = parsing_reader(engine, fakes.base_url(engine)).engine.results_url("alpha", 0)
            walls[f"{engine} ({language})"] = fetch(url)[2]
        fakes.consent(engine, "off")
    return walls


def read(engine: str, html: str, status: int = 200):
    reader = parsing_reader(engine, f"https://{engine}.example")
    return reader.read(Page(reader.engine.results_url("alpha", 0), status, html))


SITE_WALLS = {
    # name -> (the page, the reason of its challenge)
    "a publisher's consent dialog": (wall_pages.vendor_consent(), CONSENT),
    "a publisher's consent dialog in Polish": (wall_pages.vendor_consent("pl"), CONSENT),
    "a consent dialog named by nothing but its Polish words": (wall_pages.vendor_consent("pl", plain=True), CONSENT),
    "a login form": (wall_pages.login_form(), WALL),
    "a login form in German": (wall_pages.login_form("de"), WALL),
    "a hotel's Wi-Fi portal": (wall_pages.captive_portal(), WALL),
    "a hotel's Wi-Fi portal in French": (wall_pages.captive_portal("fr"), WALL),
}


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("name", SITE_WALLS)
def test_a_sites_wall_at_an_engines_results_url_is_a_challenge_and_nothing_is_read(engine, name):
    html, reason = SITE_WALLS[name]
    reading = read(engine, html)
    assert (reading.verdict.cls, reading.verdict.reason) == (ResponseClass.CHALLENGE, reason)
    assert reading.results == () and not reading.fallback


@pytest.mark.parametrize("engine", ENGINES)
def test_another_engines_consent_wall_is_a_consent_challenge_and_never_answered(engine, engine_walls):
    others = {name: html for name, html in engine_walls.items() if not name.startswith(engine)}
    assert len(others) == 6
    for name, html in others.items():
        reading = read(engine, html)
        assert (reading.verdict.cls, reading.verdict.reason) == (ResponseClass.CHALLENGE, CONSENT), name
        assert reading.results == (), name
        # not the engine's own wall: the consent middleware, which asks the engine, never presses its buttons
        assert REGISTRY[engine](f"https://{engine}.example").consent_wall("https://x.example/s?q=a", html) is None


def test_another_engines_wall_is_recognised_by_its_form_even_without_the_engines_markers(engine_walls):
    # what recognises a wall of any vendor: the words and names of its form, not a list of the walls known
    for name, html in engine_walls.items():
        found = find_foreign_wall(Selector(text=html), url="https://x.example/s?q=a", html=html, status=200)
        assert found is not None and found.reason == CONSENT, name


def test_a_portal_that_answers_511_is_a_wall_whatever_it_holds():
    reading = read("bing", "<html><body><p>Please wait…</p></body></html>", status=511)
    assert (reading.verdict.cls, reading.verdict.reason) == (ResponseClass.CHALLENGE, WALL)


def test_a_wi_fi_button_in_no_form_is_a_wall_on_a_short_page():
    html = (
        '<html><body><h2><a href="https://www.harbourhotel.example/">Harbour Hotel</a></h2>'
        "<p>Free internet for our guests.</p><button onclick='go()'>Log in to Wi-Fi</button></body></html>"
    )
    reading = read("yahoo", html)
    assert (reading.verdict.cls, reading.verdict.reason) == (ResponseClass.CHALLENGE, WALL)


@pytest.mark.parametrize("html", [wall_pages.proxy_notice(), wall_pages.home_link_page()], ids=["proxy", "home"])
@pytest.mark.parametrize("engine", ENGINES)
def test_a_notice_or_a_page_with_one_link_is_never_news(engine, html):
    # no consent or login form: an empty page (a soft block), not results
    reading = read(engine, html)
    assert reading.verdict.cls is ResponseClass.SOFT_BLOCK and reading.results == () and not reading.fallback


@pytest.mark.parametrize(
    "url",
    [
        "https://www.bing.com/",
        "https://it.yahoo.com",
        "https://www.dailyledger.example/index.html",
        "https://www.dailyledger.example/de/",
        "https://www.dailyledger.example/en-gb",
        "https://www.bing.com/?setlang=fr&cc=FR",
    ],
)
def test_a_sites_home_page_is_never_a_result(url):
    assert is_home_page(url)
    # a heading and text around it, beside a real result: the home page is still not taken
    html = f"""<html><body>
      <div><h3><a href="{url}">The front page</a></h3><p>Every story of the day, in one place.</p></div>
      <div><h3><a href="https://news.example/2026/alpha">Alpha ships at last</a></h3><p>News Example</p></div>
      <div><h3><a href="https://other.example/alpha-ships">Why alpha matters</a></h3><p>Other Example</p></div>
    </body></html>"""
    found = structural_results(Selector(text=html).root, "https://engine.example/search?q=alpha")
    assert [result.url for result in found] == ["https://news.example/2026/alpha", "https://other.example/alpha-ships"]


@pytest.mark.parametrize(
    "url",
    [
        "https://news.example/2026/alpha",
        "https://news.example/?p=123",
        "https://news.example/alpha-ships-at-last",
        "https://news.example/de/alpha",
    ],
)
def test_an_article_is_no_home_page(url):
    assert not is_home_page(url)


def test_a_pages_only_link_is_never_a_result():
    html = """<html><body><div><h3><a href="https://news.example/2026/alpha">Alpha ships at last</a></h3>
      <p>A snippet long enough to be taken for the snippet of this result, and a source.</p><span>News Example</span>
      </div><a href="/search?q=more">More</a></body></html>"""
    assert structural_results(Selector(text=html).root, "https://engine.example/search?q=alpha") == []
    # the same link twice is still one link
    twice = html.replace("</body>", '<p><a href="https://news.example/2026/alpha">Alpha, again</a> read on</p></body>')
    assert structural_results(Selector(text=twice).root, "https://engine.example/search?q=alpha") == []


@pytest.mark.parametrize("engine", ENGINES)
def test_every_page_of_the_fakes_reads_as_before(fakes, engine):
    # the engines' own pages (results, empty, blocks, challenges…) are no one's wall; their consent pages are theirs
    reader = parsing_reader(engine, fakes.base_url(engine))
    url = reader.engine.results_url("alpha", 0)
    for kind in sorted(load_pages(engine).page_kinds):
        fakes.route(engine, "alpha", kind)
        status, _, html, final_url = fetch(url, errors="replace")
        reading = reader.read(Page(final_url, status, html))
        if kind in CONSENT_KINDS.get(engine, ()):
            assert reading.verdict.reason == CONSENT, kind
        else:
            assert reading.verdict.reason not in (CONSENT, WALL), (kind, reading.verdict)
        if kind in ("results", "restyled"):
            assert reading.verdict.cls is ResponseClass.OK and not reading.fallback and reading.results, kind
    fakes.reset()


@pytest.mark.parametrize("engine", ENGINES)
def test_the_fallback_still_reads_a_redesigned_results_page(fakes, engine):
    reader = parsing_reader(engine, fakes.base_url(engine))
    url = reader.engine.results_url("alpha", 0)
    status, _, html, _ = fetch(url)
    known = reader.read(Page(url, status, html))
    redesigned = reader.read(Page(url, status, scramble_everything(html)))
    assert redesigned.fallback and redesigned.verdict.cls is ResponseClass.OK
    assert urls(reader, url, redesigned) == urls(reader, url, known) and len(known.results) >= 8


def urls(reader, page_url: str, reading) -> list[str | None]:
    """The reading's result URLs as the store knows them."""
    return [reader.identity(urljoin(page_url, result.url or "")) for result in reading.results]


def test_a_cookie_banner_named_so_is_a_consent_wall_on_a_short_page_only():
    banner = '<div id="cookie-notice"><p>Nous utilisons des témoins.</p><button>OK</button></div>'
    short = f"<html><body><h1>The Daily Ledger</h1>{banner}</body></html>"
    found = find_foreign_wall(Selector(text=short), url="https://x.example/", html=short, status=200)
    assert found is not None and found.reason == CONSENT
    # on a long page, a settings button in a container named so is no wall by itself (a footer's, say)
    stories = "".join(f"<div><h3>Story {n}</h3><p>{'A long paragraph of the story. ' * 8}</p></div>" for n in range(30))
    long = f"<html><body>{stories}{banner}</body></html>"
    assert find_foreign_wall(Selector(text=long), url="https://x.example/", html=long, status=200) is None
