"""Routes end to end: one crawl of the fake Google through three real proxies on loopback (plain http, http with
credentials, socks5), each sending from its own address, so the fake sees one client per route.

One continuous crawl lives through the whole story, and the tests read what it left:

1. every route carries topics side by side, each at its own floor, with its own persona and cookies;
2. the fake challenges one route's address: that (engine, route) pair alone cools, the other two go on, and no
   engine-level pause or alert follows; ``scrapy health --json`` (the object of ``/api/health``) shows the pair;
3. one proxy is killed: its route turns ``down`` with one alert, its topics fail over at once, nothing is lost; the
   proxy comes back and the route's probe brings it back with one ``route_recovered``;
4. every proxy stops: the verdict is every route down, not four engine problems.

Credentials never show: not in the crawl's log, the database, ``scrapy config show`` nor ``scrapy health``.
"""

from __future__ import annotations

import json
import signal
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.support.crawl_checks import FLOAT_ROUNDING, classified, differences, recording, topics
from tests.support.fakes_http import running_fakes
from tests.support.project import ScrapyRunner, write_config
from tests.support.route_proxies import PASSWORD, PERSONAS, running_proxies
from topicstreams import ENGINES

pytestmark = pytest.mark.timeout(420)

fakes = running_fakes("google")
proxies = running_proxies("http", "http-auth", "socks5")

FLOOR = 1.0
TOPICS = 6
NAMES = ("r0", "r1", "r2")
CHALLENGE = {"page": "sorry"}


def wait_for(what: str, check: Callable[[], object], timeout: float = 45.0, process=None) -> object:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = check()
        if found:
            return found
        if process is not None and process.poll() is not None:
            raise AssertionError(f"the crawl ended while waiting for {what}:\n{process.communicate()[1][-4000:]}")
        time.sleep(0.25)
    raise AssertionError(f"timed out waiting for {what}")


def query(db: Path, sql: str, *args) -> list[tuple]:
    with sqlite3.connect(db, timeout=10) as conn:
        return conn.execute(sql, args).fetchall()


def pair_state(db: Path, route: str) -> str | None:
    found = query(db, "select state from route_status where route = ? and engine = 'google'", route)
    return found[0][0] if found else None


def alerts(db: Path, event: str) -> list[tuple]:
    return query(db, "select event, details from alerts where event = ?", event)


def from_address(address: str) -> list[dict]:
    return [entry for entry in fakes_log() if entry.get("address") == address]


def fakes_log() -> list[dict]:
    return JOURNEY["fakes"].results_requests("google")


JOURNEY: dict = {}


