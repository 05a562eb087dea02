"""The monitor's server side on SQLite and PostgreSQL: ``/api/health`` (the report of every node plus the route
verdicts), resume by a person holding ``web.admin_token`` (every answer of the issue's list, the pause kept on each
refusal, repeated failures slowed down, the token never in a log line or a URL), and ``/monitor`` itself: service
level classes, stale rows, saturation, the cycle timeline, coverage."""

from __future__ import annotations

import logging
import re
import time
from datetime import timedelta

import pytest
from fastapi.testclient import TestClient

from tests.support.feed_data import BASE_URL
from topicstreams.config.packaged import load_defaults
from topicstreams.config.sections import ScraperSection, build_section
from topicstreams.health.saturation import saturation_policy
from topicstreams.reports.health_report import build_report
from topicstreams.storage import utcnow
from topicstreams.storage.engine_status import add_alert, mark_stopped, pause, read_alerts, read_status, save_status
from topicstreams.storage.scraper_cycles import save_cycle
from topicstreams.web.app import ServiceLevels, WebSettings, create_app
from topicstreams.web.charts import LEFT, RIGHT, WIDTH

TOKEN = "s3cret-admin-token-0123456789"


@pytest.fixture
def url(feed_url, databases):
    yield feed_url
    databases.dispose()


def app_client(url: str, **settings) -> TestClient:
    return TestClient(create_app(WebSettings(url, node="web-host", **settings)), base_url=BASE_URL)


def three_nodes(databases, url: str) -> None:
    """google in trouble on n1 only (route); bing in trouble on both (site); yahoo fine on both; brave on n1 only;
    a stale row on a gone node."""
    db = databases.of(url)
    soon = utcnow() + timedelta(minutes=5)
    save_status(
        db,
        "google",
        "n1",
        state="cooling",
        cooling_until=soon,
        score=70,
        band="degraded",
        reasons=["hard_block"],
        p95_ms=2400.0,
        window_counts={"requests": 100, "hard_blocks": 8},
    )
    save_status(db, "google", "n2", state="running", score=96, band="ok", p95_ms=450.0, window_counts={"requests": 100})
    pause(db, "bing", "n1", score=30, band="critical", reasons=["challenge"])
    save_status(db, "bing", "n2", state="cooling", cooling_until=soon, score=81, band="ok")
    save_status(db, "yahoo", "n1", state="running", score=99, band="ok")
    save_status(db, "yahoo", "n2", state="running", score=97, band="ok")
    save_status(db, "brave", "n1", state="running", score=90, band="ok")
    save_status(
        db,
        "google",
        "gone",
        state="cooling",
        cooling_until=soon,
        score=20,
        band="critical",
        updated_at=utcnow() - timedelta(minutes=10),
    )


def test_api_health_is_the_every_node_report_plus_the_route_verdicts(url, databases):
    three_nodes(databases, url)
    answer = app_client(url).get("/api/health")
    assert answer.status_code == 200
    body = answer.json()
    defaults = load_defaults()
    expected = build_report(
        databases.of(url),
        node="web-host",
        enabled=["google", "bing", "yahoo", "brave"],
        policy=saturation_policy(
            build_section(ScraperSection, defaults["scraper"], "scraper"), ["google", "bing", "yahoo", "brave"]
        ),
        all_nodes=True,
    ).as_json()
    for node in body["nodes"] + expected["nodes"]:
        for engine in node["engines"]:
            engine.pop("cooling_until")  # the state is read at two moments a few ms apart
    assert body["nodes"] == expected["nodes"]
    assert [node["node"] for node in body["nodes"]] == ["gone", "n1", "n2", "web-host"]
    assert body["routes"] == [
        {"engine": "google", "verdict": "route", "nodes": ["n1"]},  # the stale row on "gone" does not count
        {"engine": "bing", "verdict": "site", "nodes": ["n1", "n2"]},
        {"engine": "yahoo", "verdict": "ok", "nodes": []},
        {"engine": "brave", "verdict": "one node", "nodes": []},
    ]


