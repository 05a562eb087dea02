"""Lease mode end to end (``scraper.assignment: lease``): crawl processes with their own node ids — real spiders in
real Chromium, each against fake engines of its own (tests/support/lease_cluster.py) — sharing the suite's PostgreSQL.

One cluster for the module, run in phases, each test one behaviour with its own assertions (they run in file order
and build on the cluster as the previous ones left it: three nodes; node-c killed; node-d added; node-b's google
blocked; node-a stopped):

1. every (topic, engine) is scraped about once per interval, and never twice in the same slot;
2. a node killed with SIGKILL: its leases expire, the others take its topics within lease time + one interval, and
   nothing is stored twice;
3. a fourth node gets work within one interval of its start;
4. one node's google blocked (its fake answers 429): there it goes cooling and claims nothing, while the other nodes
   keep every google topic scraped every interval;
5. a node stopped with SIGTERM holds nothing once it exits (a topic whose page came back during Scrapy's graceful
   stop re-armed, any other claim released at once and taken by another node), and ``scrapy nodes --json`` tells
   stopped, stale and live nodes apart;
6. a one-off run (``once=1``, ``-a topics=``) in lease mode claims nothing from the shared schedule and says so.

A failed test prints the tail of every node's log (its captured output).
"""

from __future__ import annotations

import json
import re
import time
from collections import defaultdict
from collections.abc import Iterator

import pytest

from tests.support.crawl_checks import expected_urls
from tests.support.lease_cluster import CRAWLED, FAST_SETTINGS, TOO_MANY, LeaseCluster, Scrape

pytestmark = pytest.mark.timeout(300)

INTERVAL = 10.0
"""``scraper.scrape_interval``: seconds between two scrapes of a (topic, engine)."""
LEASE = 8.0
"""``scraper.lease_seconds``."""
JITTER = 0.2
"""``scraper.pacing.jitter_ratio``: a slot is due within ±JITTER/2 of an interval around it."""
SLACK = 4.0
"""Seconds a scrape may reach its fake after the moment it is owed: the schedule's poll (1 s), the claim, Chromium's
navigation and a topic or two queued ahead on a loaded machine."""
STARTUP = 60.0
"""Seconds a node may take to start Chromium and scrape its first topic on a loaded machine."""
TOPICS = [f"lease {i:02d}" for i in range(9)] + ["lease café d'été"]
"""Ten topics (one with an apostrophe and non-ASCII letters, as names come from people)."""
COOLDOWN = 300.0
"""``scraper.cooldown``: seconds a block benches an engine — longer than the module runs, so a blocked engine stays
cooling to the end."""
FIRST = ("node-a", "node-b", "node-c")


@pytest.fixture(scope="module")
def cluster(postgres_server, tmp_path_factory) -> Iterator[LeaseCluster]:
    """Three lease-mode nodes on a fresh database, every (topic, engine) scraped once before the tests begin."""
    with LeaseCluster(
        postgres_server,
        tmp_path_factory.mktemp("lease"),
        topics=TOPICS,
        interval=INTERVAL,
        lease_seconds=LEASE,
        jitter_ratio=JITTER,
        cooldown=COOLDOWN,
    ) as running:
        running.upgrade()
        for name in FIRST:
            running.start(name)
        running.wait_for(
            lambda: scraped_pairs(running) >= set(pairs()),
            STARTUP + INTERVAL,
            "every (topic, engine) scraped once by the three nodes",
        )
        running.ready_at = time.time()
        yield running


@pytest.fixture(autouse=True)
def _node_logs(request) -> Iterator[None]:
    """The tail of every node's log, in the test's captured output (shown when it fails)."""
    yield
    if "cluster" in request.fixturenames:
        print(request.getfixturevalue("cluster").logs(chars=4000))


def pairs() -> list[tuple[str, str]]:
    return [(topic, engine) for topic in TOPICS for engine in CRAWLED]


