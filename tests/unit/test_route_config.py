"""The ``routes`` configuration (topicstreams/config/route_entries.py, config/loading.py): each check names the key, the
value (a proxy's password never) and what was expected; the default route is today's context; ``config show`` and
the log masker hide the routes' credentials (config/secrets.py); a persona whose time zone contradicts its
geolocation is one WARNING per process at crawl start (config/persona_places.py, called by the add-on)."""

from __future__ import annotations

import logging
from types import SimpleNamespace

import pytest
import yaml
from scrapy.settings import Settings

from topicstreams.addon import TopicstreamsAddon
from topicstreams.browser.chromium import context_options, route_context_options
from topicstreams.config.errors import ConfigError
from topicstreams.config.loading import load_config
from topicstreams.config.persona_places import persona_contradictions
from topicstreams.config.route_table import DEFAULT_ROUTE, configured_routes, default_route
from topicstreams.config.secrets import Masker, config_secrets, shown_proxy
from topicstreams.crawl.runtime import RUNTIME_SETTING, Runtime
from topicstreams.spiders.google import GoogleSpider

BERLIN = {"latitude": 52.52, "longitude": 13.405}
SYDNEY = {"latitude": -33.87, "longitude": 151.21}


def load(tmp_path, data: dict, **environ: str):
    path = tmp_path / "config.yml"
    path.write_text(yaml.safe_dump(data))
    return load_config({"TOPICSTREAMS_CONFIG": str(path)}, environ=environ)


def refused(tmp_path, routes, **data) -> str:
    with pytest.raises(ConfigError) as caught:
        load(tmp_path, {"routes": routes, **data})
    return str(caught.value)


def direct(name: str = "home", **persona) -> dict:
    return {"name": name, "proxy": "direct", **({"persona": persona} if persona else {})}


@pytest.mark.parametrize(
    ("routes", "message"),
    [
        ([{"name": "Home", "proxy": "direct"}], "routes[0].name: got 'Home', expected a name of 1 to 32 characters"),
        ([{"name": "a" * 33, "proxy": "direct"}], "routes[0].name: got 'aaaa"),
        ([{"name": "eu 1", "proxy": "direct"}], "routes[0].name: got 'eu 1'"),
        ([{"proxy": "direct"}], "routes[0].name: got null"),
        ([direct("eu"), direct("us"), direct("eu")], "routes[2].name: got 'eu', expected a name no other route has"),
        ([{"name": "eu"}], "routes[0].proxy: got null, expected direct, or an http://"),
        ([{"name": "eu", "proxy": "ftp://p.test:21"}], "routes[0].proxy: got 'ftp://p.test:21', expected an http://"),
        ([{"name": "eu", "proxy": "p.test:3128"}], "routes[0].proxy: got 'p.test:3128', expected an http://"),
        ([{"name": "eu", "proxy": "direct", "colour": "red"}], "routes[0].colour: got 'red', expected no such key"),
        ([direct(voice="deep")], "routes[0].persona.voice: got 'deep', expected no such key (known: user_agent,"),
        ([direct(locale="en_US")], "routes[0].persona.locale: got 'en_US', expected a BCP 47 language tag"),
        ([direct(timezone_id="Mars/Olympus")], "routes[0].persona.timezone_id: got 'Mars/Olympus', expected an IANA"),
        ([direct(geolocation={"latitude": 95, "longitude": 0})], "routes[0].persona.geolocation.latitude: got 95"),
        ([direct(geolocation={"latitude": 52})], "routes[0].persona.geolocation: got {'latitude': 52}, expected {"),
        ([direct(viewport={"width": 100, "height": 800})], "routes[0].persona.viewport.width: got 100, expected {wi"),
        ([direct(viewport={"width": 1280})], "routes[0].persona.viewport: got {'width': 1280}, expected {width"),
        ([direct(user_agent="Mozilla\nX")], "routes[0].persona.user_agent: got 'Mozilla\\nX', expected a user agent"),
        (
            [direct(), {**direct("eu"), "engines": ["duckduckgo"]}],
            "routes[1].engines[0]: got 'duckduckgo', expected one of",
        ),
        (
            [direct(), {**direct("eu"), "engines": "google"}],
            "routes[1].engines: got 'google', expected a list of engine",
        ),
        ("direct", "routes: got 'direct', expected a list of routes"),
        (["direct"], "routes[0]: got 'direct', expected {name, proxy, persona, engines}"),
    ],
)
def test_a_bad_route_names_its_key_value_and_expectation(tmp_path, routes, message):
    assert refused(tmp_path, routes).startswith(message)


