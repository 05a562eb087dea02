"""Alerts delivered through Apprise to real receivers on 127.0.0.1 (topicstreams/alerts/delivery.py): a JSON
receiver behind ``json://`` and the webhook, an SMTP server behind ``mailto://``; each attempt recorded in
``alerts``/``alert_deliveries`` (topicstreams/storage/alerts.py) on SQLite and PostgreSQL; no secret in the log."""

from __future__ import annotations

import logging
import threading
import time
from datetime import UTC, datetime, timedelta

import pytest

from tests.support.alert_receivers import SMTP_PASSWORD, SMTP_USER, JsonReceiver, wait_for
from topicstreams.alerts import inert_text as inert
from topicstreams.alerts.delivery import Notifier
from topicstreams.alerts.events import Alert
from topicstreams.crawl.runtime import Runtime
from topicstreams.storage.alert_log import open_alert, read_recent, record_alert, record_attempt, resolve, set_delivery
from topicstreams.storage.engine_status import add_alert, read_alerts, set_alert_delivery

FAST = {"delays": (0.1,)}
"""Retries a tenth of a second apart."""

AT = datetime(2026, 12, 2, 9, 30, tzinfo=UTC)
HOSTILE_TITLE = '<script>alert("x")</script> & "quotes" @everyone'


def hostile_alert(**values) -> Alert:
    """A digest-like alert made of scraped words, as the digests build it: plain text inert, HTML escaped, a
    javascript: link left as text."""
    text = inert.plain(f"{HOSTILE_TITLE}\nhttps://news.example/a\n<!channel> javascript:alert(1)")
    html = (
        f"<p>{inert.html_link('https://news.example/a', HOSTILE_TITLE)}</p>"
        f"<p>{inert.html_link('javascript:alert(1)', 'click me')}</p>"
    )
    return Alert(
        **{
            "event": "digest",
            "title": f"news: {HOSTILE_TITLE}",
            "text": text,
            "html": html,
            "at": AT,
            "topic": "climate",
            "details": {"items": 1, "first": AT},
            **values,
        }
    )


def paused(**values) -> Alert:
    return Alert(
        **{
            "event": "paused",
            "title": "topicstreams: google paused on n1",
            "text": "google paused on node n1: hard_block\nrun `scrapy health resume google`",
            "at": AT,
            "engine": "google",
            "node": "n1",
            "score": 30,
            "band": "critical",
            "reasons": ("hard_block",),
            **values,
        }
    )


def latest(databases, url: str) -> dict:
    return read_recent(databases.of(url), None)[0]


# ---- the storage functions, on SQLite and PostgreSQL ------------------------------------------------------
def test_alerts_and_their_attempts_are_stored_and_read_newest_first(feed_url, databases):
    db = databases.of(feed_url)
    first = record_alert(db, paused())
    second = record_alert(db, hostile_alert(at=AT + timedelta(minutes=5)))
    record_attempt(db, second, "json://127.0.0.1:1/hook", 1, False, "HTTP 500", AT + timedelta(minutes=5))
    record_attempt(db, second, "json://127.0.0.1:1/hook", 2, True, None, AT + timedelta(minutes=6))
    set_delivery(db, second, "delivered 1/1")
    old = add_alert(db, "bing", "n2", score=10, band="critical", reasons=[], message="the older writer")

    rows = read_recent(db, None)
    assert [row["id"] for row in rows] == [old, second, first]  # add_alert stamps now: the newest
    digest = rows[1]
    assert (digest["event"], digest["engine"], digest["node"], digest["band"], digest["topic"]) == (
        "digest",
        None,
        None,
        None,
        "climate",
    )
    assert digest["details"] == {"items": 1, "first": AT.isoformat(sep=" ")}
    assert digest["message"].startswith("<script>") and digest["delivery"] == "delivered 1/1"
    assert [(d["attempt"], d["ok"], d["detail"]) for d in digest["deliveries"]] == [
        (1, False, "HTTP 500"),
        (2, True, None),
    ]
    assert digest["deliveries"][0]["at"] == AT + timedelta(minutes=5)
    assert rows[2]["event"] == "paused" and rows[2]["reasons"] == ["hard_block"] and rows[2]["deliveries"] == []
    assert rows[0]["event"] == "paused"  # the column's default for the older writer

    assert [row["id"] for row in read_recent(db, AT + timedelta(minutes=1))] == [old, second]
    assert [row["id"] for row in read_recent(db, None, limit=1)] == [old]
    set_alert_delivery(db, old, "webhook 204")  # the older functions still work on the widened table
    assert [a["delivery"] for a in read_alerts(db, "bing", "n2")] == ["webhook 204"]


