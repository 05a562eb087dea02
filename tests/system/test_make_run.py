"""`make run`'s main job, `python -m topicstreams.cli.together`: `scrapy db upgrade`, then `scrapy crawlall` and
`scrapy serve` side by side, the URL first; a signal stops both, and one ending on its own stops the other."""

from __future__ import annotations

import signal
import sys
import time

import pytest

from fake_engines import FakeEngines
from tests.support.ports import free_port
from tests.support.project import REPO, write_config
from tests.system.test_demo import (
    ENGINES,
    accepts_connections,
    descendants,
    feed,
    kill_tree,
    start,
    wait_for_items,
    wait_gone,
)
from topicstreams.commands.demo import available_engines, demo_config


@pytest.fixture(scope="module")
def fakes():
    with FakeEngines(engines=available_engines()) as running:
        yield running


@pytest.fixture
def job(fakes, scrapy_cmd, tmp_path):
    """Start the main job on the fake engines (paced as the demo is), a database in tmp_path, a free web port."""
    port = free_port()
    config = demo_config(fakes)
    config["database"]["url"] = "sqlite:///run.db"
    config["web"] = {"port": port}
    env = {**scrapy_cmd.env, "TOPICSTREAMS_CONFIG": str(write_config(tmp_path, config))}
    started = []

    def run(args=(sys.executable, "-m", "topicstreams.cli.together"), cwd=tmp_path):
        process, out = start(list(args), cwd, env, tmp_path / "run.log")
        started.append(process)
        return process, out, port

    yield run
    for process in started:
        kill_tree(process)


def wait_status(url: str, timeout: float):
    """``feed(url)`` once the web app listens (the supervisor prints its URL before it starts it)."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            return feed(url)
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.3)


def log(tmp_path, tail: int = 3000) -> str:
    """The job's standard error (its children's log lines): the end of it, or all of it with ``tail=0``."""
    text = (tmp_path / "run.log").read_text()
    return text[-tail:] if tail else text


@pytest.mark.timeout(90)
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_the_crawl_and_the_web_app_run_together_until_a_signal_stops_both(job, tmp_path, signum):
    supervisor, out, port = job()
    url = f"http://127.0.0.1:{port}/"
    assert out.next(timeout=30) == f"topicstreams: open {url} to read the feed"  # the first line
    out.wait_for(r"^database up to date: sqlite:///", timeout=5)
    status, data = wait_status(url, timeout=30)
    assert status == 200, data

    items = wait_for_items(url, timeout=40)  # /api/feed answers 200 all along, and the crawl fills it
    assert items, log(tmp_path)
    assert {e["engine"] for item in items for e in item["engines"]} <= ENGINES
    children = {" ".join(p.cmdline()[2:]) for p in descendants(supervisor.pid) if p.ppid() == supervisor.pid}
    assert children == {"scrapy serve", "scrapy crawlall"}, children
    started = descendants(supervisor.pid)  # the two, the browser driver and Chromium

    supervisor.send_signal(signum)
    assert supervisor.wait(timeout=30) == 0, log(tmp_path)
    assert wait_gone(started, timeout=5) == []
    assert not accepts_connections(port)
    assert "Spider closed (shutdown)" in log(tmp_path, 0)  # the crawl stopped gracefully


@pytest.mark.timeout(90)
def test_when_the_web_app_dies_the_crawl_is_stopped_and_the_job_fails(job, tmp_path):
    supervisor, out, port = job()
    out.wait_for(r"^topicstreams: open ", timeout=30)
    status, data = wait_status(f"http://127.0.0.1:{port}/", timeout=30)
    assert status == 200, data
    assert wait_for_items(f"http://127.0.0.1:{port}/", timeout=40), log(tmp_path)  # the browsers are up
    started = descendants(supervisor.pid)
    serve = next(p for p in started if p.cmdline()[2:] == ["scrapy", "serve"])

    serve.kill()
    assert supervisor.wait(timeout=40) == 1
    ended = "topicstreams: scrapy serve ended on its own (killed by SIGKILL); stopping scrapy crawlall"
    assert ended in log(tmp_path, 0)
    assert wait_gone(started, timeout=5) == []
    assert "Spider closed (shutdown)" in log(tmp_path, 0)  # stopped gracefully


@pytest.mark.timeout(90)
def test_make_run_runs_the_supervisor_and_passes_make_s_sigterm_on(job, tmp_path):
    """The Makefile's recipe itself (set-up left out: `-o setup`): the URL first, and make's SIGTERM stops it all."""
    make = ["make", "-s", "-C", str(REPO), "-o", "setup", "run"]
    process, out, port = job(make, cwd=REPO)
    assert out.next(timeout=30) == f"topicstreams: open http://127.0.0.1:{port}/ to read the feed"
    status, data = wait_status(f"http://127.0.0.1:{port}/", timeout=30)
    assert status == 200, data
    assert wait_for_items(f"http://127.0.0.1:{port}/", timeout=40), log(tmp_path)  # the browsers are up
    started = descendants(process.pid)
    assert any(p.cmdline()[1:3] == ["-m", "topicstreams.cli.together"] for p in started), [p.cmdline() for p in started]

    process.send_signal(signal.SIGTERM)
    process.wait(timeout=30)  # make forwards it to its child, waits for it, then dies of it itself
    assert wait_gone(started, timeout=5) == []
    assert not accepts_connections(port)
