"""The nodes report (topicstreams/nodes_report.py) from rows as the storage reads them: processes grouped by node id,
live / stale / stopped, engines and scraped counts of the live processes, each engine's state, leases, the table
and the JSON object; and terminal_text, which keeps a hostile node id from garbling a terminal."""

from __future__ import annotations

import json
import re
from dataclasses import fields
from datetime import UTC, datetime, timedelta

import pytest

from topicstreams.engines.states import COOLING, PAUSED, RUNNING
from topicstreams.reports.health_report import terminal_text
from topicstreams.reports.nodes_report import (
    LIVE,
    NO_NODES,
    STALE,
    STOPPED,
    NodesReport,
    age_text,
    node_report,
    stale_after,
)
from topicstreams.storage.engine_status import STALE_AFTER, EngineStatusRow
from topicstreams.storage.node_rows import NodeProcessRow

NOW = datetime(2026, 12, 1, 12, 0, 0, tzinfo=UTC)
WINDOW = stale_after(15.0)
CONTRACT_KEYS = ["node", "heartbeat_at", "age_seconds", "stale", "engines", "scraped_last_interval"]


def process(
    name: str,
    node: str = "node-a",
    *,
    beat: float = 5,
    started: float = 600,
    engines=("google",),
    scraped=None,
    stopped: bool = False,
    version: str = "0.1.0",
    assignment: str = "shard",
) -> NodeProcessRow:
    """A process row heard of ``beat`` seconds before NOW, started ``started`` seconds before it."""
    heartbeat = NOW - timedelta(seconds=beat)
    return NodeProcessRow(
        node,
        name,
        list(engines),
        NOW - timedelta(seconds=started),
        heartbeat,
        version,
        assignment,
        heartbeat if stopped else None,
        dict(scraped or {}),
    )


def status(engine: str, node: str = "node-a", **values) -> EngineStatusRow:
    row = {field.name: None for field in fields(EngineStatusRow)}
    row.update(engine=engine, node=node, band="good", state=RUNNING, reasons=[], updated_at=NOW)
    return EngineStatusRow(**{**row, **values})


def test_stale_after_is_three_heartbeats_as_for_an_engine_row():
    assert stale_after(15.0) == timedelta(seconds=45) == STALE_AFTER
    assert stale_after(0.5) == timedelta(seconds=1.5)


def test_two_live_processes_of_one_node_are_one_entry_with_their_engines_and_counts_summed():
    rows = [
        process("p1", engines=["bing", "google"], scraped={"google": 7, "bing": 2}, beat=3),
        process("p2", engines=["google", "brave"], scraped={"google": 4, "brave": 1}, beat=12),
    ]
    report = node_report("node-a", rows, [], NOW, WINDOW)
    assert report.status == LIVE and not report.stale and not report.stopped
    assert report.live_processes == 2
    assert report.engines == ["google", "bing", "brave"]  # the project's engine order
    assert report.scraped == {"google": 11, "bing": 2, "brave": 1}
    assert report.heartbeat_at == NOW - timedelta(seconds=3) and report.age_seconds == 3.0
    assert [row.process for row in report.processes] == ["p1", "p2"]  # newest heartbeat first


def test_a_dead_process_beside_a_live_one_neither_counts_nor_makes_the_node_stale():
    rows = [
        process("alive", scraped={"google": 5}, beat=10),
        process("dead", engines=["bing"], scraped={"bing": 9}, beat=61),
    ]
    report = node_report("node-a", rows, [], NOW, WINDOW)
    assert report.status == LIVE and report.live_processes == 1
    assert report.engines == ["google"] and report.scraped == {"google": 5}


def test_a_node_unheard_of_past_three_heartbeats_without_a_clean_stop_is_stale_and_scraped_nothing_lately():
    report = node_report("node-a", [process("p1", engines=["yahoo"], scraped={"yahoo": 4}, beat=46)], [], NOW, WINDOW)
    assert report.status == STALE and report.stale and not report.stopped
    assert report.engines == ["yahoo"] and report.scraped == {"yahoo": 0}
    assert report.live_processes == 0 and report.age_seconds == 46.0
    on_the_edge = node_report("node-a", [process("p1", beat=45)], [], NOW, WINDOW)
    assert on_the_edge.status == LIVE


def test_a_node_whose_last_process_stopped_cleanly_is_stopped_not_stale():
    rows = [
        process("old", engines=["bing"], beat=7200, started=9000),  # died two hours ago
        process("last", engines=["google"], beat=300, stopped=True, scraped={"google": 3}),
    ]
    report = node_report("node-a", rows, [], NOW, WINDOW)
    assert report.status == STOPPED and report.stopped and not report.stale
    assert report.engines == ["google"]  # its last processes' engines, not those of long ago
    assert report.scraped == {"google": 0}
    # the other way round: the last one died after an earlier clean stop
    rows = [process("old", beat=7200, stopped=True), process("last", beat=300)]
    assert node_report("node-a", rows, [], NOW, WINDOW).status == STALE