def scraped_pairs(cluster: LeaseCluster, since: float = 0.0, nodes: list[str] | None = None) -> set[tuple[str, str]]:
    return {
        (scrape.topic, engine) for engine in CRAWLED for scrape in cluster.scrapes(engine, since=since, nodes=nodes)
    }


def by_pair(scrapes: list[Scrape]) -> dict[tuple[str, str], list[Scrape]]:
    found: dict[tuple[str, str], list[Scrape]] = defaultdict(list)
    for scrape in scrapes:
        found[scrape.topic, scrape.engine].append(scrape)
    return found


def all_scrapes(cluster: LeaseCluster, **kwargs) -> list[Scrape]:
    return [scrape for engine in CRAWLED for scrape in cluster.scrapes(engine, **kwargs)]


def lease_conflicts(cluster: LeaseCluster) -> list[str]:
    """The log lines of a node that found its claim taken by another (a lease expired while it worked)."""
    return [
        line
        for node in cluster.nodes.values()
        for line in node.log().splitlines()
        if "another node claimed it" in line or "taken by another node" in line
    ]


def live_names(cluster: LeaseCluster) -> list[str]:
    return [name for name, node in cluster.nodes.items() if node.running]


# ---- 1 ------------------------------------------------------------------------------------------------------
def test_every_topic_and_engine_is_scraped_about_once_per_interval_and_never_twice_in_a_slot(cluster):
    start = cluster.ready_at
    cluster.wait_for(lambda: time.time() >= start + 2 * INTERVAL + 1, 3 * INTERVAL, "two intervals")
    end = start + 2 * INTERVAL
    history = by_pair(all_scrapes(cluster))
    assert set(history) == set(pairs())

    # about once per interval: two intervals hold two scrapes, three at most (the jitter moves a slot by a tenth
    # of an interval either way), and never fewer than one
    counts = {pair: len([s for s in scrapes if start <= s.time < end]) for pair, scrapes in history.items()}
    assert all(1 <= count <= 3 for count in counts.values()), counts
    assert sum(counts.values()) >= 1.5 * len(pairs()), counts

    # one scrape per slot, whichever node: consecutive scrapes of a pair are an interval apart (less the jitter and
    # a late start), never the moments apart of two nodes taking the same slot, nor two intervals of a missed one
    gaps = {
        pair: [round(later.time - earlier.time, 2) for earlier, later in zip(scrapes, scrapes[1:], strict=False)]
        for pair, scrapes in history.items()
    }
    short = {pair: found for pair, found in gaps.items() if min(found) < INTERVAL / 2}
    long = {pair: found for pair, found in gaps.items() if max(found) > 1.75 * INTERVAL}
    assert short == {}, f"scraped twice in a slot: {short}"
    assert long == {}, f"a slot missed: {long}"

    # the work is shared: every node scraped topics, and each engine's by more than one node (which node claims a
    # slot is a race the schedule does not rig: a node slowed by a busy machine may miss one engine for a while)
    by_engine = {engine: {s.node for s in cluster.scrapes(engine, since=start)} for engine in CRAWLED}
    assert set().union(*by_engine.values()) == set(FIRST), by_engine
    assert all(len(nodes) >= 2 for nodes in by_engine.values()), by_engine
    # the schedule counts one re-arm per scrape (the fakes' answers before the last interval are all re-armed); the
    # schedule is read first, so that a scrape re-armed between the two reads is among the fakes' answers
    rows = {(row["topic"], row["engine"]): row for row in cluster.schedule()}
    settled = by_pair(all_scrapes(cluster, nodes=FIRST))
    assert set(rows) == set(pairs())
    for pair, row in rows.items():
        assert row["scrapes"] >= len([s for s in settled[pair] if s.time < end]), (pair, row)
        assert row["scrapes"] <= len(settled[pair]), (pair, row)
        assert row["last_node"] in FIRST
    assert lease_conflicts(cluster) == []


