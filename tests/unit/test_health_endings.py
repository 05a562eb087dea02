"""The health extension at the ends of things, driven by hand (real crawlers' settings and signals, a real SQLite
file, classifications as the blocks middleware sends them): the row's stop as its last write, the heartbeat it keeps,
and the node's network outage — no saturation told, no cooldown grown, the cooldowns lifted and one message when it is
back. What a real crawl shows (SIGKILL, a refused network) is in tests/system/test_network_crawl.py and
test_crawl_endings.py."""

from __future__ import annotations

import asyncio
import logging
from datetime import UTC, datetime, timedelta

from tests.support.crawler import make_crawler
from topicstreams.alerts.network import NetworkWatch
from topicstreams.config.route_table import DEFAULT_ROUTE
from topicstreams.crawl.runtime import Runtime
from topicstreams.crawl.signals import Classification
from topicstreams.engines.classify import ResponseClass
from topicstreams.extensions.saturation_watch import SaturationWatch
from topicstreams.extensions.watch import HealthExtension
from topicstreams.health.saturation import SaturationPolicy
from topicstreams.spiders.bing import BingSpider
from topicstreams.storage import engine_status as store
from topicstreams.storage import utcnow

OK, HARD = ResponseClass.OK, ResponseClass.HARD_BLOCK
REFUSED = "ERR_CONNECTION_REFUSED"


def classification(engine: str, cls: ResponseClass, reason: str = "") -> Classification:
    return Classification(
        engine=engine,
        topic="t",
        page=0,
        page_type="first",
        url="http://127.0.0.1/search",
        status=None if reason else 200,
        cls=cls,
        reason=reason,
        latency=0.2,
        bytes=0 if reason else 50_000,
        items=0 if reason else 10,
        probe=False,
        bench=None,
        at=datetime.now(UTC),
    )


def answer(extension: HealthExtension, cls: ResponseClass, reason: str = "", probe: bool = False) -> float | None:
    """What the blocks middleware does with a response: the engine's state takes it, then the signal goes out."""
    lane = extension.state.lane(DEFAULT_ROUTE)
    bench = lane.record(cls, probe=probe, connection_level=reason == REFUSED)
    extension.response_classified(classification(extension.engine, cls, reason))
    return bench


def run(extensions: list[HealthExtension], body) -> None:
    async def main():
        for extension in extensions:
            extension.spider_opened(None)
        try:
            result = body()
            if asyncio.iscoroutine(result):
                await result
        finally:
            for extension in extensions:
                await extension.spider_closed(None, "finished")

    asyncio.run(main())


def test_the_rows_last_write_is_its_stop_and_it_keeps_its_heartbeat(tmp_path):
    crawler = make_crawler(tmp_path, {}, TOPICSTREAMS_NODE_HEARTBEAT=0.4)
    extension = HealthExtension.from_crawler(crawler)
    db = Runtime.of(crawler).database(extension.database_url)
    seen = {}

    async def body():
        await asyncio.to_thread(extension.outbox.flush)
        opened = store.read_status(db, "google", "n1")
        await asyncio.sleep(1.0)  # no response at all: the heartbeat alone writes the row
        await asyncio.to_thread(extension.outbox.flush)
        seen["beating"] = (opened, store.read_status(db, "google", "n1"))
        for _ in range(5):  # still queued when the crawler closes: written before its stop
            answer(extension, OK)

    run([extension], body)
    opened, beating = seen["beating"]
    assert opened.heartbeat_seconds == 0.4 and opened.state_at(utcnow()) in ("running", "stale")
    assert beating.updated_at > opened.updated_at and beating.state_at(beating.updated_at) == "running"
    assert utcnow() - beating.updated_at < timedelta(seconds=1.2)  # rewritten within its three heartbeats
    row = store.read_status(db, "google", "n1")
    assert row.stopped_at is not None and row.state_at(utcnow()) == "stopped" and row.state == "running"
    assert row.window_counts["requests"] == 5  # the writes queued before the stop landed before it
    extension.save_status()  # a late signal (a coverage judged after the close) writes nothing
    assert extension.outbox.flush()
    assert store.read_status(db, "google", "n1").stopped_at == row.stopped_at


