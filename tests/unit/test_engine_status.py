"""The rows of an engine's health on a real SQLite file (storage/engine_status.py): engine_status, alerts,
health_windows and the baseline."""

from __future__ import annotations

from dataclasses import fields
from datetime import UTC, datetime, timedelta, timezone

import pytest
from sqlalchemy import select

from tests.support.databases import database_fixture
from topicstreams.extensions.health_rows import baseline_history
from topicstreams.health.score import Window
from topicstreams.health.window import WindowStats
from topicstreams.storage import engine_status as store
from topicstreams.storage.engine_status import EngineStatusRow
from topicstreams.storage.models import health_windows_table

NOW = datetime(2026, 6, 15, 12, 0, tzinfo=UTC)


db = database_fixture("sqlite_url")


# ---------------------------------------------------------------------------------------------------------
# engine_status


def test_save_status_inserts_then_updates(db):
    store.save_status(db, "google", "n1", state="running", score=90, band="ok", reasons=[], updated_at=NOW)
    row = store.read_status(db, "google", "n1")
    assert (row.engine, row.node, row.score, row.band, row.state) == ("google", "n1", 90, "ok", "running")
    assert row.updated_at == NOW
    later = NOW + timedelta(minutes=5)
    store.save_status(
        db,
        "google",
        "n1",
        state="cooling",
        score=60,
        band="degraded",
        reasons=["hard_block"],
        cooling_until=later,
        updated_at=later,
    )
    rows = store.read_statuses(db)
    assert len(rows) == 1
    row = rows[0]
    assert (row.score, row.band, row.state, row.reasons) == (60, "degraded", "cooling", ["hard_block"])
    assert row.cooling_until == later and row.updated_at == later


def test_a_new_row_without_state_starts_running_and_updated_at_defaults_to_now(db):
    before = datetime.now(UTC)
    store.save_status(db, "bing", "n1", state=None, score=None, band="unknown")
    row = store.read_status(db, "bing", "n1")
    assert row.state == "running" and row.score is None and row.band == "unknown" and row.reasons == []
    assert before - timedelta(seconds=1) <= row.updated_at <= datetime.now(UTC) + timedelta(seconds=1)
    assert row.updated_at.tzinfo is not None


def test_state_none_keeps_a_stored_pause(db):
    store.pause(db, "google", "n1", at=NOW, score=30, band="critical", reasons=["hard_block"])
    store.save_status(db, "google", "n1", state=None, score=95, band="ok", reasons=[], raw_score=97)
    row = store.read_status(db, "google", "n1")
    assert row.state == "paused"
    assert (row.score, row.band, row.raw_score, row.reasons) == (95, "ok", 97, [])
    assert row.paused_at == NOW  # not touched either
    # a state given explicitly does replace it
    store.save_status(db, "google", "n1", state="running")
    assert store.read_status(db, "google", "n1").state == "running"


def test_pause_sets_state_and_paused_at_and_ends_a_cooldown(db):
    store.save_status(db, "google", "n1", state="cooling", cooling_until=NOW + timedelta(hours=1))
    store.pause(db, "google", "n1", at=NOW, score=20, band="critical")
    row = store.read_status(db, "google", "n1")
    assert row.state == "paused" and row.paused_at == NOW and row.cooling_until is None
    assert row.score == 20 and row.band == "critical"


def test_pause_without_a_time_is_now(db):
    before = datetime.now(UTC)
    store.pause(db, "yahoo", "n1")
    row = store.read_status(db, "yahoo", "n1")
    assert row.state == "paused"
    assert before - timedelta(seconds=1) <= row.paused_at <= datetime.now(UTC) + timedelta(seconds=1)


def test_resume_lifts_a_pause_once(db):
    store.pause(db, "google", "n1", at=NOW)
    written = store.read_status(db, "google", "n1").updated_at
    resumed = NOW + timedelta(hours=2)
    assert store.resume(db, "google", "n1", at=resumed) is True
    row = store.read_status(db, "google", "n1")
    assert row.state == "running" and row.resumed_at == resumed
    assert row.updated_at == written  # a person's resume is no heartbeat of the crawl behind the row
    assert row.paused_at == NOW
    assert store.resume(db, "google", "n1", at=resumed + timedelta(hours=1)) is False
    assert store.read_status(db, "google", "n1").resumed_at == resumed  # the second call changed nothing


def test_resume_voids_the_score_that_paused_and_keeps_the_pace_multiplier(db):
    store.pause(
        db, "google", "n1", at=NOW, score=30, raw_score=25, band="critical", reasons=["hard_block"], pace_multiplier=2.0
    )
    assert store.resume(db, "google", "n1", at=NOW + timedelta(minutes=5))
    row = store.read_status(db, "google", "n1")
    assert (row.score, row.raw_score, row.band, row.reasons) == (None, None, "unknown", [])
    assert row.pace_multiplier == 2.0  # the engine comes back slowed


