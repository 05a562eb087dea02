"""The messages of engine and node transitions, the reminders of a pause, and the node's network verdict (pure)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from topicstreams.alerts import transitions
from topicstreams.alerts.events import EVENTS
from topicstreams.alerts.network import HOLD_SECONDS, NetworkWatch

T0 = datetime(2026, 12, 2, 10, 0, 0, tzinfo=UTC)


def test_a_pause_says_what_why_since_when_where_and_what_to_do():
    alert = transitions.paused("bing", "node-a", 34, ["hard_block", "challenge"], T0, T0)
    assert alert.event == "paused" and alert.engine == "bing" and alert.node == "node-a"
    assert "bing is paused on node node-a" in alert.text
    assert "hard_block, challenge" in alert.text and "34" in alert.text
    assert "2026-12-02 10:00:00Z" in alert.text
    assert "scrapy health resume bing --node node-a" in alert.text
    reminder = transitions.paused("bing", "node-a", 34, ["hard_block"], T0, T0 + timedelta(hours=6), reminder=True)
    assert reminder.text.startswith("Reminder: bing is still paused on node node-a, for 6 h (")
    assert reminder.details["reminder"] is True


@pytest.mark.parametrize(
    "make",
    [
        lambda: transitions.resumed("google", "n1", T0, T0 + timedelta(minutes=30), 2),
        lambda: transitions.recovered("google", "n1", 91, "paused", T0, T0 + timedelta(hours=2)),
        lambda: transitions.degraded("google", "n1", 70, ["latency"], 2, T0),
        lambda: transitions.saturation("n1", ("bing", "google"), True, None, T0),
        lambda: transitions.saturation("n1", (), False, T0, T0 + timedelta(minutes=5)),
        lambda: transitions.canary_mismatch("yahoo", "n1", "weather", "0 results, expected at least 3", T0),
        lambda: transitions.parser_critical("brave", "n1", 20, ["no items"], T0),
        lambda: transitions.coverage_drop("bing", "n1", 0.05, 0.74, T0),
        lambda: transitions.network_down("n1", ("bing", "google"), ("ERR_CONNECTION_REFUSED",), T0, T0),
    ],
)
def test_every_transition_names_its_event_node_and_time(make):
    alert = make()
    assert alert.event in EVENTS
    assert "n1" in alert.text and "n1" in alert.title
    assert "2026-12-02 1" in alert.text
    assert alert.title.startswith("topicstreams: ")


def test_the_ends_of_states_say_so():
    assert "back" in transitions.network_down("n1", (), (), T0, T0 + timedelta(minutes=3), ended=True).text
    assert "after 3 min" in transitions.network_down("n1", (), (), T0, T0 + timedelta(minutes=3), ended=True).text
    assert transitions.coverage_drop("bing", "n1", 0.7, 0.74, T0, ended=True).details["ended"] is True
    assert "recovered" in transitions.recovered("bing", "n1", 85, "degraded", None, T0).title
    assert "5%" in transitions.coverage_drop("bing", "n1", 0.05, 0.74, T0).text


def test_reminders_come_once_per_period_counted_from_the_pause():
    repeat = 6 * 3600.0
    due = transitions.reminder_due
    assert not due(T0, None, T0 + timedelta(hours=5, minutes=59), repeat)
    assert due(T0, None, T0 + timedelta(hours=6), repeat)
    assert not due(T0, T0 + timedelta(hours=6), T0 + timedelta(hours=11), repeat)
    assert due(T0, T0 + timedelta(hours=6), T0 + timedelta(hours=12, seconds=1), repeat)
    # a restart in the middle of a period reminds at the period's end, not at once
    assert not due(T0, T0 + timedelta(hours=7), T0 + timedelta(hours=8), repeat)
    assert not due(T0, None, T0 + timedelta(days=3), 0)  # 0: never


# ---- the network verdict ---------------------------------------------------------------------------------


def watch(*engines: str) -> NetworkWatch:
    network = NetworkWatch("n1")
    for engine in engines:
        network.register(engine)
    return network


def test_every_engine_failing_to_connect_is_the_network():
    network = watch("google", "bing")
    network.answered("google", 10.0, True, "ERR_CONNECTION_REFUSED")
    assert not network.verdict().down  # bing has not failed: it may still answer
    network.answered("bing", 11.0, True, "ERR_NAME_NOT_RESOLVED")
    verdict = network.verdict()
    assert verdict.down and verdict.engines == ("bing", "google") and verdict.since == 11.0
    assert verdict.reasons == ("ERR_CONNECTION_REFUSED", "ERR_NAME_NOT_RESOLVED")
    network.answered("bing", 20.0, False)
    assert not network.verdict().down


def test_one_engine_alone_is_never_the_network():
    network = watch("google")
    network.answered("google", 10.0, True, "ERR_CONNECTION_REFUSED")
    assert not network.verdict().down


def test_other_processes_engines_count_through_their_status_rows():
    network = watch("google")
    network.answered("google", 10.0, True, "ERR_CONNECTION_REFUSED")
    network.other_processes([("bing", 9.0)])
    assert network.verdict().down
    network.other_processes([("bing", None)])
    assert not network.verdict().down


def test_held_failures_are_dropped_when_the_network_is_down_and_scored_when_it_works():
    network = watch("google", "bing")
    network.answered("google", 10.0, True, "ERR_CONNECTION_REFUSED")
    network.hold("google", 10.0, "g1")
    assert network.settle("google", 11.0) == ([], [])  # no verdict yet: still held
    network.answered("bing", 12.0, True, "ERR_CONNECTION_REFUSED")
    network.hold("bing", 12.0, "b1")
    release, dropped = network.settle("google", 12.0)
    assert release == [] and [held.sample for held in dropped] == ["g1"]
    assert [held.sample for held in network.settle("bing", 12.0)[1]] == ["b1"]

    # the network works (bing answers after google's failure): google's failure is google's own
    network = watch("google", "bing")
    network.answered("google", 10.0, True, "ERR_CONNECTION_REFUSED")
    network.hold("google", 10.0, "g1")
    network.answered("bing", 10.5, False)
    release, dropped = network.settle("google", 10.5)
    assert [held.sample for held in release] == ["g1"] and dropped == []


def test_a_held_failure_without_a_verdict_is_scored_after_the_hold():
    network = watch("google", "bing")
    network.answered("google", 10.0, True, "ERR_CONNECTION_REFUSED")
    network.hold("google", 10.0, "g1")
    assert network.settle("google", 10.0 + HOLD_SECONDS - 1) == ([], [])
    assert [held.sample for held in network.settle("google", 10.0 + HOLD_SECONDS)[0]] == ["g1"]
    network.hold("google", 20.0, "g2")
    assert [held.sample for held in network.taken_by("google")] == ["g2"] and network.held == []
