"""Alerts a stop leaves undelivered (topicstreams/alerts/leftovers.py, the notifier's stop and take-up in
topicstreams/alerts/delivery.py): kept in a real SQLite file and delivered by the next start of the same node through
a real JSON receiver — only to the targets still owed, numbered on, once even when two starts race — or marked
``abandoned`` with why; a stop that waits no longer than its few seconds, even for a target that never answers; and
what ``scrapy alerts list`` says of each state."""

from __future__ import annotations

import logging
import socket
import threading
import time
from datetime import UTC, datetime, timedelta

import pytest

from tests.support.alert_receivers import wait_for
from tests.support.databases import sqlite_database
from topicstreams.alerts.delivery import Notifier, options_from_settings
from topicstreams.alerts.events import Alert
from topicstreams.commands.alerts import as_json, delivery_shown
from topicstreams.storage.alert_log import (
    ABANDONED,
    DELIVERED,
    FAILED,
    NO_TARGET,
    PENDING,
    delivery_state,
    read_recent,
    record_alert,
    record_attempt,
)

STOP_WAIT = 0.3


@pytest.fixture(scope="module")
def url(tmp_path_factory) -> str:
    """One database for the module: each test is a node of its own (a start takes up its node's alerts only)."""
    return sqlite_database(tmp_path_factory.mktemp("leftovers"))


def notifier(url: str, databases, node: str, urls=(), webhook: str = "", **options) -> Notifier:
    return Notifier(
        url,
        {"urls": list(urls), "webhook_url": webhook, "events": options.pop("events", None)},
        node,
        **{"attempts": 2, "delays": (0.05,), "stop_wait": STOP_WAIT, "database": databases.of, **options},
    )


def paused(node: str, at: datetime | None = None, event: str = "paused") -> Alert:
    return Alert(
        event=event,
        title=f"topicstreams: google {event} on {node}",
        text=f"google {event} on node {node}: hard_block",
        at=at or datetime.now(UTC),
        engine="google",
        node=node,
        score=30,
        band="critical",
        reasons=("hard_block",),
    )


def rows_of(databases, url: str, node: str) -> list[dict]:
    """The node's alerts, oldest first."""
    return [row for row in reversed(read_recent(databases.of(url), None, limit=1000)) if row["sender_node"] == node]


def test_an_alert_pending_at_the_stop_is_kept_and_delivered_by_the_next_start(url, json_receiver, databases, caplog):
    target = json_receiver.apprise_url("/kept")
    json_receiver.fail_next(1000)  # the receiver fails at first
    first = notifier(url, databases, "n-kept", [target], attempts=4, delays=(0.05, 60.0))
    first.send(paused("n-kept"))
    wait_for(lambda: len(json_receiver.received("/kept")) == 2)  # two attempts; the third is a minute away
    started = time.monotonic()
    caplog.set_level(logging.INFO)
    assert not first.wait_at_stop()
    assert STOP_WAIT <= time.monotonic() - started < STOP_WAIT + 0.5
    first.close()
    [kept] = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert kept.startswith("1 alert not delivered within 0.3 s of the stop") and "next start of node n-kept" in kept
    assert first.pending() == 0  # the next start's now: this process tries it no more

    [row] = rows_of(databases, url, "n-kept")
    assert (row["delivery"], row["claimed_until"], row["targets"]) == (None, None, [target])
    assert row["title"] == "topicstreams: google paused on n-kept"
    assert delivery_state(row["delivery"]) == PENDING and as_json(row)["delivery_state"] == PENDING
    assert delivery_shown(row, datetime.now(UTC)) == (
        "not delivered yet: left by a stop for the next start of node n-kept"
    )

    json_receiver.fail_next(0)  # the receiver is back
    elsewhere = notifier(url, databases, "n-other", [target])
    elsewhere.resume_leftovers()
    assert elsewhere.flush(5) and len(json_receiver.received("/kept")) == 2  # another node's start: not its alert

    second = notifier(url, databases, "n-kept", [target])
    second.resume_leftovers()
    assert second.flush(5)
    posted = json_receiver.received("/kept")
    assert [post.status for post in posted] == [500, 500, 200]
    assert posted[2].body["title"] == "topicstreams: google paused on n-kept"
    assert posted[2].body["message"] == "google paused on node n-kept: hard_block"
    [row] = rows_of(databases, url, "n-kept")
    assert row["delivery"] == "delivered 1/1 (after a stop, by the next start of node n-kept)"
    assert [(d["attempt"], d["ok"]) for d in row["deliveries"]] == [(1, False), (2, False), (3, True)]
    assert delivery_state(row["delivery"]) == DELIVERED
    assert delivery_shown(row, datetime.now(UTC)) == row["delivery"]

    third = notifier(url, databases, "n-kept", [target])  # a later start: nothing left
    third.resume_leftovers()
    assert third.flush(5) and len(json_receiver.received("/kept")) == 3


def test_a_target_that_never_answers_holds_the_stop_no_longer_than_its_wait(url, databases):
    with socket.socket() as silent:  # accepts the connection, never answers
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        port = silent.getsockname()[1]
        hook = f"http://127.0.0.1:{port}/hook"
        stopping = notifier(url, databases, "n-silent", webhook=hook, timeout=30)
        stopping.send(paused("n-silent"))
        wait_for(lambda: rows_of(databases, url, "n-silent"))
        started = time.monotonic()
        assert not stopping.wait_at_stop()
        stopping.close()
        assert time.monotonic() - started < STOP_WAIT + 1.0
    [row] = rows_of(databases, url, "n-silent")
    assert (row["delivery"], row["claimed_until"], row["targets"]) == (None, None, [f"http://127.0.0.1:{port}/***"])


