"""``scrapy routes [--json]`` and ``scrapy routes check`` as users run them (topicstreams/commands/routes.py): the
report from ``route_status`` rows in a real SQLite file; the check in real Chromium against the fake engines, through
a ``direct`` route (reachable) and an http proxy on a port where nothing listens (unreachable: exit 1), its
credentials never shown; and a bad ``routes`` entry stopping both with exit 78."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.support.crawl_checks import crawl_config
from tests.support.fakes_http import running_fakes
from tests.support.ports import free_port
from tests.support.project import write_config
from topicstreams.browser.chromium import find_executable
from topicstreams.storage import upgrade, utcnow
from topicstreams.storage.db import Databases
from topicstreams.storage.route_status import save_route_status

fakes = running_fakes("google", "bing")

SECRET = "hunter2-secret"


def routes_config(folder: Path, fakes, *routes: dict) -> dict[str, str]:
    path = crawl_config(folder, fakes, floor=0.1, engines=("google", "bing"), routes=list(routes))
    return {"TOPICSTREAMS_CONFIG": str(path)}


def direct(name: str = "home", **values) -> dict:
    return {"name": name, "proxy": "direct", **values}


def test_routes_shows_each_route_of_this_node_as_text_and_json(scrapy_cmd, tmp_path, fakes):
    dead = f"http://bob:{SECRET}@127.0.0.1:3128"
    env = routes_config(tmp_path, fakes, direct(), {"name": "us-1", "proxy": dead, "engines": ["google"]})
    url = f"sqlite:///{tmp_path / 'news.db'}"
    upgrade(url)
    databases = Databases()
    try:
        db = databases.of(url)
        save_route_status(db, "node-a", "home", "google", proxy="direct", score=95, band="good")
        save_route_status(
            db,
            "node-a",
            "home",
            "bing",
            proxy="direct",
            state="cooling",
            score=40,
            band="degraded",
            cooling_until=utcnow().replace(year=2099),
        )
        save_route_status(db, "node-b", "elsewhere", "google", proxy="direct")
    finally:
        databases.dispose()

    text = scrapy_cmd("routes", env=env)
    assert text.returncode == 0, text.stderr
    lines = text.stdout.splitlines()
    assert re.split(r" {2,}", lines[1]) == [
        "home",
        "direct",
        "cooling",
        "google ok 95, bing cooling 40 until 2099-" + lines[1].split("until 2099-")[1],
    ]
    assert re.split(r" {2,}", lines[2]) == ["us-1", "http://127.0.0.1:3128", "not crawled yet", "google"]
    assert "elsewhere" not in text.stdout and SECRET not in text.stdout + text.stderr

    shown = scrapy_cmd("routes", "--json", env=env)
    assert shown.returncode == 0, shown.stderr
    payload = json.loads(shown.stdout)
    assert [(entry["node"], entry["route"], entry["state"]) for entry in payload["routes"]] == [
        ("node-a", "home", "cooling"),
        ("node-a", "us-1", None),
    ]
    assert payload["routes"][0]["engines"]["google"] == {
        "state": "ok",
        "score": 95,
        "band": "good",
        "cooling_until": None,
        "reason": None,
    }


@pytest.mark.skipif(find_executable() is None, reason="no Chromium on this machine")
def test_check_reaches_each_engine_through_each_route_and_exits_1_for_an_unreachable_one(scrapy_cmd, tmp_path, fakes):
    dead = f"http://bob:{SECRET}@127.0.0.1:{free_port()}"  # nothing listens there
    env = routes_config(tmp_path, fakes, direct(persona={"locale": "de-DE"}), {"name": "dead", "proxy": dead})
    fakes.reset()
    result = scrapy_cmd("routes", "check", env=env, timeout=60)
    assert result.returncode == 1, result.stdout + result.stderr
    lines = [re.split(r" {2,}", line) for line in result.stdout.splitlines()]
    assert lines[0] == ["route", "proxy", "engine", "result"]
    by_pair = {(line[0], line[2]): line[3] for line in lines[1:5]}
    for engine in ("google", "bing"):
        assert re.fullmatch(r"reachable \(HTTP 200, \d+\.\d\d s\)", by_pair[("home", engine)])
        assert by_pair[("dead", engine)].startswith(
            "unreachable: proxy refused the connection or cannot be reached (net::ERR_PROXY_CONNECTION_FAILED), "
        )
        # the direct route's one request reached the fake, in its persona's language
        (request,) = [entry for entry in fakes.requests(engine) if entry["query"].get("q") == "weather"]
        assert request["accept_language"].startswith("de-DE")
    assert result.stdout.splitlines()[5].startswith("UNREACHABLE: dead — none of its requests got an answer")
    assert result.stdout.splitlines()[-1] == "1 of 2 route(s) reachable"
    assert SECRET not in result.stdout + result.stderr and "Traceback" not in result.stderr

    env = routes_config(tmp_path, fakes, direct())
    reachable = scrapy_cmd("routes", "check", "--json", env=env, timeout=60)
    assert reachable.returncode == 0, reachable.stdout + reachable.stderr
    payload = json.loads(reachable.stdout)
    assert payload["unreachable"] == []
    assert [(check["route"], check["engine"], check["reachable"], check["status"]) for check in payload["checks"]] == [
        ("home", "google", True, 200),
        ("home", "bing", True, 200),
    ]


def test_a_bad_route_stops_both_with_exit_78_and_one_line(scrapy_cmd, tmp_path):
    path = write_config(tmp_path, {"routes": [{"name": "eu", "proxy": f"socks5://bob:{SECRET}@p.test:1080"}]})
    for args in (["routes"], ["routes", "check"]):
        result = scrapy_cmd(*args, env={"TOPICSTREAMS_CONFIG": str(path)})
        assert result.returncode == 78, (args, result.stderr)
        [line] = result.stderr.strip().splitlines()
        assert line.startswith(
            "config error: routes[0].proxy: got 'socks5://bob:***@p.test:1080', expected a socks5:// URL without "
            "credentials: Chromium cannot log in to a SOCKS proxy"
        )
    assert not list(tmp_path.glob("*.db*"))
