"""The demo serving its database (``make demo``), one run for the whole module: the web app while it crawls and after;
``/api/health`` read while it runs (every engine scored, one turning ``degraded``: the engine the fakes make hostile
partway through); and ``/monitor`` in the tests' own Chromium: every engine the demo crawls has its row on the demo's
node, running, with a score band, reasons, latency and errors coloured, and its charts; the page refreshes itself.
The README's screenshot (``docs/monitor.png``) is this module's: run it with ``TOPICSTREAMS_DOCS_SCREENSHOT=1`` to take
it anew.

The demo's fixture asks for the session's browser, so that every test of the module runs among the browser tests (at
the end of its worker, tests/conftest.py), in the order written: the ones that read the crawl first, then its end."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import psutil
import pytest
from playwright.sync_api import Page, expect

from tests.support.fakes_http import fetch
from tests.support.project import REPO, ScrapyRunner
from tests.system.test_demo import (
    ENGINES,
    OutputLines,
    accepts_connections,
    descendants,
    feed,
    kill_tree,
    start,
    wait_for_items,
    wait_gone,
)
from topicstreams.commands.demo import HEALTH, HOSTILE_AFTER, available_engines, hostile_engine

pytestmark = pytest.mark.timeout(120)

SCREENSHOT = REPO / "docs" / "monitor.png"
SECONDS = 25
"""How long the demo crawls: the hostile engine's CAPTCHAs begin 8 s in and turn it degraded within seconds."""


class HealthWatch:
    """``GET /api/health`` every half second, on a thread, until stopped: what each engine's score, band and reasons
    were, in order (a row whose score or band did not change is not repeated)."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.seen: dict[str, list[tuple[int | None, str, tuple[str, ...]]]] = {}
        self.problems: list[str] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(0.5):
            try:
                status, _, body, _ = fetch(self.url + "api/health")
            except OSError:  # no answer within fetch's 10 s on a busy machine: the next look will tell
                continue
            if status != 200:
                self.problems.append(f"{status}: {body[:200]}")
                continue
            for node in json.loads(body)["nodes"]:
                for engine in node["engines"]:
                    now = (engine["score"], engine["band"], tuple(engine["reasons"]))
                    seen = self.seen.setdefault(engine["engine"], [])
                    if not seen or seen[-1] != now:
                        seen.append(now)

    def stop(self) -> dict[str, list[tuple[int | None, str, tuple[str, ...]]]]:
        self._stop.set()
        self._thread.join(timeout=15)
        return self.seen


@dataclass
class DemoRun:
    process: object
    out: OutputLines
    log: Path
    folder: Path
    url: str
    port: int
    health: HealthWatch
    started: list[psutil.Process] = field(default_factory=list)
    """Everything the demo started, once its browsers are up."""
    stored: re.Match | None = None

    def wait_stored(self) -> re.Match:
        """The summary's last line (the crawl has ended)."""
        if self.stored is None:
            self.stored = self.out.wait_for(r"^demo: (\d+) articles stored in (.+)$", timeout=SECONDS + 45)
        return self.stored


@pytest.fixture(scope="module")
def demo(tmp_path_factory, browser):
    folder = tmp_path_factory.mktemp("demo")
    log = folder / "demo.log"
    env = ScrapyRunner(folder).env
    process, out = start([sys.executable, "-m", "scrapy", "demo", "--seconds", str(SECONDS)], folder, env, log)
    try:
        url = out.wait_for(r"^demo: open (http://127\.0\.0\.1:(\d+)/) to read the feed$", timeout=40)
        run = DemoRun(process, out, log, folder, url[1], int(url[2]), HealthWatch(url[1]))
        try:
            yield run
        finally:
            run.health.stop()
    finally:
        kill_tree(process)


def test_the_demo_serves_its_database_while_it_crawls_and_says_what_it_sped_up(demo):
    assert demo.port != 8080
    assert demo.out.lines[0].startswith("demo: fake engines ")  # the URL comes before the crawl
    demo.out.wait_for(rf"^demo: crawling for {SECONDS} s into ", timeout=5)
    said = "\n".join(demo.out.lines)
    assert "demo: to show health within a minute, the demo runs faster than a real crawl would" in said
    assert (
        f"demo:   each engine judged on {HEALTH['min_requests']} requests or more in a {HEALTH['window']} s window "
        "(50 in 600 s)" in said
    )
    hostile = hostile_engine(available_engines())
    assert f"demo: {hostile} turns hostile {HOSTILE_AFTER:g} s into the crawl" in said
    assert f"watch it on {demo.url}monitor" in said

    status, data = feed(demo.url)  # while it crawls
    assert status == 200 and isinstance(data["items"], list), data
    time.sleep(4)  # the browsers are up: everything the demo started is under it now
    demo.started = descendants(demo.process.pid)
    assert any("serve" in p.cmdline() for p in demo.started), [p.cmdline() for p in demo.started]


