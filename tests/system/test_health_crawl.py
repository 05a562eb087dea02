"""Health end to end: the real spider in real Chromium against a fake engine turning hostile, the health
extension scoring it, the bands acting (slowing down, pausing, alerting), the pause surviving restarts, and
`scrapy health` reading it all back."""

from __future__ import annotations

import json
import signal
import statistics
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from fake_engines import FakeEngines
from tests.support.crawl_checks import (
    FAST_COOLDOWN,
    FLOAT_ROUNDING,
    crawl_config,
    gaps,
    recording,
    rows,
    sent_gaps,
    stat_text,
    topics,
)
from tests.support.fakes_http import reset_fakes_per_test, running_fakes

pytestmark = pytest.mark.timeout(300)


fakes = running_fakes("google", "bing")
_clean = reset_fakes_per_test()


class Webhook:
    """A local webhook receiver: keeps the JSON bodies POSTed to it."""

    def __init__(self) -> None:
        received = self.received = []

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                received.append({"path": self.path, "type": self.headers.get("Content-Type"), "body": json.loads(body)})
                self.send_response(204)
                self.end_headers()

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hooks/T0KEN"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def webhook():
    hook = Webhook()
    yield hook
    hook.close()


def config(
    folder: Path,
    fakes: FakeEngines,
    *,
    floor: float,
    health: dict,
    webhook_url: str = "",
    engines=("google",),
    **scraper,
) -> Path:
    return crawl_config(
        folder,
        fakes,
        floor=floor,
        engines=engines,
        health=health,
        alerting={"webhook_url": webhook_url},
        scraper={"cooldown": FAST_COOLDOWN, **scraper},
    )


def report(scrapy_cmd, cfg: Path, *args: str) -> subprocess.CompletedProcess:
    return scrapy_cmd("health", *args, env={"TOPICSTREAMS_CONFIG": str(cfg)})


def google_row(text: str) -> list[str]:
    """The google row of `scrapy health`, split on the column gaps (the first line is the verdict)."""
    line = next(line for line in text.splitlines()[1:] if line.startswith("google"))
    return [cell.strip() for cell in line.split("  ") if cell.strip()]


