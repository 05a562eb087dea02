"""The health extension driven by hand: a real crawler's settings and signals, a real SQLite file, classifications
sent as the blocks middleware sends them. What needs a browser (the bands acting on a real crawl, the pause across
processes) is in test_health_crawl.py; here are the paths a crawl reaches only slowly: recovery, restoring a
slowdown after a restart, a resume noticed by a running process, stored windows and baselines, a failing webhook."""

from __future__ import annotations

import asyncio
import logging
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest
from scrapy.exceptions import NotConfigured

from tests.support.crawler import make_crawler
from topicstreams.config.route_table import DEFAULT_ROUTE
from topicstreams.crawl.runtime import Runtime
from topicstreams.crawl.signals import Classification, PageParsed
from topicstreams.engines.classify import ResponseClass
from topicstreams.extensions.watch import HealthExtension
from topicstreams.health.score import Window
from topicstreams.health.window import WindowStats
from topicstreams.spiders.google import GoogleSpider
from topicstreams.storage import engine_status as store
from topicstreams.storage import upgrade


def classification(
    cls: ResponseClass = ResponseClass.OK,
    at: datetime | None = None,
    latency: float = 0.2,
) -> Classification:
    return Classification(
        engine="google",
        topic="t",
        page=0,
        page_type="first",
        url="http://127.0.0.1/search",
        status=200,
        cls=cls,
        reason="",
        latency=latency,
        bytes=50_000,
        items=10,
        probe=False,
        bench=None,
        at=at or datetime.now(UTC),
    )


class Driven:
    """An extension opened on its crawler, fed by hand inside an asyncio loop (as in a crawl)."""

    def __init__(self, crawler) -> None:
        self.crawler = crawler
        self.extension = HealthExtension.from_crawler(crawler)
        self.state = Runtime.of(crawler).engine_state(crawler)

    def feed(self, classes: list[ResponseClass], at: datetime | None = None) -> None:
        for cls in classes:
            self.extension.response_classified(classification(cls, at))

    @property
    def db(self):
        return Runtime.of(self.crawler).database(self.crawler.settings.get("TOPICSTREAMS_DATABASE_URL"))


def run(crawler, body) -> Driven:
    """Open the extension, run ``body(driven)`` (it may be a coroutine function), close it."""
    driven = Driven(crawler)

    async def main():
        driven.extension.spider_opened(None)
        try:
            result = body(driven)
            if asyncio.iscoroutine(result):
                await result
        finally:
            await driven.extension.spider_closed(None, "finished")

    asyncio.run(main())
    return driven


OK, SOFT, HARD, CHALLENGE = (
    ResponseClass.OK,
    ResponseClass.SOFT_BLOCK,
    ResponseClass.HARD_BLOCK,
    ResponseClass.CHALLENGE,
)


def test_it_stays_out_of_spiders_that_are_not_engines_and_can_be_turned_off(tmp_path):
    class Other(GoogleSpider):
        name = "other"

    with pytest.raises(NotConfigured):
        HealthExtension.from_crawler(make_crawler(tmp_path, {}, spidercls=Other))
    with pytest.raises(NotConfigured):
        HealthExtension.from_crawler(make_crawler(tmp_path, {}, TOPICSTREAMS_HEALTH_ENABLED=False))


def test_a_degraded_engine_is_slowed_until_a_score_says_ok_then_back_to_its_pace(tmp_path, caplog):
    crawler = make_crawler(tmp_path, {"min_requests": 10, "smoothing": 1})
    caplog.set_level(logging.INFO, logger="topicstreams.extensions")
    seen = {}

    def body(driven: Driven):
        driven.feed([OK] * 7)
        seen["unknown"] = (driven.state.pace_multiplier, crawler.stats.get_value("topicstreams/google/health_band"))
        driven.feed([SOFT] * 3)  # 3 of 10: 30 % soft blocks, full penalty: 75
        seen["degraded"] = (driven.state.pace_multiplier, crawler.stats.get_value("topicstreams/google/health_score"))
        driven.feed([OK] * 8)  # 3 of 18: 16.7 %, 25 * 0.833 = 20.8: 79, still degraded
        seen["still"] = driven.state.pace_multiplier
        driven.feed([OK])  # 3 of 19: 15.8 %, 25 * 0.789 = 19.7: 80, ok
        seen["ok"] = (driven.state.pace_multiplier, crawler.stats.get_value("topicstreams/google/health_score"))

    driven = run(crawler, body)
    assert seen == {"unknown": (1.0, "unknown"), "degraded": (2.0, 75), "still": 2.0, "ok": (1.0, 80)}
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert warnings == [
        "[google] health 75 (degraded): soft_block; slowing down: the pacing floor and the "
        "re-scrape interval × 2 until it recovers"
    ]
    assert "[google] health 80 (ok): back to the normal pace" in caplog.messages
    status = store.read_status(driven.db, "google", "n1")
    assert (status.score, status.band, status.state, status.pace_multiplier) == (80, "ok", "running", 1.0)
    assert status.window_counts["requests"] == 19 and status.window_counts["soft_blocks"] == 3


