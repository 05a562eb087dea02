"""The target health score: hand-computed cases, a randomized check against the formula, bands, smoothing."""

from __future__ import annotations

import random

import pytest

from topicstreams.config.packaged import load_defaults
from topicstreams.health.score import (
    DEFAULT_WEIGHTS,
    NOT_ENOUGH,
    Smoothed,
    Window,
    badness,
    band_of,
    health_score,
)

ZERO = Window()  # an empty baseline: every rate 0, p95 0 (taken as 1 ms)


# ---------------------------------------------------------------------------------------------------------
# Hand-computed cases


def test_half_hard_blocks_half_challenges_against_a_zero_baseline():
    # hard_block: rate 0.5, badness min(1, 0.5 / 0.2) = 1 -> penalty 35
    # challenge:  rate 0.5, badness 1                     -> penalty 25
    # soft_block 0, latency: p95 0 vs base max(0, 1) = 1 -> (0 - 1) / 2 < 0 -> 0
    # score = round(100 - 60) = 40
    current = Window(requests=100, hard_blocks=50, challenges=50)
    assert health_score(current, ZERO) == (40, ["hard_block", "challenge"])


def test_a_clean_window_scores_100_without_reasons():
    assert health_score(Window(requests=500, p95_latency_ms=800), Window(1000, p95_latency_ms=800)) == (100, [])


def test_only_the_excess_over_the_baseline_rate_counts():
    baseline = Window(requests=1000, hard_blocks=100)  # rate 0.10
    # current 30/200 = 0.15: excess 0.05 -> badness 0.25 -> penalty 35 * 0.25 = 8.75 -> round(91.25) = 91
    assert health_score(Window(requests=200, hard_blocks=30), baseline) == (91, ["hard_block"])
    # current equal to the baseline rate: no penalty at all
    assert health_score(Window(requests=200, hard_blocks=20), baseline) == (100, [])
    # current below the baseline rate: no bonus either (badness clamped at 0), still 100
    assert health_score(Window(requests=200, hard_blocks=2), baseline) == (100, [])
    # the same 0.15 against a zero baseline: badness 0.75 -> 26.25 -> round(73.75) = 74
    assert health_score(Window(requests=200, hard_blocks=30), ZERO) == (74, ["hard_block"])


def test_the_excess_of_each_rate_is_taken_against_its_own_baseline_rate():
    baseline = Window(requests=100, hard_blocks=0, challenges=10, soft_blocks=20)  # 0, 0.10, 0.20
    current = Window(requests=100, hard_blocks=0, challenges=20, soft_blocks=20)  # 0, 0.20, 0.20
    # challenge: excess 0.10 -> badness 0.5 -> 12.5; soft_block: excess 0 -> 0; score round(87.5) = 88 (half to even)
    assert health_score(current, baseline) == (88, ["challenge"])


def test_a_rate_takes_at_most_its_full_penalty():
    # 20 points over the baseline is already the whole penalty: 0.2 / 0.2 = 1 -> 35 -> 65
    assert health_score(Window(requests=100, hard_blocks=20), ZERO) == (65, ["hard_block"])
    # 100 % hard blocks is 5 x the span but still only 35 -> 65
    assert health_score(Window(requests=100, hard_blocks=100), ZERO) == (65, ["hard_block"])
    # everything at its worst: 35 + 25 + 25 + 15 = 100 -> 0, never below
    worst = Window(requests=100, hard_blocks=100, challenges=100, soft_blocks=100, p95_latency_ms=10_000)
    score, reasons = health_score(worst, Window(100, p95_latency_ms=1000))
    assert score == 0
    assert reasons == ["hard_block", "challenge", "soft_block", "latency"]


