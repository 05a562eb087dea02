"""The cluster benchmark still runs (3 nodes, 200 topics, on the suite's PostgreSQL), prints every figure for both
sides — lease mode and static shards — and the schedule's statements, and leaves the schedule as its nodes left it
when they stopped: figures' bounds are the benchmark's job, not the tests'."""

from __future__ import annotations

import re
import subprocess
import sys

from sqlalchemy import create_engine, text

from tests.support.project import REPO
from topicstreams import ENGINES
from topicstreams.crawl.supply import in_shard

NODES, TOPICS = 3, 200
NUMBER = r"[\d,]+"
PHASES = ("steady", "a node frozen", "1 killed", "1 joined", "engine blocked on 1")
KINDS = ("claim", "next_due", "rearm", "extend", "release", "release_tokens", "reconcile")


def run(url: str) -> str:
    result = subprocess.run(
        [
            sys.executable,
            str(REPO / "benchmarks" / "cluster.py"),
            "--nodes",
            str(NODES),
            "--topics",
            str(TOPICS),
            "--minutes",
            "0.3",
            "--real-seconds",
            "6",
            "--url",
            url,
        ],
        capture_output=True,
        text=True,
        timeout=150,
        cwd=REPO,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    return result.stdout


def figure(out: str, label: str, lease: str, static: str) -> re.Match:
    """The row *label* with a lease-side and a static-side figure (patterns), in their columns."""
    found = re.search(rf"^{re.escape(label)}\s+({lease})\s+({static})$", out, re.MULTILINE)
    assert found, f"{label!r} not printed with both figures:\n{out}"
    return found


def as_int(value: str) -> int:
    return int(value.replace(",", ""))


def test_cluster_benchmark_prints_every_figure_for_leases_and_static_shards(postgres_url):
    out = run(postgres_url)
    lines = re.MULTILINE

    plan = re.search(
        r"^script \(intervals\): 0 steady; 0\.75 (node-\d+) frozen for 180 s; 1\.5 killed (node-\d+); "
        r"2\.75 joined (node-\d+); 3\.75-5\.75 google blocked on (node-\d+); end 7\.25$",
        out,
        lines,
    )
    assert plan, out
    frozen, killed, joined, blocked = plan.groups()
    assert joined == "node-04" and killed != frozen
    assert re.search(r"^\s+lease \(PostgreSQL\)\s+static shards$", out, lines), out

    scrapes = figure(out, "scrapes", NUMBER, NUMBER)
    assert as_int(scrapes.group(1)) > 0 and as_int(scrapes.group(2)) > 0
    doubles = figure(out, "slots scraped twice", NUMBER, NUMBER)
    assert as_int(doubles.group(2)) == 0  # a static shard never scrapes a slot twice
    lapsed = figure(out, "  of them with an expired lease", NUMBER, "-")
    without = figure(out, "  without one", NUMBER, NUMBER)
    assert as_int(lapsed.group(1)) + as_int(without.group(1)) == as_int(doubles.group(1))
    due = figure(out, "slots due (their interval within the run)", NUMBER, NUMBER)
    assert due.group(1) == due.group(2)  # both sides judged on the same slots
    late = figure(out, "slots late by more than one interval", NUMBER, NUMBER)
    missed = figure(out, "  of them never scraped", NUMBER, NUMBER)
    for side in (1, 2):
        assert as_int(missed.group(side)) <= as_int(late.group(side)) <= as_int(due.group(side))
    starts = ("0.00", "0.75", "1.50", "2.75", "3.75", "5.75")
    per_phase = 0
    for name, low, high in zip(PHASES, starts[:-1], starts[1:], strict=True):
        row = figure(
            out, f"  late / due, slots {low}-{high} ({name})", rf"{NUMBER} / {NUMBER}", rf"{NUMBER} / {NUMBER}"
        )
        per_phase += as_int(row.group(1).split(" / ")[1])
    assert 0 < per_phase <= as_int(due.group(1))

    # the static side's dead shard: the killed node's 1/n of the topics, on every engine
    index = int(killed.removeprefix("node-")) - 1
    shard = sum(in_shard(f"topic {i:05d}", f"{index}/{NODES}") for i in range(TOPICS))
    figure(
        out,
        "takeover after the kill of 1",
        rf"(\d[\d,]* s \({NUMBER} rows held\)|{NUMBER} of {NUMBER} rows)",
        rf"never \({shard * len(ENGINES):,} pairs idle\)",
    )
    figure(
        out,
        "node-04 (joined) at 80% of its fair share (over 2 int.)",
        r"(\d[\d,]* s|never) \(\d+%\)",
        r"never \(no shard\)",
    )
    blocked_slots = figure(
        out, "google blocked on 1: its slots late / due", rf"{NUMBER} / {NUMBER}", rf"{NUMBER} / {NUMBER}"
    )
    assert blocked_slots.group(1).split(" / ")[1] == blocked_slots.group(2).split(" / ")[1]
    figure(out, "  google topics with a slot late or lost", rf"{NUMBER} of {TOPICS}", rf"{NUMBER} of {TOPICS}")
    blocked_index = int(blocked.removeprefix("node-")) - 1
    idle = sum(in_shard(f"topic {i:05d}", f"{blocked_index}/{NODES}") for i in range(TOPICS))
    figure(out, "  nodes that scraped google during the block", r"\d+", rf"\d+ \({idle:,} topics idle\)")
    for label in ("real pace", r"clock \d+x"):
        assert re.search(
            rf"^claim latency p50 / p95, real ms \({label}\)\s+\d+\.\d / \d+\.\d\s+- \(no database\)$", out, lines
        ), out
        assert re.search(rf"^server xacts per real s \({label}\)\s+{NUMBER}\s+-$", out, lines), out

    # the schedule's statements, for the scripted run and at a real cluster's pace
    tables = re.findall(
        r"^schedule statements, (.+?): \d+ s real, [\d,]+ s simulated; real ms around each call$", out, lines
    )
    assert len(tables) == 2 and tables[1].startswith("at a real cluster's pace"), out
    for kind in KINDS:
        assert (
            len(re.findall(rf"^{kind}\s+{NUMBER}\s+[\d,]+\.\d\s+[\d,]+\.\d\d(\s+(\d+\.\d|nan)){{3}}$", out, lines)) == 2
        ), (kind, out)
    claims = re.search(rf"^claim\s+({NUMBER})\s", out, lines)
    assert as_int(claims.group(1)) > 0
    # the suite's server has no pg_stat_statements loaded: pg_stat_database's transactions
    assert (
        len(
            re.findall(
                r"^server \(pg_stat_database, [^)]+\): [\d,]+ transactions in \d+ s \([\d,]+ per real s, "
                r"[\d,.]+ per simulated s\)$",
                out,
                lines,
            )
        )
        == 2
    ), out
    assert (
        len(
            re.findall(
                r"^keeping up with the clock: node looks late by p50 \d+\.\d / p95 \d+\.\d / max \d+\.\d "
                r"simulated s$",
                out,
                lines,
            )
        )
        == 2
    ), out
    assert re.search(
        r"^claims released by the blocked nodes: [\d,]+; re-arms refused \(the lease taken by another "
        r"node\): [\d,]+; load average",
        out,
        lines,
    ), out

    for target in (
        "0 slots scraped twice without an expired lease",
        "takeover <= lease \\+ one interval",
        "new node at 80% of its share within two intervals",
        "claim p95 <= 20 ms at 3 nodes",
        "every google topic scraped every interval",
    ):
        assert re.search(rf"^target: {target}.*: (PASS|FAIL)$", out, lines), (target, out)

    # The database holds the run: every topic on every engine in the schedule, scraped by the nodes, the joined one
    # among them, and no lease left behind (the nodes stopped as SIGTERM stops one: claims released).
    db = create_engine(postgres_url)
    try:
        with db.connect() as conn:
            rows, held, done = conn.execute(
                text("SELECT count(*), count(lease_token), sum(scrapes) FROM schedule")
            ).one()
            nodes = set(conn.execute(text("SELECT DISTINCT last_node FROM schedule")).scalars())
            topics = conn.execute(text("SELECT count(*) FROM topics WHERE active")).scalar()
    finally:
        db.dispose()
    assert (rows, held, topics) == (TOPICS * len(ENGINES), 0, TOPICS)
    refused = as_int(re.search(r"re-arms refused \(the lease taken by another node\): ([\d,]+)", out).group(1))
    assert done >= as_int(scrapes.group(1)) - refused  # every re-armed scrape of the run (and of the real pace after)
    # every row scraped since the kill, the joined node among those scraping
    assert joined in nodes and killed not in nodes and nodes <= {f"node-0{i}" for i in range(1, NODES + 2)}, nodes
