"""News digests end to end: real SQLite and PostgreSQL databases, real crawl processes (two racing for the same
periods, one killed and another started later), a real crawl of the fake engines in Chromium for as-it-happens
batches, and a real JSON receiver behind Apprise's ``json://`` URLs.

The scheduled digests run on an injected clock: each process is handed the moments it looks at the digests
(:meth:`AlertingWork.send_due_digests`), and the feed's events are stored at chosen moments (time-machine).
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import time_machine

from fake_engines import FakeEngines
from tests.support.alert_receivers import wait_for
from tests.support.crawl_checks import crawl_config
from tests.support.feed_data import fresh_database, nid, write_rows
from tests.support.project import REPO
from tests.support.sections import alerting_section
from topicstreams.alerts.delivery import Notifier
from topicstreams.alerts.inert_text import plain
from topicstreams.extensions.digest_watch import CLAIM_HOLD, AlertingWork
from topicstreams.storage import digest_events as digests

pytestmark = pytest.mark.timeout(240)

T0 = datetime(2026, 12, 2, 10, 0, 5, tzinfo=UTC)
"""When the hourly digest is first seen."""


def at(hour: int, minute: int = 0, second: int = 0, day: int = 2) -> datetime:
    return datetime(2026, 12, day, hour, minute, second, tzinfo=UTC)


def seed(url: str, moment: datetime, *stories: tuple[str, str]) -> None:
    """Store stories ``(n, topic)`` (titled ``Story <n>``, found by google) as one batch first seen at ``moment``."""
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
                    "source": "Example News",
                    "snippet": None,
                    "published_at": None,
                }
                for n, topic in stories
            ],
        )


def digest(name: str, every: str, url: str, **more) -> dict:
    """An ``alerting.digests`` entry as the configuration normalises it."""
    return {
        "name": name,
        "topics": [],
        "engines": [],
        "query": "",
        "every": every,
        "at": {"day": "08:00", "week": "mon 08:00"}.get(every),
        "urls": [url],
        "max_items": 50,
        **more,
    }


def alerting(*digest_list: dict) -> dict:
    return {
        "urls": [],
        "webhook_url": "",
        "events": [],
        "repeat": 21600,
        "silence_factor": 6,
        "silence_min_events": 10,
        "digests": list(digest_list),
    }


def titles(posted) -> list[str]:
    """The story titles a digest message lists (its item lines)."""
    return [line[2:].split(" — ")[0] for line in posted.body["message"].splitlines() if line.startswith("• ")]


# ---- processes racing for the periods ------------------------------------------------------------------------------
RACER = r"""
import json, sys, time
from datetime import datetime
from pathlib import Path
from topicstreams.config.sections import AlertingSection, build_section
from topicstreams.extensions.digest_watch import AlertingWork

args = json.loads(sys.argv[1])
alerting = build_section(AlertingSection, args["alerting"], "alerting")
work = AlertingWork(args["db"], alerting, args["node"], baseline_days=14, silence_every=1e9)
folder = Path(args["folder"])
for step, moment in enumerate(args["moments"]):
    # A barrier: every racer looks at the same moment together.
    (folder / f"{args['me']}-{step}").touch()
    deadline = time.monotonic() + 60
    while not all((folder / f"{other}-{step}").exists() for other in args["racers"]):
        if time.monotonic() > deadline:
            sys.exit(f"racer {args['me']}: the others never came to step {step}")
        time.sleep(0.002)
    work.send_due_digests(datetime.fromisoformat(moment))
if not work.notifier.flush(30):
    sys.exit("alerts left undelivered")
print("looked at every moment", flush=True)
if args["linger"]:
    time.sleep(600)  # a crawl process going on until it is killed
