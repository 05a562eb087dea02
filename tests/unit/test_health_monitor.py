"""One engine's health over time: the rolling window, the baseline, smoothing, the bands' actions; window stats."""

from __future__ import annotations

import pytest

from topicstreams.config.loading import load_config
from topicstreams.engines.classify import ResponseClass
from topicstreams.health.band import (
    PAUSE,
    RECOVER,
    SLOW_DOWN,
    EngineHealth,
    HealthSettings,
)
from topicstreams.health.score import DEFAULT_WEIGHTS, Window
from topicstreams.health.window import (
    LatencyHistory,
    RollingWindow,
    Sample,
    WindowStats,
    percentile,
)

OK, HARD, CHALLENGE, SOFT, ERROR = (
    ResponseClass.OK,
    ResponseClass.HARD_BLOCK,
    ResponseClass.CHALLENGE,
    ResponseClass.SOFT_BLOCK,
    ResponseClass.ERROR,
)

# A baseline with enough requests, zero block rates and a p95 of 1 s: responses of 0.2 s never cost latency.
CALM = Window(requests=10_000, p95_latency_ms=1000)


def settings(**changes) -> HealthSettings:
    values = {
        "weights": dict(DEFAULT_WEIGHTS),
        "min_requests": 10,
        "window": 1000.0,
        "smoothing": 1.0,
        "degrade_factor": 2.0,
        "baseline_days": 14.0,
    }
    values.update(changes)
    return HealthSettings(**values)


def health(history: Window | None = CALM, **changes) -> EngineHealth:
    return EngineHealth(settings(**changes), history=history)


def feed(engine: EngineHealth, classes, start: float, latency: float | None = 0.2, step: float = 1.0):
    """Observe one sample per class, ``step`` seconds apart from ``start``; return the assessments."""
    return [engine.observe(Sample(start + i * step, cls, latency)) for i, cls in enumerate(classes)]


def actions(assessments) -> list:
    return [a.action for a in assessments if a.action is not None]


# ---------------------------------------------------------------------------------------------------------
# Settings


def test_settings_from_the_packaged_config():
    loaded = HealthSettings.from_config(load_config({}, environ={}).get("health"))
    assert loaded == HealthSettings(
        weights=dict(DEFAULT_WEIGHTS),
        min_requests=50,
        window=600.0,
        smoothing=0.3,
        degrade_factor=2.0,
        baseline_days=14.0,
    )


# ---------------------------------------------------------------------------------------------------------
# Scores and actions


def test_no_score_and_no_action_below_min_requests():
    engine = health()
    # 9 hard blocks: would be critical-ish, but 9 < 10 requests -> unknown, nothing changes
    for a in feed(engine, [HARD] * 9, 0):
        assert a.raw is None and a.score is None
        assert a.band == "unknown"
        assert a.reasons == ["not enough requests to judge"]
        assert a.action is None
    assert engine.in_force == "ok" and not engine.paused
    assert engine.smoothed.value is None  # no score was smoothed


def test_ok_to_degraded_slows_down_once_and_back_to_ok_recovers():
    engine = health()
    first = feed(engine, [OK] * 10, 0)
    assert first[-1].raw == 100 and first[-1].band == "ok" and first[-1].action is None
    # 2 hard blocks in 12: 1/6 -> badness (1/6) / 0.2 = 0.8333 -> 29.17 -> round(70.83) = 71: degraded
    step = feed(engine, [HARD, HARD], 10)
    assert step[0].action is None  # 1 in 11: 0.0909 / 0.2 = 0.4545 -> 15.9 -> 84: still ok
    assert step[0].score == 84
    assert step[1].score == 71 and step[1].band == "degraded" and step[1].reasons == ["hard_block"]
    assert step[1].action == SLOW_DOWN
    assert engine.in_force != "ok" and not engine.paused and engine.in_force == "degraded"
    # more degraded scores: nothing new to do. 2 in 13..17: 73, 75, 77, 78, 79
    # (2/17 = 0.1176 -> badness 0.588 -> 20.59 -> round(79.41) = 79)
    more = feed(engine, [OK] * 5, 12)
    assert [a.score for a in more] == [73, 75, 77, 78, 79]
    assert all(a.band == "degraded" for a in more)
    assert actions(more) == []
    # 2 in 18: 0.1111 -> 0.5556 -> 19.44 -> round(80.56) = 81: ok again -> recover
    back = engine.observe(Sample(17, OK, 0.2))
    assert (back.score, back.band, back.action) == (81, "ok", RECOVER)
    assert engine.in_force == "ok"
    assert actions(feed(engine, [OK] * 5, 18)) == []


