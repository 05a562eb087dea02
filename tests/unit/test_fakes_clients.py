"""The fake engines per client address: address scripts, the client address and session in the request log, the
client watch (a session cookie per address, the persona probe and its reports), and pages the parsers read the same
with the probe in them. Requests come from chosen loopback source addresses (127.0.0.x), as through a route's proxy."""

from __future__ import annotations

import http.client
import json

import pytest
from scrapy.http import HtmlResponse

from fake_engines.client_watch import PERSONA_PATH, PERSONA_SCRIPT, session_cookie, with_probe
from tests.support.fakes_http import fetch, reset_fakes_per_test, running_fakes
from tests.support.parsing import parsing_reader, reading_of
from topicstreams import ENGINES

fakes = running_fakes(*ENGINES)
_clean = reset_fakes_per_test()


def ask(fakes, engine: str, source: str, path: str, *, method="GET", body=None, cookie: str | None = None):
    """(status, headers, body) of one request to ``engine`` from source address ``source``."""
    connection = http.client.HTTPConnection("127.0.0.1", fakes.port(engine), timeout=10, source_address=(source, 0))
    headers = {"User-Agent": "fakes-clients-test"} | ({"Cookie": cookie} if cookie else {})
    if body is not None:
        headers["Content-Type"] = "application/json"
    try:
        connection.request(method, path, body=body, headers=headers)
        reply = connection.getresponse()
        return reply.status, reply.headers, reply.read().decode("utf-8", "replace")
    finally:
        connection.close()


def results_path(fakes, engine: str, topic: str = "alpha") -> str:
    url = parsing_reader(engine, fakes.base_url(engine)).engine.results_url(topic, 0)
    return url.removeprefix(fakes.base_url(engine))


def control(fakes, engine: str, action: str, data=None):
    body = None if data is None else json.dumps(data).encode()
    status, _, text, _ = fetch(f"{fakes.base_url(engine)}/__fakes__/{action}", data=body)
    return status, json.loads(text)


def test_the_log_tells_the_client_address_and_no_session_by_default(fakes):
    path = results_path(fakes, "google")
    status, headers, body = ask(fakes, "google", "127.0.0.7", path)
    assert status == 200 and "Set-Cookie" not in headers and PERSONA_PATH not in body
    (entry,) = fakes.results_requests("google")
    assert (entry["address"], entry["session"], entry["session_set"]) == ("127.0.0.7", None, None)
    ask(fakes, "google", "127.0.0.8", "/thumbs/logo.png")
    assert fakes.requests("google")[-1]["address"] == "127.0.0.8"


@pytest.mark.parametrize("engine", ENGINES)
def test_an_address_script_answers_that_address_only_until_reset(fakes, engine):
    path = results_path(fakes, engine)
    fakes.route(engine, "alpha", "empty")  # an address's script comes before the topic's route
    fakes.address(engine, "127.0.0.3", [{"page": "blank", "status": 429}, "results"])
    statuses = [ask(fakes, engine, source, path)[0] for source in ("127.0.0.3", "127.0.0.2", "127.0.0.3", "127.0.0.3")]
    served = [(entry["address"], entry["step"]) for entry in fakes.results_requests(engine)]
    assert served == [  # in order, then the last step for good
        ("127.0.0.3", "blank"),
        ("127.0.0.2", "empty"),
        ("127.0.0.3", "results"),
        ("127.0.0.3", "results"),
    ]
    assert statuses == [429, 200, 200, 200]
    fakes.address(engine, "127.0.0.3", [])  # an empty list removes it
    ask(fakes, engine, "127.0.0.3", path)
    assert fakes.results_requests(engine)[-1]["step"] == "empty"
    fakes.address(engine, "127.0.0.3", "blank")
    fakes.reset(engine)
    ask(fakes, engine, "127.0.0.3", path)
    assert fakes.results_requests(engine)[-1]["step"] == "results"


def test_address_scripts_and_the_watch_through_the_control_api(fakes):
    path = results_path(fakes, "google")
    assert control(fakes, "google", "address", {"address": "127.0.0.4", "steps": [{"page": "sorry"}]})[0] == 200
    assert control(fakes, "google", "address", {"address": " ", "steps": "sorry"})[0] == 400
    assert control(fakes, "google", "address", {"address": "127.0.0.4", "steps": "nonsense"})[0] == 400
    assert control(fakes, "google", "clients", {"watch": True}) == (200, {"watch": True})
    assert control(fakes, "google", "clients", {"watch": "yes"})[0] == 400
    status, headers, _ = ask(fakes, "google", "127.0.0.4", path)
    assert status == 302 and headers["Set-Cookie"].startswith("google_sid=127.0.0.4-1;")
    assert control(fakes, "google", "clients") == (200, {"127.0.0.4": {"sessions": ["127.0.0.4-1"], "personas": []}})
    assert control(fakes, "google", "reset", {}) == (200, {"ok": True})
    assert control(fakes, "google", "clients") == (200, {})
    assert "Set-Cookie" not in ask(fakes, "google", "127.0.0.4", path)[1]


