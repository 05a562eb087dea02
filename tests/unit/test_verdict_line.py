"""The one-line verdict of a health report (topicstreams/reports/verdict_line.py): the most specific true thing."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from topicstreams.health.network_state import NetworkState, judge_network
from topicstreams.health.saturation import Saturation
from topicstreams.reports.health_report import network_json
from topicstreams.reports.verdict_line import verdict_line

NOW = datetime(2026, 12, 4, 14, 50, tzinfo=UTC)


@dataclass(frozen=True)
class Row:
    engine: str
    state: str | None = "running"
    band: str = "ok"
    node: str = "node-a"
    reasons: tuple[str, ...] = ()
    cooling_until: datetime | None = None
    updated_at: datetime | None = NOW


@dataclass(frozen=True)
class Report:
    engines: list[Row]
    network: dict[str, NetworkState] = field(default_factory=dict)
    saturation: dict[str, Saturation] = field(default_factory=dict)
    all_nodes: bool = False


FOUR = ("google", "bing", "yahoo", "brave")


def test_healthy_and_not_yet_judged():
    assert verdict_line(Report([Row(name) for name in FOUR])) == "All 4 engines healthy on 1 node"
    assert verdict_line(Report([Row("google"), Row("bing")])) == "Both engines healthy on 1 node"
    assert verdict_line(Report([Row("google")])) == "google healthy on 1 node"
    some = Report([Row("google"), Row("bing", band="unknown"), Row("yahoo", band="unknown")])
    assert verdict_line(some) == "3 engines running on 1 node; 2 of them not judged yet (too few requests)"
    none = Report([Row("google", band="unknown")])
    assert verdict_line(none) == "1 engine running on 1 node; none judged yet (too few requests)"


def test_the_network_supersedes_saturation_and_the_engines_own_cooling():
    since = NOW - timedelta(minutes=6)
    cooling = [Row(name, state="cooling", band="unknown", cooling_until=NOW + timedelta(minutes=1)) for name in FOUR]
    report = Report(
        cooling,
        network={"node-a": NetworkState(True, since)},
        saturation={"node-a": Saturation(True, ("bing", "google", "yahoo"))},
    )
    assert verdict_line(report) == "Network down since 14:44 UTC — no engine reachable"
    two_nodes = Report(cooling + [Row("google", node="node-b")], network={"node-a": NetworkState(True, since)})
    assert verdict_line(two_nodes) == "Network down on node-a since 14:44 UTC — no engine reachable"


def test_in_order_paused_critical_saturation_stale_cooling():
    paused = Row("google", state="paused", band="critical", reasons=("challenge",))
    critical = Row("bing", band="critical", reasons=("hard_block",))
    stale = Row("yahoo", state="stale", updated_at=NOW - timedelta(minutes=3))
    cooling = Row("brave", state="cooling", cooling_until=NOW + timedelta(minutes=2), reasons=("hard_block",))
    saturated = {"node-a": Saturation(True, ("bing", "google"))}
    assert verdict_line(Report([paused, critical, stale, cooling])) == "google paused: challenge"
    assert verdict_line(Report([paused, critical], all_nodes=True)) == "google paused on node-a: challenge"
    assert verdict_line(Report([critical, stale, cooling], saturation=saturated)) == "bing critical: hard_block"
    assert verdict_line(Report([stale, cooling], saturation=saturated)) == (
        "Exit IP saturation suspected: bing, google cooling"
    )
    assert verdict_line(Report([stale, cooling])) == "yahoo stale: no word from its crawl since 14:47 UTC"
    # The silent engines of a node in one clause, since the newest word of any of them.
    also = Row("google", state="stale", updated_at=NOW - timedelta(minutes=2))
    elsewhere = Row("bing", state="stale", node="node-b", updated_at=NOW - timedelta(minutes=5))
    assert verdict_line(Report([stale, also, elsewhere])) == (
        "yahoo, google stale on node-a: no word from their crawl since 14:48 UTC; "
        "bing stale on node-b: no word from its crawl since 14:45 UTC"
    )
    assert verdict_line(Report([Row("google"), cooling])) == "brave cooling until 14:52 UTC: hard_block"
    assert verdict_line(Report([Row("google"), Row("bing", band="degraded", reasons=("soft_block",))])) == (
        "bing degraded: soft_block"
    )


def test_no_crawl_running():
    stopped = [Row("google", state="stopped", updated_at=NOW - timedelta(minutes=30)), Row("bing", state="stopped")]
    assert verdict_line(Report(stopped)) == "No crawl running: the last one stopped at 14:50 UTC"
    assert (
        verdict_line(Report([Row("google", state=None)])) == "No crawl running: no crawl has run on this database yet"
    )
    # A stopped engine's last band is history: not a verdict on the engine now.
    assert verdict_line(Report([Row("google", band="critical", state="stopped")])).startswith("No crawl running")


def test_the_network_is_down_only_when_every_running_engine_fails_to_connect():
    failing = NOW - timedelta(seconds=30)
    assert judge_network([("google", failing), ("bing", NOW)]) == NetworkState(True, NOW, ("bing", "google"))
    assert not judge_network([("google", failing), ("bing", None)]).down
    assert not judge_network([("google", failing)]).down  # one engine cannot tell its site from the network
    assert judge_network([]) == NetworkState(False)
    assert network_json(NetworkState(True, failing)) == {"down": True, "since": "2026-12-04T14:49:30Z"}
    assert network_json(None) == {"down": False, "since": None}


def test_every_route_of_a_node_down_is_critical_for_a_monitoring_check_one_route_down_is_not():
    from topicstreams.reports.route_states import RouteOnNode
    from topicstreams.reports.verdict_line import exit_status

    down = [RouteOnNode("node-a", name, "down", ("google",)) for name in ("r0", "r1")]
    assert exit_status([], routes=down) == 2  # no way out: nothing can be crawled
    one = [down[0], RouteOnNode("node-a", "r1", "ok", ("google",))]
    assert exit_status([], routes=one) == 0  # the engines go on through r1
    gone = [down[0], RouteOnNode("node-a", "r1", "stopped", ())]
    assert exit_status([], routes=gone) == 2  # every live route down
    assert exit_status([], routes=[RouteOnNode("node-a", "r0", "stopped", ())]) == 0  # a closed crawl: nothing live
