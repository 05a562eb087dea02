"""The coverage signal's pure parts: the judgement of a window against its baseline (minimum samples, the drop, the
threshold, the parser's veto), and how ``scrapy health`` and ``/monitor`` show it (reason after ``canary mismatch``,
never in the hostility reasons nor the band; the table's cell; the JSON object with nulls where unknown)."""

from __future__ import annotations

import json
from dataclasses import fields
from datetime import UTC, datetime, timedelta

import pytest

from topicstreams.health.coverage_model import (
    COVERAGE,
    MIN_BASELINE_ARTICLES,
    MIN_WINDOW_ARTICLES,
    Coverage,
    judge_coverage,
)
from topicstreams.reports.health_report import EngineReport, engine_json, exit_status, format_table
from topicstreams.storage.engine_status import RUNNING, EngineStatusRow
from topicstreams.web.app import ServiceLevels
from topicstreams.web.monitor_rows import Row, coverage_view

NOW = datetime(2026, 11, 29, 21, 0, 0, tzinfo=UTC)
NO_COVERAGE = {"window": None, "baseline": None, "drop": None}


def status(**values) -> EngineStatusRow:
    row = {field.name: None for field in fields(EngineStatusRow)}
    row.update(
        engine="google",
        node="n1",
        band="ok",
        score=92,
        state=RUNNING,
        reasons=[],
        parser_reasons=[],
        canary_mismatches=[],
        updated_at=NOW - timedelta(seconds=5),
    )
    return EngineStatusRow(**{**row, **values})


def report(**values) -> EngineReport:
    return EngineReport.of("n1", "google", status(**values), NOW)


# ---- the judgement --------------------------------------------------------------------------------------------


def test_window_baseline_and_drop_are_shares_and_their_difference():
    coverage = judge_coverage(expected=20, found=8, baseline_expected=400, baseline_found=320)
    assert (coverage.window, coverage.baseline, coverage.expected, coverage.found) == (0.4, 0.8, 20, 8)
    assert coverage.drop == pytest.approx(0.4)
    assert coverage.as_json() == {"window": 0.4, "baseline": 0.8, "drop": 0.4}


def test_below_the_minimum_samples_a_share_is_unknown_and_so_is_the_drop():
    assert MIN_WINDOW_ARTICLES == 5 and MIN_BASELINE_ARTICLES == 30
    thin_window = judge_coverage(MIN_WINDOW_ARTICLES - 1, 0, 100, 90)
    assert (thin_window.window, thin_window.baseline, thin_window.drop) == (None, 0.9, None)
    assert thin_window.expected == MIN_WINDOW_ARTICLES - 1  # the counts are kept for the stored window all the same
    just = judge_coverage(MIN_WINDOW_ARTICLES, 0, MIN_BASELINE_ARTICLES, MIN_BASELINE_ARTICLES)
    assert (just.window, just.baseline, just.drop) == (0.0, 1.0, 1.0)
    thin_baseline = judge_coverage(10, 2, MIN_BASELINE_ARTICLES - 1, MIN_BASELINE_ARTICLES - 1)
    assert (thin_baseline.window, thin_baseline.baseline, thin_baseline.drop) == (0.2, None, None)
    nothing = judge_coverage(0, 0, 0, 0)
    assert nothing == Coverage(None, None, None, 0, 0)
    assert nothing.as_json() == NO_COVERAGE


def test_the_json_is_rounded_to_three_places():
    coverage = judge_coverage(expected=7, found=2, baseline_expected=90, baseline_found=61)
    assert coverage.as_json() == {"window": 0.286, "baseline": 0.678, "drop": 0.392}
    assert json.loads(json.dumps(coverage.as_json())) == coverage.as_json()


@pytest.mark.parametrize(
    ("counts", "what"),
    [
        ((5, 6, 30, 30), "the window"),
        ((-1, 0, 30, 30), "the window"),
        ((5, -1, 30, 30), "the window"),
        ((5, 5, 30, 31), "the baseline"),
        ((5, 5, -30, 0), "the baseline"),
    ],
)
def test_impossible_counts_are_refused(counts, what):
    with pytest.raises(ValueError, match=what):
        judge_coverage(*counts)


@pytest.mark.parametrize(
    ("window_found", "baseline_found", "low"),
    [
        (6, 80, True),  # 0.6 against 0.8: a drop of 0.2 (0.20000000000000007 in floating point)
        (5, 70, True),  # 0.5 against 0.7: a drop of 0.2 (0.19999999999999996 in floating point), the threshold counts
        (7, 88, False),  # 0.7 against 0.88: 0.18, under the threshold
        (9, 80, False),  # better than its baseline
        (0, 100, True),  # nothing found of what the others found, against everything normally
    ],
)
def test_a_drop_of_the_threshold_or_more_is_low(window_found, baseline_found, low):
    coverage = judge_coverage(10, window_found, 100, baseline_found)
    assert coverage.low(0.2, parser_ok=True) is low


def test_pages_that_do_not_parse_fine_never_make_coverage_low():
    collapsed = judge_coverage(10, 0, 100, 100)
    assert collapsed.drop == 1.0
    assert collapsed.low(0.2, parser_ok=True) and not collapsed.low(0.2, parser_ok=False)
    assert collapsed.as_status(0.2, parser_ok=False) == {"window": 0.0, "baseline": 1.0, "drop": 1.0, "low": False}