# ---- 2 ------------------------------------------------------------------------------------------------------
def test_a_killed_nodes_leases_expire_and_the_others_take_its_topics_storing_nothing_twice(cluster):
    victim = cluster.nodes["node-c"]
    for engine in CRAWLED:  # its pages come slowly: it holds a claim most of the time, and is killed holding one
        for topic in TOPICS:
            victim.fakes.route(engine, topic, {"delay": 1.5})
    held = cluster.wait_for(lambda: cluster.leases_of("node-c"), 3 * INTERVAL, "node-c holding a claim", every=0.05)
    victim.kill()
    killed = victim.exited_at
    rows = {(row["topic"], row["engine"]): row for row in cluster.schedule()}
    left = {pair for pair, row in rows.items() if row["lease_node"] == "node-c"}
    assert left, f"node-c held {held} just before the kill; its lease was gone at once after it: {rows}"
    its_topics = left | {pair for pair, row in rows.items() if row["last_node"] == "node-c"}
    lease_ends = {pair: rows[pair]["lease_until"].timestamp() for pair in left}
    others = [name for name in cluster.nodes if name != "node-c"]

    def taken() -> dict:
        after = by_pair(all_scrapes(cluster, since=killed, nodes=others))
        return {pair: after[pair][0] for pair in its_topics} if its_topics <= set(after) else {}

    first = cluster.wait_for(taken, LEASE + INTERVAL + 2 * SLACK, "node-c's topics scraped by the others", logs=others)
    late = {
        pair: round(scrape.time - killed, 1)
        for pair, scrape in first.items()
        if scrape.time > killed + LEASE + INTERVAL + SLACK
    }
    assert late == {}, f"taken over later than lease time + one interval after the kill: {late}"
    # the rows it held were taken only once their leases had run out (by the database's clock: 0.5 s of slack for
    # the fakes' clock and the claim's round trip)
    early = {
        pair: round(lease_ends[pair] - first[pair].time, 2)
        for pair in left
        if first[pair].time < lease_ends[pair] - 0.5
    }
    assert early == {}, f"claimed before node-c's lease expired: {early}"
    assert cluster.leases_of("node-c") == []  # taken, every one

    # nothing stored twice, nothing missing: each article once, one event per topic and article, one attribution
    # per topic, article and engine — exactly what the pages held
    assert cluster.query("SELECT count(*) - count(DISTINCT url) FROM news") == [(0,)]
    expected = {(topic, url, engine) for topic, engine in pairs() for url in expected_urls(engine, topic)}
    attributions = cluster.query("""
        SELECT t.name, n.url, e.engine FROM topic_news_engines e JOIN topics t ON t.id = e.topic_id
        JOIN news n ON n.id = e.news_id""")
    assert len(attributions) == len(set(attributions))
    assert set(attributions) == expected
    events = cluster.query(
        "SELECT t.name, n.url FROM topic_news tn JOIN topics t ON t.id = tn.topic_id JOIN news n ON n.id = tn.news_id"
    )
    assert sorted(events) == sorted({(topic, url) for topic, url, _ in expected})
    assert sorted(url for (url,) in cluster.query("SELECT url FROM news")) == sorted({u for _, u, _ in expected})


# ---- 3 ------------------------------------------------------------------------------------------------------
def test_a_fourth_node_gets_work_within_one_interval(cluster):
    cluster.start("node-d")
    joined = cluster.wait_for(
        lambda: cluster.query("SELECT min(started_at) FROM nodes WHERE node = 'node-d'")[0][0],
        STARTUP,
        "node-d's row in the nodes table",
        logs=["node-d"],
    ).timestamp()
    first = cluster.wait_for(
        lambda: all_scrapes(cluster, nodes=["node-d"]), INTERVAL + 2 * SLACK, "node-d's first topic", logs=["node-d"]
    )
    assert min(s.time for s in first) <= joined + INTERVAL + SLACK, (joined, first)
    cluster.wait_for(
        lambda: any(row["last_node"] == "node-d" for row in cluster.schedule()),
        2 * SLACK,
        "a schedule row re-armed by node-d",
        logs=["node-d"],
    )
    # no node joining took anything away twice: every re-arm held its claim
    assert lease_conflicts(cluster) == []