"""


def racer(
    folder: Path, url: str, config: dict, me: str, moments: list[datetime], racers: list[str], linger: bool = False
) -> subprocess.Popen:
    """A process sending the digests of ``config`` at each of ``moments``, in step with the ``racers``."""
    args = {
        "db": url,
        "alerting": config,
        "node": f"node-{me}",
        "folder": str(folder),
        "me": me,
        "moments": [moment.isoformat() for moment in moments],
        "racers": racers,
        "linger": linger,
    }
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.Popen(
        [sys.executable, "-c", RACER, json.dumps(args)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def finished(process: subprocess.Popen, timeout: float = 90) -> str:
    out, err = process.communicate(timeout=timeout)
    assert process.returncode == 0, err[-3000:]
    assert "looked at every moment" in out
    return err


def count_digest_alerts(databases, url: str) -> int:
    from sqlalchemy import text

    with databases.of(url).connect() as conn:
        return conn.execute(text("SELECT count(*) FROM alerts WHERE event = 'digest'")).scalar_one()


def test_two_processes_racing_send_each_hourly_period_exactly_once(feed_url, json_receiver, tmp_path, databases):
    seed(feed_url, T0 - timedelta(minutes=5), ("old", "climate"))  # before the digest existed: never sent
    seed(feed_url, at(10, 20), ("a1", "climate"), ("a2", "energy"))
    seed(feed_url, at(10, 40), ("a3", "climate"))
    # 11:00 to 12:00: nothing.
    seed(feed_url, at(12, 30), ("b1", "climate"))
    seed(feed_url, at(13, 0, 0), ("c1", "energy"))  # on the boundary: in the period it ends
    seed(feed_url, at(13, 59, 59), ("d1", "climate"))
    config = alerting(digest("hourly", "hour", json_receiver.apprise_url("/hourly")))
    moments = [T0, at(10, 30), at(11, 0, 1), at(11, 0, 2), at(12, 0, 3), at(13, 0, 4), at(14, 0, 5), at(14, 30)]
    racers = ["a", "b"]
    processes = [racer(tmp_path, feed_url, config, me, moments, racers) for me in racers]
    for process in processes:
        finished(process)

    # Each process delivers in its own thread: the messages may arrive in any order.
    posted = sorted(json_receiver.received("/hourly"), key=lambda post: post.body["title"].split("hour to ")[-1])
    assert [post.body["title"] for post in posted] == [
        'topicstreams digest "hourly": 3 new articles (hour to 11:00 UTC)',
        'topicstreams digest "hourly": 2 new articles (hour to 13:00 UTC)',
        'topicstreams digest "hourly": 1 new article (hour to 14:00 UTC)',
    ]  # one message per period, the empty one none
    assert [sorted(titles(post)) for post in posted] == [
        ["Story a1", "Story a2", "Story a3"],
        ["Story b1", "Story c1"],
        ["Story d1"],
    ]
    assert titles(posted[0])[0] == "Story a3"  # newest first
    assert "found by: google" in posted[0].body["message"]
    assert count_digest_alerts(databases, feed_url) == 3
    assert digests.sent_until(databases.of(feed_url), ["hourly"]) == {"hourly": at(14)}


def test_a_restart_sends_the_missed_periods_once_and_nothing_twice(feed_url, json_receiver, tmp_path, databases):
    seed(feed_url, at(10, 30), ("a1", "climate"))
    seed(feed_url, at(11, 30), ("b1", "climate"))
    seed(feed_url, at(12, 30), ("c1", "energy"))
    seed(feed_url, at(13, 30), ("d1", "climate"))
    config = alerting(digest("hourly", "hour", json_receiver.apprise_url("/hourly")))

    first = racer(tmp_path, feed_url, config, "first", [T0, at(11, 0, 10)], ["first"], linger=True)
    try:
        assert first.stdout is not None and first.stdout.readline().strip() == "looked at every moment"
        first.send_signal(signal.SIGKILL)  # between periods: the crawl process is gone
    finally:
        first.wait(10)
    assert [titles(post) for post in json_receiver.received("/hourly")] == [["Story a1"]]

    # Started again at 13:00:20: 11:00 to 13:00 was missed, and is one message; then a second start sends nothing.
    finished(racer(tmp_path, feed_url, config, "second", [at(13, 0, 20)], ["second"]))
    finished(racer(tmp_path, feed_url, config, "third", [at(13, 0, 30), at(13, 59, 59)], ["third"]))
    posted = json_receiver.received("/hourly")
    assert [post.body["title"] for post in posted] == [
        'topicstreams digest "hourly": 1 new article (hour to 11:00 UTC)',
        'topicstreams digest "hourly": 2 new articles (11:00 to 13:00 UTC)',
    ]
    assert sorted(titles(posted[1])) == ["Story b1", "Story c1"]

    # A process that claimed 13:00 to 14:00 and died before completing it: the claim holds, then expires, and the
    # period is sent once by another.
    db = databases.of(feed_url)
    assert digests.claim(db, "hourly", at(14), "dead-process", CLAIM_HOLD, now=at(14, 0, 1)) == at(13)
    work = AlertingWork(feed_url, alerting_section(config), "node-d", baseline_days=14, silence_every=1e9)
    assert work.send_due_digests(at(14, 0, 30)) == 0
    assert work.send_due_digests(at(14, 0, 1) + timedelta(seconds=CLAIM_HOLD + 1)) == 1
    assert work.send_due_digests(at(14, 10)) == 0
    assert not digests.complete(db, "hourly", at(14), "dead-process")  # the dead one's claim is gone
    assert work.notifier.flush(30)
    assert [titles(post) for post in json_receiver.received("/hourly")][2:] == [["Story d1"]]


def test_daily_and_weekly_digests_on_their_boundaries(tmp_path, json_receiver, databases):
    url = fresh_database(f"sqlite:///{tmp_path / 'news.db'}")
    sunday = datetime(2026, 11, 29, 7, 0, tzinfo=UTC)  # a Sunday
    seed(url, sunday - timedelta(hours=1), ("history", "climate"))
    seed(url, sunday + timedelta(minutes=30), ("e1", "climate"))
    seed(url, sunday + timedelta(hours=2), ("e2", "energy"))
    seed(url, datetime(2026, 11, 30, 7, 59, tzinfo=UTC), ("e3", "climate"))
    seed(url, datetime(2026, 11, 30, 8, 0, 30, tzinfo=UTC), ("e4", "climate"))
    seed(url, datetime(2026, 12, 1, 6, 0, tzinfo=UTC), ("e5", "space"))
    config = alerting(
        digest("daily", "day", json_receiver.apprise_url("/daily")),
        digest("weekly", "week", json_receiver.apprise_url("/weekly")),
        digest("climate weekly", "week", json_receiver.apprise_url("/climate"), topics=["climate"], at="mon 07:59"),
        digest("searched", "day", json_receiver.apprise_url("/searched"), query='"STORY e4" e4'),
        digest("bing's", "day", json_receiver.apprise_url("/bing"), engines=["bing"]),
    )
    notifier = Notifier(url, config, "node-a", delays=(0.1,), database=databases.of)
    work = AlertingWork(url, alerting_section(config), "node-a", baseline_days=14, silence_every=1e9, notifier=notifier)

    for moment in (
        sunday,
        datetime(2026, 11, 29, 8, 0, 10, tzinfo=UTC),
        datetime(2026, 11, 30, 7, 58, tzinfo=UTC),
        datetime(2026, 11, 30, 7, 59, 0, tzinfo=UTC),
        datetime(2026, 11, 30, 8, 0, 0, tzinfo=UTC),
        datetime(2026, 12, 1, 7, 59, 59, tzinfo=UTC),
        datetime(2026, 12, 1, 8, 0, 0, tzinfo=UTC),
        datetime(2026, 12, 6, 23, 0, tzinfo=UTC),
    ):
        work.send_due_digests(moment)
    assert notifier.flush(30)

    daily = json_receiver.received("/daily")
    assert [post.body["title"] for post in daily] == [
        'topicstreams digest "daily": 1 new article (day to Sun 29 Nov 08:00 UTC)',
        'topicstreams digest "daily": 2 new articles (day to Mon 30 Nov 08:00 UTC)',
        'topicstreams digest "daily": 2 new articles (day to Tue 1 Dec 08:00 UTC)',
    ]
    assert [sorted(titles(post)) for post in daily] == [
        ["Story e1"],
        ["Story e2", "Story e3"],
        ["Story e4", "Story e5"],
    ]
    weekly = json_receiver.received("/weekly")
    assert [post.body["title"] for post in weekly] == [
        'topicstreams digest "weekly": 3 new articles (week to Mon 30 Nov 08:00 UTC)'
    ]
    assert sorted(titles(weekly[0])) == ["Story e1", "Story e2", "Story e3"]
    climate = json_receiver.received("/climate")  # its own time, its own topics; e3 came at 07:59:00 exactly
    assert [sorted(titles(post)) for post in climate] == [["Story e1", "Story e3"]]
    assert all("history" not in post.body["message"] for post in daily + weekly + climate)
    assert [titles(post) for post in json_receiver.received("/searched")] == [["Story e4"]]  # the feed's search
    assert json_receiver.received("/bing") == []  # found by google only


def test_an_empty_period_sends_nothing_and_moves_on(tmp_path, json_receiver, databases):
    url = fresh_database(f"sqlite:///{tmp_path / 'news.db'}")
    config = alerting(digest("hourly", "hour", json_receiver.apprise_url("/hourly")))
    work = AlertingWork(
        url,
        alerting_section(config),
        "node-a",
        baseline_days=14,
        silence_every=1e9,
        notifier=Notifier(url, config, "node-a", delays=(0.1,), database=databases.of),
    )
    work.send_due_digests(T0)
    assert work.send_due_digests(at(11, 0, 5)) == 0
    assert digests.sent_until(databases.of(url), ["hourly"]) == {"hourly": at(11)}
    seed(url, at(11, 10), ("late", "climate"))
    assert work.send_due_digests(at(12, 0, 5)) == 1
    assert work.notifier.flush(30)
    assert [titles(post) for post in json_receiver.received("/hourly")] == [["Story late"]]


# ---- as it happens ---------------------------------------------------------------------------------------------------
def test_the_store_announces_exactly_the_feed_events_it_added(feed_url, tmp_path, databases):
    from scrapy import Spider
    from scrapy.utils.test import get_crawler

    from tests.support.feed_data import article
    from topicstreams import settings as project_settings
    from topicstreams.crawl.signals import events_stored
    from topicstreams.pipelines.normalize import NormalizePipeline
    from topicstreams.pipelines.store import StorePipeline

    class GoogleSpider(Spider):
        name = "google"

    def crawl(items) -> list:
        """Store ``items`` as a crawl does (in an event loop); what was announced by the time the store closed."""
        crawler = get_crawler(
            GoogleSpider,
            {
                **{
                    name: getattr(project_settings, name)
                    for name in dir(project_settings)
                    if name.startswith("TOPICSTREAMS_STORE_")
                },
                "TOPICSTREAMS_DATABASE_URL": feed_url,
                "TOPICSTREAMS_ENGINES": {},
                "TOPICSTREAMS_JOURNAL_DIR": str(tmp_path / "journal"),
            },
        )
        heard = []
        crawler.signals.connect(
            lambda stored: heard.append((threading.current_thread().name, stored)), signal=events_stored, weak=False
        )
        normalize, store = NormalizePipeline.from_crawler(crawler), StorePipeline.from_crawler(crawler)

        async def run() -> list:
            store.open_spider()
            for item in items:
                store.process_item(normalize.process_item(item))
            await store.close_spider()
            return list(heard)

        return asyncio.run(run())

    first = crawl([article(1, "climate"), article(2, "climate"), article(1, "energy")])
    second = crawl(
        [
            article(2, "climate"),
            article(3, "climate"),
            article(1, "energy"),
            article(1, "space"),
            article(3, "climate", "bing"),
        ]
    )
    with databases.of(feed_url).connect() as conn:
        ids = dict(conn.exec_driver_sql("SELECT name, id FROM topics").all())
    assert [thread for thread, _ in first + second] == [threading.main_thread().name] * 2  # on the crawl's loop
    assert sorted(first[0][1].keys) == sorted(
        [(ids["climate"], nid(1)), (ids["climate"], nid(2)), (ids["energy"], nid(1))]
    )
    assert sorted(second[0][1].keys) == sorted([(ids["climate"], nid(3)), (ids["space"], nid(1))])
    assert second[0][1].engine == "google"


def test_an_as_it_happens_batch_waits_a_minute_from_its_first_event(tmp_path, json_receiver, databases):
    from sqlalchemy import select

    from topicstreams.crawl.signals import EventsStored
    from topicstreams.storage.models import topic_news_table as topic_news

    url = fresh_database(f"sqlite:///{tmp_path / 'news.db'}")
    config = alerting(digest("live", "as_it_happens", json_receiver.apprise_url("/live"), topics=["climate"]))
    clock = [1000.0]
    work = AlertingWork(
        url,
        alerting_section(config),
        "node-a",
        baseline_days=14,
        silence_every=1e9,
        notifier=Notifier(url, config, "node-a", delays=(0.1,), database=databases.of),
        clock=lambda: clock[0],
    )

    def stored(moment: datetime, *stories: tuple[str, str]) -> None:
        seed(url, moment, *stories)
        with databases.of(url).connect() as conn:
            keys = conn.execute(
                select(topic_news.c.topic_id, topic_news.c.news_id).where(topic_news.c.first_seen_at == moment)
            ).all()
        assert len(keys) == len(stories)
        work.stored(EventsStored("google", tuple(map(tuple, keys)), moment))

    stored(at(9, 0, 0), ("x1", "climate"), ("x2", "energy"))
    clock[0] += 40
    stored(at(9, 0, 40), ("x3", "climate"))
    assert work.send_batches(at(9, 0, 40)) == 0  # the batch is 40 s old
    clock[0] += 21
    assert work.send_batches(at(9, 1, 1)) == 1
    clock[0] += 5
    stored(at(9, 1, 6), ("x4", "energy"))  # none of the digest's: nothing to send
    clock[0] += 60
    assert work.send_batches(at(9, 2, 6)) == 0
    assert work.send_batches(at(9, 2, 7), True) == 0  # nothing pending
    assert work.notifier.flush(30)
    [posted] = json_receiver.received("/live")
    assert posted.body["title"] == 'topicstreams digest "live": 2 new articles (as it happens, to 09:00 UTC)'
    assert titles(posted) == ["Story x3", "Story x1"]


# ---- as it happens: a real crawl ---------------------------------------------------------------------------------
HOSTILE_TOPIC = "@everyone <b>deals</b>"


def test_a_crawl_sends_its_as_it_happens_batch_before_it_exits(scrapy_cmd, json_receiver, tmp_path):
    with FakeEngines(engines=("google",)) as fakes:
        config = crawl_config(
            tmp_path,
            fakes,
            floor=0.2,
            alerting={
                "digests": [
                    {"name": "everything", "every": "as_it_happens", "urls": [json_receiver.apprise_url("/all")]},
                    {
                        "name": "alpha only",
                        "every": "as_it_happens",
                        "topics": ["alpha"],
                        "urls": [json_receiver.apprise_url("/alpha")],
                    },
                    {
                        "name": "by bing",
                        "every": "as_it_happens",
                        "engines": ["bing"],
                        "urls": [json_receiver.apprise_url("/bing")],
                    },
                ]
            },
        )
        started = time.monotonic()
        result = scrapy_cmd(
            "crawl",
            "google",
            "-a",
            f"topics=alpha,{HOSTILE_TOPIC}",
            "-a",
            "once=1",
            env={"TOPICSTREAMS_CONFIG": str(config)},
        )
        assert result.returncode == 0, result.stderr[-3000:]
    assert time.monotonic() - started < 60  # well within a minute: only the close can have sent the batch

    with sqlite3.connect(tmp_path / "news.db") as conn:
        stored = conn.execute(
            "SELECT t.name, n.title FROM topic_news e JOIN topics t ON t.id = e.topic_id "
            "JOIN news n ON n.id = e.news_id"
        ).fetchall()
    assert {name for name, _ in stored} == {"alpha", HOSTILE_TOPIC}
    # Received by the time the process exited (no waiting here).
    everything = json_receiver.received("/all")
    assert len(everything) == 1, result.stderr[-4000:]
    message = everything[0].body["message"]
    assert everything[0].body["title"].startswith(f'topicstreams digest "everything": {len(stored)} new articles')
    assert sorted(titles(everything[0])) == sorted(plain(title) for _, title in stored)
    assert "@everyone" not in message and "@\u200beveryone" in message  # no mass mention from a scraped title
    assert message.count("found by: google") == len(stored)

    alpha = json_receiver.received("/alpha")
    assert len(alpha) == 1
    assert sorted(titles(alpha[0])) == sorted(plain(title) for name, title in stored if name == "alpha")
    assert json_receiver.received("/bing") == []  # no event of bing's: nothing to send


def test_crawlall_sends_one_batch_for_the_whole_process(scrapy_cmd, json_receiver, tmp_path):
    """The engine crawlers of one process share its batch: one message, every engine that found each event."""
    with FakeEngines(engines=("google", "bing")) as fakes:
        config = crawl_config(
            tmp_path,
            fakes,
            floor=0.2,
            engines=("google", "bing"),
            alerting={
                "digests": [
                    {"name": "everything", "every": "as_it_happens", "urls": [json_receiver.apprise_url("/all")]}
                ]
            },
        )
        result = scrapy_cmd("crawlall", "-a", "topics=alpha", "-a", "once=1", env={"TOPICSTREAMS_CONFIG": str(config)})
        assert result.returncode == 0, result.stderr[-3000:]

    with sqlite3.connect(tmp_path / "news.db") as conn:
        stored = dict(
            conn.execute(
                "SELECT n.title || ' — ' || n.source, group_concat(a.engine, ', ') FROM "
                "(SELECT * FROM topic_news_engines ORDER BY first_seen_at, engine) a "
                "JOIN news n ON n.id = a.news_id GROUP BY a.topic_id, a.news_id"
            ).fetchall()
        )
    assert any(", " in engines for engines in stored.values())  # some events were found by both
    [posted] = json_receiver.received("/all")
    lines = posted.body["message"].splitlines()
    shown = {lines[i][2:]: lines[i + 2].split("found by: ")[1] for i, line in enumerate(lines) if line.startswith("• ")}
    assert {title: set(engines.split(", ")) for title, engines in shown.items()} == {
        title: set(engines.split(", ")) for title, engines in stored.items()
    }


def test_sigterm_sends_the_pending_batch_before_the_crawl_exits(scrapy_cmd, json_receiver, tmp_path):
    """A continuous crawl stopped by SIGTERM: its batch (not a minute old yet) goes before it exits; its hourly
    digest was first seen when it started, so nothing of the history is due."""
    db = tmp_path / "news.db"
    with FakeEngines(engines=("google",)) as fakes:
        config = crawl_config(
            tmp_path,
            fakes,
            floor=0.2,
            topics=["alpha", "beta"],
            scraper={"scrape_interval": 4},
            alerting={
                "digests": [
                    {"name": "live", "every": "as_it_happens", "urls": [json_receiver.apprise_url("/live")]},
                    {"name": "hourly", "every": "hour", "urls": [json_receiver.apprise_url("/hourly")]},
                ]
            },
        )
        started = datetime.now(UTC)
        crawl = subprocess.Popen(
            [sys.executable, "-m", "scrapy", "crawl", "google"],
            cwd=tmp_path,
            env={**scrapy_cmd.env, "TOPICSTREAMS_CONFIG": str(config)},
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:

            def both_topics_stored() -> bool:
                if not db.exists():
                    return False
                try:
                    with sqlite3.connect(db) as conn:
                        return conn.execute("SELECT count(DISTINCT topic_id) FROM topic_news").fetchone()[0] == 2
                except sqlite3.OperationalError:  # the schema is not there yet
                    return False

            assert wait_for(both_topics_stored, timeout=60, interval=0.2)
            crawl.send_signal(signal.SIGTERM)
            _, err = crawl.communicate(timeout=60)
        finally:
            if crawl.poll() is None:
                crawl.kill()
        assert crawl.returncode == 0, err[-3000:]

    with sqlite3.connect(db) as conn:
        stored = [
            title for (title,) in conn.execute("SELECT n.title FROM topic_news e JOIN news n ON n.id = e.news_id")
        ]
        [(sent_until,)] = conn.execute("SELECT sent_until FROM digest_states WHERE name = 'hourly'").fetchall()
    [posted] = json_receiver.received("/live")
    assert sorted(titles(posted)) == sorted(stored)
    assert json_receiver.received("/hourly") == []
    assert started <= datetime.fromisoformat(sent_until).replace(tzinfo=UTC) <= datetime.now(UTC)