def test_an_unknown_drop_is_never_low_and_the_threshold_is_the_configured_one():
    assert not judge_coverage(4, 0, 100, 100).low(0.2, parser_ok=True)  # window too thin
    assert not judge_coverage(10, 0, 29, 29).low(0.2, parser_ok=True)  # no baseline yet
    coverage = judge_coverage(10, 5, 100, 90)  # a drop of 0.4
    assert coverage.low(0.4, True) and not coverage.low(0.5, True)
    assert coverage.as_status(0.4, True) == {"window": 0.5, "baseline": 0.9, "drop": 0.4, "low": True}


# ---- the report -----------------------------------------------------------------------------------------------


def test_low_coverage_is_a_reason_after_canary_mismatch_and_changes_neither_score_nor_band():
    low = report(
        reasons=["latency"],
        canary_mismatches=["q"],
        parser_reasons=["missing source"],
        parser_score=85,
        coverage={"window": 0.3, "baseline": 0.8, "drop": 0.5, "low": True},
    )
    assert low.reasons == ("latency", "canary mismatch", COVERAGE, "missing source")
    assert low.hostility == ("latency",)
    assert (low.score, low.band) == (92, "ok") and exit_status([low]) == 0
    entry = engine_json(low)
    assert entry["coverage"] == {"window": 0.3, "baseline": 0.8, "drop": 0.5}  # "low" is what the reasons say
    assert entry["reasons"] == ["latency", "canary mismatch", "coverage", "missing source"]
    assert (entry["score"], entry["band"]) == (92, "ok")
    fine = report(coverage={"window": 0.75, "baseline": 0.8, "drop": 0.05, "low": False})
    assert fine.reasons == () and engine_json(fine)["coverage"] == {"window": 0.75, "baseline": 0.8, "drop": 0.05}


def test_the_json_coverage_is_always_an_object_with_nulls_where_unknown():
    assert engine_json(report())["coverage"] == NO_COVERAGE  # not judged yet
    assert engine_json(EngineReport("n1", "bing"))["coverage"] == NO_COVERAGE  # no row at all
    partial = report(coverage={"window": 0.5, "baseline": None, "drop": None, "low": False})
    assert engine_json(partial)["coverage"] == {"window": 0.5, "baseline": None, "drop": None}


def test_a_malformed_coverage_value_reads_unknown_and_is_no_reason():
    odd = report(coverage={"window": "<b>0.9</b>", "baseline": float("nan"), "drop": True, "low": "yes"})
    assert engine_json(odd)["coverage"] == NO_COVERAGE
    assert odd.reasons == () and not odd.coverage_low
    assert report(coverage=["not", "a", "mapping"]).reasons == ()
    assert engine_json(report(coverage=["not", "a", "mapping"]))["coverage"] == NO_COVERAGE


def test_the_table_shows_window_slash_baseline_in_its_last_column():
    rows = [
        report(coverage={"window": 0.4213, "baseline": 0.78, "drop": 0.359, "low": True}),
        EngineReport.of(
            "n1",
            "bing",
            status(engine="bing", coverage={"window": None, "baseline": 0.8, "drop": None, "low": False}),
            NOW,
        ),
        EngineReport.of(
            "n1",
            "yahoo",
            status(engine="yahoo", coverage={"window": 0.5, "baseline": None, "drop": None, "low": False}),
            NOW,
        ),
        EngineReport.of("n1", "brave", status(engine="brave"), NOW),
    ]
    lines = format_table(rows).splitlines()
    assert lines[0].split()[-1] == "coverage"
    assert [line.split("  ")[-1].strip() for line in lines[1:]] == ["0.42/0.78", "-/0.80", "0.50/-", "-"]
    assert "coverage" in lines[1].split("  ")[-2]  # the reason, in the reasons column before it


# ---- the monitor's cell ---------------------------------------------------------------------------------------


def test_the_monitor_row_shows_window_against_baseline_and_the_reason_when_low():
    low = Row.of(
        report(
            reasons=["hard_block"],
            canary_mismatches=["q"],
            coverage={"window": 0.31, "baseline": 0.78, "drop": 0.47, "low": True},
        ),
        ServiceLevels(),
        NOW,
    )
    assert low.reasons == ["hard_block", "canary mismatch", "coverage"]
    assert (low.coverage.window, low.coverage.baseline, low.coverage.level, low.coverage.low) == (
        "31 %",
        "78 %",
        "critical",
        True,
    )
    assert low.coverage.title == "finds 31 % of what the other engines find (78 % normally, -47 points)"
    fine = coverage_view(report(coverage={"window": 0.8, "baseline": 0.78, "drop": -0.02, "low": False}))
    assert (fine.window, fine.baseline, fine.level, fine.low) == ("80 %", "78 %", "good", False)
    assert fine.title.endswith("(78 % normally, +2 points)")
    unknown = coverage_view(report())
    assert (unknown.window, unknown.baseline, unknown.level, unknown.known) == ("-", "-", "unknown", False)
    assert "not enough articles" in unknown.title
    no_baseline = coverage_view(report(coverage={"window": 0.5, "baseline": None, "drop": None, "low": False}))
    assert (no_baseline.window, no_baseline.baseline, no_baseline.level, no_baseline.known) == (
        "50 %",
        "-",
        "unknown",
        True,
    )
    assert "no baseline yet" in no_baseline.title
