"""The browser goes through the configured proxy: a real crawl in real Chromium, through a small forward proxy on
loopback that wants credentials, to the fake Google. (Playwright asks Chromium to proxy loopback addresses too, so a
local proxy sees the requests as a remote one would.)"""

from __future__ import annotations

import base64
import threading
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from tests.support.crawl_checks import crawl_config, expected_urls, rows
from tests.support.fakes_http import reset_fakes_per_test, running_fakes

pytestmark = pytest.mark.timeout(180)

fakes = running_fakes("google")
_clean = reset_fakes_per_test()

USER, PASSWORD = "crawler", "s3cret-pw"


class ForwardProxy:
    """An HTTP forward proxy for plain-http targets: answers 407 until the client sends ``USER:PASSWORD``, then
    fetches the absolute URL it was asked for and relays the answer. It records what it relayed."""

    def __init__(self) -> None:
        self.relayed: list[str] = []
        self.refused = 0
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:
                expected = "Basic " + base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()
                if self.headers.get("Proxy-Authorization") != expected:
                    proxy.refused += 1
                    self.send_response(407)
                    self.send_header("Proxy-Authenticate", 'Basic realm="test proxy"')
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                proxy.relayed.append(self.path)
                headers = {
                    k: v
                    for k, v in self.headers.items()
                    if k.lower() not in ("proxy-authorization", "host", "proxy-connection")
                }
                request = urllib.request.Request(self.path, headers=headers)
                opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # straight to the target
                try:
                    with opener.open(request, timeout=10) as answer:
                        status, body, answer_headers = answer.status, answer.read(), answer.headers
                except urllib.error.HTTPError as error:
                    status, body, answer_headers = error.code, error.read(), error.headers
                self.send_response(status)
                for name, value in answer_headers.items():
                    if name.lower() not in ("content-length", "transfer-encoding", "connection"):
                        self.send_header(name, value)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://{USER}:{PASSWORD}@127.0.0.1:{self.server.server_address[1]}"

    def __enter__(self) -> ForwardProxy:
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def proxy():
    with ForwardProxy() as running:
        yield running


@pytest.mark.parametrize("where", ["config", "SCRAPER_PROXY"])
def test_the_crawl_goes_through_the_proxy_with_its_credentials_and_never_logs_them(
    scrapy_cmd, fakes, proxy, tmp_path, where
):
    google = fakes.base_url("google")
    if where == "config":
        config = crawl_config(
            tmp_path, fakes, floor=0.2, anti_detection={"proxy": {"enabled": True, "proxies": [proxy.url]}}
        )
        env = {"TOPICSTREAMS_CONFIG": str(config)}
    else:  # the environment names the proxy and enables it, over a file that has none
        config = crawl_config(tmp_path, fakes, floor=0.2)
        env = {"TOPICSTREAMS_CONFIG": str(config), "SCRAPER_PROXY": proxy.url}
    result = scrapy_cmd("crawl", "google", "-a", "topics=alpha", "-a", "once=1", env=env)
    assert result.returncode == 0, result.stderr[-3000:]

    results = [path for path in proxy.relayed if path.startswith(f"{google}/search")]
    assert len(results) == 1 and "q=alpha" in results[0], proxy.relayed
    assert len(fakes.results_requests("google")) == 1  # the engine saw that one request, from the proxy
    assert proxy.refused >= 1  # Chromium answered the proxy's challenge with the configured credentials
    assert {url for (url,) in rows(tmp_path / "news.db", "select url from news")} == expected_urls("google", "alpha")
    assert PASSWORD not in result.stdout + result.stderr