def test_resume_answers_each_case_and_keeps_the_pause_on_every_refusal(url, caplog, databases):
    db = databases.of(url)
    pause(db, "bing", "n1", score=30, band="critical", reasons=["challenge"])
    add_alert(db, "bing", "n1", score=30, band="critical", reasons=["challenge"], message="paused")
    save_status(db, "google", "n1", state="running", score=95, band="ok")
    path = "/api/engines/bing/resume?node=n1"

    off = app_client(url).post(path, headers={"Authorization": f"Bearer {TOKEN}"})
    assert off.status_code == 403
    assert "web.admin_token" in off.json()["detail"] and "scrapy health resume bing" in off.json()["detail"]

    client = app_client(url, admin_token=TOKEN)
    with caplog.at_level(logging.INFO, logger="topicstreams.web.engine_resume"):
        assert client.post(path).status_code == 401  # no token
        wrong = client.post(path, headers={"Authorization": "Bearer not-the-token-at-all"})
        assert wrong.status_code == 401 and wrong.headers["www-authenticate"].startswith("Bearer")
        in_url = client.post(f"{path}&token={TOKEN}")
        assert in_url.status_code == 400 and "never in the URL" in in_url.json()["detail"]
    assert read_status(db, "bing", "n1").state == "paused"
    refusals = [record.getMessage() for record in caplog.records if "Refused" in record.getMessage()]
    assert len(refusals) == 2 and "no token" in refusals[0] and "a wrong token" in refusals[1]
    assert not any(TOKEN in record.getMessage() or "not-the-token" in record.getMessage() for record in caplog.records)

    bearer = {"Authorization": f"Bearer {TOKEN}"}
    assert client.post("/api/engines/bing/resume", headers=bearer).status_code == 400  # no node
    assert client.post("/api/engines/duckduckgo/resume?node=n1", headers=bearer).status_code == 404
    assert client.post("/api/engines/bing/resume?node=elsewhere", headers=bearer).status_code == 404
    assert client.post("/api/engines/google/resume?node=n1", headers=bearer).status_code == 409
    assert read_status(db, "bing", "n1").state == "paused"

    done = client.post(path, headers=bearer)
    assert done.status_code == 200
    assert done.json() == {"engine": "bing", "node": "n1", "state": "running"}
    status = read_status(db, "bing", "n1")
    assert (status.state, status.score, status.band) == ("running", None, "unknown")
    assert [alert["resolved_at"] is not None for alert in read_alerts(db, "bing", "n1")] == [True]
    assert client.post(path, headers=bearer).status_code == 409  # already resumed


def test_repeated_wrong_tokens_are_answered_more_and_more_slowly(url, databases):
    pause(databases.of(url), "bing", "n1", score=30, band="critical", reasons=[])
    client = app_client(url, admin_token=TOKEN)
    waits = []
    for _ in range(4):
        started = time.monotonic()
        assert (
            client.post(
                "/api/engines/bing/resume?node=n1", headers={"Authorization": "Bearer guess-guess-guess-guess"}
            ).status_code
            == 401
        )
        waits.append(time.monotonic() - started)
    # 0, 0.25, 0.5, 1 s: each failure in a row waits twice the one before.
    assert waits[1] >= 0.25 and waits[2] >= 0.5 and waits[3] >= 1.0
    assert waits[3] > waits[2] > waits[1]
    assert (
        client.post("/api/engines/bing/resume?node=n1", headers={"Authorization": f"Bearer {TOKEN}"}).status_code == 200
    )  # the right one at once


def test_the_monitor_form_posts_the_token_and_lands_back_on_the_monitor(url, databases):
    db = databases.of(url)
    pause(db, "yahoo", "n2", score=10, band="critical", reasons=["hard_block"])
    client = app_client(url, admin_token=TOKEN)
    page = client.get("/monitor")
    assert 'action="/api/engines/yahoo/resume?node=n2"' in page.text
    assert 'name="token"' in page.text and "web.admin_token</code> is not set" not in page.text

    wrong = client.post(
        "/api/engines/yahoo/resume?node=n2", data={"token": "nope-nope-nope-nope"}, headers={"Accept": "text/html"}
    )
    assert wrong.status_code == 401 and wrong.headers["content-type"].startswith("text/html")
    assert "Wrong token" in wrong.text
    assert read_status(db, "yahoo", "n2").state == "paused"

    done = client.post("/api/engines/yahoo/resume?node=n2", data={"token": TOKEN}, follow_redirects=False)
    assert done.status_code == 303 and done.headers["location"] == "/monitor?resumed=yahoo&node=n2"
    assert read_status(db, "yahoo", "n2").state == "running"
    landed = client.get(done.headers["location"])
    assert "Resumed <strong>yahoo</strong> on node <strong>n2</strong>" in landed.text


