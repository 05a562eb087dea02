"""``scrapy health``: the report built from engine_status rows (unit), then the command as users run it."""

from __future__ import annotations

import json
import re
from dataclasses import fields
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from tests.support.databases import database_fixture
from tests.support.project import write_config
from topicstreams import ENGINES
from topicstreams.reports.health_report import (
    COLUMNS,
    EngineReport,
    exit_status,
    format_table,
    report_json,
    report_rows,
)
from topicstreams.reports.utc_times import utc_text
from topicstreams.storage.engine_status import (
    COOLING,
    PAUSED,
    RUNNING,
    STALE_AFTER,
    EngineStatusRow,
    add_alert,
    pause,
    read_alerts,
    read_status,
    save_status,
)

NOW = datetime(2026, 11, 29, 21, 0, 0, tzinfo=UTC)
ENGINE_KEYS = [
    "engine",
    "score",
    "band",
    "state",
    "parser_score",
    "p50_ms",
    "p95_ms",
    "cooling_until",
    "reasons",
    "cost",
    "coverage",
    "updated_at",
    "stale",
]
NO_COVERAGE = {"window": None, "baseline": None, "drop": None}


def status(engine: str, node: str = "n1", **values) -> EngineStatusRow:
    """A status row as read from the table; columns not named here are None."""
    row = {field.name: None for field in fields(EngineStatusRow)}
    row.update(
        engine=engine, node=node, band="unknown", state=RUNNING, reasons=[], updated_at=NOW - timedelta(seconds=10)
    )
    return EngineStatusRow(**{**row, **values})


def cells(line: str) -> list[str]:
    """A table line's cells: columns are two or more spaces apart, no value holds two spaces."""
    return re.split(r" {2,}", line.strip())


# --- health_report.py --------------------------------------------------------------------------------------------


def test_rows_are_the_enabled_engines_and_those_with_a_row_in_engines_order():
    statuses = [status("brave", score=85, band="ok"), status("google", node="n2", score=10, band="critical")]
    rows = report_rows(statuses, "n1", ["yahoo", "google"], NOW)
    assert [(row.node, row.engine) for row in rows] == [("n1", "google"), ("n1", "yahoo"), ("n1", "brave")]
    assert rows[0] == EngineReport(node="n1", engine="google")  # enabled, no row: nothing known
    assert rows[2].score == 85 and rows[2].state == RUNNING


def test_all_nodes_orders_by_node_then_engine_and_keeps_this_nodes_enabled_engines():
    statuses = [status("yahoo", node="b"), status("bing", node="b"), status("google", node="a")]
    rows = report_rows(statuses, "c", ["brave"], NOW, all_nodes=True)
    assert [(row.node, row.engine) for row in rows] == [("a", "google"), ("b", "bing"), ("b", "yahoo"), ("c", "brave")]


def test_table_columns_placeholders_and_rounding():
    statuses = [
        status("google", score=91, band="ok", p50_ms=120.5, p95_ms=480.4),
        status(
            "bing",
            score=42,
            band="critical",
            state=PAUSED,
            reasons=["hard_block", "challenge"],
            paused_at=NOW - timedelta(hours=1),
        ),
    ]
    lines = format_table(report_rows(statuses, "n1", [], NOW) + [EngineReport("n1", "brave")]).splitlines()
    assert cells(lines[0]) == list(COLUMNS)
    assert lines[0].index("score") == len("engine") + 2  # two spaces between columns
    assert cells(lines[1]) == ["google", "91", "ok", "running", "-", "121", "480", "-", "-", "-"]
    assert cells(lines[2]) == ["bing", "42", "critical", "paused", "-", "-", "-", "-", "hard_block, challenge", "-"]
    assert cells(lines[3]) == ["brave", "-", "unknown", "-", "-", "-", "-", "-", "-", "-"]
    # aligned: every value starts where its header does
    for column in ("band", "p50 ms", "reasons", "coverage"):
        start = lines[0].index(column)
        assert all(line[start - 2 : start] == "  " and line[start] != " " for line in lines[1:])


