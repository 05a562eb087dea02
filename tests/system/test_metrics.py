"""``GET /metrics`` through the app, on a real SQLite file and a real PostgreSQL database filled by the project's
own writers (``save_status``, ``pause``, ``save_cycle``, the store pipeline), read back with prometheus_client's
own text parser; the bearer token; the Grafana dashboard's names; and one scrape of a real uvicorn server."""

from __future__ import annotations

import json
import logging
import re
from datetime import datetime, timedelta
from pathlib import Path

import httpx
import pytest
from fastapi.testclient import TestClient
from prometheus_client.parser import text_string_to_metric_families
from sqlalchemy import delete

from tests.support.feed_data import BASE_URL, article, client, fresh_database, serving, store
from topicstreams.engines.states import COOLING, PAUSED, RUNNING, STALE, STOPPED
from topicstreams.storage import utcnow
from topicstreams.storage.engine_status import mark_stopped, pause, save_status
from topicstreams.storage.models import engine_status_table, engine_totals_table
from topicstreams.storage.scraper_cycles import purge_older_than, save_cycle
from topicstreams.web.app import WebSettings, create_app

DASHBOARD = Path(__file__).resolve().parents[2] / "docs" / "grafana-dashboard.json"

ENGINE_FAMILIES = {  # family (as the parser names it) -> type, labels beyond engine and node
    "topicstreams_engine_health_score": ("gauge", set()),
    "topicstreams_engine_parser_score": ("gauge", set()),
    "topicstreams_engine_state": ("gauge", {"state"}),
    "topicstreams_engine_latency_seconds": ("gauge", {"quantile"}),
    "topicstreams_engine_requests": ("counter", set()),
    "topicstreams_engine_responses": ("counter", {"class"}),
    "topicstreams_engine_cooldowns": ("counter", set()),
    "topicstreams_cycle_last_end_timestamp_seconds": ("gauge", set()),
}
OTHER_FAMILIES = {
    "topicstreams_feed_events": ("counter", {"engine"}),
    "topicstreams_news": ("counter", set()),
    "topicstreams_saturation_suspected": ("gauge", {"node"}),
    "topicstreams_node_heartbeat_timestamp_seconds": ("gauge", {"node"}),
}
COUNTERS = [name for name, (kind, _) in {**ENGINE_FAMILIES, **OTHER_FAMILIES}.items() if kind == "counter"]
CLASSES = {
    "ok": "ok",
    "hard_block": "hard_blocks",
    "challenge": "challenges",
    "soft_block": "soft_blocks",
    "error": "errors",
}

Series = dict[tuple[tuple[str, str], ...], float]


def scrape(api: TestClient, **headers: str) -> dict:
    """The families of one /metrics answer, by name (the parser's: a counter's without ``_total``)."""
    answer = api.get("/metrics", headers=headers)
    assert answer.status_code == 200, answer.text
    assert answer.headers["content-type"].startswith("text/plain; version=")
    return {family.name: family for family in text_string_to_metric_families(answer.text)}


def series(families: dict, name: str) -> Series:
    """The samples of a family: sorted label pairs -> value (a counter's ``_total`` samples only)."""
    family = families[name]
    wanted = f"{name}_total" if family.type == "counter" else name
    return {tuple(sorted(sample.labels.items())): sample.value for sample in family.samples if sample.name == wanted}


def key(**labels: str) -> tuple[tuple[str, str], ...]:
    return tuple(sorted(labels.items()))