def test_a_slowdown_in_force_survives_a_restart(tmp_path, caplog):
    health = {"min_requests": 4, "smoothing": 1}
    run(make_crawler(tmp_path, health), lambda driven: driven.feed([OK, OK, SOFT, OK]))  # 25 %: 75, degraded
    caplog.set_level(logging.WARNING, logger="topicstreams.extensions")
    restarted = run(make_crawler(tmp_path, health), lambda driven: None)
    assert restarted.state.pace_multiplier == 2.0 and not restarted.state.paused
    assert any("slowed down when last seen" in message for message in caplog.messages)


def test_a_running_process_notices_a_resume_and_judges_afresh_at_the_slowed_pace(tmp_path):
    health = {"min_requests": 4, "smoothing": 1}
    seen = {}

    def pause_it(driven: Driven):
        driven.feed([HARD, CHALLENGE, HARD, CHALLENGE])  # 100 - 35 - 25 = 40
        seen["paused"] = driven.state.paused

    first = run(make_crawler(tmp_path, health), pause_it)
    assert seen["paused"] and store.read_status(first.db, "google", "n1").state == "paused"
    assert [(a["score"], a["reasons"], a["delivery"]) for a in store.read_alerts(first.db)] == [
        (40, ["hard_block", "challenge"], "no target")
    ]  # nothing configured: the log and the table only

    def resume_it(driven: Driven):
        seen["after restart"] = driven.state.paused
        driven.extension.tick()
        seen["tick while paused"] = driven.state.paused
        assert store.resume(driven.db, "google", "n1")
        driven.extension.tick()
        seen["after resume"] = (driven.state.paused, driven.state.pace_multiplier)
        driven.feed([HARD, HARD, HARD])  # the window starts afresh: 3 requests are not enough to judge
        seen["no new pause yet"] = driven.state.paused
        driven.feed([HARD])  # now 4 of 4 hard blocks: 65, degraded; no pause without a critical score
        seen["band"] = crawler.stats.get_value("topicstreams/google/health_band")

    crawler = make_crawler(tmp_path, health)
    second = run(crawler, resume_it)
    assert seen["after restart"] and seen["tick while paused"]
    assert seen["after resume"] == (False, 2.0)
    assert seen["no new pause yet"] is False and seen["band"] == "degraded"
    status = store.read_status(second.db, "google", "n1")
    assert (status.state, status.score, status.band) == ("running", 65, "degraded")
    alerts = store.read_alerts(second.db)
    assert [alert["event"] for alert in alerts] == ["paused", "resumed"]  # no second pause; the resume is told
    assert alerts[0]["resolved_at"] is not None and alerts[1]["resolved_at"] is None


def test_the_status_row_says_cooling_until_when_while_the_engine_is_benched(tmp_path):
    crawler = make_crawler(tmp_path, {})
    seen = {}

    def body(driven: Driven):
        bench = driven.state.lane(DEFAULT_ROUTE).record(
            HARD
        )  # as the blocks middleware does before it sends the classification
        driven.feed([HARD])
        assert driven.extension.outbox.flush()  # written off the event loop
        seen["cooling"] = store.read_status(driven.db, "google", "n1")
        seen["bench"] = bench

    driven = run(crawler, body)
    row = seen["cooling"]
    assert row.state == "cooling" and row.score is None and row.reasons == ["not enough requests to judge"]
    expected = row.updated_at + timedelta(seconds=seen["bench"])
    assert abs((row.cooling_until - expected).total_seconds()) < 1
    beating = replace(row, updated_at=row.cooling_until)  # as the crawl's heartbeat keeps writing it
    assert beating.state_at(row.cooling_until + timedelta(seconds=1)) == "running"
    assert store.read_status(driven.db, "google", "n1").window_counts["hard_blocks"] == 1


