"""Routes' test world in real Chromium: a Playwright context proxy (as topicstreams sets one per route) takes the
page to the fake google through a real local proxy — http, authenticated http, socks5 — which the fake sees as that
proxy's own address; the page's script reports the context's persona and the route's own session cookie; a 407, a
stopped proxy and a restarted one, as Chromium tells them (the route-failure texts the crawl classifies)."""

from __future__ import annotations

import pytest
from playwright.sync_api import Error as PlaywrightError

from tests.support.fakes_http import reset_fakes_per_test, running_fakes
from tests.support.parsing import parsing_reader
from tests.support.route_proxies import PERSONAS, running_proxies
from topicstreams import ENGINES
from topicstreams.browser.chromium import route_context_options
from topicstreams.config.route_entries import route_list
from topicstreams.config.sections import RouteSection, build_section

fakes = running_fakes(*ENGINES)
proxies = running_proxies("http", "http-auth", "socks5")
_clean = reset_fakes_per_test()

PROXY_DOWN = "net::ERR_PROXY_CONNECTION_FAILED"


def results_url(fakes, topic: str = "alpha") -> str:
    return f"{fakes.base_url('google')}/search?q={topic}&tbm=nws"


def context_on(browser, proxies, i: int, **options):
    """The browser context of route ``i`` (through proxy ``i``, persona ``PERSONAS[i]``) as topicstreams builds it:
    the route checked as configuration, then ``route_context_options``; ``options`` over them."""
    entry = route_list()("routes", proxies.route_entries(("google",)))[i]
    route = build_section(RouteSection, entry, f"routes[{i}]")
    return browser.new_context(**(route_context_options(route) | options))


@pytest.mark.parametrize("i", [0, 1, 2], ids=["http", "http-auth", "socks5"])
def test_a_route_reaches_the_fake_from_its_address_with_its_persona_and_session(browser, fakes, proxies, i):
    fakes.watch_clients("google")
    context = context_on(browser, proxies, i)
    try:
        page = context.new_page()
        for topic in ("alpha", "beta"):
            response = page.goto(results_url(fakes, topic))
            assert response is not None and response.status == 200
            assert page.locator("#rso div[data-news-doc-id]").count() > 0  # the results, there for the parser
    finally:
        context.close()
    address, persona = proxies.address(i), PERSONAS[i]
    entries = fakes.requests("google")
    assert entries and {entry["address"] for entry in entries} == {address}
    assert {entry["user_agent"] for entry in entries} == {persona["user_agent"]}
    ((seen_from, record),) = fakes.clients("google").items()
    (session,) = record["sessions"]
    assert seen_from == address and session.startswith(f"{address}-")
    results = fakes.results_requests("google")
    assert [(entry["session"], entry["session_set"]) for entry in results] == [(None, session), (session, None)]
    assert [report["page"] for report in record["personas"]] == ["/search?q=alpha&tbm=nws", "/search?q=beta&tbm=nws"]
    for report in record["personas"]:
        assert report["user_agent"] == report["header_user_agent"] == persona["user_agent"]
        assert report["language"] == persona["locale"] and report["timezone"] == persona["timezone_id"]
        assert (report["width"], report["height"]) == (persona["viewport"]["width"], persona["viewport"]["height"])
        assert report["session"] == session


def test_two_engines_in_turn_through_one_proxy_never_mix(browser, fakes, proxies):
    # pproxy relays a kept-alive client connection to its first target: Chromium must not send bing's page down it
    context = context_on(browser, proxies, 0)
    try:
        page = context.new_page()
        for engine, path in [
            ("google", "/search?q=a&tbm=nws"),
            ("bing", "/news/search?q=b"),
            ("google", "/search?q=c"),
        ]:
            assert page.goto(fakes.base_url(engine) + path).status == 200
    finally:
        context.close()
    assert [e["query"]["q"] for e in fakes.results_requests("google")] == ["a", "c"]
    assert [e["query"]["q"] for e in fakes.results_requests("bing")] == ["b"]
    assert {e["address"] for name in ("google", "bing") for e in fakes.requests(name)} == {proxies.address(0)}


def test_every_engines_pages_report_the_persona(browser, fakes, proxies):
    for engine in ENGINES:
        fakes.watch_clients(engine)
    context = context_on(browser, proxies, 2)
    try:
        page = context.new_page()
        for engine in ENGINES:
            url = parsing_reader(engine, fakes.base_url(engine)).engine.results_url("alpha", 0)
            assert page.goto(url).status == 200
    finally:
        context.close()
    for engine in ENGINES:
        ((address, record),) = fakes.clients(engine).items()
        ((report),) = record["personas"]
        assert address == proxies.address(2), engine
        assert (report["timezone"], report["language"], report["width"]) == ("Europe/Paris", "fr-FR", 1440), engine
        assert report["session"] == record["sessions"][0] == f"{address}-1", engine


def test_the_authenticated_proxy_without_credentials_is_a_407_response(browser, fakes, proxies):
    context = context_on(browser, proxies, 1, proxy={"server": proxies.server(1)})
    try:
        response = context.new_page().goto(results_url(fakes))
        # no exception: Chromium hands the proxy's own 407 to the page (an http:// target through an http proxy)
        assert response is not None and response.status == 407
    finally:
        context.close()
    assert fakes.requests("google") == []


def test_an_address_script_challenges_one_route_only(browser, fakes, proxies):
    fakes.address("google", proxies.address(1), "sorry")
    statuses = {}
    for i in range(3):
        context = context_on(browser, proxies, i)
        try:
            page = context.new_page()
            page.goto(results_url(fakes))
            statuses[i] = (page.url.split("?")[0].removeprefix(fakes.base_url("google")), page.title())
        finally:
            context.close()
    served = {(entry["address"], entry["step"]) for entry in fakes.results_requests("google")}
    assert served == {(proxies.address(0), "results"), (proxies.address(1), "sorry"), (proxies.address(2), "results")}
    assert statuses[1][0].startswith("/sorry") and not statuses[0][0].startswith("/sorry")


@pytest.mark.parametrize("i", [0, 2], ids=["http", "socks5"])
def test_a_stopped_proxy_fails_the_page_and_a_restarted_one_serves_it(browser, fakes, proxies, i):
    context = context_on(browser, proxies, i)
    try:
        page = context.new_page()
        assert page.goto(results_url(fakes)).status == 200  # a kept-alive connection to the proxy, then killed
        proxies.stop(i)
        with pytest.raises(PlaywrightError) as failed:
            page.goto(results_url(fakes, "beta"), timeout=10_000)
        assert PROXY_DOWN in str(failed.value), str(failed.value)
        proxies.start(i)
        assert page.goto(results_url(fakes, "gamma")).status == 200
    finally:
        proxies.start()
        context.close()
    topics = [(entry["query"]["q"], entry["address"]) for entry in fakes.results_requests("google")]
    assert topics == [("alpha", proxies.address(i)), ("gamma", proxies.address(i))]