# ---- 4 ------------------------------------------------------------------------------------------------------
def test_a_node_whose_google_is_blocked_claims_nothing_there_and_the_others_carry_its_topics(cluster):
    blocked = cluster.nodes["node-b"]
    for topic in TOPICS:
        blocked.fakes.route("google", topic, TOO_MANY)
    since = time.time()
    refused = cluster.wait_for(
        lambda: [s for s in blocked.scrapes("google") if s.time >= since and s.status == 429],
        3 * INTERVAL,
        "node-b's google meeting its 429",
        logs=["node-b"],
    )[0]
    cluster.wait_for(
        lambda: (
            cluster.query("SELECT state FROM engine_status WHERE node = 'node-b' AND engine = 'google'")
            == [("cooling",)]
        ),
        2 * SLACK,
        "node-b's google cooling in engine_status",
        logs=["node-b"],
    )

    carriers = [name for name in live_names(cluster) if name != "node-b"]
    # the topic that met the block is given back at once, due when it was: another node scrapes it now
    retaken = cluster.wait_for(
        lambda: [s for s in cluster.scrapes("google", since=refused.time, nodes=carriers) if s.topic == refused.topic],
        INTERVAL,
        f"{refused.topic!r} scraped by another node after node-b's 429",
    )[0]
    assert retaken.time - refused.time <= SLACK, (refused, retaken)

    # every google topic is still scraped every interval, by the others
    stretch = refused.time + INTERVAL * (1 + JITTER / 2) + SLACK
    cluster.wait_for(lambda: time.time() >= stretch, 2 * INTERVAL, "an interval after the block")
    carried = {s.topic for s in cluster.scrapes("google", since=refused.time, nodes=carriers) if s.time <= stretch}
    assert carried == set(TOPICS), sorted(set(TOPICS) - carried)
    # node-b claimed nothing more for google while cooling (its one request was the 429), and goes on with bing
    assert [s for s in blocked.scrapes("google") if s.time > refused.time] == []
    assert not any(row["lease_node"] == "node-b" and row["engine"] == "google" for row in cluster.schedule())
    assert cluster.scrapes("bing", since=refused.time, nodes=["node-b"])
    assert lease_conflicts(cluster) == []