def test_all_nodes_table_starts_with_the_node_column():
    lines = format_table(
        report_rows([status("bing", node="n2", score=60, band="degraded")], "n1", ["google"], NOW, all_nodes=True),
        all_nodes=True,
    ).splitlines()
    assert cells(lines[0]) == ["node", *COLUMNS]
    assert [cells(line)[:4] for line in lines[1:]] == [
        ["n1", "google", "-", "unknown"],
        ["n2", "bing", "60", "degraded"],
    ]


def test_cooling_until_shows_only_while_the_cooldown_lasts():
    future = status("google", score=70, band="degraded", state=COOLING, cooling_until=NOW + timedelta(seconds=303))
    past = status("bing", score=70, band="degraded", state=COOLING, cooling_until=NOW - timedelta(seconds=1))
    rows = report_rows([future, past], "n1", [], NOW)
    assert (rows[0].state, rows[0].cooling_until) == (COOLING, NOW + timedelta(seconds=303))
    assert (rows[1].state, rows[1].cooling_until) == (RUNNING, None)
    lines = format_table(rows).splitlines()
    assert cells(lines[1])[3] == "cooling" and cells(lines[1])[7] == "2026-11-29T21:05:03Z"
    assert cells(lines[2])[3] == "running" and cells(lines[2])[7] == "-"
    assert report_json(rows, "n1")["engines"][0]["cooling_until"] == "2026-11-29T21:05:03Z"
    assert report_json(rows, "n1")["engines"][1]["cooling_until"] is None


def test_json_keys_and_nulls():
    statuses = [
        status(
            "google",
            score=88,
            band="ok",
            p50_ms=101.5,
            p95_ms=300.0,
            reasons=["latency"],
            updated_at=datetime(2026, 11, 29, 20, 59, 30, 123456, tzinfo=UTC),
        )
    ]
    report = report_json(report_rows(statuses, "n1", ["google", "bing"], NOW), "n1")
    assert list(report) == ["node", "saturation", "network", "engines"]
    assert report["network"] == {"down": False, "since": None}
    assert report["node"] == "n1" and report["saturation"] is None
    google, bing = report["engines"]
    assert list(google) == ENGINE_KEYS == list(bing)
    assert google == {
        "engine": "google",
        "score": 88,
        "band": "ok",
        "state": "running",
        "parser_score": None,
        "p50_ms": 101.5,
        "p95_ms": 300.0,
        "cooling_until": None,
        "reasons": ["latency"],
        "cost": None,
        "coverage": NO_COVERAGE,
        "updated_at": "2026-11-29T20:59:30Z",
        "stale": False,
    }
    assert bing == {
        "engine": "bing",
        "score": None,
        "band": "unknown",
        "state": None,
        "parser_score": None,
        "p50_ms": None,
        "p95_ms": None,
        "cooling_until": None,
        "reasons": [],
        "cost": None,
        "coverage": NO_COVERAGE,
        "updated_at": None,
        "stale": False,
    }
    assert json.loads(json.dumps(report)) == report


def test_a_row_no_running_crawl_has_written_lately_is_stale_and_the_table_says_so():
    fresh = status("google", score=90, band="ok", updated_at=NOW - STALE_AFTER)
    old = status("bing", score=95, band="ok", updated_at=NOW - STALE_AFTER - timedelta(seconds=1))
    gone = status("yahoo", node="n2", score=40, band="critical", updated_at=NOW - timedelta(days=2))
    rows = report_rows([fresh, old, gone], "n1", ["brave"], NOW, all_nodes=True)
    assert [(row.node, row.engine, row.stale) for row in rows] == [
        ("n1", "google", False),
        ("n1", "bing", True),
        ("n1", "brave", False),
        ("n2", "yahoo", True),
    ]
    lines = format_table(rows, all_nodes=True).splitlines()
    assert lines[5:] == [
        "stale on n1: no running crawl writes these rows and none said it stopped: killed, hung, or cut off from "
        "the database (last written: bing at 2026-11-29T20:59:14Z)",
        "stale on n2: no running crawl writes these rows and none said it stopped: killed, hung, or cut off from "
        "the database (last written: yahoo at 2026-11-27T21:00:00Z)",
    ]
    assert cells(lines[2])[:5] == ["n1", "bing", "95", "ok", "stale"]  # no crawl behind it: never "running"
    this_node = format_table(report_rows([fresh, old], "n1", [], NOW)).splitlines()
    assert this_node[-1].startswith("stale: no running crawl writes these rows")
    assert [
        engine["stale"] for node in report_json(rows, "n1", all_nodes=True)["nodes"] for engine in node["engines"]
    ] == [False, True, False, True]
    assert len(format_table(report_rows([fresh], "n1", [], NOW)).splitlines()) == 2  # nothing stale: no line


