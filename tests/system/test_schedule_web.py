"""What people see of the schedule (issue 36, CONTRACT "Freshness") through the real surfaces: ``/api/topics``' per
engine schedule on SQLite and PostgreSQL, ``/monitor``'s schedule panel (its figures, the fixed schedule's note, the
empty state, hostile topic names inert, the reason ``holes`` on the engine's row and in ``/api/health``,
``topicstreams_holes_total`` on ``/metrics``),
``scrapy topics list`` as a user runs it, and the panel in real Chromium at a laptop's and a phone's width
(screenshots into $TOPICSTREAMS_SHOTS)."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from fastapi.testclient import TestClient
from playwright.sync_api import Page, expect
from prometheus_client.parser import text_string_to_metric_families

from tests.support.feed_data import BASE_URL, fresh_database, serving
from tests.support.page_layout import LAPTOP, PHONE, broken_words, shots_folder, sideways
from topicstreams.storage import add_topics, utcnow
from topicstreams.storage.engine_status import save_status
from topicstreams.storage.schedule_hours import HourCounts, add_schedule_hours, hour_of
from topicstreams.storage.topic_rates import TopicRateRow, save_topic_rates
from topicstreams.web.app import WebSettings, create_app

HOSTILE = '<img src=x onerror=alert("topic")>'


def app_client(url: str, **settings) -> TestClient:
    return TestClient(create_app(WebSettings(url, node="n1", **settings)), base_url=BASE_URL)


def rate(topic: str, engine: str, per_hour: float | None, interval: float | None, due_in: float | None, holes: int = 0):
    due = None if due_in is None else utcnow() + timedelta(seconds=due_in)
    return TopicRateRow(topic, engine, per_hour, 0.0, 0.0, 3, 10, interval, due, utcnow(), holes=holes)


def fill(db) -> None:
    """Three topics (one hostile), rates on google and bing, an hour and a half of visits with holes, google's row
    holding three recent holes."""
    add_topics(db, ["climate", "quiet", HOSTILE, "energy"])
    save_topic_rates(
        db,
        [
            rate("climate", "google", 42.5, 120.0, 90, holes=4),
            rate("climate", "bing", None, 600.0, 400),
            rate(HOSTILE, "google", 18.0, 300.0, 200, holes=3),
            rate("energy", "google", 0.4, 3600.0, 3000),
            rate("energy", "bing", 2.0, 1800.0, 1500),
        ],
    )
    now = utcnow()
    counts: dict = {}
    for engine, hours_ago, visits, pages, holes, budget in (
        ("google", 0, 30, 44, 2, 600.0),
        ("google", 1, 40, 60, 3, 600.0),
        ("bing", 0, 12, 12, 0, 240.0),
    ):
        hour = HourCounts()
        for n in range(visits):
            hour.add(requests=1, burst_pages=0, hole=n < holes, budget_per_hour=budget)
        hour.requests, hour.burst_pages = pages, pages - visits
        counts[(engine, hour_of(now) - timedelta(hours=hours_ago))] = hour
    add_schedule_hours(db, "n1", counts)
    save_status(db, "google", "n1", state="running", score=91, band="ok", window_holes=3)
    save_status(db, "bing", "n1", state="running", score=95, band="ok", window_holes=1)


def test_api_topics_items_gain_each_engines_rate_interval_and_next_visit(feed_url, databases):
    db = databases.of(feed_url)
    fill(db)
    topics = {item["name"]: item for item in app_client(feed_url).get("/api/topics").json()}
    climate = topics["climate"]
    assert set(climate) == {"name", "active", "events", "last_event_at", "engines"}
    assert set(climate["engines"]) == {"google", "bing"}
    google = climate["engines"]["google"]
    assert (google["rate_per_hour"], google["interval_seconds"]) == (42.5, 120.0)
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", google["next_due_at"])
    assert climate["engines"]["bing"]["rate_per_hour"] is None  # not learnt yet
    assert topics["quiet"]["engines"] == {}  # no engine has a row: none listed
    databases.dispose()


def test_the_monitor_panel_and_the_reason_holes(tmp_path, databases):
    url = fresh_database(f"sqlite:///{tmp_path / 'panel.db'}")
    empty = app_client(url).get("/monitor").text
    assert "No visits yet" in empty and "No rate learnt yet" in empty
    fill(databases.of(url))
    html = app_client(url).get("/monitor").text
    panel = html[html.index('<section class="schedule"') :]
    panel = panel[: panel.index("</section>")]
    google = panel[panel.index('data-engine="google"') :]
    assert "of 600 requests" in google[: google.index("</tr>")]
    assert re.search(r'class="holes has-holes" data-label="Holes, last hour">\d+<', google)
    assert 'data-label="Holes, 24 h">5<' in google
    assert "12 of 240 requests (5 %)" in panel  # bing: this hour only
    busiest = re.findall(r'<th scope="row" class="topic-name">(.*?)</th>', panel)
    assert busiest == ["climate", "&lt;img src=x onerror=alert(&#34;topic&#34;)&gt;", "energy", "energy"]
    assert "<img" not in panel and "fixed" not in panel.split("</header>")[0].split("mode-badge")[1][:40]
    row = html[html.index('<tr class="engine-row') :]
    assert '<span class="reason">holes</span>' in row[: row.index("</tr>")]  # google: 3 holes in the window
    [node] = [node for node in app_client(url).get("/api/health").json()["nodes"] if node["node"] == "n1"]
    assert {e["engine"]: "holes" in e["reasons"] for e in node["engines"]} == {
        "google": True,
        "bing": False,
        "yahoo": False,
        "brave": False,
    }
    metrics = {f.name: f for f in text_string_to_metric_families(app_client(url).get("/metrics").text)}
    holes = metrics["topicstreams_holes"]
    assert holes.type == "counter" and {
        s.labels["engine"]: s.value for s in holes.samples if s.name.endswith("_total")
    } == {
        "google": 7.0,
        "bing": 0.0,
    }
    fixed = app_client(url, schedule="fixed").get("/monitor").text
    assert 'data-mode="fixed"' in fixed and "scraper.schedule: fixed" in fixed
    databases.dispose()


def test_topics_list_says_each_engines_schedule(scrapy_cmd, tmp_path, databases):
    scrapy_cmd("topics", "add", "climate", check=True)
    db = databases.of(f"sqlite:///{tmp_path / 'topicstreams.db'}")
    add_topics(db, ["quiet"])
    save_topic_rates(db, [rate("climate", "google", 12.0, 300.0, 600), rate("climate", "bing", None, 900.0, None)])
    databases.dispose()
    listed = scrapy_cmd("topics", "list", check=True).stdout.splitlines()
    assert [line.split()[:2] for line in listed] == [["climate", "active"], ["quiet", "active"]]
    assert re.search(r"  bing learning, every 15 min; google 12\.0/h every 5 min, due \d\d:\d\d UTC$", listed[0])
    assert listed[1].endswith("  learning")


@pytest.mark.timeout(120)
def test_the_schedule_panel_on_a_laptop_and_a_phone(page: Page, tmp_path, databases):
    shots = shots_folder(tmp_path)
    url = fresh_database(f"sqlite:///{tmp_path / 'shots.db'}")
    fill(databases.of(url))
    databases.dispose()
    dialogs: list[str] = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    with serving(url, node="n1") as app:
        for width in (LAPTOP, PHONE):
            page.set_viewport_size({"width": width, "height": 900})
            page.goto(f"{app.url}/monitor")
            panel = page.locator("section.schedule")
            expect(panel.locator("tr.schedule-row")).to_have_count(2)
            expect(panel.locator("th.topic-name").nth(1)).to_have_text(HOSTILE)
            assert sideways(page) == 0, width
            assert broken_words(page, "section.schedule") == []
            panel.scroll_into_view_if_needed()
            panel.screenshot(path=shots / f"monitor-schedule-{width}.png")
        page.goto("about:blank")
    assert dialogs == []
