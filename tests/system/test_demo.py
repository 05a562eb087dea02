"""`scrapy demo` (what `make demo` runs): the fake engines, its own database, what was stored, the web app on it.

A demo that crawls to its end while serving (the web app during and after the crawl, its health, its monitor) is
tests/system/test_monitor_demo.py's one run."""

from __future__ import annotations

import json
import queue
import re
import signal
import socket
import sqlite3
import subprocess
import sys
import threading
import time

import psutil
import pytest

from tests.support.fakes_http import fetch

ENGINES = {"google", "bing", "yahoo", "brave"}


@pytest.mark.timeout(120)
def test_demo_stores_articles_from_the_fake_engines_into_its_own_database(scrapy_cmd, tmp_path):
    (tmp_path / "topicstreams.db").write_bytes(b"")  # a user's database beside it must stay untouched
    elsewhere = tmp_path / "users" / "named-by-the-environment.db"  # and so must the one the environment names
    result = scrapy_cmd(
        "demo", "--seconds", "12", "--no-serve", timeout=100, env={"TOPICSTREAMS_DB_URL": f"sqlite:///{elsewhere}"}
    )
    assert result.returncode == 0, result.stderr[-3000:]
    stored = re.search(r"^demo: (\d+) articles stored in (.+)$", result.stdout, re.M)
    assert stored, result.stdout[-2000:]
    count, path = int(stored[1]), stored[2]
    assert path == str(tmp_path / ".topicstreams" / "demo" / "demo.db")
    with sqlite3.connect(path) as conn:
        assert conn.execute("select count(*) from topic_news").fetchone()[0] == count > 0
        topics = {row[0] for row in conn.execute("select name from topics where active")}
        engines = {row[0] for row in conn.execute("select distinct engine from topic_news_engines")}
    assert topics == {"artificial intelligence", "climate change", "electric vehicles"}
    assert len(engines) >= 2 and engines <= ENGINES  # all four run at once
    assert "== artificial intelligence" in result.stdout
    assert re.search(r"\[(google|bing|yahoo|brave)(,(google|bing|yahoo|brave))*\] ", result.stdout)
    assert (tmp_path / "topicstreams.db").read_bytes() == b""
    assert not elsewhere.parent.exists()
    assert "demo: open" not in result.stdout and "still serving" not in result.stdout  # nothing served


# ---- helpers for the tests that run a long-lived process (also used by tests/system/test_make_run.py) ----------------


class OutputLines:
    """The lines a process writes to a pipe, read by a thread, so that waiting for one is bounded."""

    def __init__(self, stream) -> None:
        self.lines: list[str] = []
        self._queue: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=self._read, args=(stream,), daemon=True).start()

    def _read(self, stream) -> None:
        for line in stream:
            self._queue.put(line.rstrip("\n"))
        self._queue.put(None)

    def next(self, timeout: float) -> str:
        try:
            line = self._queue.get(timeout=timeout)
        except queue.Empty:
            raise AssertionError(f"no line within {timeout:g} s; so far: {self.lines[-20:]}") from None
        if line is None:
            raise AssertionError(f"the output ended; its last lines: {self.lines[-20:]}")
        self.lines.append(line)
        return line

    def wait_for(self, pattern: str, timeout: float) -> re.Match:
        deadline = time.monotonic() + timeout
        while True:
            line = self.next(max(deadline - time.monotonic(), 0.01))
            if match := re.search(pattern, line):
                return match


def feed(url: str, query: str = "") -> tuple[int, dict | str]:
    """GET ``/api/feed`` of the web app at *url*: (status, the JSON body, or the text when it is not JSON)."""
    status, _, body, _ = fetch(url + "api/feed" + query)
    try:
        return status, json.loads(body)
    except ValueError:
        return status, body


def wait_for_items(url: str, timeout: float) -> list[dict]:
    deadline = time.monotonic() + timeout
    while True:
        status, data = feed(url)
        assert status == 200, data
        if data["items"] or time.monotonic() > deadline:
            return data["items"]
        time.sleep(0.5)


def descendants(pid: int) -> list[psutil.Process]:
    return psutil.Process(pid).children(recursive=True)


def still_running(processes: list[psutil.Process]) -> list[str]:
    """The ones of *processes* still running (a zombie has ended: whoever adopted it has not reaped it yet)."""
    left = []
    for process in processes:
        try:
            if process.is_running() and process.status() != psutil.STATUS_ZOMBIE:
                left.append(f"{process.pid} {' '.join(process.cmdline())[:160]}")
        except psutil.NoSuchProcess:
            pass
    return left


def wait_gone(processes: list[psutil.Process], timeout: float = 10) -> list[str]:
    deadline = time.monotonic() + timeout
    while (left := still_running(processes)) and time.monotonic() < deadline:
        time.sleep(0.2)
    return left


def accepts_connections(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1):
            return True
    except OSError:
        return False


def kill_tree(process: subprocess.Popen) -> None:
    """A failed test's last word: the process and everything under it killed, so no test leaves an orphan."""
    if process.poll() is None:
        for child in descendants(process.pid):
            child.kill()
        process.kill()
    process.wait()


def start(args: list[str], cwd, env: dict, stderr_path) -> tuple[subprocess.Popen, OutputLines]:
    with open(stderr_path, "w") as stderr:  # the logs: a file, so that a full pipe never blocks the process
        process = subprocess.Popen(
            args, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=stderr, text=True
        )
    return process, OutputLines(process.stdout)


# ---- the demo serving its database, interrupted ------------------------------------------------------------------


@pytest.mark.timeout(90)
def test_a_demo_interrupted_while_it_crawls_prints_the_summary_and_serves_no_more(scrapy_cmd, tmp_path):
    log = tmp_path / "demo.log"
    demo, out = start([sys.executable, "-m", "scrapy", "demo", "--seconds", "60"], tmp_path, scrapy_cmd.env, log)
    try:
        url = out.wait_for(r"^demo: open (http://127\.0\.0\.1:(\d+)/) to read the feed$", timeout=40)
        url, port = url[1], int(url[2])
        assert wait_for_items(url, timeout=30), "nothing stored yet"  # the crawl is well under way
        started = descendants(demo.pid)

        demo.send_signal(signal.SIGINT)  # Ctrl-C
        out.wait_for(r"^demo: \d+ articles stored in ", timeout=30)
        assert demo.wait(timeout=20) == 0, log.read_text()[-3000:]
        assert not any("still serving" in line for line in out.lines)
        assert not accepts_connections(port)
        assert wait_gone(started) == []
        assert "Spider closed (shutdown)" in log.read_text()
    finally:
        kill_tree(demo)
