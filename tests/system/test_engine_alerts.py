"""Engine and node transitions reach a person once per transition: the health extension driven by hand (a real
crawler's settings and signals, a real SQLite file, classifications as the blocks middleware sends them) delivering
through a real Apprise ``json://`` receiver and a real SMTP server (aiosmtpd) — degraded then recovered, a pause with
its reminders on the clock (time-machine) then a resume and the recovery, a canary's mismatch and its end, the
parser turning critical and back, the node's exit-IP saturation beginning and ending, told by one of two processes
watching it. What only a real crawl shows (coverage, the network) is in test_coverage_crawl.py and
test_network_crawl.py."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from pathlib import Path

import time_machine

from tests.support import crawler
from tests.support.alert_receivers import wait_for
from topicstreams.crawl.runtime import Runtime
from topicstreams.crawl.signals import CanaryChecked, Classification, PageParsed
from topicstreams.engines.classify import ResponseClass
from topicstreams.extensions.watch import HealthExtension
from topicstreams.spiders.bing import BingSpider
from topicstreams.storage import engine_status as store
from topicstreams.storage import utcnow

OK, SOFT, HARD, CHALLENGE, ERROR = (
    ResponseClass.OK,
    ResponseClass.SOFT_BLOCK,
    ResponseClass.HARD_BLOCK,
    ResponseClass.CHALLENGE,
    ResponseClass.ERROR,
)


def make_crawler(folder: Path, receiver, runtime: Runtime | None = None, **options):
    """The shared crawler (tests/support/crawler.py) alerting through *receiver*, retrying after 0.1 s, with no
    canary engine to tell the node's saturation."""
    return crawler.make_crawler(
        folder,
        receiver=receiver,
        database="alerts.db",
        saturation={"canary_engines": []},
        TOPICSTREAMS_ALERT_RETRY_DELAYS=[0.1],
        TOPICSTREAMS_RUNTIME=runtime,
        **options,
    )


def classification(engine: str, cls: ResponseClass, reason: str = "", items: int = 10) -> Classification:
    return Classification(
        engine=engine,
        topic="t",
        page=0,
        page_type="first",
        url="http://127.0.0.1/search",
        status=200,
        cls=cls,
        reason=reason,
        latency=0.2,
        bytes=50_000,
        items=items,
        probe=False,
        bench=None,
        at=datetime.now(UTC),
    )


def feed(extension: HealthExtension, classes: list[ResponseClass]) -> None:
    for cls in classes:
        extension.response_classified(classification(extension.engine, cls))


def run(extensions: list[HealthExtension], body) -> None:
    """Open the extensions, run ``body()`` inside the event loop, close them (which delivers what is pending)."""

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


def told(receiver) -> list[str]:
    """The titles of the alerts the json:// receiver got, in order."""
    return [posted.body["title"] for posted in receiver.received("/alerts")]


def test_degraded_then_recovered_each_told_once_by_chat_and_by_mail(tmp_path, json_receiver, smtp_receiver, databases):
    crawler = make_crawler(
        tmp_path, json_receiver, health={"min_requests": 10, "smoothing": 1}, mail=smtp_receiver.apprise_url()
    )
    extension = HealthExtension.from_crawler(crawler)

    def body():
        feed(extension, [OK] * 7 + [SOFT] * 3)  # 75: degraded
        feed(extension, [SOFT, OK, OK])  # still degraded: no second message
        feed(extension, [OK] * 40)  # ok again

    run([extension], body)
    assert told(json_receiver) == ["topicstreams: google degraded on n1", "topicstreams: google recovered on n1"]
    degraded = json_receiver.received("/alerts")[0].body["message"]
    assert "soft_block" in degraded and "× 2" in degraded
    mails = wait_for(lambda: smtp_receiver.received() if len(smtp_receiver.received()) == 2 else None)
    assert [mail.subject for mail in mails] == told(json_receiver)
    assert "google is healthy again on node n1" in mails[1].part("html") and "<br>" in mails[1].part("html")
    hooks = [posted.body for posted in json_receiver.received("/hook")]
    assert [(hook["event"], hook["engine"], hook["node"]) for hook in hooks] == [
        ("degraded", "google", "n1"),
        ("recovered", "google", "n1"),
    ]
    rows = store.read_alerts(databases.of(crawler.settings.get("TOPICSTREAMS_DATABASE_URL")))
    assert [(row["event"], row["delivery"]) for row in rows] == [
        ("degraded", "delivered 3/3"),
        ("recovered", "delivered 3/3"),
    ]


def test_a_pause_is_recalled_every_repeat_until_a_person_resumes_it_then_its_recovery(
    tmp_path, json_receiver, databases
):
    crawler = make_crawler(tmp_path, json_receiver, health={"min_requests": 4, "smoothing": 1}, repeat=3600)
    extension = HealthExtension.from_crawler(crawler)
    db_url = crawler.settings.get("TOPICSTREAMS_DATABASE_URL")

    async def body():
        feed(extension, [HARD, CHALLENGE, HARD, CHALLENGE])  # 40: paused
        start = datetime.now(UTC)
        with time_machine.travel(start + timedelta(minutes=59), tick=True):
            extension.tick()  # not yet
        with time_machine.travel(start + timedelta(hours=1, seconds=5), tick=True):
            extension.tick()
            extension.tick()  # once per period
        with time_machine.travel(start + timedelta(hours=2, seconds=5), tick=True):
            extension.tick()
        await asyncio.to_thread(extension.outbox.flush)
        store.resume(databases.of(db_url), "google", "n1")
        extension.tick()  # the running process notices the resume
        feed(extension, [OK] * 30)  # judged afresh: ok, back to the normal pace

    run([extension], body)
    assert told(json_receiver) == [
        "topicstreams: google paused on n1",
        "topicstreams: google still paused on n1",
        "topicstreams: google still paused on n1",
        "topicstreams: google resumed on n1",
        "topicstreams: google recovered on n1",
    ]
    messages = [posted.body["message"] for posted in json_receiver.received("/alerts")]
    assert "scrapy health resume google --node n1" in messages[0] and "hard_block, challenge" in messages[0]
    assert messages[1].startswith("Reminder: google is still paused on node n1, for 1 h (")
    assert messages[2].startswith("Reminder: google is still paused on node n1, for 2 h (")
    assert "after being paused" in messages[4]


