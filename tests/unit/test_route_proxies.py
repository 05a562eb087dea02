"""tests/support/route_proxies.py without a browser: real pproxy processes on loopback, each reaching the fake engines
from its own source address; 407 without credentials; stopped means refused, started again means back on the same
port; no process left behind, even when the parent dies; its route entries pass topicstreams' own check."""

from __future__ import annotations

import base64
import os
import signal
import socket
import struct
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support.fakes_http import reset_fakes_per_test, running_fakes
from tests.support.route_proxies import PASSWORD, PERSONAS, USERNAME, RouteProxies, running_proxies
from topicstreams.browser.chromium import playwright_proxy
from topicstreams.config.route_entries import route_list

REPO = Path(__file__).resolve().parents[2]

fakes = running_fakes("google")
proxies = running_proxies("http", "http-auth", "socks5")
_clean = reset_fakes_per_test()


def through_http_proxy(port: int, url: str, credentials: str | None = None) -> tuple[int, bytes]:
    """(status, head) of ``GET url`` sent to the HTTP proxy on ``port`` (absolute form, optional Basic)."""
    auth = f"Proxy-Authorization: Basic {base64.b64encode(credentials.encode()).decode()}\r\n" if credentials else ""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(f"GET {url} HTTP/1.1\r\nHost: {url.split('/')[2]}\r\n{auth}Connection: close\r\n\r\n".encode())
        return read_status(sock)


def through_socks5(port: int, host: str, target_port: int, path: str) -> tuple[int, bytes]:
    """(status, head) of ``GET path`` on ``host:target_port`` through the SOCKS5 proxy on ``port`` (no auth)."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(b"\x05\x01\x00")
        assert sock.recv(2) == b"\x05\x00"
        sock.sendall(b"\x05\x01\x00\x01" + socket.inet_aton(host) + struct.pack("!H", target_port))
        reply = sock.recv(10)
        assert reply[:2] == b"\x05\x00", reply
        sock.sendall(f"GET {path} HTTP/1.1\r\nHost: {host}:{target_port}\r\nConnection: close\r\n\r\n".encode())
        return read_status(sock)


def read_status(sock: socket.socket) -> tuple[int, bytes]:
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        if not chunk:
            break
        data += chunk
    return int(data.split(b" ", 2)[1]), data.partition(b"\r\n\r\n")[0]


def test_each_proxy_reaches_the_fakes_from_its_own_address(fakes, proxies):
    url = fakes.base_url("google") + "/search?q=alpha&tbm=nws"
    assert through_http_proxy(proxies.port(0), url)[0] == 200
    assert through_http_proxy(proxies.port(1), url, f"{USERNAME}:{PASSWORD}")[0] == 200
    assert through_socks5(proxies.port(2), "127.0.0.1", fakes.port("google"), "/search?q=alpha&tbm=nws")[0] == 200
    seen = [entry["address"] for entry in fakes.results_requests("google")]
    assert (
        seen == [proxies.address(0), proxies.address(1), proxies.address(2)] == ["127.0.0.2", "127.0.0.3", "127.0.0.4"]
    )


def test_the_authenticated_proxy_answers_407_without_good_credentials_every_time(fakes, proxies):
    url = fakes.base_url("google") + "/search?q=alpha&tbm=nws"
    assert through_http_proxy(proxies.port(1), url, f"{USERNAME}:{PASSWORD}")[0] == 200
    # an earlier good request from the same client never lets a bare one through (pproxy's memory is off)
    status, head = through_http_proxy(proxies.port(1), url)
    assert status == 407 and b"Proxy-Authenticate: Basic" in head
    assert through_http_proxy(proxies.port(1), url, f"{USERNAME}:wrong")[0] == 407
    assert len(fakes.results_requests("google")) == 1


def test_urls_servers_and_playwright_options(proxies):
    assert [proxies.kind(i) for i in range(len(proxies))] == ["http", "http-auth", "socks5"]
    assert proxies.url(0) == proxies.server(0) == f"http://127.0.0.1:{proxies.port(0)}"
    assert proxies.url(1) == f"http://{USERNAME}:{PASSWORD}@127.0.0.1:{proxies.port(1)}"
    assert proxies.server(1) == f"http://127.0.0.1:{proxies.port(1)}"
    assert proxies.url(2) == f"socks5://127.0.0.1:{proxies.port(2)}"
    assert proxies.playwright_proxy(1) == {"server": proxies.server(1), "username": USERNAME, "password": PASSWORD}
    assert proxies.playwright_proxy(2) == {"server": proxies.server(2)}
    # what topicstreams makes of a route's proxy URL
    assert [playwright_proxy(proxies.url(i)) for i in range(3)] == [proxies.playwright_proxy(i) for i in range(3)]
    ephemeral = int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    assert all(10000 <= proxies.port(i) < ephemeral for i in range(3))  # never one the kernel hands out meanwhile
    with pytest.raises(IndexError, match="no proxy 3"):
        proxies.address(3)


def test_route_entries_pass_the_configs_own_check(proxies):
    entries = proxies.route_entries(("google", "bing"), names=["us", "de", "fr"])
    checked = route_list()("routes", entries)
    assert [route["name"] for route in checked] == ["us", "de", "fr"]
    assert [entry["proxy"] for entry in entries] == [proxies.url(i) for i in range(3)]
    assert [entry["persona"]["timezone_id"] for entry in entries] == [p["timezone_id"] for p in PERSONAS]
    assert proxies.route_entries(personas=None)[0] == {
        "name": "r0",
        "proxy": proxies.url(0),
        "persona": {},
        "engines": [],
    }


def test_a_stopped_proxy_refuses_and_a_restarted_one_works_on_the_same_port(fakes, proxies):
    url = fakes.base_url("google") + "/search?q=alpha&tbm=nws"
    port = proxies.port(0)
    proxies.stop(0)
    assert not proxies.running(0) and proxies.running(1)
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.1", port), timeout=5)
    started = time.monotonic()
    proxies.start(0)
    took = time.monotonic() - started
    assert proxies.running(0) and proxies.port(0) == port and took < 5.0, took  # about 0.1 s when not busy
    assert through_http_proxy(port, url)[0] == 200
    assert fakes.results_requests("google")[-1]["address"] == proxies.address(0)
    proxies.start()  # the running ones are left as they are
    assert proxies.running(0) and proxies.port(0) == port


def test_no_process_is_left_behind():
    with RouteProxies(("http", "socks5"), first_address=20) as running:
        pids = [running.pid(i) for i in range(2)]
        assert running.address(1) == "127.0.0.21"
        assert all(alive(pid) for pid in pids)
    assert not any(alive(pid) for pid in pids) and running.pid(0) is None


def test_a_proxy_whose_parent_dies_ends_by_itself():
    code = (
        "import sys, time\n"
        "from tests.support.route_proxies import RouteProxies\n"
        "proxies = RouteProxies('http').start()\n"
        "print(proxies.pid(0), flush=True)\n"
        "time.sleep(60)\n"
    )
    with subprocess.Popen([sys.executable, "-c", code], cwd=REPO, stdout=subprocess.PIPE, text=True) as parent:
        child = int(parent.stdout.readline())
        assert alive(child)
        parent.send_signal(signal.SIGKILL)
        parent.wait(timeout=10)
    deadline = time.monotonic() + 5
    while alive(child) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not alive(child)


def test_bad_arguments():
    with pytest.raises(ValueError, match="proxy kinds"):
        RouteProxies(("http", "https"))
    with pytest.raises(ValueError, match="first_address"):
        RouteProxies("http", first_address=1)


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie (exited, not yet reaped by its parent) is no process left running
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False