@pytest.mark.parametrize("before", ["ok", "degraded"])
def test_any_band_to_critical_pauses(before):
    engine = health()
    start = 0
    if before == "degraded":
        feed(engine, [OK] * 10, 0)
        assert actions(feed(engine, [HARD, HARD], 10)) == [SLOW_DOWN]
        start = 12
    assert engine.in_force == before
    # hard blocks and challenges alternating: the rates climb until hard (capped) 35 + challenge 25 -> 40
    result = feed(engine, [HARD, CHALLENGE] * 20, start)
    assert actions(result) == [PAUSE]
    paused_at = next(a for a in result if a.action == PAUSE)
    assert paused_at.band == "critical" and paused_at.score < 50
    assert engine.paused and engine.in_force == "critical"
    assert result[-1].score is not None and result[-1].score < 50


def test_ok_straight_to_critical_pauses_without_slowing_down_first():
    engine = health()
    # 10 hard blocks + challenges... all 10 hard blocks: 35 -> 65 is only degraded; use hard + challenge
    result = feed(engine, [HARD, CHALLENGE] * 5, 0)
    # 5/10 each: 35 + 25 -> 40
    assert result[-1].raw == 40 and result[-1].reasons == ["hard_block", "challenge"]
    assert actions(result) == [PAUSE]


def test_while_paused_scores_go_on_but_call_for_nothing():
    engine = health(window=30.0)
    assert actions(feed(engine, [HARD, CHALLENGE] * 5, 0)) == [PAUSE]
    # the canaries keep running; 30 s later the window holds only ok responses and scores 100
    recovered = feed(engine, [OK] * 60, 10)
    assert recovered[-1].raw == 100 and recovered[-1].score == 100 and recovered[-1].band == "ok"
    assert actions(recovered) == []
    assert engine.paused and engine.in_force == "critical"


def test_resume_forgets_the_window_resets_smoothing_and_leaves_the_engine_slowed():
    engine = health(smoothing=0.3)
    feed(engine, [OK] * 10, 0)
    assert actions(feed(engine, [HARD, CHALLENGE] * 40, 10))[-1] == PAUSE
    assert engine.paused
    assert engine.smoothed.value is not None and engine.smoothed.value < 50
    engine.resume(200)
    assert engine.in_force == "degraded" and engine.in_force != "ok" and not engine.paused
    assert engine.smoothed.value is None
    assert len(engine.window.samples) == 0  # every sample was before 200
    # judging starts afresh: 9 ok responses are not enough for a score
    waiting = feed(engine, [OK] * 9, 200)
    assert all(a.score is None and a.action is None for a in waiting)
    assert waiting[-1].stats.requests == 9
    # the 10th gives 100, not smoothed with the critical scores before the pause -> recover
    back = engine.observe(Sample(209, OK, 0.2))
    assert (back.raw, back.score, back.band, back.action) == (100, 100, "ok", RECOVER)
    assert engine.in_force == "ok"


def test_resume_keeps_samples_from_the_moment_of_resuming_on():
    engine = health()
    feed(engine, [HARD, CHALLENGE] * 5, 0)
    assert engine.paused
    engine.resume(5)  # samples at 0..4 are forgotten, 5..9 kept
    assert [s.at for s in engine.window.samples] == [5, 6, 7, 8, 9]


def test_a_new_pause_after_resume_needs_min_requests_new_critical_samples():
    engine = health()
    assert actions(feed(engine, [HARD, CHALLENGE] * 5, 0)) == [PAUSE]
    engine.resume(100)
    result = feed(engine, [HARD, CHALLENGE] * 5, 100)
    assert [a.action for a in result[:9]] == [None] * 9
    assert all(a.score is None for a in result[:9])
    assert result[9].stats.requests == 10 and result[9].score == 40
    assert result[9].action == PAUSE
    assert engine.paused


def test_a_degraded_score_after_resume_changes_nothing():
    engine = health()
    feed(engine, [HARD, CHALLENGE] * 5, 0)
    engine.resume(100)
    # 2 hard blocks in 10: 0.2 -> 35 -> 65 degraded: the engine is already slowed
    result = feed(engine, [OK] * 8 + [HARD] * 2, 100)
    assert result[-1].band == "degraded"
    assert actions(result) == []
    assert engine.in_force == "degraded"