def test_all_nodes_json_has_one_object_per_node():
    rows = report_rows([status("bing", node="n0")], "n1", ["google"], NOW, all_nodes=True)
    report = report_json(rows, "n1", all_nodes=True)
    assert list(report) == ["nodes"]
    assert [(each["node"], [e["engine"] for e in each["engines"]]) for each in report["nodes"]] == [
        ("n0", ["bing"]),
        ("n1", ["google"]),
    ]
    assert all(each["saturation"] is None for each in report["nodes"])


@pytest.mark.parametrize(
    ("statuses", "expected"),
    [
        ([], 0),
        ([status("google", score=95, band="ok"), status("bing")], 0),
        ([status("google", score=95, band="ok"), status("bing", score=60, band="degraded")], 1),
        ([status("google", score=60, band="degraded", state=COOLING, cooling_until=NOW + timedelta(minutes=1))], 1),
        ([status("google", score=60, band="degraded"), status("bing", score=30, band="critical")], 2),
        ([status("google", score=95, band="ok"), status("bing", score=85, band="ok", state=PAUSED)], 2),
    ],
    ids=["nothing", "ok-and-unknown", "degraded", "degraded-cooling", "critical", "paused"],
)
def test_exit_status_is_the_worst_row(statuses, expected):
    assert exit_status(report_rows(statuses, "n1", ["yahoo"], NOW)) == expected


def test_utc_text_converts_to_utc():
    assert utc_text(None) is None
    paris = datetime(2026, 11, 29, 22, 5, 3, 999, tzinfo=UTC).astimezone(ZoneInfo("Europe/Paris"))
    assert paris.hour == 23 and utc_text(paris) == "2026-11-29T22:05:03Z"
    assert utc_text(datetime(2026, 11, 29, 21, 5, 3)) == "2026-11-29T21:05:03Z"


# --- the command ------------------------------------------------------------------------------------------------


db = database_fixture("sqlite_url")  # news.db, the file of env's config


@pytest.fixture
def env(tmp_path):
    config = write_config(
        tmp_path,
        {"database": {"url": "sqlite:///news.db"}, "node": {"id": "n1"}, "engines": {"brave": {"enabled": False}}},
    )
    return {"TOPICSTREAMS_CONFIG": str(config)}


def table(stdout: str) -> dict[tuple[str, ...], list[str]]:
    """The table's rows by their key cells (engine, or node and engine with --all-nodes)."""
    lines = [
        line
        for line in stdout.strip().splitlines()[1:]
        if not line.startswith(("saturation", "stale", "route vs site"))
    ]  # the first line is the verdict
    header = cells(lines[0])
    key = 2 if header[0] == "node" else 1
    return {tuple(cells(line)[:key]): cells(line)[key:] for line in lines[1:]}


def saturation_lines(stdout: str) -> list[str]:
    return [line for line in stdout.splitlines() if line.startswith("saturation")]