def test_resume_of_an_engine_that_is_not_paused_is_false(db):
    assert store.resume(db, "google", "n1") is False  # no row at all
    assert store.read_statuses(db) == []
    store.save_status(db, "bing", "n1", state="cooling", cooling_until=NOW)
    assert store.resume(db, "bing", "n1") is False
    assert store.read_status(db, "bing", "n1").state == "cooling"
    store.pause(db, "brave", "n2")
    assert store.resume(db, "brave", "n1") is False  # paused on another node
    assert store.read_status(db, "brave", "n2").state == "paused"


def test_a_resume_makes_no_stale_or_stopped_row_read_live(db):
    # A paused engine whose crawl was killed (its row unwritten for an hour), and one whose crawl closed.
    store.pause(db, "google", "n1", at=NOW - timedelta(hours=1), updated_at=NOW - timedelta(hours=1))
    store.pause(db, "bing", "n1", at=NOW - timedelta(hours=1))
    store.mark_stopped(db, "bing", "n1", at=NOW - timedelta(minutes=30))
    for engine in ("google", "bing"):
        assert store.resume(db, engine, "n1", at=NOW) is True
    assert store.read_status(db, "google", "n1").state_at(NOW) == "stale"
    assert store.read_status(db, "bing", "n1").state_at(NOW) == "stopped"


def test_a_stopped_row_reads_stopped_until_a_crawl_writes_it_again(db):
    store.save_status(db, "google", "n1", state="paused", heartbeat_seconds=1.0)
    store.mark_stopped(db, "google", "n1", at=NOW)
    row = store.read_status(db, "google", "n1")
    assert row.stopped_at == NOW and row.state == "paused" and row.state_at(NOW + timedelta(days=1)) == "stopped"
    store.save_status(db, "google", "n1", state=None, heartbeat_seconds=1.0)
    row = store.read_status(db, "google", "n1")
    assert row.stopped_at is None and row.state == "paused" and row.heartbeat_seconds == 1.0
    assert row.state_at(row.updated_at + timedelta(seconds=3)) == "paused"  # three heartbeats of its own
    assert row.state_at(row.updated_at + timedelta(seconds=3.001)) == "stale"


def test_resume_resolves_open_alerts_only(db):
    first_pause, first_resume = NOW, NOW + timedelta(hours=1)
    store.pause(db, "google", "n1", at=first_pause)
    old = store.add_alert(db, "google", "n1", score=30, band="critical", reasons=["hard_block"], message="paused")
    assert store.resume(db, "google", "n1", at=first_resume)
    store.pause(db, "google", "n1", at=NOW + timedelta(hours=2))
    new = store.add_alert(db, "google", "n1", score=20, band="critical", reasons=["challenge"], message="again")
    other_engine = store.add_alert(db, "bing", "n1", score=10, band="critical", reasons=[], message="bing")
    other_node = store.add_alert(db, "google", "n2", score=10, band="critical", reasons=[], message="n2")
    second_resume = NOW + timedelta(hours=3)
    assert store.resume(db, "google", "n1", at=second_resume)
    resolved = {alert["id"]: alert["resolved_at"] for alert in store.read_alerts(db)}
    assert resolved[old] == first_resume  # already resolved: left as it was
    assert resolved[new] == second_resume
    assert resolved[other_engine] is None and resolved[other_node] is None


def test_read_statuses_filters_and_orders(db):
    for node, engine in [("n2", "google"), ("n1", "yahoo"), ("n1", "bing"), ("n2", "brave"), ("n1", "google")]:
        store.save_status(db, engine, node, state="running")
    assert [(r.node, r.engine) for r in store.read_statuses(db)] == [
        ("n1", "bing"),
        ("n1", "google"),
        ("n1", "yahoo"),
        ("n2", "brave"),
        ("n2", "google"),
    ]
    assert [r.engine for r in store.read_statuses(db, node="n1")] == ["bing", "google", "yahoo"]
    assert [(r.node, r.engine) for r in store.read_statuses(db, engines=["google"])] == [
        ("n1", "google"),
        ("n2", "google"),
    ]
    assert [r.engine for r in store.read_statuses(db, "n2", ["google", "yahoo"])] == ["google"]
    assert store.read_statuses(db, node="n3") == []
    assert store.read_status(db, "yahoo", "n2") is None
    assert store.read_status(db, "yahoo", "n1").engine == "yahoo"