def test_without_an_admin_token_the_form_says_resuming_is_off(url, databases):
    pause(databases.of(url), "yahoo", "n2", score=10, band="critical", reasons=[])
    client = app_client(url)
    assert "<code>web.admin_token</code> is not set" in client.get("/monitor").text
    refused = client.post("/api/engines/yahoo/resume?node=n2", data={"token": "whatever-whatever-1"})
    assert refused.status_code == 403 and "web.admin_token" in refused.text


def row_classes(html: str, engine: str, node: str) -> dict[str, str]:
    """The classes of each cell of one row of the monitor's tables."""
    from html.parser import HTMLParser

    class Cells(HTMLParser):
        def __init__(self):
            super().__init__()
            self.inside, self.cells = False, {}

        def handle_starttag(self, tag, attrs):
            attrs = dict(attrs)
            if tag == "tr":
                self.inside = attrs.get("data-engine") == engine and attrs.get("data-node") == node
                if self.inside:
                    self.cells["row"] = attrs.get("class", "")
            elif self.inside and tag == "td":
                classes = attrs.get("class", "").split()
                self.cells[classes[0]] = " ".join(classes[1:])

    parser = Cells()
    parser.feed(html)
    return parser.cells


@pytest.mark.parametrize(("p95", "level"), [(499, "good"), (500, "warning"), (2000, "warning"), (2001, "critical")])
def test_latency_is_coloured_by_the_service_levels(url, p95, level, databases):
    save_status(databases.of(url), "google", "n1", state="running", score=90, band="ok", p95_ms=float(p95))
    cells = row_classes(app_client(url).get("/monitor").text, "google", "n1")
    assert cells["latency"] == f"level-{level}"


def test_the_error_share_is_coloured_by_the_configured_service_levels(url, databases):
    db = databases.of(url)
    save_status(db, "google", "n1", state="running", window_counts={"requests": 1000, "errors": 4})  # 0.4 %
    save_status(
        db, "bing", "n1", state="running", window_counts={"requests": 100, "soft_blocks": 2, "challenges": 1}
    )  # 3 %
    save_status(db, "yahoo", "n1", state="running", window_counts={"requests": 100, "hard_blocks": 6})  # 6 %
    save_status(db, "brave", "n1", state="running", window_counts=None)
    html = app_client(url).get("/monitor").text
    assert [row_classes(html, engine, "n1")["errors"] for engine in ("google", "bing", "yahoo", "brave")] == [
        "level-good",
        "level-warning",
        "level-critical",
        "level-unknown",
    ]
    # Stricter levels of one's own: 3 % is now critical, 0.4 % a warning.
    strict = app_client(url, sla=ServiceLevels(errors_good=0.001, errors_critical=0.02)).get("/monitor").text
    assert [row_classes(strict, engine, "n1")["errors"] for engine in ("google", "bing")] == [
        "level-warning",
        "level-critical",
    ]