def test_an_open_alert_is_found_and_resolved_by_event_engine_and_node(feed_url, databases):
    db = databases.of(feed_url)
    network = record_alert(db, Alert(event="network_down", title="n1 offline", text="n1 offline", at=AT, node="n1"))
    google = record_alert(db, paused())
    assert open_alert(db, "network_down", None, "n1")["id"] == network
    assert open_alert(db, "paused", "google", "n1")["id"] == google
    assert open_alert(db, "paused", "google", "n2") is None and open_alert(db, "network_down", None, "n2") is None
    assert resolve(db, "network_down", None, "n1", AT + timedelta(hours=1)) == 1
    assert open_alert(db, "network_down", None, "n1") is None
    assert open_alert(db, "paused", "google", "n1")["id"] == google
    assert resolve(db, "network_down", None, "n1", AT) == 0


# ---- delivery --------------------------------------------------------------------------------------------
def test_one_alert_reaches_json_and_mail_inert_and_recorded(feed_url, json_receiver, smtp_receiver, databases):
    notifier = Notifier(
        feed_url,
        {"urls": [json_receiver.apprise_url("/hook"), smtp_receiver.apprise_url()]},
        "n1",
        **FAST,
        database=databases.of,
    )
    started = time.monotonic()
    notifier.send(hostile_alert())
    assert time.monotonic() - started < 0.5  # handed over, not delivered, on the caller's thread
    assert notifier.flush(20)

    [posted] = json_receiver.received("/hook")
    assert posted.body["title"] == f"news: {HOSTILE_TITLE}".replace("@everyone", f"@{inert.ZWSP}everyone")
    message = posted.body["message"]
    assert "@everyone" not in message and "<!channel>" not in message
    assert f"@{inert.ZWSP}everyone" in message and f"<{inert.ZWSP}!channel>" in message

    [mail] = smtp_receiver.received()
    assert mail.login == SMTP_USER and mail.rcpt_tos == ["ops@topicstreams.example"]
    html = mail.part("html")
    assert html is not None
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &quot;quotes&quot;" in html
    assert "<script" not in html
    assert '<a href="https://news.example/a">' in html
    assert 'href="javascript:' not in html and "click me (javascript:alert(1))" in html
    assert mail.subject.startswith("news: <script>")  # a subject is plain text, shown as text by mail readers

    row = latest(databases, feed_url)
    assert (row["event"], row["topic"], row["delivery"]) == ("digest", "climate", "delivered 2/2")
    assert sorted((d["target"], d["attempt"], d["ok"]) for d in row["deliveries"]) == sorted(
        [
            (f"json://127.0.0.1:{json_receiver.port}/hook", 1, True),
            (f"mailto://{SMTP_USER}:****@127.0.0.1:{smtp_receiver.port}/ops%40topicstreams.example", 1, True),
        ]
    )


def test_a_failing_url_is_retried_and_takes_the_alert_on_the_third_attempt(feed_url, json_receiver, databases):
    json_receiver.fail_next(2)
    notifier = Notifier(
        feed_url, {"urls": [json_receiver.apprise_url("/flaky")]}, "n1", attempts=4, **FAST, database=databases.of
    )
    notifier.send(paused())
    assert notifier.flush(20)
    assert [posted.status for posted in json_receiver.received("/flaky")] == [500, 500, 200]
    row = latest(databases, feed_url)
    assert [(d["attempt"], d["ok"]) for d in row["deliveries"]] == [(1, False), (2, False), (3, True)]
    assert "500" in row["deliveries"][0]["detail"]
    assert row["delivery"] == "delivered 1/1"