@pytest.fixture(scope="module")
def journey(fakes, proxies, tmp_path_factory):
    """The one crawl, through its phases; what each phase saw, for the tests."""
    folder = tmp_path_factory.mktemp("routes")
    runner = ScrapyRunner(folder)
    fakes.reset()
    fakes.watch_clients("google")
    JOURNEY["fakes"] = fakes
    cfg = write_config(
        folder,
        {
            "database": {"url": "sqlite:///news.db"},
            "engines": {
                name: {
                    "base_url": fakes.base_url("google") if name == "google" else "http://127.0.0.1:9",
                    "enabled": name == "google",
                }
                for name in ENGINES
            },
            "scraper": {
                "schedule": "fixed",
                "scrape_interval": 4,
                "pacing": {"default_min_interval": FLOOR, "jitter_ratio": 0.1},
                "cooldown": {"initial": 2, "factor": 2, "max": 4},
            },
            "browser": {"profile_dir": "profiles"},
            "node": {"id": "node-a"},
            "routes": proxies.route_entries(("google",), names=NAMES),
        },
    )
    env = {"TOPICSTREAMS_CONFIG": str(cfg)}
    db = folder / "news.db"
    seen: dict = {"folder": folder, "db": db, "runner": runner, "env": env}
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "scrapy",
            "crawl",
            "google",
            "-a",
            f"topics={topics(TOPICS)}",
            "-s",
            "TOPICSTREAMS_NODE_HEARTBEAT=2",
            "-s",
            "TOPICSTREAMS_STATS_DUMP_LEVEL=INFO",
            *recording(folder),
        ],
        cwd=folder,
        env={**runner.env, **env},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        address = [proxies.address(i) for i in range(3)]
        # 1. every route at work
        wait_for(
            "two requests from every route", lambda: all(len(from_address(a)) >= 2 for a in address), process=process
        )
        seen["config_show"] = runner("config", "show", env=env).stdout
        # 2. the fake challenges route r1's address only
        fakes.address("google", address[1], CHALLENGE)
        challenged_at = len(fakes_log())
        wait_for("r1's pair cooling", lambda: pair_state(db, "r1") == "cooling", process=process)

        def r1_cooling() -> dict | None:  # read while r1 cools (between two of its probes it reads ok a moment)
            report = json.loads(runner("health", "--json", env=env).stdout)
            states = {e["route"]: e["engines"]["google"]["state"] for e in report["route_states"]}
            return report if states.get("r1") == "cooling" else None

        seen["health_challenged"] = wait_for("r1 cooling in scrapy health", r1_cooling, process=process)
        wait_for(
            "r0 and r2 going on",
            lambda: (
                all(len(from_address(a)) >= 2 for a in (address[0], address[2]))
                and sum(e.get("address") in (address[0], address[2]) for e in fakes_log()[challenged_at:]) >= 4
            ),
            process=process,
        )
        seen["engine_during_challenge"] = query(db, "select state from engine_status where engine = 'google'")
        fakes.address("google", address[1], [])
        wait_for("r1 ok again", lambda: pair_state(db, "r1") == "ok", process=process)
        # 3. route r2's proxy dies, then comes back
        proxies.stop(2)
        killed_at = time.time()
        wait_for("r2 down", lambda: pair_state(db, "r2") == "down", process=process)
        wait_for("the route_down alert", lambda: alerts(db, "route_down"), process=process)
        after_kill = len(fakes_log())
        wait_for(
            "every topic scraped again through the other routes",
            lambda: {e["query"]["q"] for e in fakes_log()[after_kill:]} >= {f"t{i:02d}" for i in range(TOPICS)},
            process=process,
        )
        seen["killed_at"] = killed_at
        proxies.start(2)
        wait_for("the route_recovered alert", lambda: alerts(db, "route_recovered"), process=process)
        wait_for("r2 back at work", lambda: pair_state(db, "r2") == "ok", process=process)
        seen["phase3_alerts"] = alerts(db, "route_down"), alerts(db, "route_recovered")
        # 4. every proxy stops
        proxies.stop()
        wait_for("every route down", lambda: all(pair_state(db, n) == "down" for n in NAMES), process=process)
        health = runner("health", env=env)
        seen["health_all_down"] = health
        seen["health_all_down_json"] = json.loads(runner("health", "--json", env=env).stdout)
    finally:
        proxies.start()
        if process.poll() is None:
            process.send_signal(signal.SIGINT)
        try:
            out, err = process.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            process.kill()
            out, err = process.communicate()
        seen["stderr"] = err
        seen["returncode"] = process.returncode
    seen["classified"] = classified(folder)
    seen["clients"] = fakes.clients("google")
    return seen


def test_every_route_carries_topics_side_by_side_each_at_its_own_floor(journey):
    by_route: dict[str, list[float]] = {}
    for c in journey["classified"]:
        if c["sent_at"] is not None:
            by_route.setdefault(c["route"], []).append(c["sent_at"])
    assert set(by_route) == set(NAMES)
    for route, sent in by_route.items():
        assert min(differences(sorted(sent))) >= FLOOR - FLOAT_ROUNDING, route  # never two closer than the floor
    # side by side: requests of different routes closer together than one route's floor allows
    merged = sorted((at, route) for route, sent in by_route.items() for at in sent)
    assert any(b[0] - a[0] < FLOOR / 2 and a[1] != b[1] for a, b in zip(merged, merged[1:], strict=False))
    assert "ok" in journey["stderr"] and journey["returncode"] == 0, journey["stderr"][-3000:]


