"""A topic gone silent, judged (topicstreams.alerts.topic_silence): arrivals, the usual gap, the threshold, the engines'
running, and the two messages — on an injected clock."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from topicstreams.alerts.events import SILENCE
from topicstreams.alerts.inert_text import ZWSP, duration
from topicstreams.alerts.topic_silence import (
    ARRIVAL_WINDOW,
    ENDED,
    MIN_SILENCE,
    SILENT,
    arrivals,
    judge_silence,
    news_again_alert,
    silence_alert,
)

NOW = datetime(2026, 12, 2, 12, 0, tzinfo=UTC)
HOUR = timedelta(hours=1)


def hourly(count: int, last: datetime, per_arrival: int = 1, every: timedelta = HOUR) -> list[tuple[datetime, int]]:
    """``count`` arrivals ``every`` apart, the last at ``last``, each of ``per_arrival`` events."""
    return [(last - every * i, per_arrival) for i in range(count)][::-1]


def judge(times, now=NOW, **options):
    settings = {"baseline_days": 14, "factor": 6, "min_events": 10, "running": True, **options}
    return judge_silence("climate", times, now, **settings)


def test_events_within_a_minute_of_each_other_are_one_arrival():
    t = NOW - HOUR * 10
    times = [
        t,
        t + timedelta(seconds=20),
        t + timedelta(seconds=50),
        t + timedelta(seconds=100),  # a chain
        t + timedelta(seconds=100 + ARRIVAL_WINDOW),
        t + HOUR,
    ]
    assert arrivals(reversed(times)) == [t, t + timedelta(seconds=100 + ARRIVAL_WINDOW), t + HOUR]
    assert arrivals([]) == []


def test_the_usual_gap_is_the_median_between_arrivals_and_silence_comes_after_factor_times_it():
    # 12 arrivals an hour apart (3 events each: several engines' batches within seconds), the last at 05:00.
    last = NOW - HOUR * 7
    times = [(moment + timedelta(seconds=offset), 1) for moment, _ in hourly(12, last) for offset in (0, 5, 30)]
    verdict = judge(times)
    assert (verdict.events, verdict.arrivals, verdict.gap, verdict.threshold) == (36, 12, 3600.0, 6 * 3600.0)
    assert verdict.usual and verdict.silent and verdict.last_event == last + timedelta(seconds=30)
    assert verdict.quiet == pytest.approx(7 * 3600 - 30)

    just_before = judge(times, now=last + HOUR * 6)
    assert not just_before.silent and just_before.quiet == pytest.approx(6 * 3600 - 30)
    assert judge(times, now=last + timedelta(seconds=30) + HOUR * 6).silent  # exactly factor × G: silent


def test_a_few_long_gaps_barely_move_the_median():
    times = hourly(20, NOW - HOUR * 4) + [(NOW - timedelta(days=3), 1), (NOW - timedelta(days=6), 1)]
    verdict = judge(times)
    assert verdict.gap == 3600.0
    assert not verdict.silent  # 4 h of quiet < 6 h


def test_never_silent_sooner_than_an_hour():
    times = hourly(30, NOW - timedelta(minutes=50), every=timedelta(minutes=2))
    verdict = judge(times)
    assert verdict.gap == 120.0 and verdict.threshold == MIN_SILENCE
    assert not verdict.silent
    assert judge(times, now=NOW + timedelta(minutes=10)).silent


def test_a_topic_without_enough_events_is_not_usual_and_never_silent():
    few = hourly(9, NOW - timedelta(days=2))
    verdict = judge(few)
    assert verdict.events == 9 and not verdict.usual and not verdict.silent
    # Many events but a single arrival: no gap, so no G.
    one_scrape = [(NOW - timedelta(days=2), 40)]
    verdict = judge(one_scrape)
    assert verdict.events == 40 and verdict.gap is None and not verdict.usual and not verdict.silent
    assert not judge([]).silent and judge([]).last_event is None


def test_only_the_baseline_period_counts_and_the_latest_day_is_in_it():
    old = hourly(30, NOW - timedelta(days=15))  # all before the 14 days
    assert judge(old).events == 0 and not judge(old).usual
    # A topic that began yesterday: its events are all within the latest day, and they are its normal.
    recent = hourly(12, NOW - HOUR * 8)
    verdict = judge(recent)
    assert verdict.usual and verdict.silent  # 8 h > 6 × 1 h
    assert judge(recent, min_events=13).usual is False


def test_only_while_the_engines_run_and_counted_from_when_they_were_seen_running():
    times = hourly(12, NOW - HOUR * 8)
    assert not judge(times, running=False).silent
    # The crawl started again 2 hours ago after being stopped: 2 h of quiet while running, not 8.
    restarted = judge(times, running_since=NOW - HOUR * 2)
    assert restarted.quiet == 2 * 3600 and not restarted.silent
    assert judge(times, running_since=NOW - HOUR * 2, now=NOW + HOUR * 4).silent
    # Seen running since before the last event: the last event counts.
    assert judge(times, running_since=NOW - timedelta(days=3)).quiet == 8 * 3600


def test_the_silence_alert_names_the_topic_the_engines_the_numbers_and_what_to_do():
    times = hourly(12, NOW - HOUR * 7)
    verdict = judge_silence(
        "<b>@everyone</b> news", times, NOW, baseline_days=14, factor=6, min_events=10, running=True
    )
    alert = silence_alert(verdict, ["bing", "google"])
    assert alert.event == SILENCE and alert.topic == "<b>@everyone</b> news" and alert.at == NOW
    assert alert.details["state"] == SILENT
    assert alert.details["gap_seconds"] == 3600 and alert.details["threshold_seconds"] == 6 * 3600
    assert alert.details["engines"] == ["bing", "google"]
    assert f"@{ZWSP}everyone" in alert.title and "@everyone" not in alert.text
    assert "silent for 7 h" in alert.title
    assert "bing, google" in alert.text and "every 1 h" in alert.text and "scrapy health" in alert.text
    assert "2026-12-02 05:00 UTC" in alert.text
    assert "<b>@everyone" not in alert.html and "&lt;b&gt;@everyone&lt;/b&gt;" in alert.html


def test_the_news_again_alert():
    alert = news_again_alert("climate", NOW - HOUR * 9, NOW - timedelta(minutes=3), NOW, ["google"])
    assert alert.event == SILENCE and alert.details["state"] == ENDED and alert.topic == "climate"
    assert "news again" in alert.title and "after 8 h 57 min without one" in alert.text


def test_durations_for_people():
    assert [duration(s) for s in (10, 45 * 60, 3600, 7.5 * 3600, 76 * 3600, 48 * 3600)] == [
        "1 min",
        "45 min",
        "1 h",
        "7 h 30 min",
        "3 d 4 h",
        "2 d",
    ]


# ---- the moments kept between checks ----------------------------------------------------------------------------
def test_moments_kept_between_checks_equal_a_full_read():
    """Read in pieces — each check the rows since the last watermark minus an overlap, some committed late with an
    earlier time, topics deactivated and added — the kept moments are what one full read gives."""
    import random

    from topicstreams.alerts.topic_silence import TopicMoments

    rng = random.Random(5)
    rows = sorted(
        ((f"t{rng.randrange(4)}", float(rng.randrange(0, 100_000)), rng.randrange(1, 4)) for _ in range(2_000)),
        key=lambda row: row[1],
    )
    # each row becomes visible at its time, but one in ten only 200 s later (another process's late commit)
    visible_at = [moment + (200 if index % 10 == 0 else 0) for index, (_, moment, _) in enumerate(rows)]
    overlap = 300.0
    kept = TopicMoments()
    topics = ["t0", "t1", "t2", "t3"]
    for clock in range(0, 110_000, 900):
        if clock == 45_000:
            topics = ["t0", "t1", "t3", "t4"]  # t2 deactivated, t4 added
        seen = [row for row, at in zip(rows, visible_at, strict=True) if at <= clock]
        if kept.watermark is None:
            kept.replace(topics, seen)
        else:
            since = kept.watermark - overlap
            kept.merge(topics, [row for row in seen if row[1] > since], since)
    full = TopicMoments()
    full.replace(topics, rows)
    assert set(kept.times) == {"t0", "t1", "t3", "t4"}
    for topic in kept.times:
        assert list(kept.times[topic]) == list(full.times[topic]) and list(kept.counts[topic]) == list(
            full.counts[topic]
        ), topic
    kept.trim(50_000.0)
    assert all(moment > 50_000.0 for times in kept.times.values() for moment in times)
    assert len(kept.times["t0"]) == sum(1 for moment in full.times["t0"] if moment > 50_000.0)


def test_judging_kept_moments_is_judging_datetimes():
    from datetime import UTC, datetime, timedelta

    from topicstreams.alerts.topic_silence import judge_moments, judge_silence

    now = datetime(2026, 12, 2, 12, tzinfo=UTC)
    moments = [
        (now - timedelta(hours=hours, seconds=seconds), count)
        for hours in range(10, 200, 3)
        for seconds, count in ((0, 2), (30, 1))
    ]
    by_datetimes = judge_silence("t", moments, now, baseline_days=14, factor=2, min_events=10, running=True)
    ordered = sorted((moment.timestamp(), count) for moment, count in moments)
    by_seconds = judge_moments(
        "t",
        [m for m, _ in ordered],
        [c for _, c in ordered],
        now,
        baseline_days=14,
        factor=2,
        min_events=10,
        running=True,
    )
    assert by_datetimes == by_seconds
    assert by_seconds.silent and by_seconds.gap == 3 * 3600 and by_seconds.arrivals == 64