def test_health_command_reports_this_node_or_every_node(scrapy_cmd, db, env):
    soon = datetime.now(UTC) + timedelta(hours=1)
    save_status(db, "google", "n1", state=None, score=90, band="ok", p50_ms=140.2, p95_ms=610.7)
    save_status(
        db, "bing", "n1", state=COOLING, score=64, band="degraded", cooling_until=soon, reasons=["challenge", "latency"]
    )
    save_status(db, "brave", "n1", state=COOLING, score=81, band="ok", cooling_until=soon - timedelta(hours=2))
    save_status(db, "yahoo", "n2", state=None, score=20, band="critical", reasons=["hard_block"])

    result = scrapy_cmd("health", env=env)
    assert result.returncode == 1, result.stderr  # worst on n1: degraded
    assert result.stdout.splitlines()[0] == f"bing cooling until {soon:%H:%M} UTC: challenge, latency"
    assert cells(result.stdout.splitlines()[1]) == list(COLUMNS)
    assert table(result.stdout) == {
        ("google",): ["90", "ok", "running", "-", "140", "611", "-", "-", "-"],
        ("bing",): ["64", "degraded", "cooling", "-", "-", "-", utc_text(soon), "challenge, latency", "-"],
        ("yahoo",): ["-", "unknown", "-", "-", "-", "-", "-", "-", "-"],  # enabled, never reported
        ("brave",): ["81", "ok", "running", "-", "-", "-", "-", "-", "-"],  # disabled but has a row; cooldown over
    }
    assert list(table(result.stdout)) == [("google",), ("bing",), ("yahoo",), ("brave",)]
    # bing is robust and cooling; brave is a canary engine (and its cooldown is over): one is not saturation
    assert saturation_lines(result.stdout) == ["saturation: not suspected (robust engines cooling: bing)"]

    as_json = scrapy_cmd("health", "--json", env=env)
    assert as_json.returncode == 1, as_json.stderr
    report = json.loads(as_json.stdout)
    assert (report["node"], report["saturation"]) == ("n1", {"suspected": False, "cooling": ["bing"]})
    assert [engine["engine"] for engine in report["engines"]] == list(ENGINES)
    assert all(list(engine) == ENGINE_KEYS for engine in report["engines"])
    bing, yahoo = report["engines"][1], report["engines"][2]
    assert (bing["cooling_until"], bing["reasons"], bing["parser_score"]) == (
        utc_text(soon),
        ["challenge", "latency"],
        None,
    )
    assert (yahoo["score"], yahoo["state"], yahoo["updated_at"]) == (None, None, None)

    every = scrapy_cmd("health", "--all-nodes", env=env)
    assert every.returncode == 2, every.stderr  # n2's yahoo is critical
    assert cells(every.stdout.splitlines()[1]) == ["node", *COLUMNS]
    assert list(table(every.stdout)) == [
        ("n1", "google"),
        ("n1", "bing"),
        ("n1", "yahoo"),
        ("n1", "brave"),
        ("n2", "yahoo"),
    ]
    assert table(every.stdout)[("n2", "yahoo")] == ["20", "critical", "running", "-", "-", "-", "-", "hard_block", "-"]
    assert saturation_lines(every.stdout) == [
        "saturation on n1: not suspected (robust engines cooling: bing)",
        "saturation on n2: not suspected",
    ]
    # Every engine is run by one node only: nothing to compare (yahoo on n1 has no row, so n1 does not run it).
    assert every.stdout.splitlines()[-1] == (
        "route vs site: google one node, bing one node, yahoo one node, brave one node"
    )
    assert not any(line.startswith("route vs site") for line in result.stdout.splitlines())  # this node alone

    every_json = scrapy_cmd("health", "--all-nodes", "--json", env=env)
    assert every_json.returncode == 2, every_json.stderr
    nodes = json.loads(every_json.stdout)["nodes"]
    assert [(node["node"], [e["engine"] for e in node["engines"]]) for node in nodes] == [
        ("n1", list(ENGINES)),
        ("n2", ["yahoo"]),
    ]
    assert nodes[1]["engines"][0]["band"] == "critical"
    assert [node["saturation"] for node in nodes] == [
        {"suspected": False, "cooling": ["bing"]},
        {"suspected": False, "cooling": []},
    ]


