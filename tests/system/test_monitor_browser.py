"""``/monitor`` in real Chromium (pytest-playwright, the project's Chromium), fed by real crawls of the fake engines
on two node ids: on node-a google is blocked with 429s (cooling), bing pauses (429s and CAPTCHAs in turn), yahoo is
fine; on node-b google is fine. The page shows each state, band and reason as classes and text, the route verdict
(google's trouble is node-a's route), and a person resumes bing: refused without a configured token (403) and with a
wrong one (401), bing still paused each time; with the right one it is resumed and the crawl takes topics again.
Hostile text from the database (reasons, canary queries, node names) shows verbatim and runs nothing."""

from __future__ import annotations

import re
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path
from urllib.parse import urlsplit

import pytest
import yaml
from playwright.sync_api import Page, expect
from sqlalchemy import delete

from tests.support.crawl_checks import FAST_COOLDOWN, crawl_config
from tests.support.fakes_http import reset_fakes_per_test, running_fakes
from tests.support.feed_data import fresh_database, serving
from tests.support.page_layout import LAPTOP, PHONE, broken_words, chart_text_px, shots_folder, sideways
from tests.support.project import ScrapyRunner, write_config
from topicstreams import ENGINES
from topicstreams.storage import upgrade, utcnow
from topicstreams.storage.engine_status import pause, save_status, save_window
from topicstreams.storage.models import engine_status_table
from topicstreams.storage.route_status import save_route_status

pytestmark = pytest.mark.timeout(300)

TOKEN = "monitor-admin-token-0123456789"

fakes = running_fakes("google", "bing", "yahoo")
_clean = reset_fakes_per_test()

NODE_A_TOPICS = ["a0", "a1", "a2", "a3"]
NODE_B_TOPICS = ["b0", "b1", "b2"]


class Watch:
    """What the page must not do: load from another host, log a console error (a CSP violation among them), open a
    dialog (an ``alert`` from injected markup)."""

    def __init__(self, page: Page) -> None:
        self.foreign: list[str] = []
        self.errors: list[str] = []
        self.dialogs: list[str] = []
        page.on(
            "request",
            lambda request: self.foreign.append(request.url) if urlsplit(request.url).hostname != "127.0.0.1" else None,
        )
        page.on("console", self._console)
        page.on("pageerror", lambda error: self.errors.append(str(error)))
        page.on("dialog", self._dialog)

    def _console(self, message) -> None:
        # The refusals answered on purpose (403, 401) log their status; anything else is a fault.
        if message.type == "error" and not re.search(r"status of 40[13]", message.text):
            self.errors.append(message.text)

    def _dialog(self, dialog) -> None:
        self.dialogs.append(dialog.message)
        dialog.dismiss()

    def check(self) -> None:
        assert not self.foreign, self.foreign
        assert not self.errors, self.errors
        assert not self.dialogs, self.dialogs


@pytest.fixture
def watch(page: Page) -> Iterator[Watch]:
    watched = Watch(page)
    yield watched
    page.goto("about:blank")
    watched.check()


def rows(db: Path, sql: str) -> list[tuple]:
    with sqlite3.connect(db) as conn:
        return conn.execute(sql).fetchall()


def wait_for(what: str, condition, timeout: float = 90.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.25)


@contextmanager
def crawling(folder: Path, config: Path, *args: str) -> Iterator[subprocess.Popen]:
    """``scrapy ARGS`` running in the background until the block ends (then stopped as Ctrl-C would)."""
    env = {**ScrapyRunner(folder).env, "TOPICSTREAMS_CONFIG": str(config)}
    log = (folder / f"{config.stem}.log").open("w")
    process = subprocess.Popen(
        [sys.executable, "-m", "scrapy", *args],
        cwd=folder,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
    )
    try:
        yield process
    finally:
        process.terminate()
        try:
            process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        log.close()


def node_b_config(folder: Path, node_a: Path) -> Path:
    """node-a's configuration as node-b's: the same database, google alone."""
    data = yaml.safe_load(node_a.read_text())
    data["node"]["id"] = "node-b"
    for name, engine in data["engines"].items():
        engine["enabled"] = name == "google"
    return write_config(folder, data, "node-b.yml")


def row(page: Page, engine: str, node: str):
    return page.locator(f'tr.engine-row[data-engine="{engine}"][data-node="{node}"]')


def resume_from_the_form(page: Page, engine: str, node: str, token: str) -> int:
    """Type ``token`` into the Resume form of the row and press Resume: the status the app answered."""
    form_row = row(page, engine, node)
    form_row.locator('input[name="token"]').fill(token)
    with page.expect_response(re.compile(rf"/api/engines/{engine}/resume")) as answer:
        form_row.get_by_role("button", name="Resume").click()
    return answer.value.status


