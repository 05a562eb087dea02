"""Exit-IP saturation end to end: real spiders in real Chromium against the fake engines answering 429, in
`scrapy crawlall` and in two separate `scrapy crawl` processes on one node, and `scrapy health` reading the
verdict back from another process."""

from __future__ import annotations

import json
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

import pytest

from fake_engines import FakeEngines
from tests.support.crawl_checks import crawl_config, rows
from tests.support.fakes_http import reset_fakes_per_test, running_fakes
from tests.support.project import ScrapyRunner

pytestmark = pytest.mark.timeout(180)

SUSPECTED = "EXIT IP SATURATION SUSPECTED: robust engines cooling: bing, google"
MARKER = "EXIT IP SATURATION SUSPECTED"
COOLDOWN = 40
"""Seconds each 429 benches its engine: long enough for the engines' cooldowns to overlap for the whole test."""
TOO_MANY = {"status": 429, "body": "Too Many Requests"}
STARTUP = 60
"""Seconds a crawl may take to open Chromium and meet its first 429."""
SETTLE = 5.0
"""Seconds for the watches to judge (every 2 s) once the rows are written: two judgements and some."""

fakes = running_fakes("google", "bing", "brave")
_clean = reset_fakes_per_test()


def config(folder: Path, fakes: FakeEngines, engines: tuple[str, ...]) -> Path:
    return crawl_config(
        folder,
        fakes,
        floor=0.2,
        engines=engines,
        scraper={
            "scrape_interval": 2,
            "cooldown": {"initial": COOLDOWN, "factor": 1, "max": COOLDOWN},
            "pacing": {"default_min_interval": 0.2, "jitter_ratio": 0.0, "per_engine": {"brave": 0.2}},
        },
    )


def wait_until(condition: Callable[[], object], timeout: float, what: str, log: Callable[[], str] = lambda: ""):
    """Poll ``condition`` every 0.2 s until it is true; fail naming ``what`` (and the log's tail) at the deadline."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            pytest.fail(f"no {what} within {timeout} s\n{log()[-4000:]}")
        time.sleep(0.2)


class Crawl:
    """One `scrapy …` crawling process, its log kept in a file (read while it runs, no pipe to fill)."""

    def __init__(self, scrapy_cmd: ScrapyRunner, cfg: Path, name: str, *args: str) -> None:
        self.log_path = scrapy_cmd.folder / f"{name}.log"
        self.log_file = self.log_path.open("w")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "scrapy", *args],
            cwd=scrapy_cmd.folder,
            env={**scrapy_cmd.env, "TOPICSTREAMS_CONFIG": str(cfg)},
            stdin=subprocess.DEVNULL,
            stdout=self.log_file,
            stderr=subprocess.STDOUT,
            text=True,
        )

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def warnings(self) -> list[str]:
        """The log's saturation warnings."""
        return [line for line in self.log().splitlines() if MARKER in line]

    def stop(self) -> None:
        """SIGINT (Scrapy's graceful stop), a second one (forced) if it lingers, a kill at last."""
        try:
            for _ in range(2):
                if self.process.poll() is not None:
                    break
                self.process.send_signal(signal.SIGINT)
                try:
                    self.process.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    continue
            if self.process.poll() is None:
                self.process.kill()
                self.process.wait(timeout=10)
        finally:
            self.log_file.close()


@contextmanager
def crawls(scrapy_cmd: ScrapyRunner, cfg: Path, *commands: tuple[str, ...]) -> Iterator[list[Crawl]]:
    """Start one process per command (``("crawl", "google")``); every one is stopped on the way out."""
    with ExitStack() as stack:
        running = []
        for args in commands:
            crawl = Crawl(scrapy_cmd, cfg, "-".join(args), *args, "-a", "topics=t00,t01")
            stack.callback(crawl.stop)
            running.append(crawl)
        yield running


def cooling(db: Path) -> list[str]:
    """The engines whose status row says cooling (by the row, whatever the clock); none while the crawls are
    still making the database."""
    try:
        return (
            [
                engine
                for (engine,) in rows(
                    db, "select engine from engine_status where node = 'node-a' and state = 'cooling' order by engine"
                )
            ]
            if db.exists()
            else []
        )
    except sqlite3.OperationalError:  # no such table yet, or locked by a migration
        return []


def health(scrapy_cmd: ScrapyRunner, cfg: Path, *args: str) -> subprocess.CompletedProcess:
    result = scrapy_cmd("health", *args, env={"TOPICSTREAMS_CONFIG": str(cfg)})
    assert result.returncode == 0, result.stdout + result.stderr[-3000:]
    return result


def saturation_shown(scrapy_cmd: ScrapyRunner, cfg: Path) -> tuple[dict, str]:
    """What `scrapy health --json` says of the saturation, and the last line of the table."""
    as_json = json.loads(health(scrapy_cmd, cfg, "--json").stdout)
    assert as_json["node"] == "node-a"
    table = health(scrapy_cmd, cfg).stdout.strip().splitlines()
    return as_json["saturation"], table[-1]