def fill(databases, url: str, now: datetime) -> dict:
    """Two nodes' engines as a crawl writes them, plus a third node's cycle without a status row, and three
    articles. Returns what was written, for the checks to compare with."""
    db = databases.of(url)
    rows = {  # (engine, node) -> what save_status/pause were given
        ("google", "node-a"): {
            "state": COOLING,
            "cooling_until": now + timedelta(minutes=10),
            "score": 72,
            "band": "degraded",
            "parser_score": 95,
            "p50_ms": 240.0,
            "p95_ms": 910.0,
            "updated_at": now - timedelta(seconds=5),
        },
        ("bing", "node-a"): {
            "state": COOLING,
            "cooling_until": now + timedelta(minutes=5),
            "score": 64,
            "band": "degraded",
            "parser_score": 80,
            "p50_ms": 300.0,
            "p95_ms": 1200.0,
            "updated_at": now - timedelta(seconds=2),
        },
        ("yahoo", "node-a"): {"state": RUNNING, "updated_at": now - timedelta(seconds=20)},  # no score, no latency
        # The cooldown has ended: the row still says cooling, the engine reads running.
        ("brave", "node-b"): {
            "state": COOLING,
            "cooling_until": now - timedelta(minutes=1),
            "score": 88,
            "band": "ok",
            "parser_score": 90,
            "p50_ms": 500.0,
            "p95_ms": 800.0,
            "updated_at": now - timedelta(seconds=7),
        },
    }
    for (engine, node), values in rows.items():
        save_status(db, engine, node, **values)
    paused = {
        "score": 31,
        "band": "critical",
        "parser_score": 100,
        "p50_ms": 150.0,
        "p95_ms": 2500.0,
        "updated_at": now - timedelta(seconds=30),
    }
    pause(db, "yahoo", "node-b", at=now - timedelta(minutes=3), **paused)
    rows[("yahoo", "node-b")] = {"state": PAUSED, **paused}

    hour = now.replace(minute=0, second=0, microsecond=0)
    cycles = [
        (
            "google",
            "node-a",
            hour - timedelta(hours=3),
            {
                "requests": 40,
                "ok": 30,
                "hard_blocks": 4,
                "challenges": 3,
                "soft_blocks": 2,
                "errors": 1,
                "cooldowns": 2,
                "new_events": 7,
            },
        ),
        ("google", "node-a", hour - timedelta(hours=2), {"requests": 10, "ok": 10, "new_events": 3}),
        (
            "bing",
            "node-a",
            hour - timedelta(hours=2),
            {"requests": 20, "ok": 15, "soft_blocks": 5, "cooldowns": 1, "new_events": 4},
        ),
        (
            "yahoo",
            "node-b",
            hour - timedelta(hours=1),
            {"requests": 12, "ok": 2, "hard_blocks": 10, "cooldowns": 3, "new_events": 1},
        ),
        ("google", "node-c", hour - timedelta(hours=4), {"requests": 99, "ok": 99, "new_events": 5}),  # no status row
    ]
    for engine, node, start, counts in cycles:
        save_cycle(
            db,
            engine=engine,
            node=node,
            window_start=start,
            window_end=start + timedelta(minutes=1),
            topics_count=3,
            entries=counts["new_events"] * 2,
            **counts,
        )
    store(
        url,
        [
            article(1, "climate", "google"),
            article(2, "climate", "bing"),
            article(3, "energy", "yahoo"),
            article(1, "climate", "bing"),
        ],
    )
    return {"rows": rows, "cycles": cycles}


def totals_of(cycles: list, engine: str, node: str) -> dict:
    """What the engine's cycles on the node add up to, and when the last ended."""
    mine = [(start, counts) for each, where, start, counts in cycles if (each, where) == (engine, node)]
    summed = {
        name: sum(counts.get(name, 0) for _, counts in mine) for name in ("requests", *CLASSES.values(), "cooldowns")
    }
    summed["last_end"] = max((start + timedelta(minutes=1) for start, _ in mine), default=None)
    return summed


def test_every_family_holds_what_the_database_holds(feed_url: str, databases) -> None:
    now = utcnow()
    written = fill(databases, feed_url, now)
    families = scrape(client(feed_url))

    for name, (kind, extra) in {**ENGINE_FAMILIES, **OTHER_FAMILIES}.items():
        assert families[name].type == kind, name
        assert families[name].documentation, f"{name} has no HELP"
        labels = extra | {"engine", "node"} if name in ENGINE_FAMILIES else extra
        assert all(set(sample.labels) == labels for sample in families[name].samples), name

    rows = written["rows"]
    pairs = sorted(rows)  # only engines with a status row: node-c's google has cycles but no row
    states = {pair: RUNNING if pair == ("brave", "node-b") else rows[pair]["state"] for pair in pairs}
    assert series(families, "topicstreams_engine_state") == {
        key(engine=engine, node=node, state=state): 1.0 if state == states[(engine, node)] else 0.0
        for engine, node in pairs
        for state in (RUNNING, COOLING, PAUSED, STALE, STOPPED)
    }
    assert series(families, "topicstreams_engine_health_score") == {
        key(engine=engine, node=node): float(rows[(engine, node)]["score"])
        for engine, node in pairs
        if "score" in rows[(engine, node)]
    }
    assert series(families, "topicstreams_engine_parser_score") == {
        key(engine=engine, node=node): float(rows[(engine, node)]["parser_score"])
        for engine, node in pairs
        if "parser_score" in rows[(engine, node)]
    }
    assert series(families, "topicstreams_engine_latency_seconds") == pytest.approx(
        {
            key(engine=engine, node=node, quantile=quantile): rows[(engine, node)][column] / 1000
            for engine, node in pairs
            if "p95_ms" in rows[(engine, node)]
            for quantile, column in (("0.5", "p50_ms"), ("0.95", "p95_ms"))
        }
    )

    cycles = written["cycles"]
    totals = {pair: totals_of(cycles, *pair) for pair in pairs}
    assert totals[("google", "node-a")]["requests"] == 50  # the sums the checks rest on are not all zero
    assert series(families, "topicstreams_engine_requests") == {
        key(engine=engine, node=node): float(totals[(engine, node)]["requests"]) for engine, node in pairs
    }
    assert series(families, "topicstreams_engine_responses") == {
        key(engine=engine, node=node, **{"class": label}): float(totals[(engine, node)][column])
        for engine, node in pairs
        for label, column in CLASSES.items()
    }
    assert series(families, "topicstreams_engine_cooldowns") == {
        key(engine=engine, node=node): float(totals[(engine, node)]["cooldowns"]) for engine, node in pairs
    }
    assert series(families, "topicstreams_cycle_last_end_timestamp_seconds") == pytest.approx(
        {
            key(engine=engine, node=node): totals[(engine, node)]["last_end"].timestamp()
            for engine, node in pairs
            if totals[(engine, node)]["last_end"] is not None
        },
        abs=1e-3,
    )

    # Every node's cycles, node-c's included: what each engine was the first to find.
    assert series(families, "topicstreams_feed_events") == {
        key(engine="google"): 15.0,
        key(engine="bing"): 4.0,
        key(engine="yahoo"): 1.0,
        key(engine="brave"): 0.0,
    }
    assert series(families, "topicstreams_news") == {(): 3.0}
    # node-a: google and bing (robust engines) cooling at once; node-b: brave is a canary engine, yahoo is paused.
    assert series(families, "topicstreams_saturation_suspected") == {key(node="node-a"): 1.0, key(node="node-b"): 0.0}
    assert series(families, "topicstreams_node_heartbeat_timestamp_seconds") == pytest.approx(
        {
            key(node="node-a"): (now - timedelta(seconds=2)).timestamp(),
            key(node="node-b"): (now - timedelta(seconds=7)).timestamp(),
        },
        abs=1e-3,
    )


