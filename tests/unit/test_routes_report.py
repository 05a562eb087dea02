"""``scrapy routes``' report (topicstreams/reports/routes_report.py) from ``route_status`` rows in a real SQLite file,
and ``scrapy routes check``'s lines (topicstreams/reports/route_checks.py, topicstreams/browser/route_reach.py):
entries shaped as ``route_states``, configured routes not crawled yet, the proxy never with its credentials, the
notes under the table, hostile names made safe, and Chromium's errors named."""

from __future__ import annotations

import json
import re
from datetime import timedelta

import pytest

from tests.support.databases import database_fixture
from topicstreams.browser.route_reach import Reach, failure_text, route_masker
from topicstreams.config.route_table import default_route
from topicstreams.config.secrets import Masker
from topicstreams.config.sections import AntiDetectionSection, PersonaSection, ProxySection, RouteSection
from topicstreams.reports.route_checks import check_table, unreachable_routes
from topicstreams.reports.route_states import route_state_entries
from topicstreams.reports.routes_report import NO_ROUTES, build_routes_report
from topicstreams.storage import utcnow
from topicstreams.storage.route_status import mark_routes_stopped, read_route_statuses, save_route_status

db = database_fixture("sqlite_url")

PERSONA = PersonaSection("", "", "", None, None)
HOSTILE = "evil\x1b]0;owned\x07\x1b[2J\r\nrow\u202eab"


def route(name: str, proxy: str = "direct", engines: tuple[str, ...] = ()) -> RouteSection:
    return RouteSection(name=name, proxy=proxy, persona=PERSONA, engines=engines)


def cells(line: str) -> list[str]:
    return re.split(r" {2,}", line.strip())


@pytest.fixture
def now(db):
    """node-a: us-1 cooling on bing; eu-1 down on both engines; old-1 (no longer configured) stopped; node-b's rows."""
    now = utcnow()
    until = now + timedelta(minutes=5)
    save_route_status(db, "node-a", "us-1", "google", proxy="http://us.proxy.test:3128", score=92, band="good")
    save_route_status(
        db,
        "node-a",
        "us-1",
        "bing",
        proxy="http://us.proxy.test:3128",
        state="cooling",
        score=41,
        band="degraded",
        cooling_until=until,
        reason="challenge: captcha page",
    )
    for engine in ("google", "bing"):
        save_route_status(
            db,
            "node-a",
            "eu-1",
            engine,
            proxy="http://eu.proxy.test:3128",
            state="down",
            cooling_until=until,
            reason="proxy error 407 from http://bob:hunter2@eu.proxy.test:3128",
        )
    save_route_status(db, "node-a", "old-1", "google", proxy="direct", score=80, band="good")
    mark_routes_stopped(db, "google", "node-a", at=now)  # old-1's only engine: stopped (google's others too)
    save_route_status(db, "node-a", "us-1", "google", proxy="http://us.proxy.test:3128", score=92, band="good")
    save_route_status(db, "node-a", "eu-1", "google", proxy="http://eu.proxy.test:3128", state="down")
    save_route_status(db, "node-b", "us-1", "google", proxy="direct", score=10, band="critical")
    return now


CONFIGURED = [
    route("us-1", "http://bob:hunter2@us.proxy.test:3128"),
    route("eu-1", "http://bob:hunter2@eu.proxy.test:3128", ("google", "bing")),
    route("jp-1", "socks5://jp.proxy.test:1080", ("google",)),
]