def all_logs(running: list[Crawl]) -> Callable[[], str]:
    return lambda: "\n".join(f"--- {crawl.log_path.name}\n{crawl.log()[-2000:]}" for crawl in running)


def test_crawlall_warns_once_when_google_and_bing_cool_together_and_scrapy_health_shows_it(scrapy_cmd, fakes, tmp_path):
    cfg = config(tmp_path, fakes, ("google", "bing"))
    fakes.script("google", [TOO_MANY] * 5)
    fakes.script("bing", [TOO_MANY] * 5)
    db = tmp_path / "news.db"
    started = time.monotonic()
    with crawls(scrapy_cmd, cfg, ("crawlall",)) as (crawl,):
        wait_until(lambda: crawl.warnings(), STARTUP, "saturation warning", crawl.log)
        assert cooling(db) == ["bing", "google"]
        warned_after = time.monotonic() - started
        shown, last_line = saturation_shown(scrapy_cmd, cfg)
        assert shown == {"suspected": True, "cooling": ["bing", "google"]}
        assert last_line == f"saturation: {SUSPECTED}"
        time.sleep(SETTLE)  # more judgements, the same verdict: nothing more is said
        assert crawl.process.poll() is None, crawl.log()[-3000:]
    warnings = crawl.warnings()
    assert len(warnings) == 1, warnings  # once for the process, not once per engine
    assert " WARNING: " in warnings[0] and SUSPECTED in warnings[0] and "(node node-a)" in warnings[0]
    assert "[topicstreams.extensions.saturation_watch]" in warnings[0]
    # each engine met its 429 and was benched: one request each
    assert len(fakes.results_requests("google")) == 1 and len(fakes.results_requests("bing")) == 1
    print(f"warned {warned_after:.1f} s after the start")


def test_crawlall_with_google_and_the_canary_brave_cooling_does_not_warn(scrapy_cmd, fakes, tmp_path):
    cfg = config(tmp_path, fakes, ("google", "brave"))
    fakes.script("google", [TOO_MANY] * 5)
    fakes.script("brave", [TOO_MANY] * 5)
    db = tmp_path / "news.db"
    with crawls(scrapy_cmd, cfg, ("crawlall",)) as (crawl,):
        wait_until(lambda: cooling(db) == ["brave", "google"], STARTUP, "google and brave cooling", crawl.log)
        time.sleep(SETTLE)
        shown, last_line = saturation_shown(scrapy_cmd, cfg)
        assert shown == {"suspected": False, "cooling": ["google"]}
        assert last_line == "saturation: not suspected (robust engines cooling: google)"
        assert crawl.warnings() == []
        assert crawl.process.poll() is None, crawl.log()[-3000:]
    assert crawl.warnings() == [], crawl.warnings()
    assert len(fakes.results_requests("google")) == 1 and len(fakes.results_requests("brave")) == 1


def test_two_processes_on_one_node_judge_saturation_from_the_shared_rows(scrapy_cmd, fakes, tmp_path):
    cfg = config(tmp_path, fakes, ("google", "bing"))
    fakes.script("google", [TOO_MANY] * 5)
    fakes.script("bing", [TOO_MANY] * 5)
    db = tmp_path / "news.db"
    with crawls(scrapy_cmd, cfg, ("crawl", "google"), ("crawl", "bing")) as running:
        wait_until(lambda: any(crawl.warnings() for crawl in running), STARTUP, "saturation warning", all_logs(running))
        assert cooling(db) == ["bing", "google"]
        shown, last_line = saturation_shown(scrapy_cmd, cfg)
        assert shown == {"suspected": True, "cooling": ["bing", "google"]}
        assert last_line == f"saturation: {SUSPECTED}"
        time.sleep(SETTLE)
        for crawl in running:
            assert crawl.process.poll() is None, crawl.log()[-3000:]
    warned = [crawl.warnings() for crawl in running]
    assert any(warned), all_logs(running)()
    for warnings in warned:  # each process judges for itself, and says it once
        assert len(warnings) <= 1, warnings
        assert all(SUSPECTED in line and " WARNING: " in line for line in warnings), warnings


def test_two_processes_with_google_and_the_canary_brave_cooling_do_not_warn(scrapy_cmd, fakes, tmp_path):
    cfg = config(tmp_path, fakes, ("google", "brave"))
    fakes.script("google", [TOO_MANY] * 5)
    fakes.script("brave", [TOO_MANY] * 5)
    db = tmp_path / "news.db"
    with crawls(scrapy_cmd, cfg, ("crawl", "google"), ("crawl", "brave")) as running:
        wait_until(lambda: cooling(db) == ["brave", "google"], STARTUP, "google and brave cooling", all_logs(running))
        time.sleep(SETTLE)
        shown, _ = saturation_shown(scrapy_cmd, cfg)
        assert shown == {"suspected": False, "cooling": ["google"]}
        for crawl in running:
            assert crawl.process.poll() is None, crawl.log()[-3000:]
    for crawl in running:
        assert crawl.warnings() == [], crawl.warnings()
