"""The benchmarks still run (on small inputs): figures are the benchmarks' job, not the tests'."""

import re
import subprocess
import sys

import pytest

from tests.conftest import REPO
from topicstreams.browser import find_executable


def test_store_benchmark_runs_and_prints_each_path():
    result = subprocess.run(
        [sys.executable, str(REPO / "benchmarks" / "store.py"), "-n", "2000", "--orm-items", "200", "--repeat", "1"],
        capture_output=True, text=True, timeout=120, cwd=REPO)
    assert result.returncode == 0, result.stderr[-2000:]
    for label in ("(1) project StorePipeline", "(a) ORM session", "(b) raw sqlite3 executemany, one commit"):
        assert re.search(re.escape(label) + r".*\s[\d,]+ items/s", result.stdout), result.stdout
    # every path ends with the same rows: the comparison is like for like
    assert "rows: topics 5," in result.stdout


def test_store_benchmark_on_postgresql_measures_each_writer_count(postgres_url):
    result = subprocess.run(
        [sys.executable, str(REPO / "benchmarks" / "store.py"), "--db", postgres_url, "-n", "2000", "--writers", "1,2"],
        capture_output=True, text=True, timeout=180, cwd=REPO)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    lines = re.MULTILINE
    for writers in (1, 2):
        # every run leaves the same rows: the distinct articles, events and attributions of the 2000 items
        figures = (rf"^writers {writers}: 2,000 items in \d+\.\d\d s = [\d,]+ items/s"
                   r" \(rows: news 1,\d{3}, topic_news 1,\d{3}, topic_news_engines 1,\d{3}\)$")
        assert re.search(figures, result.stdout, lines), result.stdout
    assert not re.search(r"^writers 4:", result.stdout, lines)
    rows = re.findall(r"\(rows: (.*)\)$", result.stdout, lines)
    assert len(rows) == 2 and rows[0] == rows[1], rows


def run_benchmark(script: str, *args: str) -> str:
    """Run ``benchmarks/<script>`` with small figures; its standard output, once it has exited 0."""
    result = subprocess.run([sys.executable, str(REPO / "benchmarks" / script), *args],
                            capture_output=True, text=True, timeout=240, cwd=REPO, check=False)
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
    assert re.search(r"^target: pages/s >= 2\.00x: (PASS|FAIL), bytes <= 60%: (PASS|FAIL)$", out, lines), out


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