def test_each_route_is_its_route_states_entry_with_the_proxy_shown_and_the_reasons(db, now):
    report = build_routes_report(db, node="node-a", routes=CONFIGURED, enabled=["google", "bing"], now=now)
    payload = json.loads(json.dumps(report.as_json()))
    assert [entry["route"] for entry in payload["routes"]] == ["us-1", "eu-1", "jp-1", "old-1"]
    us, eu, jp, old = payload["routes"]
    assert list(us) == ["node", "route", "state", "engines", "proxy", "configured"]
    assert us["node"] == "node-a" and us["state"] == "cooling" and us["proxy"] == "http://us.proxy.test:3128"
    assert us["engines"] == {
        "google": {"state": "ok", "score": 92, "band": "good", "cooling_until": None, "reason": None},
        "bing": {
            "state": "cooling",
            "score": 41,
            "band": "degraded",
            "cooling_until": us["engines"]["bing"]["cooling_until"],
            "reason": "challenge: captcha page",
        },
    }
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", us["engines"]["bing"]["cooling_until"])
    # the entries are those of route_states (scrapy health --json, /api/health), members added after them
    rows = read_route_statuses(db, node="node-a")
    shared = {entry["route"]: entry for entry in route_state_entries(rows, now)}
    for entry in (us, eu, old):
        engines = {
            engine: {k: v for k, v in pair.items() if k != "reason"} for engine, pair in entry["engines"].items()
        }
        assert {**entry, "engines": engines} == {
            **shared[entry["route"]],
            "proxy": entry["proxy"],
            "configured": entry["configured"],
        }
    assert eu["state"] == "down" and eu["engines"]["bing"]["reason"] == "proxy error 407 from http://eu.proxy.test:3128"
    assert jp == {
        "node": "node-a",
        "route": "jp-1",
        "state": None,
        "engines": {"google": {"state": None, "score": None, "band": "unknown", "cooling_until": None, "reason": None}},
        "proxy": "socks5://jp.proxy.test:1080",
        "configured": True,
    }
    assert old["state"] == "stopped" and old["configured"] is False and old["proxy"] == "direct"
    assert "hunter2" not in json.dumps(payload)


def test_the_table_has_a_line_per_route_and_says_what_down_cooling_and_not_crawled_mean(db, now):
    table = build_routes_report(db, node="node-a", routes=CONFIGURED, enabled=["google", "bing"], now=now).as_table()
    lines = table.splitlines()
    assert cells(lines[0]) == ["route", "proxy", "state", "engines"]
    until = re.search(r"until (\S+)", table)[1]
    assert cells(lines[1]) == [
        "us-1",
        "http://us.proxy.test:3128",
        "cooling",
        f"google ok 92, bing cooling 41 until {until}",
    ]
    assert cells(lines[2])[:3] == ["eu-1", "http://eu.proxy.test:3128", "DOWN"]
    assert re.fullmatch(r"google down until \S+Z, bing down until \S+Z", cells(lines[2])[3])
    assert cells(lines[3]) == ["jp-1", "socks5://jp.proxy.test:1080", "not crawled yet", "google"]
    assert cells(lines[4]) == ["old-1", "direct", "stopped", "google stopped 80"]
    # aligned: every column starts at the same place on every line
    assert len({line.index(cells(line)[1]) for line in lines[:5]}) == 1
    cooling, down, fresh = lines[5:]
    assert cooling.startswith("cooling: bing on us-1 — a block on this route only: the engine goes on")
    assert down.startswith("DOWN: eu-1 (http://eu.proxy.test:3128) fails on every engine it serves (proxy error 407")
    assert "not the engines" in down and "scrapy routes check" in down
    assert fresh.startswith("not crawled yet: jp-1 — configured")
    assert "hunter2" not in table


def test_every_live_route_down_is_the_nodes_network(db):
    now = utcnow()
    for name in ("us-1", "eu-1"):
        save_route_status(db, "node-a", name, "google", proxy="direct", state="down", reason="connect refused")
    table = build_routes_report(db, node="node-a", routes=[route("us-1"), route("eu-1")], enabled=["google"], now=now)
    assert table.as_table().splitlines()[-1].startswith("every route of node node-a is down: the node's network")