def test_a_stopped_node_lists_the_engines_of_every_process_stopped_with_the_last():
    rows = [
        process("p1", engines=["google"], beat=100, stopped=True),
        process("p2", engines=["bing"], beat=110, stopped=True),
        process("p3", engines=["yahoo"], beat=5000, stopped=True),
    ]
    assert node_report("node-a", rows, [], NOW, WINDOW).engines == ["google", "bing"]


def test_states_are_this_nodes_status_rows_at_the_reports_time():
    statuses = [
        status("google", state=COOLING, cooling_until=NOW + timedelta(minutes=5)),
        status("bing", state=COOLING, cooling_until=NOW - timedelta(seconds=1)),  # over: running
        status("yahoo", state=PAUSED),
        status("google", node="node-b", state=PAUSED),
    ]  # another node's row
    rows = [process("p1", engines=["google", "bing", "yahoo", "brave"])]
    report = node_report("node-a", rows, statuses, NOW, WINDOW)
    assert report.states == {"google": COOLING, "bing": RUNNING, "yahoo": PAUSED, "brave": None}


def test_a_node_that_is_not_live_never_shows_a_live_engine_state():
    written = NOW - timedelta(seconds=30)  # the rows' last write: fresh by their own heartbeats (3 x 15 s)
    statuses = [
        status("google", state=COOLING, cooling_until=NOW + timedelta(minutes=5), updated_at=written),
        status("bing", updated_at=written),
        status("yahoo", state=PAUSED, updated_at=written),
        status("brave", updated_at=written - timedelta(minutes=5), stopped_at=written - timedelta(minutes=5)),
    ]
    engines = ["google", "bing", "yahoo", "brave"]
    # The node went silent (killed): its engines are stale, one that closed before it is stopped.
    stale = node_report("node-a", [process("p1", engines=engines, beat=61)], statuses, NOW, WINDOW)
    assert stale.status == STALE
    assert stale.states == {"google": "stale", "bing": "stale", "yahoo": "stale", "brave": "stopped"}
    # It stopped cleanly: every engine is stopped, whatever its row last said.
    stopped = node_report("node-a", [process("p1", engines=engines, beat=20, stopped=True)], statuses, NOW, WINDOW)
    assert stopped.status == STOPPED and set(stopped.states.values()) == {"stopped"}
    # Live: each row's own state at the time (a row unwritten for three of its heartbeats is stale).
    live = node_report("node-a", [process("p1", engines=engines)], statuses, NOW, WINDOW)
    assert live.states == {"google": COOLING, "bing": RUNNING, "yahoo": PAUSED, "brave": "stopped"}
    silent = [status("google", updated_at=NOW - timedelta(seconds=3.5), heartbeat_seconds=1.0)]
    assert node_report("node-a", [process("p1")], silent, NOW, WINDOW).states == {"google": "stale"}


def test_leases_are_kept_in_engine_order_and_absent_in_shard_mode():
    rows = [process("p1", engines=["google", "bing"])]
    assert node_report("node-a", rows, [], NOW, WINDOW).leases is None
    leased = node_report("node-a", rows, [], NOW, WINDOW, leases={"bing": 2, "google": 3})
    assert list(leased.leases.items()) == [("google", 3), ("bing", 2)]
    assert leased.as_json()["leases"] == {"google": 3, "bing": 2}
    assert "leases" not in node_report("node-a", rows, [], NOW, WINDOW).as_json()


def test_json_entry_has_the_contracts_members_first_and_serializes():
    rows = [process("p1", engines=["google"], scraped={"google": 2}, beat=4.26, version="1.2.3", assignment="lease")]
    entry = node_report("node-a", rows, [status("google")], NOW, WINDOW).as_json()
    assert list(entry)[:6] == CONTRACT_KEYS
    assert entry["heartbeat_at"] == "2026-12-01T11:59:55Z"
    assert entry["age_seconds"] == 4.3 and entry["stale"] is False and entry["stopped"] is False
    assert entry["engines"] == ["google"] and entry["scraped_last_interval"] == {"google": 2}
    assert entry["states"] == {"google": RUNNING} and entry["status"] == LIVE
    assert entry["version"] == "1.2.3" and entry["assignment"] == "lease"
    assert entry["processes"] == [
        {
            "process": "p1",
            "started_at": "2026-12-01T11:50:00Z",
            "heartbeat_at": "2026-12-01T11:59:55Z",
            "stopped_at": None,
            "engines": ["google"],
            "scraped": {"google": 2},
            "version": "1.2.3",
            "assignment": "lease",
        }
    ]
    json.dumps(entry)