def test_a_network_outage_tells_no_saturation_grows_no_cooldown_and_its_end_lifts_the_cooldowns(tmp_path, caplog):
    runtime = Runtime()  # one process running google and bing (scrapy crawlall)
    options = {"health": {"min_requests": 2, "smoothing": 1}, "saturation": {"canary_engines": []}}
    google = HealthExtension.from_crawler(make_crawler(tmp_path, TOPICSTREAMS_RUNTIME=runtime, **options))
    bing = HealthExtension.from_crawler(
        make_crawler(tmp_path, spidercls=BingSpider, TOPICSTREAMS_RUNTIME=runtime, **options)
    )
    # The process's one saturation watch reads the node's rows at every look (a test needs no 2 s between two).
    watch = SaturationWatch("n1", google.saturation.policy, 0.0)
    google.saturation = bing.saturation = watch
    db = runtime.database(google.database_url)
    caplog.set_level(logging.INFO, logger="topicstreams")
    seen: dict[str, object] = {}

    async def body():
        for _ in range(3):  # the network is gone: every engine's connections are refused
            for extension in (google, bing):
                answer(extension, HARD, REFUSED, probe=extension.state.lane(DEFAULT_ROUTE).needs_probe)
        assert google.network.verdict().down
        for extension in (google, bing):
            extension.tick()
        await asyncio.to_thread(google.outbox.flush)
        seen["down"] = {
            extension.engine: (extension.state.lane(DEFAULT_ROUTE).failures, round(extension.state.bench_remaining()))
            for extension in (google, bing)
        }
        seen["rows"] = {row.engine: row.state_at(utcnow()) for row in store.read_statuses(db, "n1")}
        seen["saturation"] = watch.check(db, utcnow())
        # The network is back: google's probe gets a page; bing notices at its next tick.
        answer(google, OK, probe=True)
        bing.tick()
        google.tick()
        await asyncio.to_thread(google.outbox.flush)
        seen["back"] = {extension.engine: extension.state.bench_remaining() for extension in (google, bing)}
        seen["rows back"] = {row.engine: row.state_at(utcnow()) for row in store.read_statuses(db, "n1")}

    run([google, bing], body)
    # The default cooldown (60 s, × 2 in a row) did not grow over three refusals each: one initial cooldown.
    assert seen["down"] == {"google": (0, 60), "bing": (0, 60)}
    assert seen["rows"] == {"google": "cooling", "bing": "cooling"}
    assert not seen["saturation"].suspected  # two robust engines cooling, but they cannot connect at all
    assert not any("SATURATION" in message for message in caplog.messages)
    assert seen["back"] == {"google": 0.0, "bing": 0.0}
    assert seen["rows back"] == {"google": "running", "bing": "running"}
    recovered = [message for message in caplog.messages if "network recovered" in message]
    assert len(recovered) == 1 and "their cooldowns from the outage are lifted" in recovered[0]
    down = [message for message in caplog.messages if "every engine fails to connect" in message]
    assert len(down) == 1 and "retry every 60 s" in down[0]
    events = [(alert["event"], alert["message"]) for alert in store.read_alerts(db)]
    assert [event for event, _ in events] == ["network_down", "network_down"], events  # down, then back: no other


def test_no_saturation_is_told_while_connection_failures_wait_for_the_network_verdict(tmp_path, caplog):
    """Two robust engines cooling for what their sites answered is saturation — unless the process still holds
    connection-level failures for the network's verdict, or the network is down."""
    url = f"sqlite:///{tmp_path / 'rows.db'}"
    runtime = Runtime()
    runtime.upgrade_once(url)
    db = runtime.database(url)
    until = utcnow() + timedelta(minutes=5)
    for engine in ("google", "bing"):
        store.save_status(db, engine, "n1", state="cooling", cooling_until=until)
    policy = SaturationPolicy(frozenset(), 2, {"google": 2.0, "bing": 2.0})
    caplog.set_level(logging.INFO, logger="topicstreams")
    network = NetworkWatch("n1")
    watch = SaturationWatch("n1", policy, 0.0)
    watch.network = network
    network.answered("google", 1.0, True, REFUSED)
    network.hold("google", 1.0, object())  # held: is it google's, or the node's network?
    assert not network.verdict().down and network.in_doubt()
    assert not watch.check(db, utcnow()).suspected
    network.settle("google", 1.0 + network.hold_seconds)  # no verdict came: google's own after all
    network.answered("google", 100.0, False)
    assert not network.in_doubt()
    assert watch.check(db, utcnow()).suspected
    assert sum("SATURATION SUSPECTED" in message for message in caplog.messages) == 1
