"""The benchmarks still run (on small inputs): figures are the benchmarks' job, not the tests'."""

import re
import subprocess
import sys

from tests.conftest import REPO


def test_store_benchmark_runs_and_prints_each_path():
    result = subprocess.run(
        [sys.executable, str(REPO / "benchmarks" / "store.py"), "-n", "2000", "--orm-items", "200", "--repeat", "1"],
        capture_output=True, text=True, timeout=120, cwd=REPO)
    assert result.returncode == 0, result.stderr[-2000:]
    for label in ("(1) project StorePipeline", "(a) ORM session", "(b) raw sqlite3 executemany, one commit"):
        assert re.search(re.escape(label) + r".*\s[\d,]+ items/s", result.stdout), result.stdout
    # every path ends with the same rows: the comparison is like for like
    assert "rows: topics 5," in result.stdout