def test_the_rolling_window_forgets_samples_older_than_window_seconds():
    engine = health(window=60.0)
    feed(engine, [HARD] * 20, 0)  # t = 0..19
    late = engine.observe(Sample(70, OK, 0.2))
    # at 70 the window keeps samples after 10: t = 11..19 (9 hard blocks) and the ok one
    assert late.stats.requests == 10 and late.stats.hard_blocks == 9 and late.stats.ok == 1
    much_later = engine.observe(Sample(200, OK, 0.2))
    assert much_later.stats.requests == 1 and much_later.stats.hard_blocks == 0
    assert much_later.score is None


def test_baseline_falls_back_to_zero_rates_and_own_p95_without_history():
    engine = health(history=None)
    latencies = [0.1 * (i + 1) for i in range(10)]  # 100, 200, ..., 1000 ms
    for i, latency in enumerate(latencies):
        last = engine.observe(Sample(i, OK, latency))
    # own p95 so far: nearest rank ceil(0.95 * 10) = 10th -> 1000 ms
    assert last.baseline == Window(0, 0, 0, 0, pytest.approx(1000.0))
    assert last.baseline.requests == 0 and last.baseline.hard_blocks == 0
    assert last.raw == 100
    assert engine.baseline().p95_latency_ms == pytest.approx(1000.0)


def test_baseline_without_enough_history_is_the_fallback():
    history = Window(requests=9, hard_blocks=9, p95_latency_ms=50)  # 9 < min_requests 10
    engine = health(history=history)
    feed(engine, [HARD] * 10, 0, latency=0.3)
    base = engine.baseline()
    assert base != history
    assert base.requests == 0 and base.hard_blocks == 0
    assert base.p95_latency_ms == pytest.approx(300.0)  # the engine's own latencies
    # against zero rates, 100 % hard blocks costs the full 35
    assert engine.assess(9).raw == 65


def test_baseline_is_the_history_once_it_holds_min_requests():
    history = Window(requests=10, hard_blocks=5, p95_latency_ms=200)  # rate 0.5, exactly min_requests
    engine = health(history=history)
    result = feed(engine, [HARD, OK] * 5, 0, latency=0.2)
    assert engine.baseline() == history
    assert result[-1].baseline == history
    # current rate 0.5 = the baseline's: no hard_block penalty; latency 200 ms vs 200 ms: none
    assert (result[-1].raw, result[-1].reasons) == (100, [])
    # the same responses without that history: zero baseline rate -> 35 off
    fresh = health(history=None)
    assert feed(fresh, [HARD, OK] * 5, 0, latency=0.2)[-1].raw == 65


def test_latency_against_the_history_p95():
    engine = health(history=Window(requests=1000, p95_latency_ms=100))
    # every response 0.3 s: p95 300 ms = 3x the baseline -> latency 15 -> 85
    result = feed(engine, [OK] * 10, 0, latency=0.3)
    assert (result[-1].raw, result[-1].reasons) == (85, ["latency"])


def test_smoothing_delays_the_band_change():
    # A 10 s window of 10 samples a second apart: each new hard block pushes out one ok response.
    engine = health(window=10.0, smoothing=0.3)
    assert feed(engine, [OK] * 10, 0)[-1].score == 100
    result = feed(engine, [HARD] * 4, 10)
    assert [a.stats.requests for a in result] == [10] * 4
    assert [a.stats.hard_blocks for a in result] == [1, 2, 3, 4]
    # raw: k hard blocks in 10 -> badness min(1, k / 10 / 0.2): k=1 -> 17.5 -> 82 (82.5, half to even);
    # k >= 2 -> the full 35 -> 65
    assert [a.raw for a in result[1:]] == [65, 65, 65]
    # smoothed, 0.3 x raw + 0.7 x previous, from 100:
    #   k=1: 0.3 x 82 + 0.7 x 100   = 94.6    -> 95 ok
    #   k=2: 0.3 x 65 + 0.7 x 94.6  = 85.72   -> 86 ok   (unsmoothed: 65, degraded already)
    #   k=3: 0.3 x 65 + 0.7 x 85.72 = 79.504  -> 80 ok
    #   k=4: 0.3 x 65 + 0.7 x 79.504 = 75.153 -> 75 degraded -> slow down
    assert [a.score for a in result] == [95, 86, 80, 75]
    assert [a.band for a in result] == ["ok", "ok", "ok", "degraded"]
    assert [a.action for a in result] == [None, None, None, SLOW_DOWN]
    assert engine.smoothed.value == pytest.approx(
        0.3 * 65 + 0.7 * (0.3 * 65 + 0.7 * (0.3 * 65 + 0.7 * (0.3 * result[0].raw + 0.7 * 100)))
    )

    unsmoothed = health(window=10.0, smoothing=1.0)
    feed(unsmoothed, [OK] * 10, 0)
    assert [a.action for a in feed(unsmoothed, [HARD] * 4, 10)] == [None, SLOW_DOWN, None, None]