def test_a_url_that_never_works_is_given_up_after_its_attempts(tmp_path, json_receiver, caplog, databases):
    url = f"sqlite:///{tmp_path / 'alerts.db'}"
    from topicstreams.storage import upgrade

    upgrade(url)
    json_receiver.fail_next(1000)
    target = json_receiver.apprise_url("/dead")
    notifier = Notifier(url, {"urls": [target]}, "n1", attempts=3, **FAST, database=databases.of)
    caplog.set_level(logging.INFO)
    notifier.send(paused())
    assert notifier.flush(20)
    assert len(json_receiver.received("/dead")) == 3
    row = latest(databases, url)
    assert [(d["attempt"], d["ok"]) for d in row["deliveries"]] == [(1, False), (2, False), (3, False)]
    assert row["delivery"] == f"failed: {target} (after 3 attempts)"
    warnings = [r for r in caplog.records if r.levelno >= logging.WARNING]  # Apprise's own are the detail, not more
    assert len(warnings) == 1 and warnings[0].exc_info is None
    assert target in warnings[0].getMessage() and "after 3 attempts" in warnings[0].getMessage()
    assert "500" in warnings[0].getMessage()


def test_alerting_events_chooses_the_events_but_digests_and_tests_always_go(tmp_path, json_receiver, caplog, databases):
    url = f"sqlite:///{tmp_path / 'alerts.db'}"
    from topicstreams.storage import upgrade

    upgrade(url)
    notifier = Notifier(
        url, {"urls": [json_receiver.apprise_url("/all")], "events": ["paused"]}, "n1", **FAST, database=databases.of
    )
    caplog.set_level(logging.DEBUG, logger="topicstreams.alerts.delivery")
    notifier.send(paused(event="degraded", title="degraded"))
    notifier.send(paused(title="paused"))
    notifier.send(hostile_alert(title="digest", urls=(json_receiver.apprise_url("/digest"),)))
    notifier.send(Alert(event="test", title="test", text="a test", at=AT))
    assert notifier.flush(20)
    assert [posted.body["title"] for posted in json_receiver.received("/all")] == ["paused", "test"]
    assert [posted.body["title"] for posted in json_receiver.received("/digest")] == ["digest"]
    assert sorted(row["event"] for row in read_recent(databases.of(url), None)) == ["digest", "paused", "test"]
    assert any("degraded" in r.getMessage() and r.levelno == logging.DEBUG for r in caplog.records)


def test_the_webhook_gets_todays_json_body_for_events_only(tmp_path, json_receiver, databases):
    url = f"sqlite:///{tmp_path / 'alerts.db'}"
    from topicstreams.storage import upgrade

    upgrade(url)
    webhook = json_receiver.http_url("/hooks/T0KEN-of-the-webhook")
    notifier = Notifier(url, {"urls": [], "webhook_url": webhook}, "n1", **FAST, database=databases.of)
    notifier.send(paused(text="google paused @here"))
    notifier.send(Alert(event="silence", title="quiet", text="no news on climate", at=AT, topic="climate"))
    notifier.send(hostile_alert())  # a digest: its own URLs (none here), never the webhook
    assert notifier.flush(20)
    bodies = [posted.body for posted in json_receiver.received("/hooks/")]
    assert [posted.headers["Content-Type"] for posted in json_receiver.received("/hooks/")] == ["application/json"] * 2
    assert bodies == [
        {
            "text": f"google paused @{inert.ZWSP}here",
            "engine": "google",
            "node": "n1",
            "score": 30,
            "band": "critical",
            "reasons": ["hard_block"],
            "at": AT.isoformat(),
            "event": "paused",
            "topic": None,
        },
        {
            "text": "no news on climate",
            "engine": None,
            "node": None,
            "score": None,
            "band": None,
            "reasons": [],
            "at": AT.isoformat(),
            "event": "silence",
            "topic": "climate",
        },
    ]
    rows = {row["event"]: row for row in read_recent(databases.of(url), None)}
    assert rows["paused"]["delivery"] == "delivered 1/1"
    assert rows["paused"]["deliveries"][0]["target"] == f"http://127.0.0.1:{json_receiver.port}/***"
    assert rows["digest"]["delivery"] == "no target" and rows["digest"]["deliveries"] == []


