"""The node's network, end to end: a real crawl of three engines in real Chromium whose every connection is refused
(nothing listens on their ports) is the node's network, not the engines — one ``network_down`` alert through a real
Apprise ``json://`` receiver, nothing paused although ``health.min_requests`` is low enough that the engines would
otherwise be; then the fake engines start on those very ports, and one alert says the network is back."""

from __future__ import annotations

import signal
import subprocess
import sys
import time

import pytest

from fake_engines import FakeEngines
from tests.support.alert_receivers import wait_for
from tests.support.crawl_checks import FAST_COOLDOWN, rows
from tests.support.ports import free_port
from tests.support.project import write_config
from topicstreams import ENGINES as ALL_ENGINES

pytestmark = pytest.mark.timeout(240)

ENGINES = ("google", "bing", "yahoo")


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
                "pacing": {"default_min_interval": 0.2, "jitter_ratio": 0.0},
                "cooldown": FAST_COOLDOWN,
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
    try:
        down = wait_for(
            lambda: [alert for alert in network_alerts(json_receiver) if "down" in alert["title"]], timeout=90
        )
        time.sleep(10)  # refusals keep coming: still one alert, and nothing paused for them
        db = tmp_path / "news.db"
        states = rows(db, "select engine, state from engine_status order by engine")
        assert states and all(state != "paused" for _, state in states), states
        assert len(down) == 1
        assert "node-a" in down[0]["message"] and "ERR_CONNECTION_REFUSED" in down[0]["message"]

        fakes = FakeEngines(ENGINES, ports=ports).start()  # the network is back
        back = wait_for(
            lambda: [alert for alert in network_alerts(json_receiver) if "back" in alert["title"]], timeout=90
        )
        assert len(back) == 1
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
    assert "every engine fails to connect" in stderr
