"""Every surface beside a crawl, read at one moment: ``scrapy serve`` as a test's own process on a free loopback port
(its health API and metrics), and several ``scrapy`` commands run at once (the CPU time of their start-up
overlaps)."""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from tests.support.fakes_http import fetch
from tests.support.ports import free_port
from tests.support.project import ScrapyRunner


class Served:
    """A ``scrapy serve`` process; :attr:`base` waits until it listens."""

    def __init__(self, process: subprocess.Popen, port: int) -> None:
        self.process, self.port = process, port
        self.listening = False

    @property
    def base(self) -> str:
        if not self.listening:
            line = (
                self.process.stdout.readline()
            )  # "serving the feed at http://127.0.0.1:PORT/", just before it listens
            assert line, self.process.communicate(timeout=10)[1][-3000:]
            deadline = time.monotonic() + 15
            while True:
                try:
                    socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                    break
                except OSError:
                    assert time.monotonic() < deadline and self.process.poll() is None, "scrapy serve does not listen"
                    time.sleep(0.1)
            self.listening = True
        return f"http://127.0.0.1:{self.port}"


@contextmanager
def serving(folder: Path, env: dict[str, str]) -> Iterator[Served]:
    """``scrapy serve`` run in ``folder`` with ``env`` (the ScrapyRunner's, with the config), started now and ended
    (SIGTERM) when the block ends."""
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "scrapy", "serve", "--port", str(port)],
        cwd=folder,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        stdin=subprocess.DEVNULL,
    )
    try:
        yield Served(process, port)
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.communicate(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.communicate()


def scrapy_together(
    runner: ScrapyRunner, commands: Sequence[Sequence[str]], env: dict[str, str], timeout: float = 120
) -> list[subprocess.CompletedProcess]:
    """``scrapy COMMAND…`` for each of ``commands``, all started at once (as ``runner`` runs one), in order."""
    started = [
        (
            command,
            subprocess.Popen(
                [sys.executable, "-m", "scrapy", *command],
                cwd=runner.folder,
                env={**runner.env, **env},
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                stdin=subprocess.DEVNULL,
            ),
        )
        for command in commands
    ]
    done = []
    for command, process in started:
        out, err = process.communicate(timeout=timeout)
        done.append(subprocess.CompletedProcess(["scrapy", *command], process.returncode, out, err))
    return done


def api_health(base: str) -> dict:
    """``GET /api/health``, read."""
    status, _, body, _ = fetch(f"{base}/api/health")
    assert status == 200, body[-2000:]
    return json.loads(body)


def node_of(answer: dict, node: str) -> dict:
    """The object of ``node`` in a health report (``{"nodes": [...]}`` or one node's own)."""
    if "nodes" in answer:
        return next(entry for entry in answer["nodes"] if entry["node"] == node)
    assert answer["node"] == node, answer
    return answer


def metrics(base: str) -> str:
    """``GET /metrics``, as text."""
    with urllib.request.urlopen(f"{base}/metrics", timeout=10) as response:
        return response.read().decode()
