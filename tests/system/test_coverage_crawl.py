"""Coverage, end to end: a real ``scrapy crawlall`` of Google, Bing and Yahoo in real Chromium against a news world
where new articles keep coming, each engine showing its own overlapping share. Bing serves stale pages — yesterday's
articles for every query, well-formed, parsed perfectly — so no status code, latency or parser signal shows it.

A baseline is seeded into ``health_windows`` (two days back: the baseline leaves the latest day out, so a fresh
database has none): each engine found 85 % of what the others found. Within two judged windows (two low ones in a
row make the reason) Bing gets the reason
``coverage`` and one ``coverage_drop`` alert through a real Apprise ``json://`` receiver, its hostility band still
ok; Google and Yahoo, honest over the same windows, get none (no false positive — the old articles Bing finds are
expected of no other engine)."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from datetime import timedelta

import pytest

from fake_engines import FakeEngines, NewsWorld
from tests.support.alert_receivers import wait_for
from tests.support.crawl_checks import crawl_config, rows
from topicstreams.storage import upgrade, utcnow
from topicstreams.storage.engine_status import save_window

pytestmark = pytest.mark.timeout(300)

ENGINES = ("google", "bing", "yahoo")
TOPICS = ("harbour", "elections", "rail strike", "heatwave", "chip plant", "museum")
WINDOW = 20
"""Seconds of each health window (what coverage is judged on)."""
INTERVAL = 10
"""Seconds between two scrapes of a topic: the coverage's grace."""


def seed_baseline(databases, url: str) -> None:
    """Two days back, an hour of windows for each engine: no blocks, 85 % coverage."""
    db = databases.of(url)
    upgrade(url)
    end = utcnow() - timedelta(days=2)
    for engine in ENGINES:
        for index in range(6):
            stop = end - timedelta(minutes=10 * index)
            save_window(
                db,
                engine,
                "node-a",
                stop - timedelta(minutes=10),
                stop,
                {
                    "requests": 100,
                    "ok": 100,
                    "items": 1000,
                    "valid_items": 1000,
                    "result_pages": 100,
                    "yielding_pages": 100,
                    "p50_latency_ms": 800.0,
                    "p95_latency_ms": 4000.0,
                    "coverage_expected": 100,
                    "coverage_found": 85,
                },
            )
    databases.dispose()


def coverage_alerts(receiver) -> list[dict]:
    return [
        posted.body
        for posted in receiver.received("/alerts")
        if posted.body and "coverage" in posted.body.get("title", "")
    ]


def test_an_engine_serving_stale_pages_loses_coverage_and_is_told_once_the_honest_ones_never(
    scrapy_cmd, json_receiver, tmp_path, databases
):
    world = NewsWorld(speed=80, share=0.85)  # a new article per topic every 3.75 s of the test's time
    world.set_stale("bing")
    with FakeEngines(ENGINES, world=world) as fakes:
        cfg = crawl_config(
            tmp_path,
            fakes,
            floor=0.3,
            engines=ENGINES,
            topics=list(TOPICS),
            scraper={"scrape_interval": INTERVAL},
            health={"window": WINDOW, "min_requests": 5},
            alerting={
                "urls": [json_receiver.apprise_url("/alerts")],
                "events": ["coverage_drop", "degraded", "paused"],
            },
        )
        url = f"sqlite:///{tmp_path / 'news.db'}"
        seed_baseline(databases, url)
        env = {"TOPICSTREAMS_CONFIG": str(cfg)}
        crawl = subprocess.Popen(
            [sys.executable, "-m", "scrapy", "crawlall", "-a", "engines=" + ",".join(ENGINES)],
            cwd=scrapy_cmd.folder,
            env={**scrapy_cmd.env, **env},
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            [alert] = wait_for(lambda: coverage_alerts(json_receiver), timeout=200)
            told_at = time.time()
            report = json.loads(scrapy_cmd("health", "--json", env=env).stdout)
            time.sleep(WINDOW + 5)  # one more window: still one alert, and none for the honest engines
        finally:
            crawl.send_signal(signal.SIGTERM)
            _, stderr = crawl.communicate(timeout=90)
    assert crawl.returncode == 0, stderr[-3000:]
    assert "bing coverage drop on node-a" in alert["title"], alert
    assert "stale or filtered results" in alert["message"]
    db = tmp_path / "news.db"
    windows = rows(
        db,
        "select engine, window_end, coverage_expected, coverage_found from health_windows "
        "where window_end > datetime('now', '-1 day') order by window_end",
    )
    assert [each["title"] for each in coverage_alerts(json_receiver)] == [alert["title"]], windows

    judged = rows(
        db,
        "select window_end from health_windows where engine = 'bing' and coverage_expected >= 5 "
        "and window_end > datetime('now', '-1 day') order by window_end",
    )
    assert judged, "bing had no window with enough articles to judge"
    first = time.mktime(time.strptime(judged[0][0][:19], "%Y-%m-%d %H:%M:%S")) - time.timezone
    assert told_at - first <= 2 * WINDOW + 15, (judged, told_at)  # within two judged windows

    engines = {entry["engine"]: entry for entry in report["engines"]}
    assert "coverage" in engines["bing"]["reasons"]
    assert engines["bing"]["band"] == "ok", engines["bing"]  # its hostility score knows nothing of it
    assert engines["bing"]["coverage"]["window"] < 0.2 and engines["bing"]["coverage"]["baseline"] == 0.85
    for honest in ("google", "yahoo"):
        assert "coverage" not in engines[honest]["reasons"], engines[honest]
    honest_windows = rows(
        db,
        "select engine, coverage_expected, coverage_found from health_windows where engine "
        "!= 'bing' and coverage_expected >= 5 and window_end > datetime('now', '-1 day')",
    )
    assert honest_windows, "the honest engines had no window with enough articles to judge"
    for honest in ("google", "yahoo"):  # over the run, at their normal (one window of ten articles may dip by chance)
        expected = sum(row[1] for row in honest_windows if row[0] == honest)
        found = sum(row[2] for row in honest_windows if row[0] == honest)
        assert found / expected > 0.85 - 0.2, honest_windows
    stored = rows(db, "select event, engine from alerts where event = 'coverage_drop'")
    assert stored == [("coverage_drop", "bing")]