def test_the_demo_monitor_shows_every_engine_scored_one_degraded_and_refreshes_itself(demo, page: Page, tmp_path):
    page.set_viewport_size({"width": 1440, "height": 900})
    engines = available_engines()
    hostile = hostile_engine(engines)
    deadline = time.monotonic() + SECONDS + 20
    while True:
        # Until every engine has a score and its charts (a health window stored, a cycle accounted: both a few
        # seconds long in the demo), and the hostile engine is degraded.
        page.goto(f"{demo.url}monitor")
        scored = page.locator("tr.engine-row td.score .band:not(.band-unknown)").count()
        drawn = page.locator(".engine-charts svg path.s-entries").count()
        scores_drawn = page.locator(".engine-charts svg path.s-score").count()
        degraded = page.locator(f'tr.engine-row[data-engine="{hostile}"] td.score .band-degraded').count()
        if (scored == drawn == scores_drawn == len(engines) and degraded) or time.monotonic() > deadline:
            break
        time.sleep(1)
    rows = page.locator("tr.engine-row")
    expect(rows).to_have_count(len(engines))
    for engine in engines:
        row = page.locator(f'tr.engine-row[data-engine="{engine}"]')
        expect(row).to_have_attribute("data-state", re.compile("running|cooling"))
        expect(row.locator("td.score .band")).to_have_class(re.compile(r"\bband-(ok|degraded)\b"))
        expect(row.locator("td.score .band")).to_have_text(re.compile(r"^\d+$"))
        expect(row.locator("td.latency")).to_have_class(re.compile(r"\blevel-(good|warning|critical)\b"))
        charts = page.locator(f'.engine-charts[data-engine="{engine}"]')
        expect(charts.locator("svg path.s-entries")).to_have_count(1)
        expect(charts.locator("svg path.s-score")).to_have_count(1)  # the last 24 hours (not yet the 12 months)
    hostile_row = page.locator(f'tr.engine-row[data-engine="{hostile}"]')
    expect(hostile_row.locator("td.score .band")).to_have_class(re.compile(r"\bband-degraded\b"))
    expect(hostile_row.locator("td.score .band-name")).to_have_text("degraded")
    expect(hostile_row.locator("td.reasons .reason").first).to_have_text("challenge")
    expect(hostile_row.locator("td.errors")).to_have_class(re.compile(r"\blevel-(warning|critical)\b"))
    expect(page.locator("li.route")).to_have_count(len(engines))  # the demo is one node
    shot = tmp_path / "monitor.png"
    page.screenshot(path=shot, full_page=True)  # with the hostile engine degraded, before a refresh
    assert shot.stat().st_size > 10_000
    if os.environ.get("TOPICSTREAMS_DOCS_SCREENSHOT"):
        shutil.copyfile(shot, SCREENSHOT)
    # The page refreshes itself: its live part is swapped in again within 15 s.
    expect(page.locator("#live")).to_have_attribute("data-refreshed", re.compile(r"^\d+$"), timeout=20_000)


def test_every_engine_of_the_demo_has_a_score_and_the_hostile_one_turns_degraded(demo):
    demo.wait_stored()  # the crawl has ended
    seen = demo.health.stop()
    assert not demo.health.problems, demo.health.problems
    engines = available_engines()
    assert set(seen) == set(engines), seen
    for engine in engines:
        assert any(score is not None for score, _, _ in seen[engine]), (engine, seen[engine])
    hostile = hostile_engine(engines)
    bands = [band for _, band, _ in seen[hostile]]
    assert "degraded" in bands, seen[hostile]
    assert "critical" not in bands, seen[hostile]  # a CAPTCHA alone costs at most 25 points: never paused
    degraded_reasons = {reason for _, band, reasons in seen[hostile] if band == "degraded" for reason in reasons}
    assert "challenge" in degraded_reasons, seen[hostile]
    for engine in set(engines) - {hostile}:
        assert {band for _, band, _ in seen[engine]} <= {"unknown", "ok"}, (engine, seen[engine])


def test_the_demo_serves_its_database_after_the_crawl_until_interrupted(demo):
    stored = demo.wait_stored()
    assert stored[2] == str(demo.folder / ".topicstreams" / "demo" / "demo.db")
    demo.out.wait_for(rf"^demo: still serving the feed at {re.escape(demo.url)}", timeout=5)
    items = wait_for_items(demo.url, timeout=5)
    assert items, "the feed is empty after the crawl"
    found = {e["engine"] for item in items for e in item["engines"]}
    assert found and found <= ENGINES, found
    assert demo.process.poll() is None, "the demo ended instead of serving on"

    demo.process.send_signal(signal.SIGINT)
    assert demo.process.wait(timeout=20) == 0, demo.log.read_text()[-3000:]
    assert not accepts_connections(demo.port)
    assert wait_gone(demo.started) == []