def test_monitor_shows_two_nodes_real_crawls_and_a_person_resumes_the_paused_engine(fakes, page: Page, watch, tmp_path):
    node_a = crawl_config(
        tmp_path,
        fakes,
        floor=0.2,
        engines=("google", "bing", "yahoo"),
        health={"smoothing": 1, "min_requests": 6},
        scraper={"cooldown": FAST_COOLDOWN, "scrape_interval": 3},
        filename="node-a.yml",
    )
    node_b = node_b_config(tmp_path, node_a)
    db = tmp_path / "news.db"
    upgrade(f"sqlite:///{db}")
    # node-a's google topics meet 429s that ask for ten minutes' rest; node-b's get results (one fake, other topics).
    for topic in NODE_A_TOPICS:
        fakes.route("google", topic, {"status": 429, "body": "Too Many Requests", "headers": {"Retry-After": "600"}})
    # bing: 429s and CAPTCHAs in turn, 6 of them: 100 - 35 - 25 = 40 with min_requests 6, critical: paused.
    fakes.script("bing", [{"status": 429, "body": "Too Many Requests"}, "captcha"] * 3)

    with (
        crawling(
            tmp_path, node_a, "crawlall", "-a", "engines=google,bing,yahoo", "-a", f"topics={','.join(NODE_A_TOPICS)}"
        ),
        crawling(tmp_path, node_b, "crawl", "google", "-a", f"topics={','.join(NODE_B_TOPICS)}"),
    ):
        wait_for(
            "bing paused, google cooling on node-a, google running on node-b, yahoo's results",
            lambda: (
                set(rows(db, "select engine, node, state from engine_status"))
                >= {
                    ("bing", "node-a", "paused"),
                    ("google", "node-a", "cooling"),
                    ("google", "node-b", "running"),
                    ("yahoo", "node-a", "running"),
                }
                and rows(db, "select count(*) from topic_news_engines where engine = 'yahoo'")[0][0] > 0
            ),
        )
        url = f"sqlite:///{db}"

        with serving(url) as app:  # no web.admin_token
            page.goto(f"{app.url}/monitor")
            expect(row(page, "google", "node-a")).to_have_class(re.compile(r"\bstate-cooling\b"))
            expect(row(page, "google", "node-a").locator("td.state")).to_contain_text("until")
            expect(row(page, "bing", "node-a")).to_have_class(re.compile(r"\bstate-paused\b"))
            expect(row(page, "bing", "node-a").locator("td.score .band")).to_have_class(
                re.compile(r"\bband-critical\b")
            )
            expect(row(page, "bing", "node-a").locator("td.score")).to_contain_text("40")
            expect(row(page, "bing", "node-a").locator("td.reasons .reason")).to_have_text(["hard_block", "challenge"])
            expect(row(page, "bing", "node-a").locator("td.errors")).to_have_class(
                re.compile(r"\blevel-critical\b")
            )  # 6 of 6 requests failed
            expect(row(page, "bing", "node-a").locator("td.state")).to_contain_text("since")
            expect(row(page, "yahoo", "node-a")).to_have_class(re.compile(r"\bstate-running\b"))
            expect(row(page, "yahoo", "node-a").locator("td.errors")).to_have_class(re.compile(r"\blevel-good\b"))
            expect(row(page, "google", "node-b")).to_have_class(re.compile(r"\bstate-running\b"))
            expect(page.locator('section.node[data-node="node-a"] .saturation')).to_have_text(
                "Exit IP saturation: not suspected (robust engines cooling: google)"
            )
            google_route = page.locator('li.route[data-engine="google"]')
            expect(google_route).to_have_attribute("data-verdict", "route")
            expect(google_route).to_contain_text("in trouble on node-a; fine on node-b")
            expect(page.locator('li.route[data-engine="bing"]')).to_have_attribute("data-verdict", "one node")
            expect(page.locator('.engine-charts[data-engine="yahoo"] figure.chart')).to_have_count(5)

            # Resume with no token configured: 403, and bing stays paused.
            assert resume_from_the_form(page, "bing", "node-a", "anything-at-all-12345") == 403
            expect(page.locator("h1")).to_have_text("Resuming from the web is off")
            expect(page.locator(".message")).to_contain_text("web.admin_token")
            assert rows(db, "select state from engine_status where engine = 'bing'") == [("paused",)]

        with serving(url, admin_token=TOKEN) as app:
            page.goto(f"{app.url}/monitor")
            assert resume_from_the_form(page, "bing", "node-a", "a-wrong-token-0123456789") == 401
            expect(page.locator("h1")).to_have_text("Wrong token")
            assert rows(db, "select state from engine_status where engine = 'bing'") == [("paused",)]

            page.goto(f"{app.url}/monitor")
            before = len(fakes.results_requests("bing"))
            bing = row(page, "bing", "node-a")
            bing.locator('input[name="token"]').fill(TOKEN)
            bing.get_by_role("button", name="Resume").click()
            page.wait_for_url(re.compile(r"/monitor\?resumed=bing&node=node-a$"))
            expect(page.locator("p.notice")).to_contain_text("Resumed bing on node node-a")
            expect(row(page, "bing", "node-a")).to_have_class(re.compile(r"\bstate-running\b"))
            assert rows(db, "select state, band from engine_status where engine = 'bing'") == [("running", "unknown")]
            # The running crawl notices within seconds and takes bing's topics again (the script is spent: results).
            wait_for("bing's crawl to take topics again", lambda: len(fakes.results_requests("bing")) > before, 60)