def status_row(state: str, cooling_until: datetime | None) -> EngineStatusRow:
    # every column None but the ones state_at reads (the row may gain columns)
    values = {f.name: None for f in fields(EngineStatusRow)}
    values.update(
        engine="google", node="n1", band="unknown", state=state, cooling_until=cooling_until, reasons=[], updated_at=NOW
    )
    return EngineStatusRow(**values)


def test_state_at_a_cooldown_ends_at_cooling_until():
    assert status_row("cooling", NOW + timedelta(minutes=1)).state_at(NOW) == "cooling"
    assert status_row("cooling", NOW - timedelta(minutes=1)).state_at(NOW) == "running"
    assert status_row("cooling", NOW).state_at(NOW) == "running"  # ended at that moment
    assert status_row("cooling", None).state_at(NOW) == "running"
    assert status_row("paused", NOW - timedelta(days=1)).state_at(NOW) == "paused"
    assert status_row("running", None).state_at(NOW) == "running"


def test_state_at_on_a_stored_row(db):
    store.save_status(db, "google", "n1", state="cooling", cooling_until=NOW + timedelta(minutes=10))
    row = store.read_status(db, "google", "n1")
    assert row.state_at(NOW) == "cooling"
    assert row.state_at(NOW + timedelta(minutes=11)) == "running"


def test_reasons_and_window_counts_round_trip(db):
    stats = WindowStats(
        requests=12,
        ok=8,
        hard_blocks=2,
        challenges=1,
        soft_blocks=1,
        bytes=12345,
        browser_seconds=3.25,
        p50_latency_ms=210.5,
        p95_latency_ms=None,
    )
    reasons = ["soft_block", "latency", "hard_block"]
    store.save_status(
        db, "google", "n1", state="running", reasons=reasons, window_counts=stats.counts(), p50_ms=210.5, p95_ms=None
    )
    row = store.read_status(db, "google", "n1")
    assert row.reasons == reasons
    assert row.window_counts == stats.counts()
    assert row.window_counts["p95_latency_ms"] is None and row.window_counts["browser_seconds"] == 3.25
    assert row.p50_ms == 210.5 and row.p95_ms is None


def test_times_in_other_zones_are_stored_as_utc(db):
    cest = timezone(timedelta(hours=2))
    store.pause(db, "google", "n1", at=datetime(2026, 6, 15, 14, 0, tzinfo=cest))
    paused_at = store.read_status(db, "google", "n1").paused_at
    assert paused_at == NOW and paused_at.utcoffset() == timedelta(0)


# ---------------------------------------------------------------------------------------------------------
# alerts


def test_add_alert_returns_increasing_ids_and_delivery_is_recorded(db):
    ids = [
        store.add_alert(
            db,
            "google",
            "n1",
            score=score,
            band="critical",
            reasons=["hard_block", "challenge"],
            message=f"score {score}",
        )
        for score in (40, 30, None)
    ]
    assert ids == sorted(ids) and len(set(ids)) == 3
    store.set_alert_delivery(db, ids[1], "sent (204)")
    alerts = store.read_alerts(db)
    assert [a["id"] for a in alerts] == ids
    assert [a["score"] for a in alerts] == [40, 30, None]
    assert [a["delivery"] for a in alerts] == [None, "sent (204)", None]
    assert alerts[0]["reasons"] == ["hard_block", "challenge"]
    assert alerts[0]["message"] == "score 40" and alerts[0]["band"] == "critical"
    assert alerts[0]["resolved_at"] is None and alerts[0]["created_at"].tzinfo is not None


def test_read_alerts_filters_by_engine_and_node(db):
    a = store.add_alert(db, "google", "n1", score=1, band="critical", reasons=[], message="a")
    b = store.add_alert(db, "bing", "n1", score=1, band="critical", reasons=[], message="b")
    c = store.add_alert(db, "google", "n2", score=1, band="critical", reasons=[], message="c")
    assert [x["id"] for x in store.read_alerts(db, "google")] == [a, c]
    assert [x["id"] for x in store.read_alerts(db, node="n1")] == [a, b]
    assert [x["id"] for x in store.read_alerts(db, "google", "n2")] == [c]
    assert store.read_alerts(db, "yahoo") == []


def test_alert_ids_are_not_reused(db):
    first = store.add_alert(db, "google", "n1", score=1, band="critical", reasons=[], message="a")
    with db.begin() as conn:
        conn.exec_driver_sql("DELETE FROM alerts")
    assert store.add_alert(db, "google", "n1", score=1, band="critical", reasons=[], message="b") > first


# ---------------------------------------------------------------------------------------------------------
# health_windows and the baseline