# ---- 5 ------------------------------------------------------------------------------------------------------
def test_a_node_stopped_with_sigterm_releases_its_leases_at_once_and_scrapy_nodes_shows_it(cluster):
    stopping = cluster.nodes["node-a"]
    for engine in CRAWLED:  # its pages come slowly: it holds a claim most of the time
        for topic in TOPICS:
            stopping.fakes.route(engine, topic, {"delay": 1.0})

    def held() -> dict[tuple[str, str], float]:
        return {
            (row["engine"], row["topic"]): row["lease_until"].timestamp()
            for row in cluster.schedule()
            if row["lease_node"] == "node-a"
        }

    holding = cluster.wait_for(held, 3 * INTERVAL, "node-a holding a claim", every=0.05)
    signalled = time.time()
    assert stopping.terminate() == 0, stopping.tail()
    assert held() == {}  # nothing left to expire
    # Scrapy's graceful stop lets a page already asked for come back and be parsed: such a topic was scraped by
    # node-a, which re-armed it to its next slot; any other claim it held was given back at once — and another node
    # takes it before its lease would have run out (the lease only grew while node-a lived)
    rows = {(row["engine"], row["topic"]): row for row in cluster.schedule()}
    rearmed = {
        pair
        for pair in holding
        if rows[pair]["last_node"] == "node-a" and rows[pair]["last_done_at"].timestamp() >= signalled - 0.5
    }
    released = set(holding) - rearmed
    others = live_names(cluster)
    for engine, topic in rearmed:
        assert any(s.topic == topic for s in stopping.scrapes(engine) if s.time >= signalled - INTERVAL), (
            engine,
            topic,
        )
        due = rows[engine, topic]["due_at"].timestamp()
        early = [s for s in cluster.scrapes(engine, since=signalled, nodes=others) if s.topic == topic and s.time < due]
        assert early == [], (engine, topic, early, due)  # not scraped again in the slot node-a finished
    if released:
        assert re.search(r"released [1-9]\d* claim\(s\) of the shared schedule", stopping.log()), stopping.tail()
    for engine, topic in released:
        lease_until = holding[engine, topic]
        taken = cluster.wait_for(
            lambda engine=engine, topic=topic: [
                s for s in cluster.scrapes(engine, since=signalled, nodes=others) if s.topic == topic
            ],
            LEASE + INTERVAL,
            f"{topic!r} on {engine} taken by another node",
            logs=others,
        )[0]
        assert taken.time < lease_until - 0.5, (engine, topic, taken, lease_until)
        assert taken.time <= stopping.exited_at + SLACK, (engine, topic, taken, stopping.exited_at)

    # what the nodes show: node-a stopped; a killed node stale (no goodbye: four heartbeats of 2 s unheard of);
    # the running ones live, with their engines, their states (a blocked google cooling) and their work
    report = cluster.run("node-b", "nodes", "--json", "-s", "TOPICSTREAMS_NODE_HEARTBEAT=2")
    assert report.returncode == 0, report.stdout + report.stderr[-3000:]
    nodes = {entry["node"]: entry for entry in json.loads(report.stdout)["nodes"]}
    expected = {
        name: {None: "live", "stopped": "stopped", "killed": "stale"}[node.ended]
        for name, node in cluster.nodes.items()
        if node.process is not None
    }
    assert {name: entry["status"] for name, entry in nodes.items()} == expected
    assert {name: entry["stale"] for name, entry in nodes.items()} == {
        name: status == "stale" for name, status in expected.items()
    }
    assert nodes["node-a"]["stopped"] is True
    for name in live_names(cluster):
        entry = nodes[name]
        assert sorted(entry["engines"]) == sorted(CRAWLED), entry
        assert entry["age_seconds"] < 4 * 2, entry
        assert sum(entry["scraped_last_interval"].values()) >= 1, entry
        google_blocked = any(s.status == 429 for s in cluster.nodes[name].scrapes("google"))
        assert entry["states"]["google"] == ("cooling" if google_blocked else "running"), entry


# ---- 6 ------------------------------------------------------------------------------------------------------
def test_a_one_off_run_in_lease_mode_claims_nothing_from_the_shared_schedule_and_says_so(cluster):
    before = time.time()
    # at once: a pass of the table's topics (once=1) on one node, a continuous run of a topic named on another
    once = cluster.launch("node-e", "crawl", "google", "-a", "once=1", *FAST_SETTINGS)
    named = cluster.launch("node-f", "crawl", "bing", "-a", "topics=lease 03", *FAST_SETTINGS)
    assert once.wait(2 * STARTUP) == 0, once.tail()
    cluster.wait_for(
        lambda: cluster.scrapes("bing", nodes=["node-f"]),
        STARTUP,
        "node-f's scrape of the topic named",
        logs=["node-f"],
    )
    assert named.terminate() == 0, named.tail()
    for node in (once, named):
        assert "lease mode, but a one-off run" in node.log(), node.tail()
    # each did its own pass, whatever the schedule held: every topic once, the one named
    assert sorted(s.topic for s in cluster.scrapes("google", nodes=["node-e"])) == sorted(TOPICS)
    assert {s.topic for s in cluster.scrapes("bing", nodes=["node-f"])} == {"lease 03"}

    # nothing of the schedule was ever theirs
    rows = cluster.schedule()
    assert len(rows) == len(pairs())
    assert not any({row["lease_node"], row["last_node"]} & {"node-e", "node-f"} for row in rows), rows
    # the nodes of the cluster went on meanwhile
    assert max(row["last_done_at"] for row in rows).timestamp() > before
