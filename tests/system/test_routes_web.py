"""Routes on the reading surfaces, on a real SQLite file and a real PostgreSQL database filled by the project's own
writers (``save_status``, ``save_route_status``): ``route_states`` and the route-vs-site verdict over (node, route)
pairs in ``/api/health`` and in the health report of one node, ``topicstreams_route_*`` in ``/metrics`` (read back
with prometheus_client's own parser), and the engine × route matrix of ``/monitor`` — a proxy's credentials in none
of them."""

from __future__ import annotations

import re
from datetime import timedelta

from fastapi.testclient import TestClient
from prometheus_client.parser import text_string_to_metric_families

from tests.support.feed_data import client
from topicstreams.config.packaged import load_defaults
from topicstreams.config.sections import ScraperSection, build_section
from topicstreams.health.saturation import saturation_policy
from topicstreams.reports.health_report import build_report
from topicstreams.reports.route_states import route_state_entries
from topicstreams.storage import utcnow
from topicstreams.storage.engine_status import save_status
from topicstreams.storage.route_status import read_route_statuses, save_route_status
from topicstreams.web.health_api import HealthAnswer

SECRET = "s3cret-pass-0123"
LEAKY_PROXY = f"http://alice:{SECRET}@proxy.example:3128"
HOSTILE = "<script>alert('reason')</script>"


def fill(databases, url: str):
    """node-a: google and bing through three routes — eu-1 (google cooling after a challenge), us-1 (fine), cn-1
    (down for both: its proxy answers 407; its row's proxy written with credentials, which the crawl never does) —
    and yahoo with no route rows (an older crawl); node-b: google through its one route. Returns the moment."""
    db = databases.of(url)
    now = utcnow()
    soon = now + timedelta(minutes=5)
    for engine in ("google", "bing", "yahoo"):
        save_status(db, engine, "node-a", state="running", score=88, band="ok")
    save_status(db, "google", "node-b", state="running", score=95, band="ok")
    counts = {"requests": 10, "ok": 7, "challenges": 2, "errors": 1, "cooldowns": 1}
    save_route_status(
        db,
        "node-a",
        "eu-1",
        "google",
        counts=counts,
        proxy="http://eu.example:8080",
        state="cooling",
        cooling_until=soon,
        score=58,
        band="degraded",
        reason=HOSTILE,
    )
    save_route_status(db, "node-a", "eu-1", "google", counts={"requests": 5, "ok": 5})  # counters add up
    save_route_status(db, "node-a", "eu-1", "bing", proxy="http://eu.example:8080", state="ok", score=91, band="ok")
    for engine in ("google", "bing"):
        save_route_status(
            db, "node-a", "us-1", engine, counts={"requests": 4, "ok": 4}, state="ok", score=97, band="ok"
        )
        save_route_status(
            db,
            "node-a",
            "cn-1",
            engine,
            counts={"requests": 3, "errors": 3},
            proxy=LEAKY_PROXY,
            state="down",
            cooling_until=soon,
            band="unknown",
            reason=f"407 Proxy Authentication Required from {LEAKY_PROXY}",
        )
    save_route_status(db, "node-b", "default", "google", counts={"requests": 2, "ok": 2}, score=95, band="ok")
    return now


def test_api_health_has_route_states_and_judges_the_routes_over_pairs(feed_url, databases):
    fill(databases, feed_url)
    answer = client(feed_url).get("/api/health")
    assert answer.status_code == 200
    assert SECRET not in answer.text and "alice" not in answer.text
    body = answer.json()
    HealthAnswer.model_validate(body)  # the documented shape
    states = body["route_states"]
    assert [(entry["node"], entry["route"], entry["state"]) for entry in states] == [
        ("node-a", "cn-1", "down"),
        ("node-a", "eu-1", "cooling"),
        ("node-a", "us-1", "ok"),
        ("node-b", "default", "ok"),
    ]
    eu = states[1]["engines"]
    assert list(eu) == ["google", "bing"]
    assert eu["google"]["state"] == "cooling" and (eu["google"]["score"], eu["google"]["band"]) == (58, "degraded")
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", eu["google"]["cooling_until"])
    assert eu["bing"] == {"state": "ok", "score": 91, "band": "ok", "cooling_until": None}
    # One read of the rows, the same builder: what `scrapy routes` prints is what the API says.
    db = databases.of(feed_url)
    assert states == route_state_entries(read_route_statuses(db), utcnow())
    assert body["routes"] == [
        # cooling on eu-1 only of node-a's live routes (cn-1 is down: its proxy, not google) and fine on node-b
        {"engine": "google", "verdict": "route", "nodes": ["node-a"], "pairs": ["node-a/eu-1"]},
        {"engine": "bing", "verdict": "ok", "nodes": [], "pairs": []},
        {"engine": "yahoo", "verdict": "one node", "nodes": []},  # no route rows: judged over nodes, as before
    ]