def test_a_deleted_status_row_takes_its_series_away(feed_url: str, databases) -> None:
    fill(databases, feed_url, utcnow())
    api = client(feed_url)
    before = scrape(api)
    assert any(dict(labels).get("engine") == "brave" for labels in series(before, "topicstreams_engine_state"))

    with databases.of(feed_url).begin() as conn:
        conn.execute(delete(engine_status_table).where(engine_status_table.c.node == "node-b"))
    after = scrape(api)
    for name in ENGINE_FAMILIES:
        gone = {labels for labels in series(before, name) if dict(labels)["node"] == "node-b"}
        left = set(series(after, name))
        assert not gone & left, name
        assert left == set(series(before, name)) - gone, name
    assert set(series(after, "topicstreams_saturation_suspected")) == {key(node="node-a")}
    assert set(series(after, "topicstreams_node_heartbeat_timestamp_seconds")) == {key(node="node-a")}
    # The feed's counts are the feed's, whoever found the events.
    assert series(after, "topicstreams_feed_events") == series(before, "topicstreams_feed_events")


def test_an_engine_whose_crawl_went_silent_or_closed_reads_stale_or_stopped(feed_url: str, databases) -> None:
    db = databases.of(feed_url)
    now = utcnow()
    save_status(db, "google", "node-a", state=RUNNING, score=90, band="ok", updated_at=now - timedelta(minutes=5))
    pause(db, "bing", "node-a", score=30, band="critical")
    mark_stopped(db, "bing", "node-a")  # its crawl closed: stored paused, read stopped
    save_status(db, "yahoo", "node-a", state=RUNNING)
    states = series(scrape(client(feed_url)), "topicstreams_engine_state")
    expected = {"google": STALE, "bing": STOPPED, "yahoo": RUNNING}
    assert states == {
        key(engine=engine, node="node-a", state=state): 1.0 if state == current else 0.0
        for engine, current in expected.items()
        for state in (RUNNING, COOLING, PAUSED, STALE, STOPPED)
    }


def test_purging_the_cycles_leaves_the_counters_as_they_were(feed_url: str, databases) -> None:
    fill(databases, feed_url, utcnow())
    api = client(feed_url)
    db = databases.of(feed_url)
    before = scrape(api)

    deleted = purge_older_than(db, utcnow() + timedelta(days=1))
    assert deleted["scraper_cycles"] == 5
    after = scrape(api)
    for name in [*COUNTERS, "topicstreams_cycle_last_end_timestamp_seconds"]:
        assert series(after, name) == series(before, name), name

    # The next cycle adds to them, from where they were.
    start = utcnow().replace(microsecond=0)
    save_cycle(
        db,
        engine="yahoo",
        node="node-b",
        window_start=start,
        window_end=start + timedelta(minutes=1),
        requests=6,
        ok=5,
        errors=1,
        new_events=2,
    )
    later = scrape(api)
    requests = key(engine="yahoo", node="node-b")
    assert (
        series(later, "topicstreams_engine_requests")[requests]
        == series(after, "topicstreams_engine_requests")[requests] + 6
    )
    errors = key(engine="yahoo", node="node-b", **{"class": "error"})
    assert (
        series(later, "topicstreams_engine_responses")[errors]
        == series(after, "topicstreams_engine_responses")[errors] + 1
    )
    assert series(later, "topicstreams_feed_events")[key(engine="yahoo")] == 3.0
    assert series(later, "topicstreams_cycle_last_end_timestamp_seconds")[requests] == pytest.approx(
        (start + timedelta(minutes=1)).timestamp()
    )


