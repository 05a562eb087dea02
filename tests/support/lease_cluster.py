"""A lease-mode cluster for the system tests: crawl processes with their own node ids, sharing one PostgreSQL
database (``scraper.assignment: lease``), each against fake engines of its own.

Each node is one ``scrapy crawlall`` process (real spiders in a real Chromium) with its own config file: its
``node.id``, its ``browser.profile_dir``, and the base URLs of its own :class:`~fake_engines.FakeEngines` — so
the fakes' request logs say which node asked for which topic, and one node's engine can be blocked (its fake
answers 429) while the others' are not, as one exit IP is blocked and the others are not. What the nodes did is read
back from the fakes' logs, the ``schedule``, ``nodes`` and ``engine_status`` tables, and each process's log file.

    with LeaseCluster(postgres_server, tmp_path, topics=[...]) as cluster:
        cluster.start("node-a"), cluster.start("node-b")
        cluster.wait_for(lambda: ..., 30, "every topic scraped")
        cluster.scrapes("google")  # every results request of every node, oldest first
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import create_engine, text

from fake_engines import FakeEngines
from tests.support.databases import postgres_dbname
from tests.support.postgres_server import PostgresServer
from tests.support.project import ScrapyRunner, write_config
from topicstreams import ENGINES

CRAWLED = ("google", "bing")
"""The engines every node crawls (two: the machine runs several Chromiums at once)."""

FAST_SETTINGS = ("-s", "TOPICSTREAMS_NODE_HEARTBEAT=2", "-s", "TOPICSTREAMS_LEASE_POLL=1")
"""Heartbeats every 2 s (``scrapy nodes`` calls a process stale after four) and a look at the schedule every 1 s."""

TOO_MANY = {"status": 429, "body": "Too Many Requests"}
"""A fake's answer to a blocked exit IP."""

STOP_TIMEOUT = 40.0
"""Seconds a node may take to stop after SIGTERM before it is killed."""


@dataclass(frozen=True)
class Scrape:
    """One results request a node's fake engine answered."""

    node: str
    engine: str
    topic: str
    time: float
    """When it reached the fake (``time.time()``): after the node claimed the topic."""
    status: int


class Node:
    """One node: its fakes, its config, and while it runs its ``scrapy`` process (in a session of its own, so that
    a kill takes its Chromium along, as a power loss would)."""

    def __init__(self, name: str, folder: Path, fakes: FakeEngines, config: Path) -> None:
        self.name = name
        self.folder = folder
        self.fakes = fakes
        self.config = config
        self.process: subprocess.Popen | None = None
        self.log_path = folder / "crawl.log"
        self.started_at = 0.0
        self.exited_at: float | None = None
        self.ended: str | None = None
        """How its process ended: "stopped" (on its own, or by SIGTERM) or "killed" (SIGKILL); None while it runs."""

    def start(self, runner: ScrapyRunner, *args: str) -> Node:
        with self.log_path.open("a") as log:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "scrapy", *args],
                cwd=self.folder,
                env={**runner.env, "TOPICSTREAMS_CONFIG": str(self.config)},
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        self.started_at = time.time()
        return self

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def log(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def tail(self, chars: int = 3000) -> str:
        return f"--- {self.name} ({self.state()}) {self.log_path}\n{self.log()[-chars:]}"

    def state(self) -> str:
        if self.process is None:
            return "not started"
        code = self.process.poll()
        return "running" if code is None else f"exited {code}"

    def terminate(self, timeout: float = STOP_TIMEOUT) -> int:
        """SIGTERM to the crawl process (Scrapy's graceful stop; it closes its Chromium); waits for it to exit,
        killing its session past ``timeout``. Returns the exit code."""
        assert self.process is not None
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.kill()
                return self.process.returncode
        self.exited_at = self.exited_at or time.time()
        self.ended = self.ended or "stopped"
        self.reap()
        return self.process.returncode

    def wait(self, timeout: float) -> int:
        """Wait for the process to end on its own (a once run); killed past ``timeout``. Returns the exit code."""
        assert self.process is not None
        try:
            self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            pytest.fail(f"{self.name} did not end within {timeout:g} s\n{self.tail()}", pytrace=False)
        self.exited_at, self.ended = time.time(), "stopped"
        self.reap()
        return self.process.returncode

    def kill(self) -> None:
        """SIGKILL to the node's whole session: the crawl process and its Chromium die at once, nothing said."""
        assert self.process is not None
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=30)
        self.exited_at = time.time()
        self.ended = "killed"

    def reap(self) -> None:
        """Kill whatever is left of the node's session (a Chromium helper that outlived its crawl)."""
        if self.process is None:
            return
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.process.pid, signal.SIGKILL)

    def scrapes(self, engine: str) -> list[Scrape]:
        return [
            Scrape(self.name, engine, entry["query"].get("q", ""), entry["time"], entry["status"])
            for entry in self.fakes.results_requests(engine)
        ]