def test_health_command_shows_coverage_as_a_reason_a_column_and_a_json_object(scrapy_cmd, db, env):
    save_status(
        db,
        "google",
        "n1",
        state=None,
        score=97,
        band="ok",
        parser_score=100,
        coverage={"window": 0.312, "baseline": 0.784, "drop": 0.472, "low": True},
    )
    save_status(
        db,
        "bing",
        "n1",
        state=None,
        score=96,
        band="ok",
        coverage={"window": None, "baseline": 0.81, "drop": None, "low": False},
    )

    result = scrapy_cmd("health", env=env)
    assert result.returncode == 0, result.stdout + result.stderr  # a reason of its own: the bands stay ok
    assert result.stdout.splitlines()[0] == "Both engines healthy on 1 node"
    assert cells(result.stdout.splitlines()[1])[-1] == "coverage"
    rows = table(result.stdout)
    assert rows[("google",)][-2:] == ["coverage", "0.31/0.78"]
    assert rows[("bing",)][-2:] == ["-", "-/0.81"] and rows[("yahoo",)][-1] == "-"

    as_json = scrapy_cmd("health", "--json", env=env)
    assert as_json.returncode == 0, as_json.stderr
    engines = {engine["engine"]: engine for engine in json.loads(as_json.stdout)["engines"]}
    assert engines["google"]["coverage"] == {"window": 0.312, "baseline": 0.784, "drop": 0.472}
    assert (engines["google"]["reasons"], engines["google"]["band"]) == (["coverage"], "ok")
    assert engines["bing"]["coverage"] == {"window": None, "baseline": 0.81, "drop": None}
    assert engines["yahoo"]["coverage"] == NO_COVERAGE  # enabled, never reported


def test_resume_lifts_a_pause_and_resolves_its_alerts(scrapy_cmd, db, env):
    save_status(db, "google", "n1", state=None, score=95, band="ok")
    pause(db, "bing", "n1", score=31, band="critical", reasons=["hard_block"])
    add_alert(db, "bing", "n1", score=31, band="critical", reasons=["hard_block"], message="bing paused")

    before = scrapy_cmd("health", env=env)
    assert before.returncode == 2, before.stderr
    assert table(before.stdout)[("bing",)][:2] == ["31", "critical"]
    assert table(before.stdout)[("bing",)][2] == "paused"

    resumed = scrapy_cmd("health", "resume", "bing", env=env)
    assert resumed.returncode == 0, resumed.stderr
    assert resumed.stdout.splitlines()[0] == "resumed: bing on node n1"
    assert "slowed pace" in resumed.stdout and "critical score" in resumed.stdout
    row = read_status(db, "bing", "n1")
    assert row.state == RUNNING and row.resumed_at is not None and row.paused_at is not None
    assert [alert["resolved_at"] is not None for alert in read_alerts(db, "bing", "n1")] == [True]

    after = scrapy_cmd("health", env=env)
    assert after.returncode == 0, after.stdout + after.stderr
    assert table(after.stdout)[("bing",)][:3] == ["-", "unknown", "running"]  # the pausing score is void

    again = scrapy_cmd("health", "resume", "bing", env=env)
    assert again.returncode == 1
    assert again.stderr.strip().splitlines()[-1] == "bing is not paused on node n1"
    elsewhere = scrapy_cmd("health", "resume", "google", "--node", "n2", env=env)
    assert elsewhere.returncode == 1
    assert elsewhere.stderr.strip().splitlines()[-1] == "google is not paused on node n2"
    assert read_status(db, "google", "n2") is None


def test_resume_refuses_an_engine_it_does_not_crawl(scrapy_cmd, env):
    refused = scrapy_cmd("health", "resume", "duckduckgo", env=env)
    assert refused.returncode == 2
    assert "expected one of google, bing, yahoo, brave" in refused.stderr
    assert "Traceback" not in refused.stderr
    unknown = scrapy_cmd("health", "status", env=env)
    assert unknown.returncode == 2 and "unknown sub-command 'status'" in unknown.stderr