def test_secrets_never_reach_the_log_nor_the_database(tmp_path, json_receiver, smtp_receiver, caplog, databases):
    url = f"sqlite:///{tmp_path / 'alerts.db'}"
    from topicstreams.storage import upgrade

    upgrade(url)
    token, password, wrong = "T0ken-in-a-header-1234", "Js0n-pa55word-5678", "Wr0ng-pa55word-9012"
    query_token = "Query-t0ken-3456"
    json_url = json_receiver.apprise_url(
        "/secret", user="bot", password=password, query=f"+X-Token={token}&-token={query_token}"
    )
    good_mail, bad_mail = smtp_receiver.apprise_url(), smtp_receiver.apprise_url(password=wrong)
    webhook = json_receiver.http_url("/hooks/W3bhook-t0ken-7890")
    secrets = [token, password, wrong, query_token, SMTP_PASSWORD, "W3bhook-t0ken-7890"]

    caplog.set_level(logging.DEBUG)
    caplog.set_level(logging.DEBUG, logger="apprise")  # as someone debugging would: the notifier raises it again
    caplog.set_level(logging.DEBUG, logger="urllib3")
    notifier = Notifier(
        url,
        {"urls": [json_url, good_mail, bad_mail], "webhook_url": webhook},
        "n1",
        attempts=2,
        **FAST,
        database=databases.of,
    )
    json_receiver.fail_next(2)  # the first attempts of the JSON URL and of the webhook
    notifier.send(paused())
    assert notifier.flush(30)

    [*_, posted] = json_receiver.received("/secret")
    assert posted.headers["X-Token"] == token and posted.path == f"/secret?token={query_token}"  # really used
    assert len(smtp_receiver.received()) == 1
    assert logging.getLogger("apprise").getEffectiveLevel() >= logging.WARNING
    row = latest(databases, url)
    assert row["delivery"].startswith("delivered 3/4; failed: mailto://")
    stored = repr(row)
    logged = caplog.text + "".join(repr(r.args) for r in caplog.records)
    assert "could not deliver the paused alert to mailto://" in caplog.text  # the failure is told, masked
    for secret in secrets:
        assert secret not in logged, secret
        assert secret not in stored, secret


def test_flush_waits_for_retries_and_says_how_many_are_left(tmp_path, json_receiver, caplog, databases):
    url = f"sqlite:///{tmp_path / 'alerts.db'}"
    from topicstreams.storage import upgrade

    upgrade(url)
    json_receiver.fail_next(1000)
    notifier = Notifier(
        url, {"urls": [json_receiver.apprise_url("/slow")]}, "n1", attempts=3, delays=(1.5,), database=databases.of
    )
    assert notifier.flush(0.1)  # nothing handed over
    notifier.send(paused())
    notifier.send(paused())
    caplog.set_level(logging.WARNING, logger="topicstreams.alerts.delivery")
    started = time.monotonic()
    assert not notifier.flush(0.5)
    assert 0.4 < time.monotonic() - started < 1.5
    assert [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING] == [
        "2 alerts still on the way after 0.5 s (a target is slow, or its next attempt is not due yet)"
    ]
    assert notifier.flush(10)  # the third attempts come 2 × 1.5 s after the first
    assert notifier.pending() == 0 and len(json_receiver.received("/slow")) == 6


def test_send_never_blocks_even_when_a_target_hangs(tmp_path, databases):
    """A service that accepts the connection and never answers holds up the notifier's thread, not the caller."""
    import socket

    url = f"sqlite:///{tmp_path / 'alerts.db'}"
    from topicstreams.storage import upgrade

    upgrade(url)
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        port = silent.getsockname()[1]
        notifier = Notifier(
            url, {"webhook_url": f"http://127.0.0.1:{port}/hook"}, "n1", attempts=1, timeout=2, database=databases.of
        )
        started = time.monotonic()
        for _ in range(20):
            notifier.send(paused())
        assert time.monotonic() - started < 0.5
        assert notifier.pending() == 20
        assert not notifier.flush(0.2)