@pytest.mark.parametrize(
    ("p95", "score", "reasons"),
    [
        (1000, 100, []),  # (1 - 1) / 2 = 0
        (500, 100, []),  # faster than normal: clamped at 0, no bonus
        (1500, 96, ["latency"]),  # (1.5 - 1) / 2 = 0.25 -> 3.75 -> round(96.25) = 96
        (2000, 92, ["latency"]),  # 2x: (2 - 1) / 2 = 0.5 -> 7.5 -> round(92.5) = 92 (Python rounds half to even)
        (3000, 85, ["latency"]),  # 3x: (3 - 1) / 2 = 1 -> the whole 15 -> 85
        (9000, 85, ["latency"]),  # 9x: capped at 1 -> 85
    ],
)
def test_latency_against_the_baseline_p95(p95, score, reasons):
    assert health_score(Window(requests=100, p95_latency_ms=p95), Window(1000, p95_latency_ms=1000)) == (score, reasons)


def test_latency_badness_at_2x_and_3x():
    base = Window(1000, p95_latency_ms=400)
    assert badness(Window(100, p95_latency_ms=800), base)["latency"] == pytest.approx(0.5)
    assert badness(Window(100, p95_latency_ms=1200), base)["latency"] == pytest.approx(1.0)
    assert badness(Window(100, p95_latency_ms=4000), base)["latency"] == 1.0


@pytest.mark.parametrize("base_p95", [0.0, 0.5, 1.0])
def test_a_baseline_p95_under_1_ms_is_taken_as_1_ms(base_p95):
    base = Window(1000, p95_latency_ms=base_p95)
    # now 1 ms: (1 / 1 - 1) / 2 = 0 -> 100
    assert health_score(Window(100, p95_latency_ms=1), base) == (100, [])
    # now 3 ms: (3 / 1 - 1) / 2 = 1 -> 15 -> 85 (no division by zero, no infinity)
    assert health_score(Window(100, p95_latency_ms=3), base) == (85, ["latency"])
    # now 1.5 ms: (1.5 - 1) / 2 = 0.25 -> 3.75 -> 96
    assert health_score(Window(100, p95_latency_ms=1.5), base) == (96, ["latency"])


def test_an_empty_baseline_window_has_rate_zero():
    assert Window().rate(0) == 0.0
    assert Window(requests=0, hard_blocks=5).rate(5) == 0.0
    # 10/100 = 0.1 over an empty baseline: badness 0.5 -> challenge 12.5 -> round(87.5) = 88
    assert health_score(Window(100, challenges=10), Window(0, challenges=3)) == (88, ["challenge"])


def test_min_requests_boundary():
    window = Window(requests=49, hard_blocks=49)
    assert health_score(window, ZERO) == (None, [NOT_ENOUGH])
    assert NOT_ENOUGH == "not enough requests to judge"
    assert health_score(Window(requests=50, hard_blocks=50), ZERO) == (65, ["hard_block"])
    # a custom minimum
    assert health_score(Window(requests=9), ZERO, min_requests=10) == (None, [NOT_ENOUGH])
    assert health_score(Window(requests=10), ZERO, min_requests=10) == (100, [])
    # an empty window never has a score with the default minimum
    assert health_score(Window(), ZERO) == (None, ["not enough requests to judge"])


def test_equal_penalties_are_ordered_as_the_weights():
    # challenge and soft_block: both 0.1 -> badness 0.5 -> 12.5 each: a tie, broken in the weights' order
    current = Window(requests=100, challenges=10, soft_blocks=10)
    assert health_score(current, ZERO) == (75, ["challenge", "soft_block"])
    reversed_weights = {"soft_block": 25, "challenge": 25, "hard_block": 35, "latency": 15}
    assert health_score(current, ZERO, reversed_weights) == (75, ["soft_block", "challenge"])


def test_reasons_are_largest_penalty_first():
    # hard_block 0.02 -> 0.1 -> 3.5; soft_block 0.2 -> 1 -> 25; latency 2x -> 7.5; challenge 0
    current = Window(requests=100, hard_blocks=2, soft_blocks=20, p95_latency_ms=2000)
    score, reasons = health_score(current, Window(1000, p95_latency_ms=1000))
    # 100 - (3.5 + 25 + 7.5) = 64
    assert score == 64
    assert reasons == ["soft_block", "latency", "hard_block"]


