"""Membership (topicstreams.extensions.membership) on a real SQLite file: a process's row of ``nodes`` written when
its first engine joins, at each heartbeat with the distinct topics each engine swept within the last interval, and
with the time of its clean stop when the last engine leaves."""

from __future__ import annotations

import time

from topicstreams.extensions.membership import PROCESS, Membership
from topicstreams.storage.migrate import upgrade
from topicstreams.storage.node_rows import node_rows


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def wait_for(condition, timeout: float = 10.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = condition()
        if found:
            return found
        time.sleep(0.02)
    raise AssertionError("condition not met in time")


def test_scraped_counts_distinct_topics_of_the_last_interval_per_engine(databases):
    clock = Clock()
    membership = Membership(
        "sqlite://", "node-a", assignment="shard", interval=60, heartbeat=15, clock=clock, database=databases.of
    )
    membership.engines.update({"google": 1, "bing": 1})
    for topic in ("alpha", "beta", "alpha"):
        membership.topic_swept("google", topic)
    clock.now += 30
    membership.topic_swept("google", "gamma")
    assert membership.scraped() == {"bing": 0, "google": 3}
    clock.now += 45  # alpha and beta were swept 75 s ago: out of the interval
    assert membership.scraped() == {"bing": 0, "google": 1}
    clock.now += 60
    assert membership.scraped() == {"bing": 0, "google": 0}


def test_a_process_row_joins_beats_and_stops_once_its_last_engine_leaves(tmp_path, databases):
    url = f"sqlite:///{tmp_path / 'nodes.db'}"
    upgrade(url)
    db = databases.of(url)
    membership = Membership(url, "node <a>", assignment="lease", interval=60, heartbeat=0.05, database=databases.of)
    membership.join("google")
    membership.join("bing")
    first = wait_for(lambda: node_rows(db))
    assert [(row.node, row.process, row.assignment) for row in first] == [("node <a>", PROCESS, "lease")]
    assert first[0].stopped_at is None and first[0].version

    membership.topic_swept("google", "alpha")
    beat = wait_for(lambda: [row for row in node_rows(db) if row.scraped.get("google") == 1])
    assert beat[0].engines == ["bing", "google"] and beat[0].scraped == {"bing": 0, "google": 1}
    assert beat[0].heartbeat_at > first[0].heartbeat_at

    membership.leave("google")  # bing still runs: no stop yet
    assert membership.thread is not None and node_rows(db)[0].stopped_at is None
    wait_for(lambda: node_rows(db)[0].engines == ["bing"])
    membership.leave("bing")
    assert membership.thread is None
    (row,) = node_rows(db)
    assert row.stopped_at is not None and row.heartbeat_at == row.stopped_at
