"""A topic gone silent, end to end on an injected clock: a real SQLite database with the topic's events stored at
chosen moments (time-machine), the engines' status rows, the process's silence watch
(:meth:`AlertingWork.check_silence`) and a real JSON receiver behind Apprise's ``json://``; and the compare-and-set of
alert states under racing callers, on SQLite and PostgreSQL."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
import time_machine

from tests.support.feed_data import fresh_database, nid, write_rows
from tests.support.sections import alerting_section
from topicstreams.alerts.delivery import Notifier
from topicstreams.extensions.digest_watch import AlertingWork
from topicstreams.storage.alert_states import read_state
from topicstreams.storage.engine_status import save_status
from topicstreams.storage.topics import add_topics

pytestmark = pytest.mark.timeout(120)

LAST = datetime(2026, 12, 2, 10, 0, tzinfo=UTC)
"""The last of climate's hourly arrivals."""
HOUR = timedelta(hours=1)


def seed(url: str, moment: datetime, *stories: tuple[str, str]) -> None:
    with time_machine.travel(moment, tick=False):
        write_rows(
            url,
            [
                {
                    "news_id": nid(n),
                    "url": f"https://news.example/{n}",
                    "topic": topic,
                    "engine": "google",
                    "title": f"Story {n}",
                }
                for n, topic in stories
            ],
        )


@pytest.fixture
def feed(tmp_path, databases):
    """climate: 12 arrivals an hour apart (two events each, seconds apart), the last at 10:00; energy: 3 events
    (not enough to know its normal)."""
    url = fresh_database(f"sqlite:///{tmp_path / 'news.db'}")
    add_topics(databases.of(url), ["climate", "energy"])
    for i in range(12):
        seed(url, LAST - HOUR * i, (f"c{i}a", "climate"))
        seed(url, LAST - HOUR * i + timedelta(seconds=20), (f"c{i}b", "climate"))
    for i in range(3):
        seed(url, LAST - HOUR * 30 * i, (f"e{i}", "energy"))
    return url


def watch(databases, url: str, receiver, events=("silence",)) -> AlertingWork:
    config = {
        "urls": [receiver.apprise_url("/alerts")],
        "webhook_url": "",
        "events": list(events),
        "silence_factor": 6,
        "silence_min_events": 10,
        "digests": [],
    }
    return AlertingWork(
        url,
        alerting_section(config),
        "node-a",
        baseline_days=14,
        engines=["google", "bing"],
        silence_every=300.0,
        notifier=Notifier(url, config, "node-a", delays=(0.1,), database=databases.of),
    )


def running(databases, url: str, moment: datetime) -> None:
    """google's status row, fresh at ``moment``, running (bing has none: not running anywhere)."""
    save_status(databases.of(url), "google", "node-a", state="running", updated_at=moment)


def test_one_silence_alert_then_one_news_again(feed, json_receiver, databases):
    work, other_process = watch(databases, feed, json_receiver), watch(databases, feed, json_receiver)
    last = LAST + timedelta(seconds=20)
    # Watching since the last event came: 6 hours (6 × the usual hour) later, climate is silent.
    for moment, sent in (
        (last, 0),
        (last + HOUR * 6 - timedelta(seconds=1), 0),
        (last + HOUR * 6, 1),
        (last + HOUR * 6 + timedelta(minutes=5), 0),
    ):
        running(databases, feed, moment)
        assert work.check_silence(moment) == sent, moment
    running(databases, feed, last + HOUR * 7)
    assert other_process.check_silence(last + HOUR * 7) == 0  # the state moved already: no second alert
    assert work.notifier.flush(30)

    [alert] = json_receiver.received("/alerts")
    assert alert.body["title"] == 'topicstreams: topic "climate" silent for 6 h'
    assert "2026-12-02 10:00 UTC" in alert.body["message"] and "(google)" in alert.body["message"]
    assert "every 1 h" in alert.body["message"]
    state = read_state(databases.of(feed), "silence:climate")
    assert state is not None and state.state == "silent" and state.details["last_event"] == last.isoformat()
    assert read_state(databases.of(feed), "silence:energy") is None  # too few events to be watched

    seed(feed, last + HOUR * 8, ("news", "climate"))
    running(databases, feed, last + HOUR * 8 + timedelta(minutes=5))
    assert work.check_silence(last + HOUR * 8 + timedelta(minutes=5)) == 1
    assert other_process.check_silence(last + HOUR * 8 + timedelta(minutes=6)) == 0
    assert work.check_silence(last + HOUR * 8 + timedelta(minutes=10)) == 0
    assert work.notifier.flush(30)
    assert other_process.notifier.flush(30)
    posted = json_receiver.received("/alerts")
    assert [post.body["title"] for post in posted] == [
        'topicstreams: topic "climate" silent for 6 h',
        'topicstreams: topic "climate" has news again',
    ]
    assert "after 8 h without one" in posted[1].body["message"]
    assert read_state(databases.of(feed), "silence:climate").state == "ok"