def test_each_route_wears_its_own_persona_and_keeps_its_own_cookies(journey, proxies):
    clients = journey["clients"]
    for i, persona in enumerate(PERSONAS):
        seen = clients[proxies.address(i)]
        assert len(seen["sessions"]) == 1, seen["sessions"]  # one cookie jar per route, kept from page to page
        reports = seen["personas"]
        assert reports and all(r["user_agent"] == persona["user_agent"] for r in reports)
        assert all(r["language"] == persona["locale"] and r["timezone"] == persona["timezone_id"] for r in reports)
        assert all(r["session"] in (None, seen["sessions"][0]) for r in reports)
    sessions = [clients[proxies.address(i)]["sessions"][0] for i in range(3)]
    assert len(set(sessions)) == 3  # identities never mix across routes
    profile = journey["folder"] / "profiles" / "node-a" / "google"
    saved = {name: (profile / name / "storage_state.json").read_text() for name in NAMES}  # each pair's own state
    assert all(sessions[i] in saved[name] for i, name in enumerate(NAMES))
    assert not (profile / "storage_state.json").exists()  # no context of the engine outside its routes


def test_a_challenge_on_one_route_cools_that_pair_only(journey):
    entries = {e["route"]: e for e in journey["health_challenged"]["route_states"] if e["node"] == "node-a"}
    assert entries["r1"]["engines"]["google"]["state"] == "cooling"
    assert entries["r0"]["engines"]["google"]["state"] == "ok" and entries["r2"]["engines"]["google"]["state"] == "ok"
    assert journey["engine_during_challenge"] == [("running",)]
    db = journey["db"]
    assert not alerts(db, "paused") and not alerts(db, "degraded")
    challenged = [c for c in journey["classified"] if c["cls"] == "challenge"]
    assert challenged and {c["route"] for c in challenged} == {"r1"}
    assert query(db, "select challenges > 0, cooldowns > 0 from route_status where route = 'r1'") == [(1, 1)]
    # a challenged topic is never tried again at once on another route: it waits for the pair's cooldown
    sent = [c for c in journey["classified"] if c["sent_at"] is not None]
    for block in challenged:
        later = [c for c in sent if c["topic"] == block["topic"] and c["sent_at"] > block["sent_at"]]
        if later:
            assert later[0]["sent_at"] - block["sent_at"] >= block["bench"] - FLOAT_ROUNDING, (block, later[0])


def test_a_dead_proxy_is_a_route_down_its_topics_fail_over_and_its_probe_brings_it_back(journey):
    db = journey["db"]
    down, recovered = journey["phase3_alerts"]
    assert [json.loads(details)["route"] for _, details in down] == ["r2"]  # one alert, for the dead proxy's route
    assert [json.loads(details)["route"] for _, details in recovered] == ["r2"]
    assert "route r2 is down" in journey["stderr"] and "route r2 recovered" in journey["stderr"]
    assert "'topicstreams/google/failovers'" in journey["stderr"]
    assert not alerts(db, "paused")  # no engine is held responsible for a route
    # nothing lost: every topic stored
    assert query(db, "select count(distinct topic_id) from topic_news") == [(TOPICS,)]


def test_every_route_down_is_said_as_such_not_as_engine_problems(journey):
    health = journey["health_all_down"]
    first = health.stdout.splitlines()[0]
    assert "route" in first.lower() and "down" in first.lower(), health.stdout
    assert health.returncode == 2  # nothing can be crawled: a monitoring check reads CRITICAL
    states = {e["route"]: e["state"] for e in journey["health_all_down_json"]["route_states"]}
    assert states == dict.fromkeys(NAMES, "down")


def test_credentials_never_show(journey):
    db = journey["db"]
    assert PASSWORD not in journey["stderr"]
    assert PASSWORD not in journey["config_show"]
    assert PASSWORD not in journey["health_all_down"].stdout
    assert all(PASSWORD not in str(row) for row in query(db, "select * from route_status"))
    assert all(PASSWORD not in str(row) for row in query(db, "select * from alerts"))
    assert all(PASSWORD not in str(row) for row in query(db, "select * from scraper_logs"))
    assert Counter(row[0] for row in query(db, "select proxy from route_status"))  # the shown form is there