def test_each_address_gets_its_own_session_and_the_log_tells_which_one_each_request_sends(fakes):
    fakes.watch_clients("bing")
    path = results_path(fakes, "bing")
    jar = {}
    for source in ("127.0.0.2", "127.0.0.3", "127.0.0.2", "127.0.0.3", "127.0.0.2"):
        _, headers, _ = ask(fakes, "bing", source, path, cookie=jar.get(source))
        if headers.get("Set-Cookie"):
            jar[source] = headers["Set-Cookie"].split(";")[0]
    ask(fakes, "bing", "127.0.0.3", "/thumbs/bing-logo.png", cookie=jar["127.0.0.3"])
    # someone else's cookie is logged as sent (a test can then see a mixed identity)
    ask(fakes, "bing", "127.0.0.2", path, cookie=jar["127.0.0.3"])
    sessions = {address: record["sessions"] for address, record in fakes.clients("bing").items()}
    assert sessions == {"127.0.0.2": ["127.0.0.2-1"], "127.0.0.3": ["127.0.0.3-2"]}
    log = [(e["address"], e["kind"], e["session"], e.get("session_set")) for e in fakes.requests("bing")]
    assert log == [
        ("127.0.0.2", "results", None, "127.0.0.2-1"),
        ("127.0.0.3", "results", None, "127.0.0.3-2"),
        ("127.0.0.2", "results", "127.0.0.2-1", None),
        ("127.0.0.3", "results", "127.0.0.3-2", None),
        ("127.0.0.2", "results", "127.0.0.2-1", None),
        ("127.0.0.3", "asset", "127.0.0.3-2", None),
        ("127.0.0.2", "results", "127.0.0.3-2", None),
    ]
    assert session_cookie("bing") == "bing_sid"
    assert fakes.clients("google") == {}  # per engine


def test_persona_reports_are_kept_per_address(fakes):
    fakes.watch_clients("yahoo")
    report = {"user_agent": "UA one", "language": "de-DE", "languages": ["de-DE", "de"], "timezone": "Europe/Berlin"}
    report |= {"width": 1366, "height": 768, "page": "/search?p=x", "extra": "dropped"}
    status, _, body = ask(
        fakes, "yahoo", "127.0.0.5", PERSONA_PATH, method="POST", body=json.dumps(report), cookie="yahoo_sid=s"
    )
    assert (status, json.loads(body)) == (200, {"ok": True})
    assert ask(fakes, "yahoo", "127.0.0.5", PERSONA_PATH, method="POST", body="[1]")[0] == 400
    ((address, record),) = fakes.clients("yahoo").items()
    (persona,) = record["personas"]
    assert address == "127.0.0.5" and record["sessions"] == []
    assert persona.pop("time") > 0 and persona.pop("header_user_agent") == "fakes-clients-test"
    assert persona == {key: value for key, value in report.items() if key != "extra"} | {"session": "s"}
    assert fakes.requests("yahoo") == []  # a control path: never in the request log


def test_the_probe_goes_before_the_end_of_the_body():
    assert with_probe(b"<html><body><p>x</p></body></html>") == (
        b"<html><body><p>x</p>" + PERSONA_SCRIPT.encode() + b"</body></html>"
    )
    assert with_probe(b"no body") == b"no body" + PERSONA_SCRIPT.encode()


@pytest.mark.parametrize("engine", ENGINES)
def test_the_probe_changes_nothing_the_parsers_read(fakes, engine):
    reader = parsing_reader(engine, fakes.base_url(engine))
    url = reader.engine.results_url("beta", 0)
    readings = []
    for watched in (False, True):
        fakes.watch_clients(engine, watched)
        status, _, body, _ = fetch(url)
        assert status == 200 and (PERSONA_PATH in body) is watched
        reading = reading_of(reader, HtmlResponse(url, body=body.encode(), encoding="utf-8", status=status))
        readings.append(
            (reading.verdict.cls, [(r.url, r.title, r.source, r.snippet, r.time_text) for r in reading.results])
        )
    assert readings[0] == readings[1] and readings[0][0] == "ok" and readings[0][1]
