"""The browser side: finding Chromium, one process per profile, what a page may load; topic arguments."""

import subprocess
import sys
from types import SimpleNamespace

import pytest

from topicstreams.browser.chromium import (
    BrowserNotFound,
    ProfileInUse,
    ProfileLock,
    find_executable,
    playwright_proxy,
    profile_path,
    should_abort_request,
)
from topicstreams.crawl.arguments import split_names
from topicstreams.crawl.supply import in_shard


def test_a_configured_executable_wins_and_a_wrong_one_is_named(tmp_path):
    fake = tmp_path / "chrome"
    fake.write_text("#!/bin/sh\n")
    fake.chmod(0o755)
    assert find_executable(str(fake)) == str(fake)
    with pytest.raises(BrowserNotFound, match="browser.executable_path '/nope/chrome' is not an executable"):
        find_executable("/nope/chrome")
    assert find_executable("")  # this machine has a Chromium (make setup installs one)


def test_a_second_process_on_the_same_profile_is_refused(tmp_path):
    profile = profile_path(str(tmp_path), "node-1", "google")
    assert profile == tmp_path / "node-1" / "google"
    lock = ProfileLock(profile)
    lock.acquire()
    other = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; from pathlib import Path; from topicstreams.browser.chromium import ProfileLock\n"
            f"ProfileLock(Path({str(profile)!r})).acquire()",
        ],
        capture_output=True,
        text=True,
    )
    assert other.returncode != 0
    assert "ProfileInUse" in other.stderr and "is in use by process" in other.stderr
    with pytest.raises(ProfileInUse, match="one process per engine and profile"):
        ProfileLock(profile).acquire()
    lock.release()
    again = ProfileLock(profile)
    again.acquire()
    again.release()


def request(url, resource_type="document", navigation=False, page_url="http://127.0.0.1:8000/search?q=x"):
    return SimpleNamespace(
        url=url,
        resource_type=resource_type,
        is_navigation_request=lambda: navigation,
        frame=SimpleNamespace(page=SimpleNamespace(url=page_url)),
    )


def test_requests_the_parser_does_not_need_are_aborted():
    assert not should_abort_request(request("http://127.0.0.1:8000/search?q=x", navigation=True))
    assert not should_abort_request(request("https://consent.example/x", navigation=True))
    assert not should_abort_request(request("http://127.0.0.1:8000/app.js", "script"))
    assert should_abort_request(request("http://127.0.0.1:8000/thumb.png", "image"))
    assert should_abort_request(request("http://127.0.0.1:8000/f.woff2", "font"))
    assert should_abort_request(request("http://127.0.0.1:8000/v.mp4", "media"))
    assert should_abort_request(request("https://www.gstatic.com/app.css", "stylesheet"))
    assert should_abort_request(request("https://assets.fake-engine.invalid/x.js", "script"))


def test_proxy_credentials_stay_out_of_the_server_string():
    assert playwright_proxy("http://bob:s3cret@proxy.test:3128") == {
        "server": "http://proxy.test:3128",
        "username": "bob",
        "password": "s3cret",
    }
    assert playwright_proxy("socks5://proxy.test:1080") == {"server": "socks5://proxy.test:1080"}


def test_topics_argument_is_split_and_trimmed():
    assert split_names(" alpha , beta,,alpha ,  ") == ["alpha", "beta"]


PINNED_0_OF_2 = ["alpha", "gamma", "zeta"]


def test_shards_cover_every_topic_exactly_once_and_are_stable():
    topics = [f"topic {i}" for i in range(200)]
    for count in (1, 2, 3, 5):
        owners = [[i for i in range(count) if in_shard(t, f"{i}/{count}")] for t in topics]
        assert all(len(o) == 1 for o in owners)
        if count > 1:
            assert len({o[0] for o in owners}) == count
    # the same on every machine, Python run and release: pinned, since nodes of mixed versions share topics
    assert [n for n in ("alpha", "beta", "gamma", "delta", "epsilon", "zeta") if in_shard(n, "0/2")] == PINNED_0_OF_2
    probe = subprocess.run(
        [
            sys.executable,
            "-c",
            "from topicstreams.crawl.supply import in_shard;print([in_shard(f't{i}', '1/3') for i in range(20)])",
        ],
        capture_output=True,
        text=True,
        env={"PYTHONHASHSEED": "123", "PATH": ""},
        check=True,
    )
    assert probe.stdout.strip() == str([in_shard(f"t{i}", "1/3") for i in range(20)])