def test_one_nodes_report_has_its_own_routes_and_says_the_route_down_first(feed_url, databases):
    fill(databases, feed_url)
    db = databases.of(feed_url)
    engines = ["google", "bing", "yahoo"]
    policy = saturation_policy(build_section(ScraperSection, load_defaults()["scraper"], "scraper"), engines)
    report = build_report(db, node="node-b", enabled=["google"], policy=policy, now=utcnow())
    assert [entry["route"] for entry in report.as_json()["route_states"]] == ["default"]
    report = build_report(db, node="node-a", enabled=engines, policy=policy, now=utcnow())
    assert [entry["route"] for entry in report.as_json()["route_states"]] == ["cn-1", "eu-1", "us-1"]
    table = report.as_table()
    assert table.splitlines()[0] == "route cn-1 down — its engines go on through 2 other routes"
    assert table.splitlines()[-4:] == [
        "routes:",
        "  cn-1  down     google, bing down until " + table.splitlines()[-3].rsplit("until ", 1)[1],
        "  eu-1  cooling  google cooling until " + table.splitlines()[-2].rsplit("until ", 1)[1],
        "  us-1  ok",
    ]
    assert SECRET not in table


def scrape(api: TestClient) -> dict:
    answer = api.get("/metrics")
    assert answer.status_code == 200
    assert SECRET not in answer.text and "proxy" not in answer.text.replace("its proxy", "")
    return {family.name: family for family in text_string_to_metric_families(answer.text)}


def samples(families: dict, name: str) -> dict:
    family = families[name]
    wanted = f"{name}_total" if family.type == "counter" else name
    return {tuple(sorted(s.labels.items())): s.value for s in family.samples if s.name == wanted}


def labels(**pairs: str) -> tuple:
    return tuple(sorted(pairs.items()))


def test_metrics_have_route_up_and_the_route_counters(feed_url, databases):
    fill(databases, feed_url)
    families = scrape(client(feed_url))
    assert families["topicstreams_route_up"].type == "gauge"
    assert "down" in families["topicstreams_route_up"].documentation
    assert samples(families, "topicstreams_route_up") == {
        labels(node="node-a", route="cn-1"): 0.0,
        labels(node="node-a", route="eu-1"): 1.0,  # cooling still carries requests
        labels(node="node-a", route="us-1"): 1.0,
        labels(node="node-b", route="default"): 1.0,
    }
    requests = samples(families, "topicstreams_route_requests")
    assert families["topicstreams_route_requests"].type == "counter"
    assert requests == {
        labels(engine="google", node="node-a", route="eu-1"): 15.0,
        labels(engine="bing", node="node-a", route="eu-1"): 0.0,
        labels(engine="google", node="node-a", route="us-1"): 4.0,
        labels(engine="bing", node="node-a", route="us-1"): 4.0,
        labels(engine="google", node="node-a", route="cn-1"): 3.0,
        labels(engine="bing", node="node-a", route="cn-1"): 3.0,
        labels(engine="google", node="node-b", route="default"): 2.0,
    }
    responses = samples(families, "topicstreams_route_responses")
    google_eu = {
        dict(key)["class"]: value
        for key, value in responses.items()
        if {**dict(key), "class": None} == {"engine": "google", "node": "node-a", "route": "eu-1", "class": None}
    }
    assert google_eu == {"ok": 12.0, "hard_block": 0.0, "challenge": 2.0, "soft_block": 0.0, "error": 1.0}
    assert len(responses) == 5 * len(requests)
    assert samples(families, "topicstreams_route_cooldowns")[labels(engine="google", node="node-a", route="eu-1")] == 1
    # The engines' own series are still labelled engine and node only.
    assert all(set(s.labels) == {"engine", "node"} for s in families["topicstreams_engine_requests"].samples)


def test_the_monitor_shows_the_matrix_of_a_node_with_routes_and_never_a_credential(feed_url, databases):
    fill(databases, feed_url)
    page = client(feed_url).get("/monitor")
    assert page.status_code == 200
    html = page.text
    assert SECRET not in html and "alice" not in html
    assert HOSTILE not in html and "&lt;script&gt;" in html
    assert html.count('<table class="route-table"') == 2  # node-a's and node-b's
    node_a = html.split('data-node="node-a" aria-label="Node node-a"', 1)[1].split("</section>", 1)[0]
    assert re.findall(r'<tr class="route-row route-state-(\w+)" data-route="([\w-]+)"', node_a) == [
        ("down", "cn-1"),
        ("cooling", "eu-1"),
        ("ok", "us-1"),
    ]
    assert '<code class="proxy" title="the route\'s exit">http://proxy.example:3128</code>' in node_a
    # yahoo has no route rows (an older crawl): no column of its own
    assert re.findall(r'<th scope="col" class="engine-name">(\w+)</th>', node_a) == ["google", "bing"]
    assert "in trouble on node-a/eu-1; fine on node-a/us-1, node-b" in html  # node-b has one route: the node


def test_the_feeds_crawl_line_says_the_route_down_too(feed_url, databases):
    fill(databases, feed_url)
    page = client(feed_url).get("/")
    assert page.status_code == 200
    status = re.search(r'<p id="crawl-status" class="([^"]+)"[^>]*>(.*?)</p>', page.text, re.S)
    assert "level-warning" in status.group(1)
    assert "route cn-1 down on node-a — its engines go on through 2 other routes" in status.group(2)