def test_an_alert_that_cannot_be_delivered_is_still_kept_and_logged(tmp_path, caplog):
    crawler = make_crawler(
        tmp_path,
        {"min_requests": 2, "smoothing": 1},
        webhook_url="http://127.0.0.1:9/hook/SECRET",
        TOPICSTREAMS_ALERT_RETRY_DELAYS=[],
    )
    caplog.set_level(logging.WARNING)
    driven = run(crawler, lambda driven: driven.feed([CHALLENGE, HARD]))
    assert driven.state.paused
    [alert] = store.read_alerts(driven.db)
    assert alert["delivery"] == "failed: http://127.0.0.1:9/*** (after 1 attempt)" and alert["resolved_at"] is None
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert any("could not deliver the paused alert to http://127.0.0.1:9/***" in message for message in warnings), (
        warnings
    )
    assert not any("SECRET" in message for message in caplog.messages)


def test_responses_are_stored_one_window_at_a_time_with_their_parse_outcome(tmp_path):
    crawler = make_crawler(tmp_path, {"window": 60})
    start = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)  # a multiple of 60 s

    def body(driven: Driven):
        first = classification(OK, start + timedelta(seconds=10), latency=0.1)
        driven.extension.response_classified(first)
        driven.extension.page_parsed(PageParsed(first, items=10, valid_items=9))
        parse_failed = classification(ResponseClass.ERROR, start + timedelta(seconds=20), latency=0.3)
        driven.extension.response_classified(parse_failed)
        driven.extension.page_parsed(PageParsed(parse_failed, items=0, valid_items=0, error="parse error: boom"))
        driven.feed([HARD], start + timedelta(seconds=70))  # the next window

    driven = run(crawler, body)
    with driven.db.connect() as conn:
        rows = conn.exec_driver_sql(
            "select window_start, window_end, requests, ok, errors, hard_blocks, items, valid_items, parse_errors, "
            "bytes, browser_seconds, p95_latency_ms from health_windows order by window_start"
        ).all()
    assert [row[2:] for row in rows] == [
        (2, 1, 1, 0, 10, 9, 1, 100_000, pytest.approx(0.4), pytest.approx(300)),
        (1, 0, 0, 1, 0, 0, 0, 50_000, pytest.approx(0.2), pytest.approx(200)),
    ]
    assert rows[0][:2] == ("2026-11-20 12:00:00.000000", "2026-11-20 12:01:00.000000")
    assert rows[1][0] == "2026-11-20 12:01:00.000000"


def test_the_baseline_is_the_engines_own_stored_history(tmp_path, databases):
    health = {"min_requests": 10, "smoothing": 1}
    crawler = make_crawler(tmp_path, health)
    upgrade(crawler.settings.get("TOPICSTREAMS_DATABASE_URL"))
    db = databases.of(crawler.settings.get("TOPICSTREAMS_DATABASE_URL"))
    three_days_ago = datetime.now(UTC) - timedelta(days=3)
    # Its normal: 20 % hard blocks, a p95 of 400 ms.
    store.save_window(
        db,
        "google",
        "n1",
        three_days_ago,
        three_days_ago + timedelta(minutes=10),
        WindowStats(requests=100, ok=80, hard_blocks=20, p95_latency_ms=400.0).counts(),
    )
    scores = {}

    def body(driven: Driven):
        driven.feed([HARD] * 2 + [OK] * 8)  # 20 %, as usual; 200 ms, faster than usual
        scores["as usual"] = crawler.stats.get_value("topicstreams/google/health_score")

    driven = run(crawler, body)
    assert driven.extension.health.history == Window(100, 20, 0, 0, 400.0)
    assert scores["as usual"] == 100
    # Without that history the same window is 20 points over a normal of none: 100 - 35 = 65.
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    crawler = make_crawler(fresh, health)
    run(crawler, body)
    assert scores["as usual"] == 65
