"""Two minutes of ``make run`` offline, beside the other tests: ``python -m topicstreams.cli.together`` on the example
configuration, its engines' base URLs on loopback ports where nothing listens (every request refused, as with no
network: never an address off this machine), its own SQLite database and browser profiles in a temporary folder, its
own free web port; after :data:`SECONDS` it gets a SIGINT (the terminal's Ctrl-C) and its whole output, standard output
and error together as a terminal shows them, is kept for ``tests/system/test_quiet_terminal.py``.

It starts as the short soak does (tests/support/soak_run.py): in a serial session once the test's module is collected,
under pytest-xdist in the controller as it sets up its workers (when the paths it was given hold the module and no
``-k``/``-m`` may leave it out), the workers learning its folder through ``workerinput``; a worker whose controller
started none starts its own. The test runs last and finds the run ended (or waits for the rest of it)."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import yaml

from tests.support.ports import free_port
from tests.support.project import REPO
from topicstreams import ENGINES

SECONDS = 120.0
MODULE = "tests/system/test_quiet_terminal.py"
WORKER_INPUT = "topicstreams_log_run_folder"
"""The key of ``workerinput`` that names the controller's log run folder to the workers."""

RETURNCODE, OUTPUT, URL = "returncode", "output.txt", "url.txt"


def selects_log_run(args: list[str], rootdir: Path) -> bool:
    """Whether a session given ``args`` (paths, maybe with ``::test`` parts; none: the configured testpaths) collects
    the log run's module."""
    module = (REPO / MODULE).resolve()
    for arg in args or ["tests"]:
        path = (rootdir / arg.split("::", 1)[0]).resolve()
        if path == module or path in module.parents:
            return True
    return False


def offline_config(folder: Path, web_port: int) -> Path:
    """The example configuration of ``make run`` with every engine on a loopback port nothing listens on."""
    config = yaml.safe_load((REPO / "config.example.yml").read_text())
    config["database"] = {"url": "sqlite:///topicstreams.db"}  # relative to the config's folder: this one
    config["web"] = {"port": web_port}
    config["browser"] = {"profile_dir": "profiles"}
    config["engines"] = {name: {"base_url": f"http://127.0.0.1:{free_port()}"} for name in ENGINES}
    path = folder / "config.yml"
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    return path


class BackgroundLogRun:
    """The supervisor of ``make run`` as a child of this process; a thread stops it after :data:`SECONDS` and writes
    its exit status into its folder, so that another process (an xdist worker) can read the result."""

    def __init__(self, seconds: float = SECONDS) -> None:
        self.folder = Path(tempfile.mkdtemp(prefix="topicstreams-suite-log-run-"))
        port = free_port()
        (self.folder / URL).write_text(f"http://127.0.0.1:{port}/")
        config = offline_config(self.folder, port)
        self.output = (self.folder / OUTPUT).open("w")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "topicstreams.cli.together"],
            cwd=REPO,  # as make run: the project's scrapy.cfg
            env={**_environment(), "TOPICSTREAMS_CONFIG": str(config)},
            stdout=self.output,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            text=True,
        )
        self.seconds = seconds
        self._watcher = threading.Thread(target=self._stop_and_record, name="suite-log-run", daemon=True)
        self._watcher.start()

    def _stop_and_record(self) -> None:
        try:
            returncode = self.process.wait(timeout=self.seconds)  # it should not end before it is asked to
        except subprocess.TimeoutExpired:
            self.process.send_signal(signal.SIGINT)  # the terminal's Ctrl-C
            try:
                returncode = self.process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.process.kill()
                returncode = self.process.wait()
        self.output.flush()
        written = self.folder / f".{RETURNCODE}"
        try:
            written.write_text(str(returncode))
            written.rename(self.folder / RETURNCODE)  # whole or not at all, for a reader polling for it
        except OSError:  # the folder is gone: the session closed it
            pass

    def result(self, timeout: float) -> tuple[int, str, str]:
        return LogRunResult(self.folder).result(timeout)

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
            try:
                self.process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.process.kill()
        self._watcher.join(timeout=10)
        self.output.close()
        shutil.rmtree(self.folder, ignore_errors=True)


def _environment() -> dict[str, str]:
    dropped = ("TOPICSTREAMS_CONFIG", "TOPICSTREAMS_DB_URL", "SCRAPER_PROXY")
    return {k: v for k, v in os.environ.items() if k not in dropped}


class LogRunResult:
    """What a log run left in its folder, read by whichever process runs the test."""

    def __init__(self, folder: str | Path) -> None:
        self.folder = Path(folder)

    def result(self, timeout: float) -> tuple[int, str, str]:
        """(exit status, its output, the feed's URL), once it has ended (within ``timeout`` seconds)."""
        deadline = time.monotonic() + timeout
        status = self.folder / RETURNCODE
        while not status.exists():
            if time.monotonic() > deadline:
                raise TimeoutError(f"the suite's log run in {self.folder} has not ended within {timeout:g} s")
            time.sleep(0.5)
        return int(status.read_text()), (self.folder / OUTPUT).read_text(), (self.folder / URL).read_text()
