"""Stored logs end to end: a real crawl in Chromium against a fake engine answering 429, its warnings in
``scraper_logs`` (masked, with its engine and node), read back through the web app with each filter and paged by
cursor; and the API on PostgreSQL, written by the sink and read by the app."""

from __future__ import annotations

import logging
from datetime import UTC, datetime, timedelta

import pytest
from markupsafe import escape

from tests.support.crawl_checks import FAST_COOLDOWN, crawl_config, rows, stat_count
from tests.support.fakes_http import reset_fakes_per_test, running_fakes
from tests.support.feed_data import client, fresh_database
from topicstreams.storage.log_records import LogSink

pytestmark = pytest.mark.timeout(180)

fakes = running_fakes("google")
_clean = reset_fakes_per_test()

ADMIN_TOKEN = "Adm1nT0ken-for-the-logs-test"
"""A secret of the configuration that the crawl's warnings carry (in a topic name): never stored as it is."""


def read_every_page(app, **params) -> list[dict]:
    """Every item of ``GET /api/logs`` with *params*, page by page (limit 2), each page checked."""
    items, before = [], None
    while True:
        answer = app.get("/api/logs", params={**params, "limit": 2, **({"before": before} if before else {})})
        assert answer.status_code == 200, answer.text
        body = answer.json()
        assert len(body["items"]) <= 2
        items += body["items"]
        before = body["next"]
        if before is None:
            return items


def test_a_crawl_s_warnings_are_stored_masked_and_read_back_filtered_and_paged(scrapy_cmd, fakes, tmp_path):
    cfg = crawl_config(
        tmp_path,
        fakes,
        floor=0.05,
        scraper={"cooldown": FAST_COOLDOWN, "once_attempts": 1},
        web={"admin_token": ADMIN_TOKEN},
    )
    fakes.script("google", [{"status": 429, "body": "Too Many Requests"}] * 3)
    leaking = f"leak {ADMIN_TOKEN}"
    result = scrapy_cmd(
        "crawl",
        "google",
        "-a",
        f"topics=t00,t01,{leaking}",
        "-a",
        "once=1",
        env={"TOPICSTREAMS_CONFIG": str(cfg)},
        timeout=120,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert ADMIN_TOKEN in result.stderr  # the console log is the operator's own; the stored one is masked

    db = tmp_path / "news.db"
    stored = rows(db, "select node, engine, level, logger, message from scraper_logs order by at, id")
    assert stored, result.stderr[-3000:]
    assert not [row for row in stored if ADMIN_TOKEN in row[4]]
    assert {row[0] for row in stored} == {"node-a"}
    blocks = [row for row in stored if "hard_block for topic" in row[4]]
    assert len(blocks) == 3 and {row[1:4] for row in blocks} == {
        ("google", "WARNING", "topicstreams.middlewares.blocks")
    }
    assert [row for row in blocks if "'leak ***'" in row[4]], blocks  # masked in the topic and in the URL
    given_up = [row for row in stored if row[2] == "ERROR"]
    assert len(given_up) == 3 and {row[1] for row in given_up} == {"google"}
    cycle_lines = [row for row in stored if row[2] == "INFO"]
    assert cycle_lines and all(row[4].startswith("[google] swept ") for row in cycle_lines)
    assert stat_count(result.stderr, "stored", "logs") == len(stored)
    assert stat_count(result.stderr, "dropped", "logs") == 0

    app = client(f"sqlite:///{db}")
    everything = read_every_page(app)
    assert [item["message"] for item in everything] == [row[4] for row in reversed(stored)]  # newest first, once each
    assert set(everything[0]) == {"at", "node", "engine", "level", "logger", "message", "cursor"}
    assert all(item["at"].endswith("Z") for item in everything)
    assert [item["message"] for item in read_every_page(app, level="warning")] == [
        row[4] for row in reversed(stored) if row[2] in ("WARNING", "ERROR", "CRITICAL")
    ]
    assert [item["message"] for item in read_every_page(app, level="ERROR")] == [row[4] for row in reversed(given_up)]
    assert len(read_every_page(app, engine="google")) == sum(row[1] == "google" for row in stored)
    assert read_every_page(app, engine="bing") == []
    assert len(read_every_page(app, node="node-a")) == len(stored)
    assert read_every_page(app, node="node-b") == []
    found = read_every_page(app, q="LEAK ***")
    assert found and all("leak ***" in item["message"] for item in found)
    assert read_every_page(app, q=ADMIN_TOKEN) == []

    page = app.get("/logs", params={"level": "ERROR", "engine": "google", "limit": 2})
    assert page.status_code == 200
    assert page.text.count('class="log-row level-error"') == 2 and 'class="older"' in page.text
    assert str(escape(given_up[-1][4])) in page.text  # the newest error first, as stored


def test_the_api_reads_postgresql_as_it_reads_sqlite(postgres_url, databases):
    url = fresh_database(postgres_url)
    sink = LogSink(url, "node-pg", flush_seconds=0.05, db=databases.of(url))
    now = datetime.now(UTC)
    for n in range(7):
        sink.put(
            {
                "at": now + timedelta(seconds=n),
                "node": "node-pg",
                "engine": "bing" if n % 2 else None,
                "level": logging.getLevelName(logging.ERROR if n == 6 else logging.WARNING),
                "logger": "tests",
                "message": f"Café {n} 50%_off",
            }
        )
    assert sink.close()
    app = client(url)
    assert [item["message"] for item in read_every_page(app)] == [f"Café {n} 50%_off" for n in range(6, -1, -1)]
    assert [item["message"] for item in read_every_page(app, engine="bing")] == [f"Café {n} 50%_off" for n in (5, 3, 1)]
    assert [item["level"] for item in read_every_page(app, level="ERROR")] == ["ERROR"]
    assert len(read_every_page(app, q="CAFé")) == 7  # ILIKE: the case of ASCII letters ignored (beyond, the locale's)
    assert len(read_every_page(app, q="50%_OFF")) == 7
    assert read_every_page(app, q="50__off") == []
    assert read_every_page(app, node="node-pg", engine="bing", level="critical") == []
    bad = app.get("/api/logs", params={"before": "bm90IGEgY3Vyc29y"})
    assert bad.status_code == 400 and bad.json()["detail"][0]["loc"] == ["query", "before"]
