"""A real Scrapyd for the tests: started from this project's virtualenv on 127.0.0.1, in its own folder.

``ScrapydNode`` runs ``python -m scrapyd`` with a ``scrapyd.conf`` of its own (a free port, temporary eggs, logs and
dbs folders), deploys the project to it with ``scrapyd-deploy`` as users do, schedules jobs through its JSON API and
reads their logs. Scrapyd says "finished" of a job that failed at start, so a job is judged by its log:
:func:`log_problems` lists its ERROR lines and the closing line it lacks.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from pathlib import Path

from tests.support.ports import free_port
from tests.support.project import REPO

PROJECT = "topicstreams"
API_TIMEOUT = 90
"""Seconds a call of Scrapyd's JSON API may take before the test fails."""
SCRAPYD_DEPLOY = Path(sys.executable).with_name("scrapyd-deploy")
COPY_IGNORED = shutil.ignore_patterns(
    ".git",
    ".venv",
    "build",
    "dist",
    "*.egg-info",
    "__pycache__",
    ".pytest_cache",
    ".topicstreams",
    "*.db",
    ".ruff_cache",
)
ERROR_LINE = re.compile(r"^\S+ \S+ \[[^\]]+\] (ERROR|CRITICAL): .*$", re.MULTILINE)
CLOSED_LINE = re.compile(r"\[scrapy\.core\.engine\] INFO: Spider closed \((?P<reason>[^)]+)\)")


def project_copy(folder: Path) -> Path:
    """A copy of the project's source in ``folder``, to deploy from (``scrapyd-deploy`` builds in the project's
    folder, leaving ``build/`` and egg metadata there, which must not land in the checkout under test)."""
    target = folder / "project"
    shutil.copytree(REPO, target, ignore=COPY_IGNORED)
    return target


class ScrapydNode:
    """One Scrapyd server. Use as a context manager; ``env`` is added to the server's environment (its jobs inherit
    it), the variables of the tests' own environment that configure topicstreams are left out."""

    def __init__(self, folder: Path, name: str, env: dict[str, str] | None = None) -> None:
        self.folder = folder / name
        self.name = name
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/"
        self.env = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith(("TOPICSTREAMS_", "SCRAPY_")) and k not in ("SCRAPER_PROXY", "PYTHONPATH")
        }
        self.env.update(env or {})
        self.process: subprocess.Popen | None = None

    def __enter__(self) -> ScrapydNode:
        self.folder.mkdir(parents=True)
        (self.folder / "scrapyd.conf").write_text(
            "[scrapyd]\n"
            "bind_address = 127.0.0.1\n"
            f"http_port = {self.port}\n"
            f"eggs_dir = {self.folder / 'eggs'}\n"
            f"logs_dir = {self.folder / 'logs'}\n"
            f"dbs_dir = {self.folder / 'dbs'}\n"
            "items_dir =\n"
            "poll_interval = 0.2\n"
            "max_proc = 4\n"
        )
        self.output = (self.folder / "scrapyd.out").open("wb")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "scrapyd"],
            cwd=self.folder,
            env=self.env,
            stdout=self.output,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 30
        while True:
            try:
                if self.get("daemonstatus.json")["status"] == "ok":
                    return self
            except OSError:
                pass
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.__exit__(None, None, None)
                raise RuntimeError(f"scrapyd did not start: {self.server_log()[-3000:]}")
            time.sleep(0.1)

    def __exit__(self, *exc) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()  # Scrapyd ends its running jobs with it
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.output.close()

    # -- the JSON API ---------------------------------------------------------------------------------

    def get(self, endpoint: str, **params: str) -> dict:
        # Some answers run a Python process of the egg first (listspiders.json: ``scrapy list``), seconds on a busy
        # machine: the timeout only keeps a hung server from holding the test forever.
        query = f"?{urllib.parse.urlencode(params)}" if params else ""
        with urllib.request.urlopen(self.url + endpoint + query, timeout=API_TIMEOUT) as response:
            return json.load(response)

    def post(self, endpoint: str, fields: list[tuple[str, str]]) -> dict:
        data = urllib.parse.urlencode(fields).encode()
        with urllib.request.urlopen(self.url + endpoint, data=data, timeout=API_TIMEOUT) as response:
            answer = json.load(response)
        if answer.get("status") != "ok":
            raise AssertionError(f"{endpoint} {fields}: {answer}")
        return answer

    def deploy(self, project: Path) -> subprocess.CompletedProcess:
        """``scrapyd-deploy <name>`` from ``project`` (a copy), with a ``[deploy:<name>]`` target for this node."""
        config = project / "scrapy.cfg"
        config.write_text(config.read_text() + f"\n[deploy:{self.name}]\nurl = {self.url}\nproject = {PROJECT}\n")
        return subprocess.run(
            [str(SCRAPYD_DEPLOY), self.name],
            cwd=project,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=180,
            check=True,
        )

    def schedule(self, spider: str, settings: dict[str, str] | None = None, **args: str) -> str:
        """Schedule ``spider`` with Scrapy ``settings`` (``setting=K=V``) and spider arguments; its job id."""
        fields = [("project", PROJECT), ("spider", spider)]
        fields += [("setting", f"{key}={value}") for key, value in (settings or {}).items()]
        fields += list(args.items())
        return self.post("schedule.json", fields)["jobid"]

    def wait(self, *jobs: str, timeout: float = 180) -> dict[str, dict]:
        """Wait until every job in ``jobs`` is finished; their entries of ``listjobs.json`` by job id."""
        deadline = time.monotonic() + timeout
        while True:
            finished = {job["id"]: job for job in self.get("listjobs.json", project=PROJECT)["finished"]}
            if all(job in finished for job in jobs):
                return {job: finished[job] for job in jobs}
            if time.monotonic() > deadline:
                raise AssertionError(
                    f"jobs not finished after {timeout} s: {self.get('listjobs.json')}\n{self.server_log()[-3000:]}"
                )
            time.sleep(0.3)

    def job_log(self, spider: str, job: str) -> str:
        path = self.folder / "logs" / PROJECT / spider / f"{job}.log"
        return path.read_text() if path.exists() else ""

    def server_log(self) -> str:
        self.output.flush()
        return (self.folder / "scrapyd.out").read_text(errors="replace")


def log_problems(log: str) -> list[str]:
    """What makes a job's log a failure: its ERROR/CRITICAL lines, a missing log, or no normal close."""
    if not log:
        return ["the job wrote no log"]
    problems = [match.group(0) for match in ERROR_LINE.finditer(log)]
    closed = CLOSED_LINE.search(log)
    if closed is None:
        problems.append("the spider never closed")
    elif closed["reason"] != "finished":
        problems.append(f"the spider closed with {closed['reason']!r}")
    return problems
