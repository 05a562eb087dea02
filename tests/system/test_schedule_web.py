"""What people see of the schedule (issue 36, CONTRACT "Freshness") through the real surfaces: ``/api/topics``' per
engine schedule on SQLite and PostgreSQL, ``/monitor``'s schedule panel (its figures, the fixed schedule's note, the
empty state, hostile topic names inert, the reason ``holes`` on the engine's row and in ``/api/health``,
``topicstreams_holes_total`` on ``/metrics``),
and ``scrapy topics list`` as a user runs it (the panel in Chromium: test_schedule_browser.py)."""

from __future__ import annotations

import re

from fastapi.testclient import TestClient
from prometheus_client.parser import text_string_to_metric_families

from tests.support.feed_data import BASE_URL, fresh_database
from tests.support.schedule_data import fill, rate
from topicstreams.storage import add_topics
from topicstreams.storage.topic_rates import save_topic_rates
from topicstreams.web.app import WebSettings, create_app


def app_client(url: str, **settings) -> TestClient:
    return TestClient(create_app(WebSettings(url, node="n1", **settings)), base_url=BASE_URL)


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