class LeaseCluster:
    """Lease-mode nodes on one fresh PostgreSQL database of ``server`` (see the module docstring)."""

    def __init__(
        self,
        server: PostgresServer,
        folder: Path,
        *,
        topics: Sequence[str],
        interval: float,
        lease_seconds: float,
        floor: float = 0.25,
        jitter_ratio: float = 0.2,
        cooldown: float = 60.0,
    ) -> None:
        self.server = server
        self.folder = folder
        self.topics = list(topics)
        self.interval = interval
        self.lease_seconds = lease_seconds
        self.floor = floor
        self.jitter_ratio = jitter_ratio
        self.cooldown = cooldown
        self.dbname = postgres_dbname(f"lease_cluster_{uuid.uuid4().hex[:6]}")
        self.url = server.url(self.dbname)
        self.runner = ScrapyRunner(folder)
        self.nodes: dict[str, Node] = {}
        self.ready_at = 0.0
        """When the cluster was ready (``time.time()``): set by whoever starts its first nodes."""
        self._janitor = None
        self._db = None

    # ---- lifecycle -----------------------------------------------------------------------------------
    def __enter__(self) -> LeaseCluster:
        self._janitor = self.server.janitor(self.dbname)
        self._janitor.init()
        self._db = create_engine(self.url, pool_pre_ping=True)
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        try:
            for node in self.nodes.values():
                if node.running:
                    node.terminate(timeout=20)
                node.reap()
        finally:
            for node in self.nodes.values():
                node.fakes.stop()
            if self._db is not None:
                self._db.dispose()
            if self._janitor is not None:
                self._janitor.drop()

    def upgrade(self) -> None:
        """``scrapy db upgrade`` once, before any node starts."""
        folder = self.folder / "upgrade"
        folder.mkdir(parents=True, exist_ok=True)
        config = write_config(folder, {"database": {"url": self.url}})
        result = self.runner("db", "upgrade", env={"TOPICSTREAMS_CONFIG": str(config)}, timeout=120)
        assert result.returncode == 0, result.stdout + result.stderr[-3000:]

    def node(self, name: str, *, engines: Iterable[str] = CRAWLED, scraper: Mapping[str, Any] | None = None) -> Node:
        """A node's folder, fakes (started) and config; not started yet."""
        folder = self.folder / name
        folder.mkdir(parents=True, exist_ok=True)
        fakes = FakeEngines(CRAWLED).start()
        engines = tuple(engines)
        config = write_config(
            folder,
            {
                "database": {"url": self.url},
                "topics": self.topics,
                "node": {"id": name},
                "engines": {
                    engine: {
                        "base_url": fakes.base_url(engine) if engine in CRAWLED else "http://127.0.0.1:9",
                        "enabled": engine in engines,
                    }
                    for engine in ENGINES
                },
                "scraper": {
                    "assignment": "lease",
                    "lease_seconds": self.lease_seconds,
                    "scrape_interval": self.interval,
                    "schedule": "fixed",
                    "pacing": {"default_min_interval": self.floor, "jitter_ratio": self.jitter_ratio},
                    "cooldown": {"initial": self.cooldown, "factor": 1, "max": self.cooldown},
                    **(scraper or {}),
                },
                "browser": {"profile_dir": str(folder / "profiles")},
            },
        )
        node = self.nodes[name] = Node(name, folder, fakes, config)
        return node

    def start(self, name: str, *args: str) -> Node:
        """Node ``name`` crawling google and bing in one process (``scrapy crawlall``), with quick heartbeats and
        polls; ``args`` are more arguments (``-a once=1``)."""
        return self.launch(name, "crawlall", "-a", f"engines={','.join(CRAWLED)}", *FAST_SETTINGS, *args)

    def launch(self, name: str, *args: str) -> Node:
        """Node ``name`` running ``scrapy ARGS`` in the background (its node made if need be; a node that ran
        before starts again, its log going on in the same file)."""
        node = self.nodes.get(name) or self.node(name)
        assert not node.running, f"{name} is running already"
        node.ended = node.exited_at = None
        return node.start(self.runner, *args)

    def run(self, name: str, *args: str, timeout: float = 120) -> subprocess.CompletedProcess:
        """Run ``scrapy ARGS`` with node ``name``'s config (its node made if need be) and wait for it."""
        node = self.nodes.get(name) or self.node(name)
        return self.runner(*args, env={"TOPICSTREAMS_CONFIG": str(node.config)}, timeout=timeout)

    # ---- reading back --------------------------------------------------------------------------------
    def query(self, sql: str, **params: Any) -> list[tuple]:
        with self._db.connect() as conn:
            return [tuple(row) for row in conn.execute(text(sql), params)]

    def schedule(self) -> list[dict[str, Any]]:
        """The schedule's rows with their topic names (an empty list before any node reconciled)."""
        with self._db.connect() as conn:
            rows = (
                conn.execute(
                    text("""
                SELECT s.engine, t.name AS topic, s.slot_at, s.due_at, s.lease_node, s.lease_until, s.last_node,
                       s.last_done_at, s.scrapes
                FROM schedule s JOIN topics t ON t.id = s.topic_id ORDER BY s.engine, t.name""")
                )
                .mappings()
                .all()
            )
        return [dict(row) for row in rows]

    def leases_of(self, node: str) -> list[tuple[str, str]]:
        """The (engine, topic) rows whose lease names ``node`` (expired or not)."""
        return [(row["engine"], row["topic"]) for row in self.schedule() if row["lease_node"] == node]

    def db_now(self) -> datetime:
        return self.query("SELECT now()")[0][0]

    def scrapes(
        self, engine: str, *, since: float = 0.0, nodes: Iterable[str] | None = None, ok: bool = True
    ) -> list[Scrape]:
        """The results requests of ``engine`` on every node's fakes (or ``nodes``'), answered at ``since`` or later,
        oldest first; only those answered 200 when ``ok``."""
        names = list(self.nodes) if nodes is None else list(nodes)
        found = [
            scrape
            for name in names
            for scrape in self.nodes[name].scrapes(engine)
            if scrape.time >= since and (scrape.status == 200 or not ok)
        ]
        return sorted(found, key=lambda scrape: scrape.time)

    def logs(self, *names: str, chars: int = 3000) -> str:
        """The tails of the named nodes' logs (every node's when none is named)."""
        return "\n".join(self.nodes[name].tail(chars) for name in (names or self.nodes) if name in self.nodes)

    def wait_for(
        self, condition: Callable[[], Any], timeout: float, what: str, *, every: float = 0.25, logs: Sequence[str] = ()
    ) -> Any:
        """Poll ``condition`` until it is true and return its value; fail naming ``what`` at the deadline, with the
        logs of ``logs`` (every node's when empty)."""
        deadline = time.monotonic() + timeout
        while True:
            value = condition()
            if value:
                return value
            if time.monotonic() > deadline:
                pytest.fail(f"{what}: not within {timeout:g} s\n{self.logs(*logs)}", pytrace=False)
            time.sleep(every)