def test_a_canary_mismatch_and_a_critical_parser_are_told_when_they_begin_and_when_they_end(tmp_path, json_receiver):
    crawler = make_crawler(tmp_path, json_receiver, health={"min_requests": 50})
    extension = HealthExtension.from_crawler(crawler)

    def check(matched: bool) -> CanaryChecked:
        return CanaryChecked(
            engine="google",
            query="weather",
            matched=matched,
            results=0 if not matched else 8,
            problem=None if matched else "0 results, expected at least 3",
            at=utcnow(),
        )

    def parsed(valid: int) -> None:
        sample = classification("google", OK)
        extension.response_classified(sample)
        extension.page_parsed(PageParsed(sample, items=10, valid_items=valid, missing={} if valid else {"title": 10}))

    def body():
        extension.canary_checked(check(False))
        extension.canary_checked(check(False))  # still wrong: no second message
        extension.canary_checked(check(True))
        for _ in range(3):
            parsed(0)  # the parser reads nothing right: critical
        for _ in range(60):
            parsed(10)  # fixed: the window's share climbs back to ok

    run([extension], body)
    assert told(json_receiver) == [
        "topicstreams: google canary mismatch on n1",
        "topicstreams: google canaries right again on n1",
        "topicstreams: google parser critical on n1",
        "topicstreams: google parser ok again on n1",
    ]
    assert "'weather'" in json_receiver.received("/alerts")[0].body["message"]
    assert "missing title" in json_receiver.received("/alerts")[2].body["message"]


def test_saturation_is_told_once_by_one_of_two_processes_when_it_begins_and_when_it_ends(
    tmp_path, json_receiver, databases
):
    """Two crawl processes of one node (two Scrapyd jobs: google, bing) both see the node saturate; the shared state
    lets one of them tell it."""
    # One notifier and one outbox for both (one runtime), so that the alerts go out in the order they are told.
    runtime = Runtime()
    google = HealthExtension.from_crawler(make_crawler(tmp_path, json_receiver, health={}, runtime=runtime))
    bing = HealthExtension.from_crawler(
        make_crawler(tmp_path, json_receiver, health={}, spidercls=BingSpider, runtime=runtime)
    )
    from topicstreams.extensions.saturation_watch import SaturationWatch

    # each its own watch, as in two processes
    google.saturation = SaturationWatch("n1", google.saturation.policy, 0.0)
    bing.saturation = SaturationWatch("n1", bing.saturation.policy, 0.0)

    async def body():
        await asyncio.to_thread(google.outbox.flush)  # the rows the crawls wrote as they opened
        db = databases.of(google.database_url)
        until = utcnow() + timedelta(minutes=10)
        for engine in ("google", "bing"):
            store.save_status(db, engine, "n1", state="cooling", cooling_until=until)
        now = utcnow()
        for extension in (google, bing):
            extension.saturation.check(db, now)
        for engine in ("google", "bing"):
            store.save_status(db, engine, "n1", state="running", cooling_until=None)
        for extension in (google, bing):
            extension.saturation.check(db, now + timedelta(seconds=1))
            extension.saturation.check(db, now + timedelta(seconds=40))  # clear for 30 s: over
        for extension in (google, bing):
            await asyncio.to_thread(extension.outbox.flush)

    run([google, bing], body)
    assert told(json_receiver) == [
        "topicstreams: exit IP saturation on n1",
        "topicstreams: exit IP saturation over on n1",
    ]
    assert "bing, google" in json_receiver.received("/alerts")[0].body["message"]


def test_the_network_verdict_counts_the_engines_another_process_runs_on_the_node(tmp_path, json_receiver, databases):
    """A crawl of google alone; bing runs in another process of the node (its status row fresh, failing to connect
    since a minute): google's connection failures are the node's network — one alert, none of them scored."""
    crawler = make_crawler(tmp_path, json_receiver, health={"min_requests": 2, "smoothing": 1})
    google = HealthExtension.from_crawler(crawler)
    from topicstreams.extensions.saturation_watch import SaturationWatch

    google.saturation = SaturationWatch("n1", google.saturation.policy, 0.0)  # reads the node's rows at every tick

    async def body():
        db = databases.of(google.database_url)
        store.save_status(db, "bing", "n1", state="running", connection_failures_since=utcnow() - timedelta(minutes=1))
        for _ in range(4):
            google.response_classified(classification("google", HARD, reason="ERR_CONNECTION_REFUSED", items=0))
        google.tick()  # reads bing's row: every engine of the node fails to connect
        await asyncio.to_thread(google.outbox.flush)

    run([google], body)
    assert told(json_receiver) == ["topicstreams: network down on n1"]
    assert "bing, google" in json_receiver.received("/alerts")[0].body["message"]
    status = store.read_status(databases.of(google.database_url), "google", "n1")
    assert status.state != "paused" and (status.window_counts or {}).get("requests", 0) == 0
    assert status.connection_failures_since is not None
