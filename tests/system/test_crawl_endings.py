"""States that end, end to end: a real crawl of the fake google in real Chromium, its row written every heartbeat
(``TOPICSTREAMS_NODE_HEARTBEAT=1``), then killed with SIGKILL — ``stale`` within three heartbeats on ``scrapy health``
(exit 3), ``scrapy nodes``, ``GET /api/health`` and ``/metrics`` — then a crawl of it that closes (``once=1``) —
``stopped`` on the same surfaces, exit 0. One story per module; the assertions read what it saw."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from types import SimpleNamespace

import pytest

from tests.support.crawl_checks import crawl_config, rows
from tests.support.fakes_http import running_fakes
from tests.support.project import ScrapyRunner
from tests.support.served_app import api_health, metrics, node_of, scrapy_together, serving

pytestmark = pytest.mark.timeout(240)

fakes = running_fakes("google")

BEAT = ("-s", "TOPICSTREAMS_NODE_HEARTBEAT=1")
"""The heartbeat of the crawls (and of ``scrapy nodes``, which judges the node's processes by it): one second."""


def surfaces(run: ScrapyRunner, env: dict, base: str) -> SimpleNamespace:
    """What every surface says now: the health table, its JSON, the nodes JSON, the health API, the metrics."""
    api, text = node_of(api_health(base), "node-a"), metrics(base)
    table, as_json, nodes = scrapy_together(run, [("health",), ("health", "--json"), ("nodes", "--json", *BEAT)], env)
    return SimpleNamespace(
        table=table,
        json=json.loads(as_json.stdout),
        json_status=as_json.returncode,
        api=api,
        metrics=text,
        nodes=json.loads(nodes.stdout),
    )


@pytest.fixture(scope="module")
def story(fakes, tmp_path_factory):
    folder = tmp_path_factory.mktemp("endings")
    run = ScrapyRunner(folder)
    cfg = crawl_config(folder, fakes, floor=0.3, scraper={"scrape_interval": 5})
    env = {"TOPICSTREAMS_CONFIG": str(cfg)}
    log = (folder / "killed.log").open("w")
    crawl = subprocess.Popen(
        [sys.executable, "-m", "scrapy", "crawl", "google", "-a", "topics=t00,t01", *BEAT],
        cwd=folder,
        env={**run.env, **env},
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    db = folder / "news.db"
    try:
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline and not fakes.results_requests("google"):
            time.sleep(0.2)
        assert fakes.results_requests("google"), (folder / "killed.log").read_text()[-3000:]
        with serving(folder, {**run.env, **env}) as app:
            beating = rows(db, "select heartbeat_seconds, stopped_at from engine_status")
            os.kill(crawl.pid, signal.SIGKILL)  # no goodbye: nothing is written
            killed_at = time.monotonic()
            crawl.wait(timeout=30)
            app.base  # noqa: B018 -- listening (it started with the crawl)
            time.sleep(max(0.0, killed_at + 3.1 - time.monotonic()))  # three heartbeats since its last write at most
            killed = surfaces(run, env, app.base)
            closed_run = run("crawl", "google", "-a", "topics=t00", "-a", "once=1", *BEAT, env=env)
            assert closed_run.returncode == 0, closed_run.stderr[-3000:]
            closed = surfaces(run, env, app.base)
    finally:
        if crawl.poll() is None:
            crawl.kill()
        log.close()
    return SimpleNamespace(beating=beating, killed=killed, closed=closed, db=db)


def google(report: dict) -> dict:
    return next(engine for engine in report["engines"] if engine["engine"] == "google")


def table_state(table: str) -> str:
    """The google row's state in the `scrapy health` table (below its verdict line)."""
    line = next(line for line in table.splitlines()[1:] if line.startswith("google"))
    return [cell for cell in line.split("  ") if cell.strip()][3].strip()


def engine_state_series(text: str) -> dict[str, float]:
    """google's ``topicstreams_engine_state`` series on node-a: state -> value."""
    found = re.findall(r'topicstreams_engine_state\{engine="google",node="node-a",state="(\w+)"\} ([0-9.]+)', text)
    return {state: float(value) for state, value in found}


def test_a_killed_crawl_is_stale_within_three_heartbeats_everywhere_and_exits_3(story):
    assert story.beating == [(1.0, None)]
    seen = story.killed
    assert seen.table.returncode == 3, seen.table.stdout + seen.table.stderr[-2000:]
    assert table_state(seen.table.stdout) == "stale"
    assert "stale: no running crawl writes these rows" in seen.table.stdout
    assert seen.json_status == 3
    assert (google(seen.json)["state"], google(seen.json)["stale"]) == ("stale", True)
    assert google(seen.api)["state"] == "stale"
    series = engine_state_series(seen.metrics)  # one-hot: never "running" once gone
    assert (series.get("running"), series.get("stale"), series.get("stopped")) == (0.0, 1.0, 0.0), seen.metrics
    [node] = seen.nodes["nodes"]
    assert (node["node"], node["status"], node["states"]) == ("node-a", "stale", {"google": "stale"}), node


def test_a_crawl_that_closes_is_stopped_everywhere_and_exits_0(story):
    seen = story.closed
    assert seen.table.returncode == 0, seen.table.stdout + seen.table.stderr[-2000:]
    assert seen.table.stdout.startswith("No crawl running")
    assert table_state(seen.table.stdout) == "stopped"
    assert "stale:" not in seen.table.stdout
    assert seen.json_status == 0
    assert (google(seen.json)["state"], google(seen.json)["stale"]) == ("stopped", False)
    assert google(seen.api)["state"] == "stopped"
    series = engine_state_series(seen.metrics)
    assert (series.get("running"), series.get("stale"), series.get("stopped")) == (0.0, 0.0, 1.0), seen.metrics
    [node] = seen.nodes["nodes"]
    assert (node["status"], node["states"]) == ("stopped", {"google": "stopped"}), node
    [(stopped_at, state)] = rows(story.db, "select stopped_at, state from engine_status")
    assert stopped_at is not None and state == "running"  # the stored state stays: the stop is beside it
