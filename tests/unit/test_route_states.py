"""The routes as every reader shows them (topicstreams/reports/route_states.py), the route-vs-site verdict over
(node, route) pairs (topicstreams/health/route_verdict.py), the verdict line's routes down
(topicstreams/reports/verdict_line.py) and the monitor's matrix (topicstreams/web/monitor_routes.py): from
``route_status`` rows as the table gives them back."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import pytest

from topicstreams.health.network_state import NetworkState
from topicstreams.health.route_verdict import OK, ONE_NODE, ROUTE, SITE, judge_routes
from topicstreams.reports.health_report import EngineReport, HealthReport
from topicstreams.reports.route_states import route_state_entries, routes_block, routes_on_nodes, verdict_pairs
from topicstreams.reports.verdict_line import verdict_line
from topicstreams.storage.route_status import RouteStatusRow
from topicstreams.web.crawl_verdict import verdict_of
from topicstreams.web.monitor_routes import route_matrices, shown_proxy, shown_reason

NOW = datetime(2026, 12, 4, 14, 50, tzinfo=UTC)
SOON = NOW + timedelta(minutes=2)


def pair(node: str, route: str, engine: str, state: str = "ok", **values) -> RouteStatusRow:
    """A route_status row as read back, written 5 s ago by a running crawl."""
    row = {
        "node": node,
        "route": route,
        "engine": engine,
        "proxy": "direct",
        "state": state,
        "score": 90,
        "band": "ok",
        "cooling_until": None,
        "reason": None,
        "updated_at": NOW - timedelta(seconds=5),
        "heartbeat_seconds": 15.0,
        "stopped_at": None,
    }
    return RouteStatusRow(**{**row, **values})


def engine(name: str, node: str = "node-a", state: str = "running", band: str = "ok") -> EngineReport:
    return EngineReport(node=node, engine=name, score=90, band=band, state=state, updated_at=NOW)


# --- route_state_entries ------------------------------------------------------------------------------------------


def test_entries_are_by_node_and_route_with_each_engines_pair_at_the_moment():
    rows = [
        pair("node-b", "default", "google"),
        pair("node-a", "us-1", "bing", score=None, band="unknown"),
        pair("node-a", "us-1", "google", "cooling", score=61, band="degraded", cooling_until=SOON),
        pair("node-a", "eu-1", "google", "down", score=None, band="unknown", cooling_until=SOON, reason="proxy 407"),
        pair("node-a", "eu-1", "bing", "down", score=80, cooling_until=SOON),
        # a cooldown that ended reads ok, and says no time
        pair("node-a", "jp-1", "google", "cooling", cooling_until=NOW - timedelta(seconds=1)),
        # a crawl gone silent, a crawl closed
        pair("node-a", "old", "google", updated_at=NOW - timedelta(minutes=2)),
        pair("node-c", "default", "yahoo", stopped_at=NOW - timedelta(minutes=1)),
    ]
    until = "2026-12-04T14:52:00Z"
    assert route_state_entries(rows, NOW) == [
        {
            "node": "node-a",
            "route": "eu-1",
            "state": "down",
            "engines": {  # in the order of ENGINES: google before bing
                "google": {"state": "down", "score": None, "band": "unknown", "cooling_until": until},
                "bing": {"state": "down", "score": 80, "band": "ok", "cooling_until": until},
            },
        },
        {
            "node": "node-a",
            "route": "jp-1",
            "state": "ok",
            "engines": {"google": {"state": "ok", "score": 90, "band": "ok", "cooling_until": None}},
        },
        {
            "node": "node-a",
            "route": "old",
            "state": "stale",
            "engines": {"google": {"state": "stale", "score": 90, "band": "ok", "cooling_until": None}},
        },
        {
            "node": "node-a",
            "route": "us-1",
            "state": "cooling",
            "engines": {
                "google": {"state": "cooling", "score": 61, "band": "degraded", "cooling_until": until},
                "bing": {"state": "ok", "score": None, "band": "unknown", "cooling_until": None},
            },
        },
        {
            "node": "node-b",
            "route": "default",
            "state": "ok",
            "engines": {"google": {"state": "ok", "score": 90, "band": "ok", "cooling_until": None}},
        },
        {
            "node": "node-c",
            "route": "default",
            "state": "stopped",
            "engines": {"yahoo": {"state": "stopped", "score": 90, "band": "ok", "cooling_until": None}},
        },
    ]
    assert route_state_entries([], NOW) == []


def test_the_report_json_has_route_states_even_without_rows():
    report = HealthReport("node-a", [engine("google")], {}, at=NOW)
    assert report.as_json()["route_states"] == []
    routed = HealthReport("node-a", [engine("google")], {}, at=NOW, route_rows=[pair("node-a", "eu-1", "google")])
    assert [entry["route"] for entry in routed.as_json()["route_states"]] == ["eu-1"]
    every = HealthReport("node-a", [engine("google")], {}, all_nodes=True, at=NOW, route_rows=routed.route_rows)
    assert set(every.as_json()) == {"nodes", "route_states"}


# --- the routes block of `scrapy health` ----------------------------------------------------------------------------


def test_the_routes_block_shows_several_routes_or_one_in_trouble_and_nothing_else():
    one_ok = route_state_entries([pair("node-a", "default", "google")], NOW)
    assert routes_block(one_ok) == []
    stopped = route_state_entries([pair("node-a", "default", "google", stopped_at=NOW)], NOW)
    assert routes_block(stopped) == []  # the table says the crawl stopped
    one_down = route_state_entries([pair("node-a", "default", "google", "down")], NOW)
    assert routes_block(one_down) == ["routes:", "  default  down     google down"]
    rows = [
        pair("node-a", "eu-1", "google", "down", cooling_until=SOON),
        pair("node-a", "eu-1", "bing", "down", cooling_until=SOON),
        pair("node-a", "us-1", "google", "cooling", cooling_until=SOON),
        pair("node-a", "us-1", "bing"),
        pair("node-a", "us-long-name", "google"),
    ]
    assert routes_block(route_state_entries(rows, NOW)) == [
        "routes:",
        "  eu-1          down     google, bing down until 14:52 UTC",
        "  us-1          cooling  google cooling until 14:52 UTC",
        "  us-long-name  ok",
    ]
    rows.append(pair("node-b", "default", "google"))  # one route, ok: not worth a block
    assert routes_block(route_state_entries(rows, NOW), all_nodes=True)[1:] == [
        "  node-a/eu-1          down     google, bing down until 14:52 UTC",
        "  node-a/us-1          cooling  google cooling until 14:52 UTC",
        "  node-a/us-long-name  ok",
    ]


def test_the_health_table_keeps_the_verdict_first_and_puts_the_routes_after_the_engines():
    rows = [pair("node-a", "eu-1", "google", "down"), pair("node-a", "us-1", "google")]
    report = HealthReport("node-a", [engine("google")], {}, at=NOW, route_rows=rows)
    lines = report.as_table().splitlines()
    assert lines[0] == "route eu-1 down — its engines go on through 1 other route"
    assert lines[1].startswith("engine") and lines[2].startswith("google")
    assert lines[-3:] == ["routes:", "  eu-1  down     google down", "  us-1  ok"]


# --- the route-vs-site verdict over (node, route) pairs --------------------------------------------------------------


def verdicts(engines, rows) -> list[tuple]:
    return [(v.engine, v.verdict, list(v.nodes), v.pairs) for v in judge_routes(engines, verdict_pairs(rows, NOW))]


def test_one_route_of_one_node_in_trouble_is_the_route_and_every_route_the_site():
    engines = [engine("google"), engine("bing"), engine("yahoo")]
    rows = [
        pair("node-a", "eu-1", "google", "cooling", cooling_until=SOON),
        pair("node-a", "us-1", "google"),
        pair("node-a", "jp-1", "google", band="degraded"),
        pair("node-a", "eu-1", "bing", "cooling", cooling_until=SOON),
        pair("node-a", "us-1", "bing", band="critical"),
        pair("node-a", "eu-1", "yahoo"),
        pair("node-a", "us-1", "yahoo"),
    ]
    assert verdicts(engines, rows) == [
        ("google", ROUTE, ["node-a"], ("node-a/eu-1", "node-a/jp-1")),
        ("bing", SITE, ["node-a"], ("node-a/eu-1", "node-a/us-1")),
        ("yahoo", OK, [], ()),
    ]
    [google, bing, yahoo] = judge_routes(engines, verdict_pairs(rows, NOW))
    assert google.fine_pairs == ("node-a/us-1",) and google.fine == ()
    assert google.describe() == "google route (node-a/eu-1, node-a/jp-1)"
    assert google.as_json() == {
        "engine": "google",
        "verdict": "route",
        "nodes": ["node-a"],
        "pairs": ["node-a/eu-1", "node-a/jp-1"],
    }


def test_every_route_of_every_node_is_the_site_and_a_node_without_route_rows_is_one_place():
    engines = [
        engine("google"),
        engine("google", node="node-b", state="cooling"),
        engine("google", node="node-c", state="cooling"),
    ]
    rows = [
        pair("node-a", "eu-1", "google", "cooling", cooling_until=SOON),
        pair("node-a", "us-1", "google", band="degraded"),
        pair("node-c", "default", "google", "cooling", cooling_until=SOON),
    ]
    # node-b wrote no route rows (an older crawl), node-c has one route: the engine row is each one's one place.
    assert verdicts(engines, rows) == [
        ("google", SITE, ["node-a", "node-b", "node-c"], ("node-a/eu-1", "node-a/us-1", "node-b", "node-c"))
    ]


def test_a_pause_holds_every_route_and_down_or_gone_pairs_do_not_count():
    engines = [engine("google", state="paused", band="critical"), engine("bing"), engine("yahoo")]
    rows = [
        pair("node-a", "eu-1", "google"),
        pair("node-a", "us-1", "google"),
        # bing: one route down (its proxy, not the engine), one stale: one place left
        pair("node-a", "eu-1", "bing", "down"),
        pair("node-a", "us-1", "bing", "cooling", cooling_until=SOON),
        pair("node-a", "jp-1", "bing", "cooling", updated_at=NOW - timedelta(minutes=5)),
        # yahoo: every route down: no place, no verdict
        pair("node-a", "eu-1", "yahoo", "down"),
    ]
    assert verdicts(engines, rows) == [
        ("google", SITE, ["node-a"], ("node-a/eu-1", "node-a/us-1")),
        ("bing", ONE_NODE, ["node-a"], ("node-a/us-1",)),
    ]


@pytest.mark.parametrize("trouble", [False, True])
def test_one_route_per_node_is_todays_verdict_over_nodes(trouble):
    engines = [engine("google", state="cooling" if trouble else "running"), engine("google", node="node-b")]
    rows = [
        pair("node-a", "default", "google", "cooling" if trouble else "ok", cooling_until=SOON),
        pair("node-b", "default", "google"),
    ]
    [by_pairs] = judge_routes(engines, verdict_pairs(rows, NOW))
    [by_nodes] = judge_routes(engines)
    assert (by_pairs.verdict, by_pairs.nodes, by_pairs.fine) == (by_nodes.verdict, by_nodes.nodes, by_nodes.fine)
    assert by_nodes.as_json().keys() == {"engine", "verdict", "nodes"}  # no "pairs" without route rows


# --- the verdict line -----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Report:
    engines: list
    network: dict
    saturation: dict
    all_nodes: bool = False


def line(rows, engines=None, network=None, all_nodes=False) -> str:
    report = Report(engines or [engine("google"), engine("bing")], network or {}, {}, all_nodes)
    return verdict_line(report, routes=routes_on_nodes(rows, NOW))


def test_a_route_down_is_said_after_the_network_and_before_the_engines():
    rows = [
        pair("node-a", "eu-1", "google", "down"),
        pair("node-a", "eu-1", "bing", "down"),
        pair("node-a", "us-1", "google"),
        pair("node-a", "us-1", "bing", "cooling", cooling_until=SOON),
        pair("node-a", "jp-1", "google"),
    ]
    paused = [engine("google", state="paused", band="critical"), engine("bing")]
    assert line(rows, paused) == "route eu-1 down — its engines go on through 2 other routes"
    stranded = [*rows, pair("node-a", "cn-1", "yahoo", "down"), pair("node-a", "cn-1", "brave", "down")]
    assert line(stranded, paused) == (
        "route cn-1 down — yahoo, brave have no other route; route eu-1 down — its engines go on through 2 other routes"
    )
    two = [*rows, pair("node-b", "default", "google")]
    assert line(two, all_nodes=True) == "route eu-1 down on node-a — its engines go on through 2 other routes"
    # A route stale or stopped is not down; nor does it carry anything.
    gone = [pair("node-a", "eu-1", "google", "down"), pair("node-a", "us-1", "google", stopped_at=NOW)]
    assert line(gone) == "Every route down (eu-1) — no engine reachable: check their proxies"


def test_every_route_down_is_one_line_and_the_network_is_not_doubled():
    rows = [pair("node-a", "eu-1", "google", "down"), pair("node-a", "us-1", "bing", "down")]
    assert line(rows) == "Every route down (eu-1, us-1) — no engine reachable: check their proxies"
    down = {"node-a": NetworkState(True, NOW - timedelta(minutes=6))}
    assert line(rows, network=down) == "Network down since 14:44 UTC — no engine reachable"
    healthy = [pair("node-a", "eu-1", "google"), pair("node-a", "us-1", "bing")]
    assert line(healthy) == "Both engines healthy on 1 node"


# --- the monitor's matrix -------------------------------------------------------------------------------------------


def test_the_proxy_and_the_reason_never_show_credentials():
    assert shown_proxy("direct") == "direct"
    assert shown_proxy(None) == "direct"
    assert shown_proxy("http://proxy.example:3128") == "http://proxy.example:3128"
    assert shown_proxy("http://alice:s3cret-pass@proxy.example:3128/path?token=x") == "http://proxy.example:3128"
    assert shown_proxy("socks5://alice@[::1]:1080") == "socks5://[::1]:1080"
    assert shown_proxy("user:pass@host") == "***"
    assert shown_proxy("http://[bad") == "***"
    rows = [
        pair(
            "node-a",
            "eu-1",
            "google",
            "down",
            proxy="http://alice:s3cret-pass@proxy.example:3128",
            reason="407 from http://alice:s3cret-pass@proxy.example:3128",
            cooling_until=SOON,
        ),
        pair("node-a", "eu-1", "yahoo", "down", proxy="http://alice:s3cret-pass@proxy.example:3128"),
        pair("node-a", "us-1", "google", reason="an old block"),
        pair("node-a", "us-1", "bing", "cooling", cooling_until=SOON, reason="challenge", score=None),
    ]
    matrix = route_matrices(rows, NOW)["node-a"]
    assert matrix.engines == ["google", "bing", "yahoo"]
    eu, us = matrix.routes
    assert (eu.name, eu.state, eu.proxy) == ("eu-1", "down", "http://proxy.example:3128")
    assert eu.cells[1] is None  # eu-1 does not serve bing
    assert eu.cells[0].reason == "407 from http://proxy.example:3128"
    assert eu.cells[0].until is not None and eu.cells[0].until.clock == "14:52 UTC"
    assert us.cells[0].reason is None  # ok: its last reason is history
    assert (us.cells[1].state, us.cells[1].score, us.cells[1].reason) == ("cooling", "-", "challenge")
    assert "s3cret" not in repr(matrix) and "alice" not in repr(matrix)
    assert shown_reason("socks5://bob@h:1 refused; token=abc123") == "socks5://h:1 refused; token=***"


def test_the_pages_level_reads_a_route_down_as_a_warning_and_every_route_down_as_down():
    healthy = [engine("google"), engine("bing")]

    def level(rows, engines=healthy) -> str:
        report = HealthReport("node-a", engines, {}, all_nodes=True, at=NOW, route_rows=rows)
        return verdict_of(report, NOW).level

    fine = [pair("node-a", "eu-1", "google"), pair("node-a", "us-1", "google")]
    assert level(fine) == "ok"
    one_down = [pair("node-a", "eu-1", "google", "down"), pair("node-a", "us-1", "google")]
    assert level(one_down) == "warning"
    paused = [engine("google", state="paused", band="critical"), engine("bing")]
    assert level(one_down, paused) == "critical"  # the colour is the worst; the line the most specific
    assert verdict_of(HealthReport("node-a", paused, {}, at=NOW, route_rows=one_down), NOW).text.startswith(
        "route eu-1"
    )
    every = [pair("node-a", "eu-1", "google", "down"), pair("node-a", "us-1", "google", "down")]
    assert level(every, paused) == "down"