def test_429s_and_captchas_in_turn_pause_the_engine_with_a_critical_alert_until_a_person_resumes_it(
    scrapy_cmd, fakes, webhook, tmp_path
):
    cfg = config(tmp_path, fakes, floor=0.05, health={"smoothing": 1}, webhook_url=webhook.url, once_attempts=100)
    fakes.script("google", [{"status": 429, "body": "Too Many Requests"}, "captcha200"] * 40)
    env = {"TOPICSTREAMS_CONFIG": str(cfg)}

    result = scrapy_cmd("crawl", "google", "-a", f"topics={topics(5)}", "-a", "once=1", env=env)
    assert result.returncode == 0, result.stderr[-3000:]
    # Half hard blocks, half challenges, against a normal of none: 100 - 35 - 25 = 40, as soon as the window
    # holds health.min_requests (50) requests; then nothing more goes to the engine.
    assert len(fakes.results_requests("google")) == 50
    critical = [line for line in result.stderr.splitlines() if " CRITICAL: " in line]
    assert len(critical) == 1, result.stderr[-3000:]
    assert "health 40 (critical): hard_block, challenge; engine paused on node node-a" in critical[0]
    assert "scrapy health resume google" in critical[0]
    assert stat_text(result.stderr, "health_score") == "40"
    assert stat_text(result.stderr, "health_band") == "'critical'"
    assert stat_text(result.stderr, "window/requests") == "50"
    assert stat_text(result.stderr, "window/hard_blocks") == "25"
    assert stat_text(result.stderr, "window/challenges") == "25"
    assert stat_text(result.stderr, "topics_given_up") == "5"

    db = tmp_path / "news.db"
    assert rows(db, "select engine, node, score, band, state from engine_status") == [
        ("google", "node-a", 40, "critical", "paused")
    ]
    alerts = rows(db, "select engine, node, score, band, reasons, delivery, resolved_at from alerts")
    assert alerts == [("google", "node-a", 40, "critical", '["hard_block", "challenge"]', "delivered 1/1", None)]
    assert len(webhook.received) == 1
    posted = webhook.received[0]
    assert posted["path"] == "/hooks/T0KEN" and posted["type"] == "application/json"
    assert {key: posted["body"][key] for key in ("engine", "node", "score", "band", "reasons")} == {
        "engine": "google",
        "node": "node-a",
        "score": 40,
        "band": "critical",
        "reasons": ["hard_block", "challenge"],
    }
    assert "paused" in posted["body"]["text"]

    # The once run closed: its engine is stopped (its pause is kept for the next crawl), which counts as 0.
    shown = report(scrapy_cmd, cfg)
    assert shown.returncode == 0, shown.stdout + shown.stderr
    row = google_row(shown.stdout)
    assert row[:4] == ["google", "40", "critical", "stopped"] and row[-2] == "hard_block, challenge", shown.stdout
    as_json = report(scrapy_cmd, cfg, "--json")
    assert as_json.returncode == 0
    google = next(e for e in json.loads(as_json.stdout)["engines"] if e["engine"] == "google")
    assert (google["score"], google["band"], google["state"], google["reasons"]) == (
        40,
        "critical",
        "stopped",
        ["hard_block", "challenge"],
    )

    # The pause survives a restart: a new run schedules nothing and says why.
    fakes.reset("google")
    again = scrapy_cmd("crawl", "google", "-a", "topics=t00", "-a", "once=1", env=env)
    assert again.returncode == 0, again.stderr[-3000:]
    assert fakes.results_requests("google") == []
    assert "paused since" in again.stderr and "scrapy health resume google" in again.stderr
    assert rows(db, "select state from engine_status") == [("paused",)]

    # A continuous run waits, paused, until a person resumes the engine from another shell.
    written = rows(db, "select updated_at from engine_status")
    crawl = subprocess.Popen(
        [sys.executable, "-m", "scrapy", "crawl", "google", "-a", "topics=t00,t01"],
        cwd=scrapy_cmd.folder,
        env={**scrapy_cmd.env, **env},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.time() + 60
        while rows(db, "select updated_at from engine_status") == written and time.time() < deadline:
            time.sleep(0.2)  # until the crawl has opened and written its row: it is running, paused
        time.sleep(3)
        assert fakes.results_requests("google") == [], "a paused engine got a request"
        running = report(scrapy_cmd, cfg)  # a crawl runs it: paused again, on every surface
        assert running.returncode == 2 and google_row(running.stdout)[3] == "paused", running.stdout
        resumed = report(scrapy_cmd, cfg, "resume", "google")
        assert resumed.returncode == 0, resumed.stdout + resumed.stderr
        deadline = time.time() + 30
        while len(fakes.results_requests("google")) < 2 and time.time() < deadline:
            time.sleep(0.2)
        assert [entry["query"]["q"] for entry in fakes.results_requests("google")][:2] == ["t00", "t01"]
    finally:
        crawl.send_signal(signal.SIGINT)
        _, stderr = crawl.communicate(timeout=60)
    assert "resumed by a person" in stderr, stderr[-3000:]
    assert rows(db, "select state, band from engine_status") == [("running", "unknown")]
    assert rows(db, "select event, resolved_at is not null from alerts order by id") == [("paused", 1), ("resumed", 0)]
    after = report(scrapy_cmd, cfg)
    assert after.returncode == 0, after.stdout
    assert google_row(after.stdout)[1:4] == ["-", "unknown", "stopped"]  # SIGINT closed the crawl


def test_a_degraded_engine_slows_to_twice_its_floor_and_says_why(scrapy_cmd, fakes, tmp_path):
    floor, min_requests = 0.4, 12
    cfg = config(tmp_path, fakes, floor=floor, health={"smoothing": 1, "min_requests": min_requests})
    # Every fourth page is blank (a soft block): 25 % soft blocks against a normal of none is a full soft_block
    # penalty, 100 - 25 = 75: degraded, from the first score on (the 12th response).
    fakes.script("google", ["results", "results", "results", "blank"] * 12)
    result = scrapy_cmd(
        "crawl",
        "google",
        "-a",
        f"topics={topics(27)}",
        "-a",
        "once=1",
        *recording(tmp_path),
        env={"TOPICSTREAMS_CONFIG": str(cfg)},
    )
    assert result.returncode == 0, result.stderr[-3000:]
    seen = fakes.results_requests("google")
    assert len(seen) == 35  # 27 topics, 8 of them met a blank page and were tried again
    # The floor holds between the moments the crawl saw its requests leave (its own clock, exactly); the engine's
    # arrivals differ from those by Chromium's varying delay, so they show the slowdown in their median.
    left = sent_gaps(tmp_path)
    assert len(left) == 34
    before, after = left[: min_requests - 1], left[min_requests - 1 :]
    assert min(before) >= floor - FLOAT_ROUNDING, before
    assert min(after) >= 2 * floor - FLOAT_ROUNDING, after
    arrived = gaps(seen)
    assert statistics.median(arrived[min_requests - 1 :]) >= 1.8 * statistics.median(arrived[: min_requests - 1])

    warnings = [line for line in result.stderr.splitlines() if "(degraded)" in line]
    assert len(warnings) == 1 and " WARNING: " in warnings[0], result.stderr[-3000:]
    assert "health 75 (degraded): soft_block; slowing down" in warnings[0] and "× 2" in warnings[0]
    assert stat_text(result.stderr, "health_score") == "75" and stat_text(result.stderr, "health_band") == "'degraded'"
    db = tmp_path / "news.db"
    assert rows(db, "select score, band, state, reasons, pace_multiplier from engine_status") == [
        (75, "degraded", "running", '["soft_block"]', 2.0)
    ]
    assert rows(db, "select event from alerts") == [("degraded",)]  # told once (to no target: none configured)
    assert rows(db, "select count(distinct topic_id) from topic_news") == [(27,)]  # every topic stored
    # The responses are kept as one window of history for later baselines, with the pages' parse outcome.
    # (one row per health.window of wall-clock time: the run may straddle two)
    assert rows(
        db,
        "select sum(requests), sum(ok), sum(soft_blocks), sum(items) >= 27 * 10, "
        "sum(valid_items) > 0 from health_windows",
    ) == [(35, 27, 8, 1, 1)]


def test_a_slowdown_in_force_when_the_crawl_starts_stretches_the_re_scrape_interval_too(
    scrapy_cmd, fakes, tmp_path, databases
):
    from topicstreams.storage import upgrade
    from topicstreams.storage.engine_status import save_status

    interval = 1.5
    cfg = config(tmp_path, fakes, floor=0.1, health={}, scrape_interval=interval)
    url = f"sqlite:///{tmp_path / 'news.db'}"
    upgrade(url)
    # A previous run left google degraded (score 70): the slowdown is in force until a score says ok.
    save_status(
        databases.of(url),
        "google",
        "node-a",
        state="running",
        score=70,
        band="degraded",
        reasons=["soft_block"],
        pace_multiplier=2.0,
    )
    result = scrapy_cmd(
        "crawl",
        "google",
        "-a",
        "topics=t00",
        "-s",
        "CLOSESPIDER_TIMEOUT=8",
        *recording(tmp_path),
        env={"TOPICSTREAMS_CONFIG": str(cfg)},
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert "slowed down when last seen" in result.stderr
    seen = fakes.results_requests("google")
    assert len(seen) >= 2, result.stderr[-3000:]
    # The topic comes round every 2 × 1.5 s (no re-scrape jitter here), not every 1.5 s.
    assert min(sent_gaps(tmp_path)) >= 2 * interval - FLOAT_ROUNDING, sent_gaps(tmp_path)


def test_in_crawlall_a_paused_engine_stops_alone(scrapy_cmd, fakes, tmp_path):
    cfg = config(
        tmp_path,
        fakes,
        floor=0.05,
        health={"smoothing": 1, "min_requests": 6},
        engines=("google", "bing"),
        once_attempts=100,
    )
    fakes.script("google", [{"status": 429, "body": "Too Many Requests"}, "captcha200"] * 20)  # bing stays normal
    result = scrapy_cmd("crawlall", "-a", f"topics={topics(8)}", "-a", "once=1", env={"TOPICSTREAMS_CONFIG": str(cfg)})
    assert result.returncode == 0, result.stderr[-3000:]
    assert len(fakes.results_requests("google")) == 6  # 3 hard blocks, 3 challenges: 40, paused
    db = tmp_path / "news.db"
    assert rows(db, "select engine, score, band, state from engine_status order by engine") == [
        ("bing", 100, "ok", "running"),
        ("google", 40, "critical", "paused"),
    ]
    assert rows(db, "select engine from alerts") == [("google",)]
    # bing went on at its own pace and stored every topic; google gave its topics up
    assert rows(db, "select count(distinct topic_id) from topic_news_engines where engine = 'bing'") == [(8,)]
    assert "google is paused by its health" in result.stderr
    shown = report(scrapy_cmd, cfg)  # the once run closed: stopped (its pause kept for the next crawl) counts as 0
    assert shown.returncode == 0 and google_row(shown.stdout)[:4] == ["google", "40", "critical", "stopped"]