def test_a_heartbeat_from_a_clock_ahead_reads_age_zero():
    report = node_report("node-a", [process("p1", beat=-3)], [], NOW, WINDOW)
    assert report.age_seconds == 0.0 and report.status == LIVE


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (0, "0s ago"),
        (59.9, "59s ago"),
        (60, "1m00s ago"),
        (3599, "59m59s ago"),
        (3600, "1h00m ago"),
        (86399, "23h59m ago"),
        (90000, "1d01h ago"),
    ],
)
def test_age_text(seconds, text):
    assert age_text(seconds) == text


def cells(line: str) -> list[str]:
    return re.split(r" {2,}", line.strip())


def test_table_one_line_per_node_and_a_line_naming_the_stale_ones():
    nodes = [
        node_report(
            "node-a",
            [
                process("p1", engines=["google", "bing"], scraped={"google": 7, "bing": 1}),
                process("p2", engines=["google"], scraped={"google": 2}),
            ],
            [status("google", state=COOLING, cooling_until=NOW + timedelta(minutes=1))],
            NOW,
            WINDOW,
        ),
        node_report("node-b", [process("p3", node="node-b", beat=400)], [], NOW, WINDOW),
        node_report("node-c", [process("p4", node="node-c", beat=90, stopped=True)], [], NOW, WINDOW),
    ]
    lines = NodesReport(nodes, NOW, WINDOW).as_table().splitlines()
    assert cells(lines[0]) == ["node", "status", "heartbeat", "processes", "engines", "scraped last interval", "states"]
    assert cells(lines[1]) == [
        "node-a",
        "live",
        "5s ago",
        "2",
        "google, bing",
        "google 9, bing 1",
        "google cooling, bing -",
    ]
    assert cells(lines[2]) == ["node-b", "STALE", "6m40s ago", "0", "google", "google 0", "google -"]
    assert cells(lines[3]) == ["node-c", "stopped", "1m30s ago", "0", "google", "google 0", "google -"]
    assert lines[4].startswith("STALE: node-b — not heard of for more than 45 s")
    assert "leases" not in lines[4]
    assert len(lines) == 5


def test_lease_mode_table_has_a_leases_column():
    nodes = [
        node_report("node-a", [process("p1", engines=["google", "bing"])], [], NOW, WINDOW, leases={"google": 3}),
        node_report("node-b", [process("p2", node="node-b")], [], NOW, WINDOW, leases={}),
    ]
    lines = NodesReport(nodes, NOW, WINDOW, lease_mode=True).as_table().splitlines()
    assert cells(lines[0])[-1] == "leases"
    assert cells(lines[1])[-1] == "google 3"
    assert cells(lines[2])[-1] == "-"


def test_empty_report_says_no_crawl_has_run_yet():
    report = NodesReport([], NOW, WINDOW)
    assert report.as_table() == NO_NODES and "no crawl has run" in NO_NODES
    assert report.as_json() == {"nodes": []}


HOSTILE = "evil\x1b]0;owned\x07\x1b[2J\r\nnode\u202eab\x00\x9b"


def test_terminal_text_escapes_controls_and_invisible_formatting():
    shown = terminal_text(HOSTILE)
    assert shown == "evil\\x1b]0;owned\\x07\\x1b[2J\\r\\nnode\\u202eab\\x00\\x9b"
    assert shown.isprintable()
    assert terminal_text("név\u00a0ü — 東京") == "név\u00a0ü — 東京"  # visible text is kept as it is
    assert terminal_text("a\u2028b\u200bc\ud800") == "a\\u2028b\\u200bc\\ud800"


def test_terminal_text_cuts_a_long_id_in_the_middle():
    long = "a" * 48 + "b" * 5000 + "c" * 12
    assert terminal_text(long) == "a" * 48 + "…" + "c" * 12
    assert terminal_text("x" * 64) == "x" * 64
    assert terminal_text(long, longest=None) == long


def test_hostile_node_ids_cannot_reach_the_terminal_raw_in_the_table():
    nodes = [node_report(HOSTILE, [process("p1", node=HOSTILE, beat=400, engines=["google\x1b[1m"])], [], NOW, WINDOW)]
    table = NodesReport(nodes, NOW, WINDOW).as_table()
    assert all(line.isprintable() for line in table.splitlines())
    assert "\\x1b[2J" in table and "google\\x1b[1m" in table
    assert len(table.splitlines()) == 3  # the header, the node, the stale line: no line break got through
    assert json.loads(json.dumps(NodesReport(nodes, NOW, WINDOW).as_json()))["nodes"][0]["node"] == HOSTILE