def test_a_penalty_just_under_1_is_not_a_reason():
    # 5/1000 = 0.005 -> badness 0.025 -> penalty 35 * 0.025 = 0.875 < 1: the score moves, no reason given
    assert health_score(Window(requests=1000, hard_blocks=5), ZERO) == (99, [])
    # 6/1000 = 0.006 -> 0.03 -> 1.05 >= 1: a reason (score round(98.95) = 99)
    assert health_score(Window(requests=1000, hard_blocks=6), ZERO) == (99, ["hard_block"])
    # latency 1.12x: (0.12) / 2 = 0.06 -> 15 * 0.06 = 0.9: no reason
    assert health_score(Window(100, p95_latency_ms=1120), Window(100, p95_latency_ms=1000)) == (99, [])


def test_a_penalty_of_exactly_1_is_a_reason():
    weights = {"hard_block": 35, "challenge": 25, "soft_block": 25, "latency": 4}
    # latency 1.5x: (1.5 - 1) / 2 = 0.25 (exact in binary) -> 4 * 0.25 = 1.0 -> a reason; round(99.0) = 99
    score, reasons = health_score(Window(100, p95_latency_ms=1500), Window(100, p95_latency_ms=1000), weights)
    assert (score, reasons) == (99, ["latency"])
    # weight 3.96: 0.99 -> not a reason, same score round(99.01) = 99
    weights["latency"] = 3.96
    assert health_score(Window(100, p95_latency_ms=1500), Window(100, p95_latency_ms=1000), weights) == (99, [])


def test_custom_weights():
    weights = {"hard_block": 50, "challenge": 50, "soft_block": 0, "latency": 0}
    # hard 10/100 -> 0.5 -> 25; soft 100 % -> 1 x 0 = 0 (not a reason); latency 10x x 0 = 0
    current = Window(requests=100, hard_blocks=10, soft_blocks=100, p95_latency_ms=10_000)
    assert health_score(current, Window(100, p95_latency_ms=1000), weights) == (75, ["hard_block"])
    # doubled weights double the penalty: challenge 0.1 -> 0.5 x 50 = 25 -> 75
    assert health_score(Window(100, challenges=10), ZERO, weights) == (75, ["challenge"])


def test_unknown_signal_in_the_weights_is_refused():
    with pytest.raises(ValueError, match="captcha"):
        health_score(Window(100), ZERO, {**DEFAULT_WEIGHTS, "captcha": 10})


def test_default_weights_are_the_packaged_defaults():
    assert dict(DEFAULT_WEIGHTS) == {"hard_block": 35, "challenge": 25, "soft_block": 25, "latency": 15}
    packaged = load_defaults()["health"]["weights"]
    assert packaged == dict(DEFAULT_WEIGHTS)
    assert list(packaged) == list(DEFAULT_WEIGHTS)  # the same tie order
    assert sum(DEFAULT_WEIGHTS.values()) == 100


# ---------------------------------------------------------------------------------------------------------
# Randomized: health_score against an independent reading of the specification


SIGNALS = ("hard_block", "challenge", "soft_block", "latency")


def reference_score(current: Window, baseline: Window, weights: dict, min_requests: int):
    if current.requests < min_requests:
        return None, ["not enough requests to judge"]

    def share(count, total):
        return 0.0 if total == 0 else count / total

    def rate_badness(now, base):
        return min(1.0, max(0.0, (now - base) / 0.20))

    pairs = {
        "hard_block": (current.hard_blocks, baseline.hard_blocks),
        "challenge": (current.challenges, baseline.challenges),
        "soft_block": (current.soft_blocks, baseline.soft_blocks),
    }
    penalty = {}
    for name, weight in weights.items():
        if name == "latency":
            base = baseline.p95_latency_ms if baseline.p95_latency_ms > 1 else 1
            bad = min(1.0, max(0.0, (current.p95_latency_ms / base - 1) / 2))
        else:
            now_count, base_count = pairs[name]
            bad = rate_badness(share(now_count, current.requests), share(base_count, baseline.requests))
        penalty[name] = weight * bad
    total = 0.0
    for value in penalty.values():
        total += value
    ranked = []
    for position, name in enumerate(weights):
        if penalty[name] >= 1:
            ranked.append((-penalty[name], position, name))
    ranked.sort()
    return round(100 - total), [name for _, _, name in ranked]


