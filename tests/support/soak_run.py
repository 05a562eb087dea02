"""The suite's short soak (``benchmarks/soak.py`` for a minute) runs beside the other tests instead of holding the
suite (or one of its workers) for a minute of its own. It starts as soon as the session knows it will run it:

* in a serial session, once ``tests/conftest.py`` has collected ``tests/system/test_soak.py``;
* under pytest-xdist (``make test``: four workers), in the controller as it sets up its workers, when the paths it
  was given hold the soak's module and no ``-k``/``-m`` may deselect it. The workers learn its folder (xdist's
  ``workerinput``); the worker given the test reads what it left there.

Either way the test runs last and finds the soak long ended. Where the controller did not start one (a run with
``-k``), the worker given the test starts its own and waits for it. The crawl it measures is its own process tree;
the tests running beside it only take CPU from it (and share some binary pages with it, which can only lower its PSS
a little)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from tests.support.project import REPO

MINUTES, EVERY, WARMUP = 1, 3, 15
MODULE = "tests/system/test_soak.py"
WORKER_INPUT = "topicstreams_soak_folder"
"""The key of ``workerinput`` that names the controller's soak folder to the workers."""

RETURNCODE, JSON, STDOUT = "returncode", "soak.json", "stdout.txt"


def selects_soak(args: list[str], rootdir: Path) -> bool:
    """Whether a session given ``args`` (paths, maybe with ``::test`` parts; none: the configured testpaths) collects
    the soak's module."""
    module = (REPO / MODULE).resolve()
    for arg in args or ["tests"]:
        path = (rootdir / arg.split("::", 1)[0]).resolve()
        if path == module or path in module.parents:
            return True
    return False


class BackgroundSoak:
    """``benchmarks/soak.py --minutes 1 --every 3 --warmup 15 --json …`` as a child of this process; a thread writes
    its exit status into its folder when it ends, so that another process (an xdist worker) can read the result."""

    def __init__(self) -> None:
        self.folder = Path(tempfile.mkdtemp(prefix="topicstreams-suite-soak-"))
        self.output = (self.folder / STDOUT).open("w")
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
                str(self.folder / JSON),
            ],
            cwd=REPO,
            stdout=self.output,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            text=True,
        )
        self._watcher = threading.Thread(target=self._record_exit, name="suite-soak-exit", daemon=True)
        self._watcher.start()

    def _record_exit(self) -> None:
        returncode = self.process.wait()
        self.output.flush()
        written = self.folder / f".{RETURNCODE}"
        try:
            written.write_text(str(returncode))
            written.rename(self.folder / RETURNCODE)  # whole or not at all, for a reader polling for it
        except OSError:  # the folder is gone: the session closed it
            pass

    def result(self, timeout: float) -> tuple[int, dict | None, str]:
        return SoakResult(self.folder).result(timeout)

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()  # the benchmark stops its crawl and reports
            try:
                self.process.wait(timeout=90)
            except subprocess.TimeoutExpired:
                self.process.kill()
        self._watcher.join(timeout=10)
        self.output.close()
        shutil.rmtree(self.folder, ignore_errors=True)


class SoakResult:
    """What a soak left in its folder, read by whichever process runs the test."""

    def __init__(self, folder: str | Path) -> None:
        self.folder = Path(folder)

    def result(self, timeout: float) -> tuple[int, dict | None, str]:
        """(exit status, the JSON it wrote or None, its output), once it has ended (within ``timeout`` seconds)."""
        deadline = time.monotonic() + timeout
        status = self.folder / RETURNCODE
        while not status.exists():
            if time.monotonic() > deadline:
                raise TimeoutError(f"the suite's soak in {self.folder} has not ended within {timeout:g} s")
            time.sleep(0.5)
        returncode = int(status.read_text())
        out = (self.folder / STDOUT).read_text()
        data_file = self.folder / JSON
        data = json.loads(data_file.read_text()) if data_file.exists() else None
        return returncode, data, out