def test_stale_rows_saturation_and_the_cycle_timeline_show(url, databases):
    three_nodes(databases, url)
    db = databases.of(url)
    now = utcnow()
    save_status(db, "bing", "n2", state="cooling", cooling_until=now + timedelta(minutes=5))
    save_status(db, "google", "n2", state="cooling", cooling_until=now + timedelta(minutes=5))
    for hours_ago in range(3):  # the current hour (not over yet) and two before it
        save_cycle(
            db,
            engine="yahoo",
            node="n1",
            window_start=now - timedelta(hours=hours_ago, minutes=1),
            window_end=now - timedelta(hours=hours_ago, seconds=1),
            topics_count=7,
            entries=70,
            new_events=5,
        )
    html = app_client(url).get("/monitor").text
    assert "stale" in row_classes(html, "google", "gone")["row"].split()
    assert "stale" not in row_classes(html, "google", "n1")["row"].split()
    # Said once, not doubled ("Exit IP saturation: EXIT IP SATURATION SUSPECTED" read twice the same words).
    assert "Exit IP saturation suspected: bing, google cooling at once — add a node with its own exit IP" in html
    assert "SATURATION SUSPECTED" not in html
    assert 'class="saturation suspected"' in html
    timeline = html[html.index('class="engine-charts" data-engine="yahoo"') :]
    assert 'aria-label="Cycles per hour, last 24 h: topics 7; entries 70; new events 5"' in timeline
    entries = re.search(r'<path class="series s-entries" d="([^"]+)"', timeline)[1].split(" ")
    # Three hours, one point each, at their middle; the current one, not over yet, at most at the chart's right end
    # (now): a point past it would not be drawn.
    assert [part[0] for part in entries if part[0] in "ML"] == ["M", "L", "L"]
    hour = now.replace(minute=0, second=0, microsecond=0)
    start = (hour - timedelta(hours=23)).timestamp()
    last = min(hour.timestamp() + 1800, now.timestamp())
    assert float(entries[-2][1:]) == pytest.approx(
        LEFT + (WIDTH - RIGHT - LEFT) * (last - start) / (now.timestamp() - start), abs=1.0
    )


def test_coverage_shows_window_against_baseline_and_the_reason_when_low(url, databases):
    db = databases.of(url)
    save_status(
        db,
        "google",
        "n1",
        state="running",
        score=97,
        band="ok",
        reasons=[],
        parser_score=100,
        coverage={"window": 0.31, "baseline": 0.78, "drop": 0.47, "low": True},
    )
    save_status(
        db,
        "bing",
        "n1",
        state="running",
        score=95,
        band="ok",
        coverage={"window": 0.8, "baseline": 0.79, "drop": -0.01, "low": False},
    )
    save_status(
        db,
        "yahoo",
        "n1",
        state="running",
        score=95,
        band="ok",  # not what the crawl writes: shown as unknown
        coverage={"window": "<script>alert(1)</script>", "baseline": None, "drop": None, "low": "yes"},
    )
    client = app_client(url)
    html = client.get("/monitor").text
    assert [row_classes(html, engine, "n1")["coverage"] for engine in ("google", "bing", "yahoo")] == [
        "level-critical",
        "level-good",
        "level-unknown",
    ]
    google = html[html.index('data-engine="google" data-node="n1"') :]
    google = google[: google.index("</tr>")]
    assert (
        '<span class="coverage-window">31 %</span> <small class="coverage-baseline">vs 78 %</small> '
        '<span class="reason">coverage</span>'
    ) in google
    assert 'title="finds 31 % of what the other engines find (78 % normally, -47 points)"' in google
    assert '<td class="reasons"><span class="reason">coverage</span></td>' in google  # a reason; the band stays ok
    assert '<span class="band band-ok">97</span>' in google
    yahoo = html[html.index('data-engine="yahoo" data-node="n1"') :]
    yahoo = yahoo[: yahoo.index("</tr>")]
    assert (
        '<td class="coverage level-unknown" title="not enough articles found by the other engines in the window '
        'to judge"><span class="muted">-</span></td>'
        in yahoo
        and "<script>alert" not in html
    )
    assert 'class="reason">coverage' not in yahoo
    engines = {
        (node["node"], engine["engine"]): engine
        for node in client.get("/api/health").json()["nodes"]
        for engine in node["engines"]
    }
    assert engines["n1", "google"]["coverage"] == {"window": 0.31, "baseline": 0.78, "drop": 0.47}
    assert engines["n1", "google"]["reasons"] == ["coverage"] and engines["n1", "google"]["band"] == "ok"
    assert engines["n1", "yahoo"]["coverage"] == {"window": None, "baseline": None, "drop": None}
    assert engines["web-host", "brave"]["coverage"] == {"window": None, "baseline": None, "drop": None}  # no row


def verdict_of(html: str) -> str:
    """The text of the monitor's one-line verdict."""
    from parsel import Selector

    return " ".join("".join(Selector(text=html).css("#verdict ::text").getall()).split())


