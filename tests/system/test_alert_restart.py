"""An alert pending at SIGTERM is delivered by the next start of the node: a real crawl of the fake google in
Chromium turns it critical (429s and captchas), its ``paused`` alert goes to a webhook where nothing listens yet; the
crawl is stopped with SIGTERM and exits within its few seconds of waiting (not the 30 s it used to), the alert kept
in the database; then the receiver comes up on that port and a second start of the same node (``once``, the engine
still paused: nothing to scrape) delivers it, which ``scrapy alerts list`` shows. (What the list says of a pending
alert is in the unit tests.) The other states (abandoned, a
target that never answers, two starts at once) are in tests/unit/test_alert_leftovers.py."""

from __future__ import annotations

import json
import signal
import sqlite3
import subprocess
import sys
import time

import pytest

from tests.support.alert_receivers import JsonReceiver, wait_for
from tests.support.crawl_checks import FAST_COOLDOWN, crawl_config, rows
from tests.support.fakes_http import running_fakes
from tests.support.ports import free_port

pytestmark = pytest.mark.timeout(180)

fakes = running_fakes("google")

STOP_WAIT = 5.0
"""TOPICSTREAMS_ALERT_STOP_WAIT's default, which the crawls here run with."""


def attempts(db) -> int:
    """The attempts to deliver an alert recorded so far (0 while the crawl has not made its tables)."""
    try:
        return rows(db, "select count(*) from alert_deliveries")[0][0] if db.exists() else 0
    except sqlite3.Error:
        return 0


def test_an_alert_pending_at_sigterm_is_delivered_by_the_next_start(scrapy_cmd, fakes, tmp_path):
    port = free_port()  # nothing listens there yet: every attempt is refused
    config = crawl_config(
        tmp_path,
        fakes,
        floor=0.05,
        health={"min_requests": 4, "smoothing": 1},
        alerting={"webhook_url": f"http://127.0.0.1:{port}/hook", "events": ["paused"]},
        scraper={"cooldown": FAST_COOLDOWN},
    )
    fakes.script("google", [{"status": 429, "body": "Too Many Requests"}, "captcha200"] * 20)
    env = {**scrapy_cmd.env, "TOPICSTREAMS_CONFIG": str(config)}
    db = tmp_path / "news.db"
    crawl = subprocess.Popen(
        [sys.executable, "-m", "scrapy", "crawl", "google", "-a", "topics=t00,t01"],
        cwd=scrapy_cmd.folder,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert wait_for(lambda: attempts(db) >= 1, timeout=90), "no attempt to deliver the paused alert"
    finally:
        stopped_at = time.monotonic()
        crawl.send_signal(signal.SIGTERM)
        try:
            _, stderr = crawl.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            crawl.kill()
            _, stderr = crawl.communicate()
    took = time.monotonic() - stopped_at
    assert crawl.returncode == 0, stderr[-3000:]
    # The deliveries are waited for STOP_WAIT at most; the rest of the exit (the browser, the stores) is quick.
    assert took < STOP_WAIT + 10, (took, stderr[-3000:])
    assert "1 alert not delivered within 5 s of the stop" in stderr, stderr[-3000:]
    assert "the next start of node node-a delivers them" in stderr
    [(event, delivery, sender, held)] = rows(db, "select event, delivery, sender_node, claimed_until from alerts")
    assert (event, delivery, sender, held) == ("paused", None, "node-a", None)
    attempts_before = attempts(db)
    assert attempts_before >= 1

    receiver = JsonReceiver(port).start()  # the receiver is up
    try:
        again = scrapy_cmd(
            "crawl", "google", "-a", "topics=t00", "-a", "once=1", env={"TOPICSTREAMS_CONFIG": str(config)}
        )
        assert again.returncode == 0, again.stderr[-3000:]
        [posted] = receiver.received("/hook")
    finally:
        receiver.stop()
    assert (posted.body["event"], posted.body["engine"], posted.body["node"]) == ("paused", "google", "node-a")
    assert "paused" in posted.body["text"]
    assert rows(db, "select delivery from alerts") == [
        ("delivered 1/1 (after a stop, by the next start of node node-a)",)
    ]
    oks = rows(db, "select attempt, ok from alert_deliveries order by id")
    assert oks[-1] == (attempts_before + 1, 1) and all(not ok for _, ok in oks[:-1])  # numbered on
    listed = json.loads(scrapy_cmd("alerts", "list", "--json", env={"TOPICSTREAMS_CONFIG": str(config)}).stdout)
    assert [(alert["delivery_state"], alert["delivery"]) for alert in listed["alerts"]] == [
        ("delivered", "delivered 1/1 (after a stop, by the next start of node node-a)")
    ]