def random_window(rng: random.Random, *, empty_ok: bool) -> Window:
    requests = (
        rng.choice([0, 0, 1, 10, 49, 50, 51, 100, 1000])
        if rng.random() < 0.2
        else rng.randint(0 if empty_ok else 1, 400)
    )
    counts = []
    left = requests
    for _ in range(3):
        # often a round share so that exact ties and caps come up, else anything up to what is left
        value = rng.choice([0, left // 2, left // 5, left // 10, left]) if rng.random() < 0.3 else rng.randint(0, left)
        counts.append(value)
        left -= value
    rng.shuffle(counts)
    p95 = rng.choice([0.0, 0.5, 1.0, 100.0, 1000.0, 2000.0, 3000.0]) if rng.random() < 0.3 else rng.uniform(0, 5000)
    return Window(requests, *counts, p95)


def random_weights(rng: random.Random) -> dict:
    roll = rng.random()
    if roll < 0.5:
        return dict(DEFAULT_WEIGHTS)
    names = list(SIGNALS)
    rng.shuffle(names)
    if roll < 0.75:
        return {name: rng.choice([0, 1, 10, 25, 35, 50]) for name in names}
    return {name: rng.uniform(0, 60) for name in names}


def test_randomized_windows_match_the_formula():
    rng = random.Random(20261129)
    judged = with_reasons = 0
    for _ in range(4000):
        current = random_window(rng, empty_ok=True)
        baseline = random_window(rng, empty_ok=True)
        weights = random_weights(rng)
        min_requests = rng.choice([1, 10, 50, 50, 50, 100])
        expected = reference_score(current, baseline, weights, min_requests)
        assert health_score(current, baseline, weights, min_requests) == expected, (current, baseline, weights)
        if weights == dict(DEFAULT_WEIGHTS) and expected[0] is not None:
            assert 0 <= expected[0] <= 100
            # the default call is the default weights and 50 requests
            if min_requests == 50:
                assert health_score(current, baseline) == expected
        judged += expected[0] is not None
        with_reasons += bool(expected[1]) and expected[0] is not None
    # the sample covers both sides of the minimum and windows with and without reasons
    assert 1000 < judged < 4000
    assert with_reasons > 500


# ---------------------------------------------------------------------------------------------------------
# Bands and smoothing


@pytest.mark.parametrize(
    ("score", "band"),
    [(100, "ok"), (80, "ok"), (79, "degraded"), (50, "degraded"), (49, "critical"), (0, "critical"), (None, "unknown")],
)
def test_band_boundaries(score, band):
    assert band_of(score) == band


def test_smoothing_weight_1_is_no_smoothing():
    smoothed = Smoothed(1.0)
    for score in (100, 20, 75, 0, 90):
        assert smoothed.add(score) == score
    assert smoothed.value == 90


def test_smoothing_0_3_sequence():
    smoothed = Smoothed(0.3)
    assert smoothed.value is None
    assert smoothed.add(100) == 100  # the first score is taken as it is
    assert smoothed.add(40) == pytest.approx(82.0)  # 0.3 * 40 + 0.7 * 100 = 12 + 70
    assert smoothed.add(40) == pytest.approx(69.4)  # 0.3 * 40 + 0.7 * 82 = 12 + 57.4
    assert smoothed.add(100) == pytest.approx(78.58)  # 0.3 * 100 + 0.7 * 69.4 = 30 + 48.58
    assert smoothed.value == pytest.approx(78.58)


def test_smoothing_reset():
    smoothed = Smoothed(0.3)
    smoothed.add(100)
    smoothed.add(0)  # 70
    smoothed.reset()
    assert smoothed.value is None
    assert smoothed.add(40) == 40  # starts afresh
    smoothed.reset(50)
    assert smoothed.add(100) == pytest.approx(65.0)  # 0.3 * 100 + 0.7 * 50