def save(
    db,
    end: datetime,
    *,
    engine="google",
    node="n1",
    requests=100,
    hard=0,
    challenges=0,
    soft=0,
    p95: float | None = 500.0,
) -> None:
    stats = WindowStats(
        requests=requests,
        ok=requests - hard - challenges - soft,
        hard_blocks=hard,
        challenges=challenges,
        soft_blocks=soft,
        p50_latency_ms=None if p95 is None else p95 / 2,
        p95_latency_ms=p95,
    )
    store.save_window(db, engine, node, end - timedelta(minutes=10), end, stats.counts())


def test_save_window_keeps_every_count(db):
    stats = WindowStats(
        requests=10,
        ok=5,
        hard_blocks=1,
        challenges=2,
        soft_blocks=1,
        errors=1,
        items=40,
        valid_items=38,
        parse_errors=1,
        bytes=5_000_000_000,
        browser_seconds=12.5,
        p50_latency_ms=300.0,
        p95_latency_ms=900.0,
        result_pages=6,
        yielding_pages=5,
        missing_fields={"source": 2},
    )
    store.save_window(db, "google", "n1", NOW - timedelta(minutes=10), NOW, stats.counts())
    with db.connect() as conn:
        row = conn.execute(select(health_windows_table)).mappings().one()
    assert {key: row[key] for key in stats.counts()} == stats.counts()
    assert row["engine"] == "google" and row["node"] == "n1"


def test_baseline_sums_the_windows_of_the_period(db):
    # in: ended 2, 5 and 13 days ago
    save(db, NOW - timedelta(days=2), requests=100, hard=10, challenges=1, soft=2, p95=400)
    save(db, NOW - timedelta(days=5), requests=200, hard=0, challenges=3, soft=4, p95=900)
    save(db, NOW - timedelta(days=13), requests=50, hard=5, challenges=0, soft=1, p95=100)
    # out: the most recent day, older than 14 days, another engine, another node
    save(db, NOW - timedelta(hours=12), requests=1000, hard=1000, p95=99_999)
    save(db, NOW - timedelta(days=20), requests=1000, hard=1000, p95=99_999)
    save(db, NOW - timedelta(days=3), engine="bing", requests=1000, hard=1000, p95=99_999)
    save(db, NOW - timedelta(days=3), node="n2", requests=1000, hard=1000, p95=99_999)
    # counts summed, p95 the median of 400, 900, 100 -> 400
    assert baseline_history(db, "google", "n1", 14, now=NOW).window == Window(350, 15, 4, 7, 400.0)


def test_baseline_period_edges(db):
    save(db, NOW - timedelta(days=1, minutes=1), requests=1)  # just over a day ago: in
    save(db, NOW - timedelta(hours=23, minutes=59), requests=10)  # just under a day ago: out
    save(db, NOW - timedelta(days=13, hours=23), requests=100)  # just inside 14 days: in
    save(db, NOW - timedelta(days=14, minutes=1), requests=1000)  # just outside: out
    assert baseline_history(db, "google", "n1", 14, now=NOW).window.requests == 101
    # a shorter period: only the window of a day and a minute ago
    assert baseline_history(db, "google", "n1", 2, now=NOW).window.requests == 1
    assert baseline_history(db, "google", "n1", 1.5, now=NOW).window.requests == 1


def test_baseline_p95_is_the_median_of_window_p95s_even_count(db):
    for days, p95 in [(2, 100.0), (3, 300.0), (4, 500.0), (6, 1000.0)]:
        save(db, NOW - timedelta(days=days), p95=p95)
    save(db, NOW - timedelta(days=5), p95=None)  # counted, but no p95 to take the median of
    baseline = baseline_history(db, "google", "n1", 14, now=NOW).window
    assert baseline.requests == 500
    assert baseline.p95_latency_ms == pytest.approx(400.0)  # (300 + 500) / 2


def test_baseline_without_windows_is_a_zero_window(db):
    assert baseline_history(db, "google", "n1", 14, now=NOW).window == Window()
    save(db, NOW - timedelta(hours=1))  # only the most recent day
    assert baseline_history(db, "google", "n1", 14, now=NOW).window == Window()
    assert baseline_history(db, "google", "n1", 14, now=NOW).window.p95_latency_ms == 0.0


def test_baseline_defaults_to_now(db):
    real_now = datetime.now(UTC)
    save(db, real_now - timedelta(days=3), requests=77, hard=7, p95=250)
    save(db, real_now - timedelta(minutes=30), requests=5)
    assert baseline_history(db, "google", "n1", 14).window == Window(77, 7, 0, 0, 250.0)