def test_a_database_that_is_away_does_not_stop_delivery(tmp_path, json_receiver, caplog, databases):
    url = f"sqlite:///{tmp_path / 'missing-folder' / 'no-schema.db'}"  # a new file: no alerts table
    notifier = Notifier(url, {"urls": [json_receiver.apprise_url("/anyway")]}, "n1", **FAST, database=databases.of)
    caplog.set_level(logging.WARNING, logger="topicstreams.alerts.delivery")
    notifier.send(paused())
    notifier.send(paused())
    assert notifier.flush(20)
    assert len(json_receiver.received("/anyway")) == 2
    warned = [r for r in caplog.records if "could not record" in r.getMessage()]
    assert len(warned) == 1 and warned[0].exc_info is None


def test_deliver_now_reports_each_url_once_and_records_it(tmp_path, json_receiver, databases):
    url = f"sqlite:///{tmp_path / 'alerts.db'}"
    from topicstreams.storage import upgrade

    upgrade(url)
    good, dead = json_receiver.apprise_url("/now"), "json://127.0.0.1:9/closed"
    webhook = json_receiver.http_url("/hooks/now")
    notifier = Notifier(url, {"urls": [good], "webhook_url": webhook}, "n1", database=databases.of)
    test = Alert(event="test", title="test", text="a test", at=AT, node="n1")
    results = notifier.deliver_now(test, [good, dead, good, webhook])
    assert [(shown, ok) for shown, ok, _ in results] == [
        (good, True),
        (dead, False),
        (f"http://127.0.0.1:{json_receiver.port}/***", True),
    ]
    assert results[1][2]  # what went wrong
    assert json_receiver.received("/hooks/now")[0].body["event"] == "test"
    row = latest(databases, url)
    assert (
        row["event"] == "test"
        and row["delivery"] == "delivered 2/3; failed: json://127.0.0.1:9/closed (after 1 attempt)"
    )


def test_the_runtimes_notifier_is_one_per_database_and_takes_the_latest_configuration(tmp_path):
    runtime = Runtime()
    first = runtime.notifier(f"sqlite:///{tmp_path / 'a.db'}", {"urls": ["json://127.0.0.1:1/a"]}, "n1")
    again = runtime.notifier(f"sqlite:///{tmp_path / 'a.db'}", {"urls": ["json://127.0.0.1:1/b"]}, "n1")
    other = runtime.notifier(f"sqlite:///{tmp_path / 'b.db'}", {}, "n1")
    assert first is again and other is not first
    assert first.urls == ("json://127.0.0.1:1/b",)


@pytest.mark.parametrize("threads", [4])
def test_many_threads_may_send_at_once(tmp_path, json_receiver, threads, databases):
    url = f"sqlite:///{tmp_path / 'alerts.db'}"
    from topicstreams.storage import upgrade

    upgrade(url)
    notifier = Notifier(url, {"urls": [json_receiver.apprise_url("/many")]}, "n1", **FAST, database=databases.of)
    senders = [threading.Thread(target=lambda: [notifier.send(paused()) for _ in range(5)]) for _ in range(threads)]
    for sender in senders:
        sender.start()
    for sender in senders:
        sender.join()
    assert notifier.flush(30)
    assert len(json_receiver.received("/many")) == threads * 5
    assert len(read_recent(databases.of(url), None)) == threads * 5


def test_json_receiver_answers_500_as_told():
    receiver = JsonReceiver().start()
    try:
        import json
        import urllib.error
        import urllib.request

        receiver.fail_next(1)
        request = urllib.request.Request(receiver.http_url("/x"), data=json.dumps({"a": 1}).encode(), method="POST")
        with pytest.raises(urllib.error.HTTPError):
            urllib.request.urlopen(request, timeout=5)
        assert urllib.request.urlopen(request, timeout=5).status == 200
        assert [(p.status, p.body) for p in receiver.received("/x")] == [(500, {"a": 1}), (200, {"a": 1})]
        assert wait_for(lambda: len(receiver.received()) == 2, timeout=1)
    finally:
        receiver.stop()
