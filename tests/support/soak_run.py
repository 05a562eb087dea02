"""The suite's short soak (``benchmarks/soak.py`` for two minutes) runs beside the other tests instead of holding the
suite for two minutes of its own. In a serial session ``tests/conftest.py`` starts it as soon as the session has
collected ``tests/system/test_soak.py``, and the test, run last, reads its result long after it has ended. Under
pytest-xdist (``make test``: four workers) the test runs first and starts it; its worker waits for it while the
others go through the rest. The crawl it measures is its own process tree; the tests running beside it only
take CPU from it (and share some binary pages with it, which can only lower its PSS a little)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from tests.support.project import REPO

MINUTES, EVERY, WARMUP = 2, 5, 30
MODULE = "tests/system/test_soak.py"


class BackgroundSoak:
    """``benchmarks/soak.py --minutes 2 --every 5 --warmup 30 --json …`` as a child of the test session."""

    def __init__(self) -> None:
        self.folder = Path(tempfile.mkdtemp(prefix="topicstreams-suite-soak-"))
        self.json = self.folder / "soak.json"
        self.output = (self.folder / "stdout.txt").open("w+")
        self.process = subprocess.Popen(
            [
                sys.executable,
                str(REPO / "benchmarks" / "soak.py"),
                "--minutes",
                str(MINUTES),
                "--warmup",
                str(WARMUP),
                "--every",
                str(EVERY),
                "--json",
                str(self.json),
            ],
            cwd=REPO,
            stdout=self.output,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            text=True,
        )

    def result(self, timeout: float) -> tuple[int, dict | None, str]:
        """(exit status, the JSON it wrote or None, its output), once it has ended (within ``timeout`` seconds)."""
        returncode = self.process.wait(timeout=timeout)
        self.output.seek(0)
        out = self.output.read()
        data = json.loads(self.json.read_text()) if self.json.exists() else None
        return returncode, data, out

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()  # the benchmark stops its crawl and reports
            try:
                self.process.wait(timeout=90)
            except subprocess.TimeoutExpired:
                self.process.kill()
        self.output.close()
        shutil.rmtree(self.folder, ignore_errors=True)