# ---------------------------------------------------------------------------------------------------------
# Window statistics


def test_percentile_is_nearest_rank():
    assert percentile([], 0.95) is None
    assert percentile([7.0], 0.5) == 7.0 and percentile([7.0], 0.95) == 7.0
    ten = [float(i) for i in range(1, 11)]
    assert percentile(ten, 0.50) == 5.0  # ceil(5) = 5th
    assert percentile(ten, 0.95) == 10.0  # ceil(9.5) = 10th
    twenty = [float(i) for i in range(1, 21)]
    assert percentile(twenty, 0.95) == 19.0  # ceil(19) = 19th
    hundred = [float(i) for i in range(1, 101)]
    assert percentile(hundred, 0.50) == 50.0 and percentile(hundred, 0.95) == 95.0
    assert percentile([1.0, 2.0, 3.0], 0.5) == 2.0  # ceil(1.5) = 2nd


def test_window_stats_counts_and_sums():
    samples = [
        Sample(0, OK, 0.1, bytes=1000, items=10, valid_items=9),
        Sample(1, OK, 0.2, bytes=2000, items=8, valid_items=8),
        Sample(2, HARD, 0.3, bytes=10),
        Sample(3, CHALLENGE, 0.4, bytes=20),
        Sample(4, CHALLENGE, None, bytes=30),
        Sample(5, SOFT, 0.5, bytes=40, items=0, parse_error=True),
        Sample(6, ERROR, None),
        Sample(7, OK, 1.0, bytes=500, items=3, valid_items=1, parse_error=True),
    ]
    stats = WindowStats.of(samples)
    assert (stats.requests, stats.ok, stats.hard_blocks, stats.challenges, stats.soft_blocks, stats.errors) == (
        8,
        3,
        1,
        2,
        1,
        1,
    )
    assert (stats.items, stats.valid_items, stats.parse_errors, stats.bytes) == (21, 18, 2, 3600)
    # browser seconds: the latencies that are known, 0.1 + 0.2 + 0.3 + 0.4 + 0.5 + 1.0
    assert stats.browser_seconds == pytest.approx(2.5)
    # percentiles over the 6 known latencies (100, 200, 300, 400, 500, 1000 ms), the None ones left out:
    # p50 -> ceil(3) = 3rd = 300; p95 -> ceil(5.7) = 6th = 1000
    assert stats.p50_latency_ms == pytest.approx(300.0)
    assert stats.p95_latency_ms == pytest.approx(1000.0)
    assert stats.window() == Window(8, 1, 2, 1, pytest.approx(1000.0))
    counts = stats.counts()
    assert counts["requests"] == 8 and counts["bytes"] == 3600 and counts["p95_latency_ms"] == pytest.approx(1000)


def test_window_stats_of_nothing_and_of_unknown_latencies():
    empty = WindowStats.of([])
    assert empty == WindowStats()
    assert empty.p50_latency_ms is None and empty.p95_latency_ms is None
    assert empty.window() == Window()
    unknown = WindowStats.of([Sample(0, ERROR, None), Sample(1, OK, None)])
    assert unknown.requests == 2 and unknown.browser_seconds == 0
    assert unknown.p95_latency_ms is None
    assert unknown.window().p95_latency_ms == 0.0


def test_rolling_window_trim_and_forget_before():
    window = RollingWindow(10)
    for t in (0, 4, 9, 12, 15):
        window.add(Sample(t, OK, 0.1))
    assert window.stats(15).requests == 3  # 0 (15 s old) and 4 (11 s old) are forgotten
    assert len(window.samples) == 3
    assert window.stats(19.5).requests == 2  # 12 and 15 (9 is 10.5 s old)
    window.forget_before(15)
    assert [s.at for s in window.samples] == [15]  # a sample at the moment itself stays
    assert window.stats(15).requests == 1


def test_latency_history_keeps_the_newest_and_knows_its_p95():
    history = LatencyHistory(limit=20)
    assert history.p95_ms() == 0.0
    history.add(None)
    assert history.p95_ms() == 0.0
    for i in range(1, 41):
        history.add(i / 1000)  # 1 .. 40 ms
    # only the newest 20 (21 .. 40 ms): 19th of them -> 39 ms
    assert len(history.values) == 20
    assert history.p95_ms() == pytest.approx(39.0)
