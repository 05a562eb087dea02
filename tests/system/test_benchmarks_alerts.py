"""The alerting benchmark still runs (on a few topics), times every read on both sides, builds the data its
parameters ask for, and leaves its cached databases as it built them: figures are the benchmark's job, not the
tests'."""

import re
import sqlite3
import subprocess
import sys

from tests.support.project import REPO

READS = {
    "coverage window_counts, scraped topics": 50,
    "coverage window_counts, every topic (shown)": None,
    "coverage baseline_counts": 50,
    "silence new_event_times": None,
    "silence judge every topic": None,
    "silence check": 2000,
    "digest hour, every topic": 1000,
    "digest hour, 3 topics": 1000,
    "digest hour, q=heatwave": 1000,
    "digest day, every topic": 1000,
    "digest day, 3 topics": 1000,
    "digest day, q=heatwave": 1000,
    "digest week, q=heatwave (shown)": None,
    "digest as-it-happens batch": 1000,
    "digest as-it-happens batch, q=heatwave": 1000,
}
"""Every read timed, with the bound it is held to (ms, p95); None: shown without one."""


def run(tmp_path) -> str:
    result = subprocess.run(
        [
            sys.executable,
            str(REPO / "benchmarks" / "alerts.py"),
            "--topics",
            "20",
            "--days",
            "2",
            "--baseline-topics",
            "5",
            "--runs",
            "3",
            "--budget",
            "5",
            "--cache",
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=REPO,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    return result.stdout


def counts_of(path) -> dict[str, int]:
    with sqlite3.connect(path) as conn:
        return {
            table: conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
            for table in (
                "topics",
                "news",
                "topic_news",
                "topic_news_engines",
                "health_windows",
                "engine_status",
                "alert_states",
            )
        }


def test_alerts_benchmark_times_every_read_beside_a_few_topics(tmp_path):
    out = run(tmp_path)
    lines = re.MULTILINE
    assert re.search(
        r"^read\s+n\s+20 topics p50\s+20 topics p95\s+5 topics p50\s+5 topics p95\s+size\s+bound p95"
        r"\s+verdict$",
        out,
        lines,
    ), out
    for name, held in READS.items():
        # n, then p50 and p95 of each side, the result's mean size, the bound and the verdict
        figures = r"\s+3" + r"\s+\d+\.\d" * 4 + r"\s+[\d,]+\s+"
        figures += rf"<= {held:,}\s+(met|NOT MET)$" if held else r"-\s+-$"
        assert re.search(rf"^{re.escape(name)}{figures}", out, lines), out
    for label in ("20 topics", "5 topics"):
        assert re.search(
            rf"^silence read memory \({label}\): tracemalloc peak \d+\.\d MiB for [\d,]+ moments read "
            r"whole; kept between checks: \d+\.\d MiB; topics silent at the end: \d+$",
            out,
            lines,
        ), out
    for title, bound in (("coverage", "50"), ("silence", "2,000"), ("digests", "1,000")):
        assert re.search(rf"^bound: {title} p95 <= {bound} ms with 20 topics: (PASS|FAIL) \(worst: ", out, lines), out
    assert re.search(r"^databases ready in \d+ s$", out, lines), out
    assert re.search(
        r"^measured in \d+ s \(load average over the last 5 minutes: \d+\.\d on \d+ CPUs\)$", out, lines
    ), out

    # Both databases hold what the parameters ask for, and the table printed says so.
    for topics, column in ((20, 1), (5, 2)):
        counts = counts_of(tmp_path / f"alerts-t{topics}-d2-p100.db")
        assert counts["topics"] == topics and counts["engine_status"] == 4
        assert counts["health_windows"] == 4 * 2 * 144  # every engine's 10-minute windows of 2 days
        # about 100 new events a topic a day (each topic's own pace drawn in 0.3–1.7 × that)
        assert 0.6 * topics * 200 < counts["topic_news"] < 1.4 * topics * 200, counts
        assert 0.9 * counts["topic_news"] < counts["news"] < counts["topic_news"], counts
        assert 1.8 < counts["topic_news_engines"] / counts["topic_news"] < 2.4, counts
        assert counts["alert_states"] == 0  # the silence states the checks wrote were deleted
        for table in ("topics", "news", "topic_news", "topic_news_engines", "health_windows"):
            printed = re.search(rf"^{table}\s+([\d,]+)\s+([\d,]+)$", out, lines)
            assert printed and int(printed.group(column).replace(",", "")) == counts[table], out

    with sqlite3.connect(tmp_path / "alerts-t20-d2-p100.db") as conn:
        # every event was found by an engine at its own time (a store batch's), the others later
        (unfound,) = conn.execute(
            "SELECT count(*) FROM topic_news e WHERE NOT EXISTS (SELECT 1 FROM topic_news_engines "
            "a WHERE a.topic_id = e.topic_id AND a.news_id = e.news_id AND a.first_seen_at = "
            "e.first_seen_at)"
        ).fetchone()
        (earlier,) = conn.execute(
            "SELECT count(*) FROM topic_news_engines a JOIN topic_news e USING (topic_id, news_id) "
            "WHERE a.first_seen_at < e.first_seen_at"
        ).fetchone()
        # events arrive in store batches: fewer moments than events
        (moments,) = conn.execute(
            "SELECT count(*) FROM (SELECT DISTINCT topic_id, first_seen_at FROM topic_news)"
        ).fetchone()
        (events,) = conn.execute("SELECT count(*) FROM topic_news").fetchone()
        (planted,) = conn.execute("SELECT count(*) FROM news WHERE title LIKE '%heatwave%'").fetchone()
    assert unfound == 0 and earlier == 0
    assert 0.5 * events < moments < 0.75 * events, (moments, events)
    assert planted > 0
    printed_moments = re.search(r"^silence read memory \(20 topics\): .* for ([\d,]+) moments", out, lines)
    assert int(printed_moments.group(1).replace(",", "")) == moments

    # A second run reuses both files.
    again = run(tmp_path)
    assert len(re.findall(r"\(cached, reused; --rebuild to build it again\)$", again, lines)) == 2, again
