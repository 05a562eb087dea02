"""Route or site: the verdict of each engine from its fresh rows on every node."""

from __future__ import annotations

from dataclasses import dataclass

from topicstreams.health.route_verdict import OK, ONE_NODE, ROUTE, SITE, judge_routes


@dataclass
class Row:
    engine: str
    node: str
    state: str | None = "running"
    band: str = "ok"
    stale: bool = False


def verdicts(*rows: Row) -> list[tuple[str, str, list[str]]]:
    return [(v.engine, v.verdict, list(v.nodes)) for v in judge_routes(rows)]


def test_trouble_on_some_nodes_is_the_route_on_every_node_the_site():
    rows = [
        Row("google", "a", state="cooling"),
        Row("google", "b"),
        Row("google", "c", band="degraded"),
        Row("bing", "a", state="paused", band="critical"),
        Row("bing", "b", state="cooling"),
        Row("yahoo", "a"),
        Row("yahoo", "b", band="unknown"),
        Row("brave", "b", state="cooling"),
    ]
    assert verdicts(*rows) == [
        ("google", ROUTE, ["a", "c"]),
        ("bing", SITE, ["a", "b"]),
        ("yahoo", OK, []),
        ("brave", ONE_NODE, ["b"]),
    ]


def test_stale_rows_and_rows_without_a_state_do_not_count():
    rows = [
        Row("google", "a", state="cooling"),
        Row("google", "b", stale=True),
        Row("google", "c", state=None),
        Row("bing", "gone", state="paused", stale=True),
    ]
    assert verdicts(*rows) == [("google", ONE_NODE, ["a"])]


def test_a_critical_band_alone_is_trouble_and_the_order_is_the_engines():
    rows = [Row("brave", "x", band="critical"), Row("brave", "y"), Row("google", "x"), Row("google", "y")]
    assert verdicts(*rows) == [("google", OK, []), ("brave", ROUTE, ["x"])]
    [google, brave] = judge_routes(rows)
    assert (google.describe(), brave.describe()) == ("google ok", "brave route (x)")
    assert brave.as_json() == {"engine": "brave", "verdict": "route", "nodes": ["x"]}
