"""`scrapy serve` as users run it: its own process, on the configured database, ended by SIGINT or SIGTERM."""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from tests.support.feed_data import article, fresh_database, store
from tests.support.ports import free_port
from tests.support.project import REPO, write_config


class Served:
    def __init__(self, process: subprocess.Popen, first_line: str) -> None:
        self.process, self.first_line = process, first_line

    def stop(self, signum: int = signal.SIGTERM, timeout: float = 15) -> tuple[int, str]:
        self.process.send_signal(signum)
        _, err = self.process.communicate(timeout=timeout)
        return self.process.returncode, err


def serve(folder: Path, *args: str, config: dict | None = None) -> subprocess.Popen:
    env_config = write_config(folder, config or {"database": {"url": "sqlite:///feed.db"}})
    env = {
        "PATH": "/usr/bin:/bin",
        "SCRAPY_SETTINGS_MODULE": "topicstreams.settings",
        "PYTHONPATH": str(REPO),
        "TOPICSTREAMS_CONFIG": str(env_config),
    }
    return subprocess.Popen(
        [sys.executable, "-m", "scrapy", "serve", *args],
        cwd=folder,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        stdin=subprocess.DEVNULL,
    )


def started(process: subprocess.Popen) -> Served:
    line = process.stdout.readline()
    assert line, process.communicate(timeout=10)[1][-3000:]
    return Served(process, line.strip())


def get(url: str, host: str | None = None) -> tuple[int, str]:
    request = urllib.request.Request(url, headers={"Host": host} if host else {})
    deadline = time.monotonic() + 10
    while True:
        try:
            with urllib.request.urlopen(request, timeout=5) as response:
                return response.status, response.read().decode()
        except urllib.error.HTTPError as exc:
            return exc.code, exc.read().decode()
        except (ConnectionError, urllib.error.URLError):
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)


@pytest.mark.timeout(60)
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_serve_reads_the_configured_database_until_a_signal_ends_it(tmp_path: Path, signum: int) -> None:
    url = fresh_database(f"sqlite:///{tmp_path / 'feed.db'}")
    store(url, [article(1, "climate", "google"), article(1, "climate", "bing")])
    port = free_port()
    server = started(serve(tmp_path, "--port", str(port)))
    assert server.first_line == f"serving the feed at http://127.0.0.1:{port}/"
    status, body = get(f"http://127.0.0.1:{port}/api/feed")
    assert status == 200
    items = json.loads(body)["items"]
    assert [(item["topic"], sorted(e["engine"] for e in item["engines"])) for item in items] == [
        ("climate", ["bing", "google"])
    ]
    assert get(f"http://127.0.0.1:{port}/api/feed", host="rebind.example")[0] == 421
    code, err = server.stop(signum)
    assert code == 0, err[-2000:]
    assert "Traceback" not in err
    with pytest.raises(OSError), socket.create_connection(("127.0.0.1", port), timeout=1):
        pass


@pytest.mark.timeout(60)
def test_serve_on_a_database_without_the_schema_answers_503_and_creates_nothing(tmp_path: Path) -> None:
    port = free_port()
    server = started(serve(tmp_path, "--port", str(port)))
    status, body = get(f"http://127.0.0.1:{port}/api/feed")
    assert status == 503 and "scrapy db upgrade" in json.loads(body)["detail"]
    status, page = get(f"http://127.0.0.1:{port}/")
    assert status == 503 and "scrapy db upgrade" in page
    server.stop()
    assert not (tmp_path / "feed.db").exists()


@pytest.mark.timeout(60)
def test_serve_off_loopback_warns_that_anyone_can_read_the_feed(tmp_path: Path) -> None:
    fresh_database(f"sqlite:///{tmp_path / 'feed.db'}")
    port = free_port()
    server = started(serve(tmp_path, "--host", "0.0.0.0", "--port", str(port)))
    assert server.first_line == f"serving the feed at http://0.0.0.0:{port}/"
    assert get(f"http://127.0.0.1:{port}/api/topics")[0] == 200
    _, err = server.stop()
    assert "WARNING: Listening on 0.0.0.0, off loopback: the feed is readable by anyone who can reach" in err


@pytest.mark.timeout(60)
def test_serve_on_a_port_in_use_says_so_in_one_line(tmp_path: Path) -> None:
    fresh_database(f"sqlite:///{tmp_path / 'feed.db'}")
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        process = serve(tmp_path, "--port", str(port))
        _, err = process.communicate(timeout=30)
    assert process.returncode == 1
    assert f"could not serve on http://127.0.0.1:{port}/" in err
    assert "Traceback" not in err


@pytest.mark.timeout(60)
@pytest.mark.parametrize(
    ("web", "message"),
    [
        ({"port": "eighty"}, "config error: web.port: got 'eighty', expected a port number from 1 to 65535"),
        ({"page_size": 500}, "config error: web.page_size: got 500, expected an integer from 1 to 200"),
        ({"host": ""}, "config error: web.host: got '', expected a host name or IP address"),
    ],
)
def test_a_bad_web_key_is_a_config_error(tmp_path: Path, web: dict, message: str) -> None:
    process = serve(tmp_path, config={"web": web})
    out, err = process.communicate(timeout=30)
    assert process.returncode == 78
    assert err.strip().startswith(message) and len(err.strip().splitlines()) == 1
    assert out == ""


@pytest.mark.timeout(60)
def test_the_web_keys_default_to_loopback_8080_and_pages_of_50(scrapy_cmd) -> None:
    shown = scrapy_cmd("config", "show", check=True).stdout
    assert "web:\n  host: 127.0.0.1\n  port: 8080\n  page_size: 50\n" in shown