@pytest.mark.parametrize(
    "routes",
    [
        [{"name": "eu", "proxy": "socks5://bob:hunter2@p.test:1080"}],  # socks5 takes no credentials in Chromium
        [{"name": "eu", "proxy": "gopher://bob:hunter2@p.test:70"}],
        ["http://bob:hunter2@p.test:3128"],  # a bare proxy URL for a route
        "http://bob:hunter2@p.test:3128",  # for the list
        [{"name": "eu", "proxies": ["http://bob:hunter2@p.test:3128"]}],  # proxies: for proxy:
        [{"name": "eu", "proxy": "direct", "persona": {"proxy": "http://bob:hunter2@p.test:3128"}}],
    ],
)
def test_a_refused_route_never_shows_a_proxys_password(tmp_path, routes):
    message = refused(tmp_path, routes)
    assert "hunter2" not in message
    assert message.startswith("routes")


def test_a_socks5_route_with_credentials_is_refused_and_one_without_is_taken(tmp_path):
    assert refused(tmp_path, [{"name": "eu", "proxy": "socks5://bob:pw@p.test:1080"}]).startswith(
        "routes[0].proxy: got 'socks5://bob:***@p.test:1080', expected a socks5:// URL without credentials: "
        "Chromium cannot log in to a SOCKS proxy"
    )
    (route,) = load(tmp_path, {"routes": [{"name": "eu", "proxy": "socks5://p.test:1080"}]}).sections.routes
    assert route_context_options(route) == {"proxy": {"server": "socks5://p.test:1080"}}


def test_routes_with_the_anti_detection_proxy_on_are_refused_in_the_config_and_from_the_environment(tmp_path):
    message = refused(
        tmp_path, [direct()], anti_detection={"proxy": {"enabled": True, "proxies": ["http://p.test:3128"]}}
    )
    assert message.startswith("anti_detection.proxy.enabled: got true, expected false when `routes` is set")
    with pytest.raises(ConfigError, match=r"^anti_detection\.proxy\.enabled: got true"):
        load(tmp_path, {"routes": [direct()]}, SCRAPER_PROXY="http://p.test:3128")


def test_a_route_is_typed_with_its_persona_and_engines(tmp_path):
    persona = {
        "user_agent": "Mozilla/5.0 (X11; Linux x86_64) Chrome/131.0 Safari/537.36",
        "locale": "de-DE",
        "timezone_id": "Europe/Berlin",
        "geolocation": BERLIN,
        "viewport": {"width": 1366, "height": 768},
    }
    config = load(
        tmp_path,
        {"routes": [direct(), {"name": "de-1", "proxy": "http://bob:pw@p.test:3128", "persona": persona}]},
    )
    home, germany = config.sections.routes
    assert home.proxy == "direct" and home.persona.locale == "" and home.persona.geolocation is None
    assert home.serves("brave") and germany.serves("google")
    assert route_context_options(germany) == {
        "proxy": {"server": "http://p.test:3128", "username": "bob", "password": "pw"},
        "user_agent": persona["user_agent"],
        "locale": "de-DE",
        "timezone_id": "Europe/Berlin",
        "geolocation": {"latitude": 52.52, "longitude": 13.405},
        "permissions": ["geolocation"],
        "viewport": {"width": 1366, "height": 768},
    }
    assert route_context_options(home) == {}


def test_without_routes_the_one_default_route_is_todays_context(tmp_path):
    anti = {
        "timezone_id": "Europe/Amsterdam",
        "locale": "nl-NL",
        "geolocation": {"latitude": 52.37, "longitude": 4.9},
        "proxy": {"enabled": True, "proxies": ["http://u:pw@one.test:3128", "socks5://two.test:1080"]},
    }
    sections = load(tmp_path, {"anti_detection": anti}).sections
    (route,) = configured_routes(sections, "socks5://two.test:1080")
    assert route.name == DEFAULT_ROUTE and route.engines == ()
    for proxy in ("http://u:pw@one.test:3128", "socks5://two.test:1080"):
        assert route_context_options(default_route(sections.anti_detection, proxy)) == context_options(
            sections.anti_detection, proxy
        )
    assert context_options(sections.anti_detection, "http://u:pw@one.test:3128") == {
        "proxy": {"server": "http://one.test:3128", "username": "u", "password": "pw"},
        "timezone_id": "Europe/Amsterdam",
        "locale": "nl-NL",
        "geolocation": {"latitude": 52.37, "longitude": 4.9},
        "permissions": ["geolocation"],
    }
    plain = load(tmp_path, {}).sections
    assert configured_routes(plain)[0].proxy == "direct"
    assert route_context_options(default_route(plain.anti_detection)) == context_options(plain.anti_detection) == {}


