"""``scrapy serve`` as a test's own process beside a crawl: the web app on a free loopback port, reading the
configured database, and what its health API and metrics say."""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.support.fakes_http import fetch
from tests.support.ports import free_port


@contextmanager
def serving(folder: Path, env: dict[str, str]) -> Iterator[str]:
    """The base URL of ``scrapy serve`` run in ``folder`` with ``env`` (the ScrapyRunner's, with the config), until
    the block ends (then SIGTERM)."""
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
        line = process.stdout.readline()  # "serving the feed at http://127.0.0.1:PORT/", just before it listens
        assert line, process.communicate(timeout=10)[1][-3000:]
        deadline = time.monotonic() + 15
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert time.monotonic() < deadline and process.poll() is None, "scrapy serve does not listen"
                time.sleep(0.1)
        yield f"http://127.0.0.1:{port}"
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.communicate(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.communicate()


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