def test_the_verdict_line_says_the_network_first_and_no_saturation_while_it_is_down(url, databases):
    db = databases.of(url)
    now = utcnow()
    since = (now - timedelta(minutes=3)).replace(second=0, microsecond=0)
    for engine in ("google", "bing", "yahoo", "brave"):  # every engine cooling after failing to connect
        save_status(
            db,
            engine,
            "n1",
            state="cooling",
            cooling_until=now + timedelta(minutes=5),
            connection_failures_since=since,
            updated_at=now - timedelta(seconds=2),
        )
    client = app_client(url)
    html = client.get("/monitor").text
    clock = since.strftime("%H:%M UTC")
    assert verdict_of(html) == f"Network down on n1 since {clock} — no engine reachable"
    assert 'class="verdict-box level-down"' in html
    banner = html[html.index('class="network-down"') :]
    assert 'data-node="n1"' in banner[:60] and "fails to connect or to resolve its host name" in banner
    node = html[html.index('<section class="node"') :]
    assert "Network down since " + clock + ": no engine reachable" in node
    assert 'class="saturation' not in html and "saturation suspected" not in html.lower()
    body = client.get("/api/health").json()
    n1 = next(each for each in body["nodes"] if each["node"] == "n1")
    assert n1["network"] == {"down": True, "since": since.strftime("%Y-%m-%dT%H:%M:%SZ")}
    assert n1["saturation"]["suspected"] is False
    assert next(each for each in body["nodes"] if each["node"] == "web-host")["network"] == {
        "down": False,
        "since": None,
    }

    # One engine answers again: the network is not down; the engines' own cooling is the verdict.
    save_status(db, "bing", "n1", state="running", connection_failures_since=None, score=90, band="ok")
    html = client.get("/monitor").text
    assert "network-down" not in html and "Network down" not in verdict_of(html)
    assert client.get("/api/health").json()["nodes"][0]["network"] == {"down": False, "since": None}


def test_stale_and_stopped_engines_are_never_shown_running_and_the_verdict_says_so(url, databases):
    db = databases.of(url)
    now = utcnow()
    save_status(db, "google", "n1", state="running", score=95, band="ok", updated_at=now - timedelta(minutes=5))
    save_status(db, "bing", "n1", state="cooling", score=90, band="ok", updated_at=now - timedelta(minutes=9))
    mark_stopped(db, "bing", "n1", now - timedelta(minutes=8))
    pause(db, "yahoo", "n1", score=30, band="critical", reasons=["challenge"])
    client = app_client(url)

    html = client.get("/monitor").text
    assert verdict_of(html) == "yahoo paused on n1: challenge"  # a person must act: that first
    assert 'class="verdict-box level-critical"' in html
    google, bing = row_classes(html, "google", "n1")["row"].split(), row_classes(html, "bing", "n1")["row"].split()
    assert "state-stale" in google and "gone" in google and "state-running" not in google
    assert "state-stopped" in bing and "gone" in bing and "state-cooling" not in bing
    assert 'data-state="stale"' in html and 'data-state="stopped"' in html
    states = {each["engine"]: each["state"] for each in client.get("/api/health").json()["nodes"][0]["engines"]}
    assert states == {"google": "stale", "bing": "stopped", "yahoo": "paused"}

    mark_stopped(db, "yahoo", "n1")
    html = client.get("/monitor").text
    assert (
        verdict_of(html) == f"google stale on n1: no word from its crawl since {(now - timedelta(minutes=5)):%H:%M} UTC"
    )
    assert 'class="verdict-box level-warning"' in html
    mark_stopped(db, "google", "n1", now - timedelta(minutes=1))
    html = client.get("/monitor").text
    assert verdict_of(html).startswith("No crawl running: the last one stopped at ")
    assert 'class="verdict-box level-idle"' in html and "no running crawl" in html
    assert "state-running" not in html and "state-paused" not in html


def test_healthy_engines_get_the_healthy_verdict(url, databases):
    db = databases.of(url)
    for engine in ("google", "bing", "yahoo", "brave"):
        save_status(db, engine, "n1", state="running", score=95, band="ok")
    html = app_client(url).get("/monitor").text
    assert verdict_of(html) == "All 4 engines healthy on 1 node"
    assert 'class="verdict-box level-ok"' in html
