"""The node's network, end to end: a real crawl of three engines in real Chromium whose every connection is refused
(nothing listens on their ports) is the node's network, not the engines — one ``network_down`` alert through a real
Apprise ``json://`` receiver, nothing paused although ``health.min_requests`` is low enough that the engines would
otherwise be, no exit-IP saturation although every robust engine cools (no WARNING, no alert), no cooldown grown
(the engines retry every ``cooldown.initial``), and every surface says it: ``scrapy health`` (exit 2, its first line,
``network`` in its JSON) and ``GET /api/health`` of a ``scrapy serve`` beside the crawl. Then the fake engines start
on those very ports: one alert and one log line say the network recovered, and the engines' cooldowns from the outage
are lifted — every engine is asked again at once, not after a cooldown grown through the outage."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time

import pytest

from fake_engines import FakeEngines
from tests.support.alert_receivers import wait_for
from tests.support.crawl_checks import rows
from tests.support.ports import free_port
from tests.support.project import write_config
from tests.support.served_app import api_health, node_of, scrapy_together, serving
from topicstreams import ENGINES as ALL_ENGINES
from topicstreams.health.saturation import network_of
from topicstreams.storage import utcnow
from topicstreams.storage.db import Databases
from topicstreams.storage.engine_status import read_statuses

pytestmark = pytest.mark.timeout(240)

ENGINES = ("google", "bing", "yahoo")

COOLDOWN = {"initial": 2, "factor": 4, "max": 600}
"""Grown in a row, the third refusal would bench an engine for 32 s, the fourth for 128 s; kept at the initial 2 s
while the network is down, every engine asks again within seconds of its return."""


def network_alerts(receiver) -> list[dict]:
    return [
        posted.body
        for posted in receiver.received("/alerts")
        if posted.body and "network" in posted.body.get("title", "")
    ]


def test_every_engine_refused_at_once_is_one_network_down_and_pauses_nothing(scrapy_cmd, json_receiver, tmp_path):
    ports = {engine: free_port() for engine in ENGINES}  # nothing listens there yet: every connection is refused
    config = write_config(
        tmp_path,
        {
            "database": {"url": "sqlite:///news.db"},
            "node": {"id": "node-a"},
            "engines": {
                name: {"base_url": f"http://127.0.0.1:{ports.get(name, 9)}", "enabled": name in ENGINES}
                for name in ALL_ENGINES
            },
            "scraper": {
                "schedule": "fixed",
                "pacing": {"default_min_interval": 0.2, "jitter_ratio": 0.0},
                "cooldown": COOLDOWN,
                "scrape_interval": 5,
            },
            "health": {"min_requests": 4, "smoothing": 1},
            "browser": {"profile_dir": "profiles"},
            "alerting": {
                "urls": [json_receiver.apprise_url("/alerts")],
                "webhook_url": json_receiver.http_url("/hook"),
                "events": ["paused", "network_down"],
            },
        },
    )
    crawl = subprocess.Popen(
        [sys.executable, "-m", "scrapy", "crawlall", "-a", "topics=t00,t01", "-a", "engines=" + ",".join(ENGINES)],
        cwd=scrapy_cmd.folder,
        env={**scrapy_cmd.env, "TOPICSTREAMS_CONFIG": str(config)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    fakes = None
    env = {"TOPICSTREAMS_CONFIG": str(config)}
    try:
        down = wait_for(
            lambda: [alert for alert in network_alerts(json_receiver) if "down" in alert["title"]], timeout=90
        )
        started = time.monotonic()
        db = tmp_path / "news.db"
        url = f"sqlite:///{db}"
        with serving(scrapy_cmd.folder, {**scrapy_cmd.env, **env}) as app:  # every surface, while it holds
            report, table, listed = scrapy_together(
                scrapy_cmd, [("health", "--json"), ("health",), ("alerts", "list", "--json")], env
            )
            api = node_of(api_health(app.base), "node-a")
        time.sleep(max(0.0, 10 - (time.monotonic() - started)))  # refusals keep coming: one alert, nothing paused
        states = rows(db, "select engine, state from engine_status order by engine")
        assert states and all(state != "paused" for _, state in states), states
        assert len(down) == 1
        assert "node-a" in down[0]["message"] and "ERR_CONNECTION_REFUSED" in down[0]["message"]
        assert api["network"]["down"] is True and api["network"]["since"], api
        assert api["saturation"]["suspected"] is False, api
        assert report.returncode == 2, report.stdout + report.stderr[-3000:]
        shown = json.loads(report.stdout)
        assert shown["network"]["down"] is True and shown["network"]["since"].endswith("Z"), shown
        assert shown["saturation"]["suspected"] is False, shown
        assert table.returncode == 2 and table.stdout.startswith("Network down since "), table.stdout
        assert listed.returncode == 0, listed.stderr[-3000:]
        assert [alert["event"] for alert in json.loads(listed.stdout)["alerts"]] == ["network_down"], listed.stdout

        fakes = FakeEngines(ENGINES, ports=ports).start()  # the network is back
        back_at = time.monotonic()
        back = wait_for(
            lambda: [alert for alert in network_alerts(json_receiver) if "back" in alert["title"]], timeout=90
        )
        assert len(back) == 1
        # The cooldowns from the outage are lifted: every engine asks again at once (a cooldown grown through it
        # would hold the others for half a minute and more), and reads running.
        wait_for(lambda: all(fakes.results_requests(engine) for engine in ENGINES), timeout=12)
        asked = {engine: fakes.results_requests(engine)[0]["time"] for engine in ENGINES}
        assert max(asked.values()) - min(asked.values()) < 8, asked
        print(f"every engine asked again {time.monotonic() - back_at:.1f} s after the network came back")
        databases = Databases()  # the rows as `scrapy health` reads them
        try:

            def states() -> dict[str, str]:
                return {row.engine: row.state_at(utcnow()) for row in read_statuses(databases.of(url))}

            wait_for(lambda: states() == dict.fromkeys(ENGINES, "running"), timeout=5, interval=0.2)
            assert states() == dict.fromkeys(ENGINES, "running")  # not cooling: the outage's cooldowns are lifted
            assert not network_of(read_statuses(databases.of(url)), utcnow()).down
        finally:
            databases.dispose()
    finally:
        crawl.send_signal(signal.SIGTERM)
        try:
            _, stderr = crawl.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            crawl.kill()
            _, stderr = crawl.communicate()
        if fakes is not None:
            fakes.stop()
    db = tmp_path / "news.db"
    assert rows(db, "select count(*) from alerts where event = 'paused'") == [(0,)], stderr[-3000:]
    events = rows(db, "select event, node, engine from alerts order by id")
    assert events == [("network_down", "node-a", None), ("network_down", "node-a", None)], events
    hooks = [posted.body for posted in json_receiver.received("/hook")]
    assert [hook["event"] for hook in hooks] == ["network_down", "network_down"]
    assert all(hook["engine"] is None and hook["node"] == "node-a" for hook in hooks)
    assert rows(db, "select state from alert_states where key = 'network:node-a'") == [("ok",)]
    assert stderr.count("every engine fails to connect") == 1, stderr[-3000:]
    recovered = [line for line in stderr.splitlines() if "network recovered" in line]
    assert len(recovered) == 1 and " INFO: " in recovered[0], stderr[-3000:]
    assert "SATURATION" not in stderr, stderr[-3000:]  # the network's verdict, not the exit IP's
