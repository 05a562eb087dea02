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


def test_render_benchmark_runs_both_sides_and_prints_their_figures():
    if not find_executable():
        pytest.skip("no Chromium on this machine")
    result = subprocess.run(
        [sys.executable, str(REPO / "benchmarks" / "render.py"), "-n", "8"],
        capture_output=True, text=True, timeout=240, cwd=REPO, check=False)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    out = result.stdout
    lines = re.MULTILINE
    header = r"^side\s+pages/s\s+ms/page\s+CPU-s/page\s+KB/page\s+req/page\s+peak (PSS|RSS) MiB"
    assert re.search(header, out, lines), out
    for side in ("project", "defaults"):
        # pages/s, ms/page, CPU-s/page, KB/page, requests/page, then peak memory (MiB) and pages in flight
        figures = r"\s+".join([r"\d+\.\d+"] * 5) + r"\s+\d+\s+\d+\.\d+$"
        assert re.search(rf"^{side}\s+" + figures, out, lines), out
    assert re.search(r"^project/defaults\s+pages/s [\d.]+x, CPU [\d.]+x, bytes \d+ %, peak memory \d+ %$", out, lines)
    assert re.search(r"^target: pages/s >= 2\.00x: (PASS|FAIL), bytes <= 60%: (PASS|FAIL)$", out, lines), out