def test_hostile_text_on_the_monitor_shows_verbatim_and_runs_nothing(page: Page, watch, tmp_path, databases):
    url = fresh_database(f"sqlite:///{tmp_path / 'hostile.db'}")
    db = databases.of(url)
    node = '<img src=x onerror=alert("node")>'
    reason = "<script>alert('reason')</script>"
    topic = '<b onmouseover=alert("topic")>climate</b>'
    problem = "</td><svg onload=alert('canary')>"
    save_status(
        db,
        "google",
        node,
        state="cooling",
        cooling_until=utcnow() + timedelta(minutes=5),
        score=55,
        band="degraded",
        reasons=[reason, "hard_block"],
        parser_reasons=["missing <i>source</i>"],
        last_canary={"query": topic, "at": utcnow().isoformat(), "matched": False, "results": 0, "problem": problem},
    )
    databases.dispose()
    with serving(url) as app:
        page.goto(f"{app.url}/monitor")
        google = page.locator('tr.engine-row[data-engine="google"]')
        expect(google).to_have_count(1)
        expect(google).to_have_attribute("data-node", node)
        expect(page.locator(".node-name")).to_have_text(node)
        expect(google.locator("td.reasons .reason").first).to_have_text(reason)
        expect(google.locator("td.parser .reason")).to_have_text("missing <i>source</i>")
        expect(google.locator("td.canary")).to_contain_text(f"“{topic}”: {problem}")
        expect(page.locator('li.route[data-engine="google"]')).to_contain_text(f"{node} only")
        assert page.locator("img, script:not([src]), svg[onload], b, i").count() == 0
        page.locator(".node-name").hover()


def fill_health_history(db, engines: tuple[str, ...]) -> None:
    """Three hours of windows per engine: the charts have lines, and labels on both axes."""
    now = utcnow()
    for engine in engines:
        for hours_ago in range(3):
            end = now - timedelta(hours=hours_ago, minutes=1)
            save_window(
                db,
                engine,
                "node-a",
                end - timedelta(minutes=1),
                end,
                {"requests": 40, "score": 90, "p95_latency_ms": 600},
            )


def offline(db) -> str:
    since = (utcnow() - timedelta(minutes=3)).replace(second=0, microsecond=0)
    for engine in ENGINES:
        save_status(
            db,
            engine,
            "node-a",
            state="cooling",
            cooling_until=utcnow() + timedelta(minutes=4),
            band="unknown",
            connection_failures_since=since,
            window_counts={"requests": 12, "errors": 12},
        )
    return f"Network down on node-a since {since:%H:%M} UTC — no engine reachable"


def healthy(db) -> str:
    for engine in ENGINES:
        save_status(db, engine, "node-a", state="running", score=95, band="ok", p50_ms=300.0, p95_ms=480.0)
    return "All 4 engines healthy on 1 node"


def paused(db) -> str:
    pause(db, "google", "node-a", score=30, band="critical", reasons=["challenge"], window_counts={"requests": 9})
    for engine in ENGINES[1:]:
        save_status(db, engine, "node-a", state="running", score=92, band="ok", parser_score=98)
    return "google paused on node-a: challenge"