def test_config_show_and_the_log_masker_hide_the_routes_credentials(tmp_path):
    config = load(
        tmp_path,
        {
            "routes": [
                direct(),
                {"name": "us-1", "proxy": "http://bob:hunter2@us.proxy.test:3128"},
                {"name": "eu-1", "proxy": "https://eve:s3cr3t-pw@eu.proxy.test:8443"},
            ]
        },
    )
    shown = yaml.safe_dump(config.masked())
    assert "hunter2" not in shown and "s3cr3t-pw" not in shown
    assert [route["proxy"] for route in config.masked()["routes"]] == [
        "direct",
        "http://bob:***@us.proxy.test:3128",
        "https://eve:***@eu.proxy.test:8443",
    ]
    assert config.get("routes")[1]["proxy"] == "http://bob:hunter2@us.proxy.test:3128"  # the crawl still has it
    masker = Masker(config_secrets(config.data))
    assert masker.mask("407 from eu.proxy.test with s3cr3t-pw and hunter2") == "407 from eu.proxy.test with *** and ***"


@pytest.mark.parametrize(
    ("proxy", "shown"),
    [
        ("direct", "direct"),
        ("http://bob:hunter2@p.test:3128", "http://p.test:3128"),
        ("socks5://p.test:1080", "socks5://p.test:1080"),
        ("https://bob@p.test", "https://p.test"),
        ("http://[::1]:3128/path?token=x", "http://[::1]:3128"),
        ("not a url", "***"),
    ],
)
def test_a_proxy_is_shown_without_credentials(proxy, shown):
    assert shown_proxy(proxy) == shown


def route_with(tmp_path, **persona):
    (route,) = load(tmp_path, {"routes": [direct("us-1", **persona)]}).sections.routes
    return route


def test_a_time_zone_that_contradicts_the_geolocation_is_named_with_the_route_and_the_place(tmp_path):
    route = route_with(tmp_path, timezone_id="America/New_York", geolocation=BERLIN)
    (message,) = persona_contradictions([route], year=2026)
    assert message.startswith(
        "route us-1: its persona's time zone America/New_York (UTC-05:00/-04:00) contradicts its geolocation "
        "52.52, 13.405, which is in Europe/Berlin (UTC+01:00/+02:00)"
    )
    assert "timezone_id: Europe/Berlin" in message
    # summer time in the other half of the year: London and Sydney differ all year, in two ways
    (message,) = persona_contradictions([route_with(tmp_path, timezone_id="Europe/London", geolocation=SYDNEY)])
    assert "which is in Australia/Sydney (UTC+11:00/+10:00)" in message


@pytest.mark.parametrize(
    "persona",
    [
        {"timezone_id": "Europe/Berlin", "geolocation": BERLIN},
        {"timezone_id": "Europe/Amsterdam", "geolocation": BERLIN},  # another zone, the same clock all year
        {"timezone_id": "America/New_York"},  # nothing to compare
        {"geolocation": BERLIN},
        {},
    ],
)
def test_a_persona_that_keeps_its_places_clock_is_no_contradiction(tmp_path, persona):
    assert persona_contradictions([route_with(tmp_path, **persona)]) == []


def addon_start(tmp_path, config: dict, runtime: Runtime) -> None:
    """What the add-on does as an engine's crawler of ``runtime`` starts."""
    path = tmp_path / "config.yml"
    path.write_text(yaml.safe_dump(config))
    crawler = SimpleNamespace(settings=Settings({RUNTIME_SETTING: runtime}), spidercls=GoogleSpider)
    TopicstreamsAddon(crawler).update_settings(Settings({"TOPICSTREAMS_CONFIG": str(path)}))


def test_the_contradiction_is_one_warning_per_process_at_crawl_start(tmp_path, caplog):
    config = {
        "routes": [
            direct("us-1", timezone_id="America/New_York", geolocation=BERLIN),
            direct("de-1", timezone_id="Europe/Berlin", geolocation=BERLIN),
        ]
    }
    runtime = Runtime()
    with caplog.at_level(logging.WARNING, logger="topicstreams.config.persona_places"):
        for _ in range(3):  # crawlall: an engine crawler each, one process
            addon_start(tmp_path, config, runtime)
    warnings = [record for record in caplog.records if record.name == "topicstreams.config.persona_places"]
    assert [record.levelno for record in warnings] == [logging.WARNING]
    assert warnings[0].getMessage().startswith("route us-1: its persona's time zone America/New_York")
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="topicstreams.config.persona_places"):
        anti = {"timezone_id": "Asia/Tokyo", "geolocation": BERLIN}  # the default route is checked the same way
        addon_start(tmp_path, {"anti_detection": anti}, Runtime())
    assert [record.getMessage()[:40] for record in caplog.records] == ["route default: its persona's time zone A"]
