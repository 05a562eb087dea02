"""``carried_by`` in the health report (topicstreams/health_report.py, ``scrapy health``): in lease mode each engine
names the nodes whose claims scraped its topics within the last 1.5 scrape intervals — read from the shared schedule
of the suite's real PostgreSQL, written by the schedule's own claim and re-arm at chosen times — in the JSON of
``scrapy health --json`` (and ``--all-nodes``, and what ``GET /api/health`` answers) and in a line under the table;
in shard mode the member and the line are absent."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from tests.support.project import write_config
from topicstreams import ENGINES
from topicstreams.config.loading import load_config
from topicstreams.health.saturation import SaturationPolicy
from topicstreams.reports.health_report import build_report, carried_since, lease_interval_of
from topicstreams.storage import leases as schedule
from topicstreams.storage import upgrade, utcnow
from topicstreams.storage.topics import add_topics
from topicstreams.web.app import WebSettings, create_app

INTERVAL = 60.0
HOSTILE = "evil\x1b[2J\rnode"


def scrape(db, engine: str, node: str, count: int, seconds_ago: float) -> None:
    """``node`` claims ``count`` due topics of ``engine`` and re-arms them as scraped ``seconds_ago``."""
    claims = schedule.claim(db, engine, node, 120, limit=count)
    assert len(claims) == count
    at = utcnow() - timedelta(seconds=seconds_ago)
    done = [schedule.Rearm(claim, *schedule.next_slot(claim.slot_at, at, INTERVAL)) for claim in claims]
    assert len(schedule.rearm(db, engine, node, done, now=at)) == count


@pytest.fixture
def cluster(postgres_url: str, databases):
    """google carried by node-a and node-b lately (node-c's scrape is older than the window), bing by a node with a
    hostile id, yahoo and brave by nobody."""
    upgrade(postgres_url)
    db = databases.of(postgres_url)
    add_topics(db, [f"topic {number}" for number in range(12)])
    for engine in ("google", "bing"):
        schedule.reconcile(db, engine, INTERVAL, now=utcnow() - timedelta(minutes=10))  # all due already
    scrape(db, "google", "node-c", 2, seconds_ago=120)  # two intervals ago: before the window (90 s)
    scrape(db, "google", "node-b", 3, seconds_ago=72)  # 1.2 intervals ago, a slot late by its jitter: inside it
    scrape(db, "google", "node-a", 4, seconds_ago=5)
    scrape(db, "bing", HOSTILE, 1, seconds_ago=20)
    yield postgres_url
    databases.dispose()


def env_for(folder: Path, url: str, assignment: str) -> dict[str, str]:
    config = write_config(
        folder,
        {
            "database": {"url": url},
            "node": {"id": "node-a"},
            "scraper": {"schedule": "fixed", "assignment": assignment, "scrape_interval": INTERVAL},
        },
    )
    return {"TOPICSTREAMS_CONFIG": str(config)}


EXPECTED = {"google": ["node-a", "node-b"], "bing": [HOSTILE], "yahoo": [], "brave": []}


def test_lease_mode_json_names_the_nodes_carrying_each_engine(scrapy_cmd, tmp_path, cluster):
    env = env_for(tmp_path, cluster, "lease")
    result = scrapy_cmd("health", "--json", env=env)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert {engine["engine"]: engine["carried_by"] for engine in report["engines"]} == EXPECTED
    assert list(report["engines"][0])[-1] == "carried_by"

    every = scrapy_cmd("health", "--json", "--all-nodes", env=env)
    assert every.returncode == 0, every.stderr
    for node in json.loads(every.stdout)["nodes"]:
        for engine in node["engines"]:
            assert engine["carried_by"] == EXPECTED[engine["engine"]]


def test_lease_mode_table_says_who_carries_each_engine_in_a_line_under_it(scrapy_cmd, tmp_path, cluster):
    result = scrapy_cmd("health", env=env_for(tmp_path, cluster, "lease"))
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[-1] == (
        "carried by (scraped in the last 90 s): google by node-a, node-b; "
        "bing by evil\\x1b[2J\\rnode; yahoo by no node; brave by no node"
    )
    assert "\x1b" not in result.stdout and "\r" not in result.stdout
    assert lines[0] == "No crawl running: no crawl has run on this database yet"  # no engine has a status row
    assert len(lines) == 2 + len(ENGINES) + 2  # verdict, header, engines, saturation, carried by


def test_shard_mode_has_no_carried_by(scrapy_cmd, tmp_path, cluster):
    env = env_for(tmp_path, cluster, "shard")
    result = scrapy_cmd("health", "--json", env=env)
    assert result.returncode == 0, result.stderr
    assert all("carried_by" not in engine for engine in json.loads(result.stdout)["engines"])
    every = scrapy_cmd("health", "--json", "--all-nodes", env=env)
    assert all("carried_by" not in engine for node in json.loads(every.stdout)["nodes"] for engine in node["engines"])
    table = scrapy_cmd("health", env=env)
    assert not any(line.startswith("carried by") for line in table.stdout.splitlines())


def test_the_api_object_carries_carried_by_in_lease_mode_only(cluster, databases):
    """``GET /api/health`` answers :meth:`HealthReport.as_api_json`: built with the lease interval it has
    ``carried_by`` beside ``routes``; without it (shard mode) it has none."""
    db = databases.of(cluster)
    policy = SaturationPolicy(frozenset(), 2, dict.fromkeys(ENGINES, 0.0))
    lease = build_report(db, node="node-a", enabled=ENGINES, policy=policy, all_nodes=True, lease_interval=INTERVAL)
    answer = lease.as_api_json()
    assert "routes" in answer
    assert {engine["engine"]: engine["carried_by"] for node in answer["nodes"] for engine in node["engines"]} == (
        EXPECTED
    )
    shard = build_report(db, node="node-a", enabled=ENGINES, policy=policy, all_nodes=True).as_api_json()
    assert all("carried_by" not in engine for node in shard["nodes"] for engine in node["engines"])


def test_the_window_is_one_and_a_half_intervals_and_only_lease_mode_has_one(tmp_path):
    now = utcnow()
    assert carried_since(now, 60) == now - timedelta(seconds=90)
    url = "postgresql+psycopg://user@127.0.0.1:9/news"  # lease mode needs PostgreSQL; nothing connects to it here
    lease = env_for(tmp_path, url, "lease")["TOPICSTREAMS_CONFIG"]
    assert lease_interval_of(load_config({}, environ={"TOPICSTREAMS_CONFIG": lease})) == INTERVAL
    shard = env_for(tmp_path, url, "shard")["TOPICSTREAMS_CONFIG"]
    assert lease_interval_of(load_config({}, environ={"TOPICSTREAMS_CONFIG": shard})) is None


def test_the_web_app_of_a_lease_mode_config_answers_carried_by(tmp_path, cluster):
    """The web app built from the configuration (``scrapy serve``'s way, :meth:`WebSettings.from_config`) passes the
    lease interval to the report: ``GET /api/health`` names the carrying nodes; from a shard-mode config it does not."""
    for assignment, expected in (("lease", EXPECTED), ("shard", None)):
        (tmp_path / assignment).mkdir()
        config = load_config({}, environ=env_for(tmp_path / assignment, cluster, assignment))
        with TestClient(create_app(WebSettings.from_config(config)), base_url="http://127.0.0.1") as client:
            answer = client.get("/api/health")
        assert answer.status_code == 200, answer.text
        engines = [engine for node in answer.json()["nodes"] for engine in node["engines"]]
        if expected is None:
            assert engines and all("carried_by" not in engine for engine in engines)
        else:
            assert {engine["engine"]: engine["carried_by"] for engine in engines} == expected