def test_quiet_counts_only_while_the_engines_run(feed, json_receiver, databases):
    work = watch(databases, feed, json_receiver)
    running(databases, feed, LAST + HOUR / 2)
    assert work.check_silence(LAST + HOUR / 2) == 0
    # The crawl stops: google's row is no longer written. Hours later nobody is running: no silence.
    assert work.check_silence(LAST + HOUR * 8) == 0 and work.running_since is None
    # It starts again at 17:00: the quiet counts from then, not from the last event 7 hours before.
    start = LAST + HOUR * 9
    running(databases, feed, start)
    assert work.check_silence(start) == 0
    running(databases, feed, start + HOUR * 6 - timedelta(seconds=1))
    assert work.check_silence(start + HOUR * 6 - timedelta(seconds=1)) == 0
    running(databases, feed, start + HOUR * 6)
    assert work.check_silence(start + HOUR * 6) == 1
    assert work.notifier.flush(30)
    assert [post.body["title"] for post in json_receiver.received("/alerts")] == [
        'topicstreams: topic "climate" silent for 15 h'
    ]


def test_the_state_moves_even_when_alerting_events_leaves_silence_out(feed, json_receiver, databases):
    work = watch(databases, feed, json_receiver, events=("paused",))
    for moment in (LAST + HOUR / 2, LAST + HOUR * 7):
        running(databases, feed, moment)
        work.check_silence(moment)
    assert work.notifier.flush(30)
    assert read_state(databases.of(feed), "silence:climate").state == "silent"
    assert json_receiver.received("/alerts") == []


def test_of_many_callers_racing_one_makes_each_transition(feed_url, databases):
    """The compare-and-set behind every alert of a state (a topic's silence, a node's network), on SQLite and
    PostgreSQL: callers racing on their own connections, one of them moves the key."""
    import threading
    from concurrent.futures import ThreadPoolExecutor

    from topicstreams.storage.alert_states import transition

    db = databases.of(feed_url)
    moment = LAST
    for to_state, from_states in (("silent", ["ok"]), ("ok", ["silent"]), ("silent", ["ok"])):
        start = threading.Barrier(8)

        def race(_: int, to_state=to_state, from_states=from_states, start=start, moment=moment) -> bool:
            start.wait()
            return transition(db, "silence:race", from_states, to_state, moment, {"to": to_state})

        with ThreadPoolExecutor(8) as pool:
            moved = list(pool.map(race, range(8)))
        assert moved.count(True) == 1, (to_state, moved)
        state = read_state(db, "silence:race")
        assert (state.state, state.since, state.details) == (to_state, moment, {"to": to_state})
        moment += HOUR
    assert not transition(db, "silence:race", ["ok"], "silent", moment)  # silent already
    assert transition(db, "network:node-a", ["up"], "down", moment, initial="up")
    assert read_state(db, "network:node-a").state == "down"