def test_a_database_that_cannot_answer_is_a_503(feed_url: str, databases) -> None:
    fill(databases, feed_url, utcnow())
    api = client(feed_url)
    scrape(api)
    with databases.of(feed_url).begin() as conn:
        engine_totals_table.drop(conn)
    answer = api.get("/metrics")
    assert answer.status_code == 503, answer.text
    assert "database did not answer" in answer.text


def test_the_token_guards_the_metrics(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    url = fresh_database(f"sqlite:///{tmp_path / 'metrics.db'}")
    token = "s3cret-metrics-token-0042"  # printable ASCII, as web.metrics_token must be
    caplog.set_level(logging.DEBUG)
    api = TestClient(create_app(WebSettings(url, metrics_token=token)), base_url=BASE_URL)

    for headers in (
        {},
        {"Authorization": "Bearer wrong"},
        {"Authorization": f"Basic {token}"},
        {"Authorization": "Bearer "},
        {"Authorization": f"Bearer {token}x"},
    ):
        answer = api.get("/metrics", headers={name: value.encode() for name, value in headers.items()})
        assert answer.status_code == 401, headers
        assert answer.headers["www-authenticate"].startswith("Bearer")
        assert "topicstreams_" not in answer.text
    families = scrape(api, Authorization=f"bearer {token}".encode())
    assert "topicstreams_news" in families
    assert token not in caplog.text and token.encode() not in caplog.text.encode()
    # Without a token configured the metrics are open, like the rest of the app.
    assert client(url).get("/metrics").status_code == 200


def dashboard_names(dashboard: dict) -> set[str]:
    """Every topicstreams_* metric name the dashboard's queries use."""
    exprs: list[str] = []

    def walk(node) -> None:
        if isinstance(node, dict):
            if isinstance(node.get("expr"), str):
                exprs.append(node["expr"])
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(dashboard)
    assert exprs, "the dashboard has no queries"
    return {name for expr in exprs for name in re.findall(r"\btopicstreams_[a-z0-9_]+", expr)}


def test_the_dashboard_queries_only_what_the_metrics_expose(tmp_path: Path, databases) -> None:
    url = fresh_database(f"sqlite:///{tmp_path / 'metrics.db'}")
    fill(databases, url, utcnow())
    families = scrape(client(url))
    exposed = {sample.name for family in families.values() for sample in family.samples}
    dashboard = json.loads(DASHBOARD.read_text())

    used = dashboard_names(dashboard)
    assert used <= exposed, f"the dashboard queries names /metrics does not expose: {sorted(used - exposed)}"
    assert exposed <= used, f"families no panel shows: {sorted(exposed - used)}"

    assert [(each["name"], each["pluginId"]) for each in dashboard["__inputs"]] == [("DS_PROMETHEUS", "prometheus")]
    variables = {each["name"]: each for each in dashboard["templating"]["list"]}
    for name in ("engine", "node"):
        query = variables[name]["query"]
        query = query["query"] if isinstance(query, dict) else query
        assert re.fullmatch(rf"label_values\((topicstreams_[a-z_]+)(\{{.*\}})?, *{name}\)", query), query
        assert re.match(r"topicstreams_[a-z_]+", query[len("label_values(") :]).group(0) in exposed
    panels = [panel for panel in dashboard["panels"] if panel.get("type") != "row"]
    for panel in panels:
        assert panel["datasource"]["uid"] == "${DS_PROMETHEUS}", panel["title"]
        assert all(target["datasource"]["uid"] == "${DS_PROMETHEUS}" for target in panel["targets"]), panel["title"]


def test_a_real_server_answers_a_scrape(feed_url: str, databases) -> None:
    fill(databases, feed_url, utcnow())
    with serving(feed_url) as app:
        answer = httpx.get(f"{app.url}/metrics", timeout=10)
    assert answer.status_code == 200
    assert answer.headers["content-type"].startswith("text/plain; version=")
    assert answer.headers["x-content-type-options"] == "nosniff"
    families = {family.name: family for family in text_string_to_metric_families(answer.text)}
    assert set(families) == set(ENGINE_FAMILIES) | set(OTHER_FAMILIES)
    assert series(families, "topicstreams_news") == {(): 3.0}
    assert series(families, "topicstreams_engine_state")[key(engine="yahoo", node="node-b", state=PAUSED)] == 1.0
