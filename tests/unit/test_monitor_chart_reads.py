"""The monitor's chart reads on a real SQLite file: the cycle timeline summed per hour over every node, and the
closed hours and days kept for a while while the current hour and today are read at every request."""

from __future__ import annotations

from datetime import timedelta

from topicstreams.storage import upgrade, utcnow
from topicstreams.storage.cycle_timeline import ChartReads, cycle_timeline
from topicstreams.storage.engine_status import save_window
from topicstreams.storage.health_history import roll_up
from topicstreams.storage.scraper_cycles import save_cycle


def fresh(databases, tmp_path):
    url = f"sqlite:///{tmp_path / 'charts.db'}"
    upgrade(url)
    return databases.of(url)


def cycle(db, node, end, topics=1, entries=10, new_events=2, engine="google"):
    save_cycle(
        db,
        engine=engine,
        node=node,
        window_start=end - timedelta(minutes=1),
        window_end=end,
        topics_count=topics,
        entries=entries,
        new_events=new_events,
    )


def window(db, end, score, engine="google", node="n1", requests=10):
    save_window(
        db,
        engine,
        node,
        end - timedelta(minutes=10),
        end,
        {"requests": requests, "score": score, "p95_latency_ms": 400.0},
    )


def test_the_timeline_adds_every_node_up_per_hour(tmp_path, databases):
    db = fresh(databases, tmp_path)
    hour = utcnow().replace(minute=0, second=0, microsecond=0) - timedelta(hours=3)
    for node in ("n1", "n2", "n3"):
        for minute in (5, 6, 59):
            cycle(db, node, hour + timedelta(minutes=minute))
    cycle(db, "n1", hour + timedelta(hours=1, minutes=1), topics=4, entries=40, new_events=0)
    cycle(db, "n1", hour + timedelta(hours=1, minutes=1), engine="bing")
    timeline = cycle_timeline(db, hour, hour + timedelta(hours=2))
    assert [(h.hour, h.topics, h.entries, h.new_events) for h in timeline["google"]] == [
        (hour, 9, 90, 18),
        (hour + timedelta(hours=1), 4, 40, 0),
    ]
    assert [h.topics for h in timeline["bing"]] == [1]
    assert cycle_timeline(db, hour + timedelta(minutes=6), hour + timedelta(minutes=59)) == {
        "google": [timeline["google"][0].__class__(hour, 3, 30, 6)]
    }  # [start, end): the n1-n3 rows of 00:06


def test_closed_hours_and_days_are_kept_the_current_hour_and_today_are_read_each_time(tmp_path, databases):
    db = fresh(databases, tmp_path)
    now = utcnow().replace(hour=12, minute=30, second=0, microsecond=0)  # the reads take the time they are given
    hour = now.replace(minute=0)
    clock = [0.0]
    reads = ChartReads(db, keep=300, clock=lambda: clock[0])
    cycle(db, "n1", hour - timedelta(hours=2))
    window(db, hour - timedelta(hours=2), 90)
    window(db, hour - timedelta(days=3), 70)
    roll_up(db, now)
    first = reads.read(now, 24, 365)
    assert [h.topics for h in first.cycles["google"]] == [1]
    assert [h.score_mean for h in first.hours["google"]] == [90]
    assert [d.score_min for d in first.days["google"]] == [70, 90]

    # New rows: late ones in a closed hour and a closed day, and some in the current hour (today).
    cycle(db, "n2", hour - timedelta(hours=2), topics=5)
    window(db, hour - timedelta(hours=2), 10, node="n2")
    window(db, hour - timedelta(days=3), 5, node="n2")
    cycle(db, "n1", now - timedelta(seconds=1), topics=7)
    window(db, now - timedelta(seconds=1), 50)
    roll_up(db, now)
    clock[0] = 299.0
    kept = reads.read(now, 24, 365)
    assert [h.topics for h in kept.cycles["google"]] == [1, 7]  # the closed hour as it was, the current one read
    assert [h.score_mean for h in kept.hours["google"]] == [90, 50]
    assert [d.score_min for d in kept.days["google"]] == [70, 10]  # the closed day as it was; today read again
    clock[0] = 300.0
    later = reads.read(now, 24, 365)
    assert [h.topics for h in later.cycles["google"]] == [6, 7]  # the late rows show once the closed part is read
    assert [h.score_mean for h in later.hours["google"]] == [50, 50]
    assert [d.score_min for d in later.days["google"]] == [5, 10]


def test_nothing_is_kept_with_keep_zero(tmp_path, databases):
    db = fresh(databases, tmp_path)
    now = utcnow()
    reads = ChartReads(db, keep=0)
    cycle(db, "n1", now - timedelta(hours=2))
    assert [h.topics for h in reads.read(now, 24, 365).cycles["google"]] == [1]
    cycle(db, "n2", now - timedelta(hours=2), topics=2)
    assert [h.topics for h in reads.read(now, 24, 365).cycles["google"]] == [3]