def test_a_stale_route_and_a_hostile_name_are_shown_safely(db):
    now = utcnow()
    save_route_status(db, "node-a", HOSTILE[:32], "google", proxy="direct", updated_at=now - timedelta(minutes=5))
    table = build_routes_report(db, node="node-a", routes=[], enabled=["google"], now=now).as_table()
    assert "\x1b" not in table and "\r" not in table and "\u202e" not in table
    assert cells(table.splitlines()[1])[2] == "STALE"
    assert table.splitlines()[-1].startswith("STALE: evil\\x1b]0;owned\\x07")


def test_without_routes_the_default_route_is_listed_and_an_empty_database_says_so(db):
    now = utcnow()
    anti = AntiDetectionSection(ProxySection(True, ("http://u:pw@a.test:1", "http://b.test:2")), "", "", None)
    report = build_routes_report(
        db, node="node-a", routes=[default_route(anti)], enabled=["google"], now=now, proxies=2
    )
    assert cells(report.as_table().splitlines()[1]) == ["default", "one of 2 proxies", "not crawled yet", "google"]
    assert build_routes_report(db, node="node-a", routes=[], enabled=["google"], now=now).as_table() == NO_ROUTES


def reach(route: str, engine: str, problem: str | None = None, status: int | None = 200) -> Reach:
    return Reach(route, "direct", engine, f"http://{engine}.test/", None if problem else status, 0.25, problem)


def test_a_route_is_unreachable_when_none_of_its_requests_got_an_answer():
    reaches = [
        reach("home", "google"),
        reach("home", "bing", status=403),  # the site answered: reachable, blocked or not
        reach("half", "google", "timeout: no answer within 15 s"),
        reach("half", "bing"),
        reach("dead", "google", "proxy refused the connection or cannot be reached (net::ERR_PROXY_CONNECTION_FAILED)"),
        reach("dead", "bing", "proxy refused the connection or cannot be reached (net::ERR_PROXY_CONNECTION_FAILED)"),
    ]
    assert unreachable_routes(reaches) == ["dead"]
    lines = check_table(reaches, unchecked=["idle"]).splitlines()
    assert cells(lines[0]) == ["route", "proxy", "engine", "result"]
    assert cells(lines[2]) == ["home", "direct", "bing", "reachable (HTTP 403, 0.25 s)"]
    assert cells(lines[3])[3] == "unreachable: timeout: no answer within 15 s, 0.25 s"
    assert lines[7].startswith("UNREACHABLE: dead — none of its requests got an answer")
    assert lines[8] == "not checked: idle — it serves none of the enabled engines"
    assert lines[9] == "2 of 3 route(s) reachable"


@pytest.mark.parametrize(
    ("error", "shown"),
    [
        (
            "Page.goto: net::ERR_PROXY_CONNECTION_FAILED at http://g.test/search?q=weather\nCall log:\n  - navigating",
            "proxy refused the connection or cannot be reached (net::ERR_PROXY_CONNECTION_FAILED)",
        ),
        (
            "Page.goto: net::ERR_NAME_NOT_RESOLVED at https://x.test/",
            "DNS: the name does not resolve (net::ERR_NAME_NOT_RESOLVED)",
        ),
        ("Page.goto: net::ERR_SOMETHING_NEW at https://x.test/", "net::ERR_SOMETHING_NEW"),
        ("Page.goto: Timeout 15000ms exceeded.\nCall log:", "timeout: no answer within 15 s"),
        (
            "Browser.newContext: proxy http://bob:hunter2@p.test:3128 refused\nmore",
            "proxy http://bob:***@p.test:3128 refused",
        ),
        ("Page.goto: " + "x" * 400, "x" * 159 + "…"),
    ],
)
def test_chromiums_errors_are_named_on_one_line_and_masked(error, shown):
    assert failure_text(error, Masker(), 15.0) == shown


def test_the_route_masker_hides_its_proxys_credentials_wherever_they_are_repeated():
    masker = route_masker(route("us-1", "http://bob-the-user:hunter22@p.test:3128"))
    assert masker.mask("auth failed for bob-the-user (hunter22)") == "auth failed for *** (***)"
    assert route_masker(route("home")).mask("plain") == "plain"
