"""The benchmarks still run (on small inputs): figures are the benchmarks' job, not the tests'."""

import re
import subprocess
import sys

import pytest

from tests.support.project import REPO
from topicstreams.browser.chromium import find_executable


def test_store_benchmark_runs_and_prints_each_path():
    result = subprocess.run(
        [sys.executable, str(REPO / "benchmarks" / "store.py"), "-n", "2000", "--orm-items", "200", "--repeat", "1"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=REPO,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    for label in ("(1) project StorePipeline", "(a) ORM session", "(b) raw sqlite3 executemany, one commit"):
        assert re.search(re.escape(label) + r".*\s[\d,]+ items/s", result.stdout), result.stdout
    # every path ends with the same rows: the comparison is like for like
    assert "rows: topics 5," in result.stdout


def test_store_benchmark_on_postgresql_measures_each_writer_count(postgres_url):
    result = subprocess.run(
        [sys.executable, str(REPO / "benchmarks" / "store.py"), "--db", postgres_url, "-n", "2000", "--writers", "1,2"],
        capture_output=True,
        text=True,
        timeout=180,
        cwd=REPO,
    )
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    lines = re.MULTILINE
    for writers in (1, 2):
        # every run leaves the same rows: the distinct articles, events and attributions of the 2000 items
        figures = (
            rf"^writers {writers}: 2,000 items in \d+\.\d\d s = [\d,]+ items/s"
            r" \(rows: news 1,\d{3}, topic_news 1,\d{3}, topic_news_engines 1,\d{3}\)$"
        )
        assert re.search(figures, result.stdout, lines), result.stdout
    assert not re.search(r"^writers 4:", result.stdout, lines)
    rows = re.findall(r"\(rows: (.*)\)$", result.stdout, lines)
    assert len(rows) == 2 and rows[0] == rows[1], rows


def run_benchmark(script: str, *args: str) -> str:
    """Run ``benchmarks/<script>`` with small figures; its standard output, once it has exited 0."""
    result = subprocess.run(
        [sys.executable, str(REPO / "benchmarks" / script), *args],
        capture_output=True,
        text=True,
        timeout=240,
        cwd=REPO,
        check=False,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    return result.stdout


def test_render_benchmark_runs_both_sides_and_prints_their_figures():
    if not find_executable():
        pytest.skip("no Chromium on this machine")
    out = run_benchmark("render.py", "-n", "8")
    lines = re.MULTILINE
    header = r"^side\s+pages/s\s+ms/page\s+CPU-s/page\s+KB/page\s+req/page\s+peak (PSS|RSS) MiB"
    assert re.search(header, out, lines), out
    for side in ("project", "defaults"):
        # pages/s, ms/page, CPU-s/page, KB/page, requests/page, then peak memory (MiB) and pages in flight
        figures = r"\s+".join([r"\d+\.\d+"] * 5) + r"\s+\d+\s+\d+\.\d+$"
        assert re.search(rf"^{side}\s+" + figures, out, lines), out
    assert re.search(r"^project/defaults\s+pages/s [\d.]+x, CPU [\d.]+x, bytes \d+ %, peak memory \d+ %$", out, lines)
    assert re.search(
        r"^target: pages/s >= 2\.50x: (PASS|FAIL), bytes <= 60%: (PASS|FAIL), "
        r"peak memory <= 1\.10x: (PASS|FAIL)$",
        out,
        lines,
    ), out


def test_chromium_flags_benchmark_measures_the_shipped_flags_against_the_base():
    if not find_executable():
        pytest.skip("no Chromium on this machine")
    out = run_benchmark("chromium_flags.py", "--only", "shipped", "--pages", "3", "--repeat", "1")
    lines = re.MULTILINE
    assert re.search(r"^variation\s+pages/s\s+Δ%\s+peak\s+final\s+Δ\s+GC\s+Δ", out, lines), out
    # Every page of the four engines answered and parsed (3 timed pages each), in both browsers.
    for name in ("base", "shipped"):
        assert re.search(
            rf"^{name}\s+\d+\.\d+\s+[+-]\d+\s+\d+\s+\d+\s+[+-]\d+\s+\d+\s+[+-]\d+.*\s12/12\s+ok$", out, lines
        ), out


def test_chromium_flags_benchmark_follows_a_renewed_tab_and_counts_the_clients_objects():
    if not find_executable():
        pytest.skip("no Chromium on this machine")
    out = run_benchmark(
        "chromium_flags.py",
        "--tab-growth",
        "--flags",
        "shipped",
        "--strategies",
        "tab:10",
        "--navigations",
        "30",
        "--sample-every",
        "10",
    )
    assert "== shipped / tab:10: 30 navigations" in out and ", 0 failed" in out, out
    samples = re.findall(r"^\s+(\d+)\s+(\d+)\s+[\d.]+", out, re.MULTILINE)
    assert [navigations for navigations, _ in samples] == ["0", "10", "20", "30"], out
    assert re.search(r"^growth per 1,000 navigations \(MiB; objects\): tree [+-][\d.]+", out, re.MULTILINE), out
    # Closing the tab lets the Playwright client drop every request it kept for it.
    closed = re.search(r"^client objects before -> after closing the last tab: (.*);", out, re.MULTILINE)
    assert closed and re.search(r"\bRequest \d+->0\b", closed.group(1)), out


def test_pacing_benchmark_runs_both_lanes_and_prints_the_target():
    if not find_executable():
        pytest.skip("no Chromium on this machine")
    out = run_benchmark("pacing.py", "--topics", "6", "--floor", "0.3", "--jitter", "0.2")
    lines = re.MULTILINE
    header = r"^lane\s+requests\s+mean gap\s+median\s+min gap\s+< F\s+utilisation\s+wall s\s+answered$"
    assert re.search(header, out, lines), out
    for lane in ("project", "scrapy DOWNLOAD_DELAY"):
        # requests, mean/median/min gap, gaps below F, utilisation, wall time, then every topic answered
        figures = r"6\s+" + r"\s+".join([r"\d+\.\d+"] * 3) + r"\s+\d+\s+\d+\.\d+\s+\d+\.\d+\s+6/6$"
        assert re.search(rf"^{lane}\s+" + figures, out, lines), out
    assert re.search(r"^baseline \(scrapy DOWNLOAD_DELAY\) (undercut|did not undercut) F: smallest gap", out, lines)
    assert re.search(r"^target: utilisation >= 0\.95 and no gap below F \(project\): (PASS|FAIL)$", out, lines), out


def test_routes_benchmark_runs_one_route_and_three_and_prints_every_figure():
    if not find_executable():
        pytest.skip("no Chromium on this machine")
    out = run_benchmark("routes.py", "--quick")
    lines = re.MULTILINE
    header = r"^lane\s+topics/h\s+per route \(window\)\s+min gap\s+< F\s+render ms\s+alone ms\s+alone\s+wall s$"
    assert re.search(header, out, lines), out
    # topics/h, the window's pages per route, min gap, gaps below F of all, render and alone medians, count, wall
    tail = r"\s+\d+\.\d+\s+0/\d+\s+\d+\s+\d+\s+\d+\s+\d+\.\d$"
    assert re.search(r"^google, 1 route \(direct\)\s+[\d,]+\s+default \d+" + tail, out, lines), out
    # the three routes carried topics side by side, none below the floor
    assert re.search(
        r"^google, 3 routes \(proxies\)\s+[\d,]+\s+r0 [1-9]\d*, r1 [1-9]\d*, r2 [1-9]\d*" + tail, out, lines
    ), out
    assert re.search(r"^google: route r2 killed: topics it held, s from the kill to their next ok scrape", out, lines)
    for figure in (
        r"google: topics/h, 3 routes ÷ 1 route\s+\d+\.\d\d×\s+>= 2\.80×",
        r"google: render ms/page, proxies ÷ direct\s+\d+\.\d\d×\s+<= 1\.20×",
        r"google: r2 killed, its \d+ topic\(s\) scraped again\s+\S+( \S+)?\s+<= 2 s",
    ):
        assert re.search(rf"^{figure}\s+(PASS|FAIL)$", out, lines), out
    assert re.search(r"^gaps below the floor, any route, any lane\s+0 of \d+\s+0\s+PASS$", out, lines), out


FEED_SHAPES = ("no filter", "one topic", "one engine", "topic × engine", "search q=heatwave", "page 10 by cursor")


def check_feed_benchmark(out: str, requests: int) -> None:
    """The table (every shape, its n and its eight figures), the load test, a plan per shape and both targets."""
    lines = re.MULTILINE
    assert re.search(
        r"^3,000 events, [\d,]+ articles, [\d,]+ engine sightings \(1\.\d\d an event\), 200 topics;", out, lines
    ), out
    assert re.search(
        r"^search word 'heatwave': in \d+ titles \(\d\.\d\d% of the articles\); the search finds \d+ "
        r"articles, \d+ events$",
        out,
        lines,
    ), out
    header = (
        r"^shape\s+n\s+app p50\s+app p95\s+reader p50\s+reader p95\s+SQL p50\s+SQL p95\s+OFFSET p50\s+"
        r"OFFSET p95\s+events$"
    )
    assert re.search(header, out, lines), out
    for shape in FEED_SHAPES:
        figures = rf"\s+{requests}" + r"\s+\d+\.\d\d" * 8 + r"\s+\d+\.\d$"
        assert re.search(rf"^{re.escape(shape)}{figures}", out, lines), out
        assert re.search(rf"^  {re.escape(shape)}\S*\s*\S", out, lines), out  # its plan
    # the deep page was reached by following the app's cursors, and is the page OFFSET finds
    assert re.search(
        r"walked pages 1-9 by cursor through the app first \([\d.]+ ms a page\); page 10 by cursor and "
        r"by OFFSET: the same events\)$",
        out,
        lines,
    ), out
    assert re.search(
        r"^8 concurrent clients .*: [\d,.]+ requests/s \(p50 [\d.]+ ms, p95 [\d.]+ ms, 0 failed\)$", out, lines
    ), out
    assert re.search(r"^target: every shape p95 <= 50 ms.*: (PASS|FAIL) \(worst: ", out, lines), out
    assert re.search(
        r"^target: page 10 by cursor within 1\.5x of page 1 \(p50 and p95\): (PASS|FAIL) \(p50 [\d.]+x, "
        r"p95 [\d.]+x; by OFFSET: p50 [\d.]+x\)$",
        out,
        lines,
    ), out


def test_feed_benchmark_times_every_shape_and_reuses_its_database(tmp_path):
    small = ("--events", "3000", "--page", "10", "--seconds", "1", "--cache", str(tmp_path))
    out = run_benchmark("feed.py", *small, "--requests", "6")
    assert re.search(r"^database: .*feed-3000\.db: building", out, re.MULTILINE), out
    check_feed_benchmark(out, 6)
    assert re.search(
        r"^  no filter\s+SCAN topic_news USING COVERING INDEX ix_topic_news_first_seen_at_topic_id$", out, re.MULTILINE
    ), out
    again = run_benchmark("feed.py", *small, "--requests", "3")
    assert re.search(r"^database: .*feed-3000\.db \(cached, reused", again, re.MULTILINE), again
    check_feed_benchmark(again, 3)


def test_feed_benchmark_on_postgresql(postgres_url):
    out = run_benchmark(
        "feed.py", "--db", postgres_url, "--events", "3000", "--page", "10", "--requests", "4", "--seconds", "1"
    )
    assert "emptying the feed's tables and building feed-3000 (COPY)" in out, out
    check_feed_benchmark(out, 4)
    assert re.search(
        r"^    Limit .*\n    +->  Index Only Scan Backward using ix_topic_news_first_seen_at_topic_id",
        out,
        re.MULTILINE,
    ), out


def test_freshness_benchmark_runs_every_schedule_and_prints_the_targets():
    if not find_executable():
        pytest.skip("no Chromium on this machine")
    out = run_benchmark("freshness.py", "--quick")
    lines = re.MULTILINE
    assert re.search(r"^16 topics, base rates [\d.]+ … [\d.]+ an hour .*; world speed 120×", out, lines), out
    header = (
        r"^lane\s+requests\s+req/h\s+÷ budget\s+published\s+stored\s+mean min\s+p95 min\s+missed\s+pending\s+"
        r"holes\s+burst\s+wall s$"
    )
    assert re.search(header, out, lines), out
    for lane in ("fixed", "adaptive", "oracle", "adaptive ½"):
        # requests, per hour, of the budget; published, stored; mean and p95 delay; missed, pending; holes, bursts.
        # A lane this short may make no request in its window on a busy machine (its crawl still starting): the
        # benchmark itself fails a lane that stored nothing of the window.
        figures = r"\s+\d+\s+\d+\s+\d+\.\d\d\s+[1-9]\d*\s+[1-9]\d*\s+\d+\.\d\s+\d+\.\d\s+\d+\.\d\d%"
        assert re.search(rf"^{lane}{figures}\s+\d+\s+\d+\s+\d+\s+\d+\.\d$", out, lines), out
    for figure, target in (
        ("adaptive ÷ fixed: requests", "<= 1.05×"),
        ("adaptive ÷ fixed: mean delay", "<= 0.50×"),
        ("adaptive ÷ fixed: missed share", "<= 0.20×"),
        ("adaptive ÷ oracle: mean delay", "<= 1.25×"),
        ("adaptive ½ ÷ fixed: missed share", "< 1.00×"),
    ):
        assert re.search(rf"^{re.escape(figure)}\s+(\d+\.\d\d×|-)\s+{re.escape(target)}\s+(PASS|FAIL)$", out, lines)
    assert re.search(r"^4 lanes in \d+ s; .* targets: \d of 5 met$", out, lines), out