def test_leftovers_too_old_unconfigured_or_no_longer_chosen_are_abandoned_with_why(
    url, json_receiver, databases, caplog
):
    db = databases.of(url)
    now = datetime.now(UTC)
    kept, gone = json_receiver.apprise_url("/still"), "json://127.0.0.1:9/gone"

    def left(alert: Alert, targets: list[str], held_until: datetime | None = None) -> int:
        return record_alert(db, alert, sender="n-old", targets=targets, held_until=held_until)

    old = left(paused("n-old", now - timedelta(hours=25)), [kept])
    unchosen = left(paused("n-old", event="degraded"), [kept])
    unconfigured = left(paused("n-old"), [gone])
    half = left(paused("n-old"), [kept, gone])
    done_before = left(paused("n-old"), [kept, json_receiver.apprise_url("/took-it")])
    record_attempt(db, done_before, json_receiver.apprise_url("/took-it"), 1, True, "sent", now)
    held = left(paused("n-old"), [kept], held_until=now + timedelta(minutes=5))  # a live process has it
    died = left(paused("n-old"), [kept], held_until=now - timedelta(seconds=1))  # its process died
    record_alert(db, paused("n-else"), sender="n-else", targets=[kept])  # another node's

    start = notifier(url, databases, "n-old", [kept], events=["paused"])
    caplog.set_level(logging.WARNING, logger="topicstreams.alerts.delivery")
    start.resume_leftovers()
    assert start.flush(5)

    rows = {row["id"]: row for row in rows_of(databases, url, "n-old")}
    assert rows[old]["delivery"] == (
        "abandoned: 25 h old when node n-old started again (an alert left undelivered by a stop is sent late only "
        "within 24 h)"
    )
    assert rows[unchosen]["delivery"] == "abandoned: alerting.events no longer names degraded"
    assert rows[unconfigured]["delivery"] == f"abandoned: its targets are no longer configured ({gone})"
    note = " (after a stop, by the next start of node n-old)"
    assert rows[half]["delivery"] == f"delivered 1/2; abandoned: {gone} (no longer configured){note}"
    assert rows[done_before]["delivery"] == f"delivered 2/2{note}"  # /took-it had it: not sent twice
    assert rows[held]["delivery"] is None and rows[died]["delivery"] == f"delivered 1/1{note}"
    assert len(json_receiver.received("/still")) == 3 and json_receiver.received("/took-it") == []
    assert [delivery_state(rows[i]["delivery"]) for i in (old, unchosen, unconfigured, half, held)] == [
        ABANDONED,
        ABANDONED,
        ABANDONED,
        DELIVERED,
        PENDING,
    ]
    assert delivery_shown(rows[held], now).startswith("not delivered yet: on its way from a process of node n-old")
    assert delivery_shown(rows[old], now).startswith("abandoned: 25 h old")
    [warned] = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert warned.startswith("node n-old: 3 alerts an earlier process left undelivered will not be sent: paused of ")
    assert [row["delivery"] for row in read_recent(db, None, limit=1000) if row["sender_node"] == "n-else"] == [None]


def test_two_starts_at_once_deliver_a_leftover_once(url, json_receiver, databases):
    target = json_receiver.apprise_url("/once")
    for _ in range(5):
        record_alert(databases.of(url), paused("n-race"), sender="n-race", targets=[target])
    starts = [notifier(url, databases, "n-race", [target]) for _ in range(2)]
    threads = [threading.Thread(target=start.resume_leftovers) for start in starts]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert all(start.flush(5) for start in starts)
    assert len(json_receiver.received("/once")) == 5
    assert {delivery_state(row["delivery"]) for row in rows_of(databases, url, "n-race")} == {DELIVERED}


def test_an_alert_the_database_cannot_keep_is_said_lost(tmp_path, json_receiver, databases, caplog):
    away = f"sqlite:///{tmp_path / 'missing-folder' / 'alerts.db'}"
    json_receiver.fail_next(1000)
    stopping = notifier(away, databases, "n-away", [json_receiver.apprise_url("/away")], delays=(60.0,))
    stopping.send(paused("n-away"))
    wait_for(lambda: json_receiver.received("/away"))
    caplog.set_level(logging.WARNING, logger="topicstreams.alerts.delivery")
    assert not stopping.wait_at_stop()
    stopping.close()
    [lost] = [r.getMessage() for r in caplog.records if r.levelno == logging.ERROR]
    assert lost.startswith("1 alert not delivered by the stop could not be kept") and "it is lost" in lost


def test_each_summary_tells_its_state_and_a_crawl_sets_the_stop_wait():
    assert [
        delivery_state(summary)
        for summary in (
            None,
            "delivered 2/2",
            "delivered 1/2; failed: json://h/x (after 4 attempts)",
            "failed: json://h/x (after 4 attempts)",
            "abandoned: alerting.events no longer names paused",
            "no target",
            "webhook 204",
        )
    ] == [PENDING, DELIVERED, FAILED, FAILED, ABANDONED, NO_TARGET, DELIVERED]
    from scrapy.settings import Settings

    from topicstreams import settings as project_settings

    settings = Settings()
    settings.setmodule(project_settings)
    options = options_from_settings(settings)
    assert (options["stop_wait"], options["leftover_hours"]) == (5.0, 24.0)