def test_the_monitor_at_a_glance_on_a_laptop_and_a_phone(page: Page, watch, tmp_path, databases):
    """Offline, healthy, and with a paused engine, at 1280 and 390 px: the verdict first, the network's banner while
    it is down, no sideways scrolling, no word broken inside, chart text at least 11 px on the screen. Screenshots
    into $TOPICSTREAMS_SHOTS (else the test's folder), for a person to look at."""
    shots = shots_folder(tmp_path)
    url = fresh_database(f"sqlite:///{tmp_path / 'glance.db'}")
    db = databases.of(url)
    fill_health_history(db, ENGINES)
    with serving(url) as app:
        for name, fill in (("offline", offline), ("healthy", healthy), ("paused", paused)):
            with db.begin() as conn:
                conn.execute(delete(engine_status_table))
            verdict = fill(db)
            for width in (LAPTOP, PHONE):
                page.set_viewport_size({"width": width, "height": 900})
                page.goto(f"{app.url}/monitor")
                expect(page.locator("#verdict")).to_have_text(verdict)
                expect(page.locator(".network-down")).to_have_count(1 if name == "offline" else 0)
                expect(page.locator(".saturation")).to_have_count(0 if name == "offline" else 1)
                assert sideways(page) == 0, (name, width)
                assert broken_words(page, ".verdict-box, .node-head, table.engine-table tbody, .route-list") == []
                sizes = chart_text_px(page)
                assert sizes and min(sizes) >= 11, (name, width, min(sizes))
                page.screenshot(path=shots / f"monitor-{name}-{width}.png", full_page=True)
        page.goto("about:blank")


def test_the_route_matrix_on_a_laptop_and_a_phone(page: Page, watch, tmp_path, databases):
    """A node with three routes — one down (its row's proxy written with credentials, its reason hostile), one with
    google cooling — at 1280 and 390 px: the verdict says the route down first, each cell its pair's state, the
    exit without its credentials, hostile text inert, no sideways scrolling. Screenshots as above."""
    shots = shots_folder(tmp_path)
    url = fresh_database(f"sqlite:///{tmp_path / 'routes.db'}")
    db = databases.of(url)
    secret = "s3cret-pass-0123"
    leaky = f"http://alice:{secret}@proxy.example:3128"
    soon = utcnow() + timedelta(minutes=5)
    for engine in ("google", "bing", "yahoo"):
        save_status(db, engine, "node-a", state="running", score=93, band="ok", p50_ms=320.0, p95_ms=610.0)
    save_route_status(
        db,
        "node-a",
        "eu-1",
        "google",
        proxy="http://eu.example:8080",
        state="cooling",
        cooling_until=soon,
        score=58,
        band="degraded",
        reason="challenge",
    )
    save_route_status(db, "node-a", "eu-1", "bing", proxy="http://eu.example:8080", score=91, band="ok")
    for engine in ("google", "bing", "yahoo"):
        save_route_status(db, "node-a", "us-1", engine, score=97, band="ok")
    for engine in ("google", "bing"):
        save_route_status(
            db,
            "node-a",
            "cn-1",
            engine,
            proxy=leaky,
            state="down",
            cooling_until=soon,
            band="unknown",
            reason=f"407 from {leaky} <img src=x onerror=alert(1)>",
        )
    databases.dispose()
    with serving(url) as app:
        for width in (LAPTOP, PHONE):
            page.set_viewport_size({"width": width, "height": 900})
            page.goto(f"{app.url}/monitor")
            expect(page.locator("#verdict")).to_have_text(
                "route cn-1 down on node-a — its engines go on through 2 other routes"
            )
            matrix = page.locator('table.route-table[data-node="node-a"]')
            expect(matrix.locator("tr.route-row")).to_have_count(3)
            down = matrix.locator('tr.route-row[data-route="cn-1"]')
            expect(down).to_have_attribute("data-state", "down")
            expect(down.locator("th .proxy")).to_have_text("http://proxy.example:3128")
            expect(down.locator('td[data-engine="google"] .reason')).to_have_text(
                "407 from http://proxy.example:3128 <img src=x onerror=alert(1)>"
            )
            cooling = matrix.locator('tr.route-row[data-route="eu-1"] td[data-engine="google"]')
            expect(cooling).to_have_attribute("data-state", "cooling")
            expect(cooling).to_contain_text("until")
            expect(cooling.locator(".band")).to_have_class(re.compile(r"\bband-degraded\b"))
            expect(matrix.locator('tr.route-row[data-route="eu-1"] td[data-engine="yahoo"]')).to_have_attribute(
                "data-state", "none"
            )
            assert secret not in page.content() and "alice" not in page.content()
            assert page.locator("img").count() == 0
            assert sideways(page) == 0, width
            assert broken_words(page, "table.route-table th, table.route-table .state-name") == []
            page.screenshot(path=shots / f"monitor-routes-{width}.png", full_page=True)
        page.goto("about:blank")
