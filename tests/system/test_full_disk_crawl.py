"""A full journal disk while the database is away: real crawls (real Chromium, the fake engines) into a real
PostgreSQL server that is shut down and started again, each node's journal on a real small tmpfs filled up.

One run, shared by the tests: a once crawl of google (node-a) and a continuous crawl of bing (node-b) at once. When
the server stops and the journals' disks are full, both engines are held (one ERROR each) and scrape nothing more.
The continuous crawl is stopped (SIGTERM) while held: it exits non-zero and says how many items it lost, sends the
``data_loss`` alert and keeps the loss beside its journal; its next start records it and ``scrapy health`` lists it.
The once crawl goes on by itself when the server is back and stores every article served."""

from __future__ import annotations

import json
import re
import signal
import time
from types import SimpleNamespace

import pytest

from fake_engines import FakeEngines
from tests.support.alert_receivers import JsonReceiver
from tests.support.crawl_checks import crawl_config, expected_urls, topics
from tests.support.postgres_server import PostgresServer, PostgresUnavailable
from tests.support.project import ScrapyRunner
from tests.support.small_disk import fill, small_disk
from tests.system.test_durable_crawl import background, requests_of, stored, wait_for

pytestmark = pytest.mark.timeout(300)

HELD = "takes no new topic until the journal or the database takes items again"
"""The hold's ERROR."""
RELEASED = "takes topics again"
"""The hold's end (INFO)."""
LOST_LINE = re.compile(r"\[bing\] (\d+) item\(s\) lost: ")
QUICK = ("-s", "TOPICSTREAMS_STORE_RETRY_MAX=1", "-s", "TOPICSTREAMS_STORE_CLOSE_TIMEOUT=3")
TOPICS = 14
FLOOR = 1.0


def served_topics(fakes: FakeEngines, engine: str) -> set[str]:
    return {entry["query"].get("q") for entry in fakes.results_requests(engine)} - {None}


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    folder = tmp_path_factory.mktemp("full_disk")
    scrapy_cmd = ScrapyRunner(folder)
    receiver = JsonReceiver().start()
    try:
        with (
            PostgresServer() as server,
            FakeEngines(engines=("google", "bing")) as fakes,
            small_disk(folder / "profiles" / "node-a" / "journal", 64) as disk_a,
            small_disk(folder / "profiles" / "node-b" / "journal", 64) as disk_b,
        ):
            url = server.create_database("full_disk")
            names = topics(TOPICS).split(",")
            common = {"floor": FLOOR, "database": {"url": url}}
            cfg_a = crawl_config(folder, fakes, engines=("google",), node={"id": "node-a"}, filename="a.yml", **common)
            cfg_b = crawl_config(  # the topics staggered over the interval: each once before the stop
                folder,
                fakes,
                engines=("bing",),
                node={"id": "node-b"},
                scraper={"max_pages": 1, "scrape_interval": TOPICS * FLOOR * 1.5},
                alerting={"webhook_url": receiver.http_url("/hook")},
                filename="b.yml",
                **common,
            )
            logs = {name: folder / f"{name}.log" for name in ("once", "continuous", "next")}
            once = background(
                scrapy_cmd, cfg_a, logs["once"], "crawl", "google", "-a", f"topics={','.join(names)}", "-a", "once=1",
                *QUICK,
            )  # fmt: skip
            continuous = background(
                scrapy_cmd, cfg_b, logs["continuous"], "crawl", "bing", "-a", f"topics={','.join(names)}", *QUICK
            )
            try:
                wait_for(
                    lambda: requests_of(fakes, "google") >= 3 and requests_of(fakes, "bing") >= 3,
                    90,
                    "both crawls at work",
                    once,
                    logs["once"],
                )
                for disk in (disk_a, disk_b):
                    fill(disk, leave=8192)  # room for about two pages of items
                server.halt()
                for name in ("once", "continuous"):
                    wait_for(lambda name=name: HELD in logs[name].read_text(), 60, f"the {name} crawl held")
                held_at = {engine: requests_of(fakes, engine) for engine in ("google", "bing")}
                time.sleep(3)
                stalled = {engine: requests_of(fakes, engine) - held_at[engine] for engine in held_at}
                continuous.send_signal(signal.SIGTERM)
                wait_for(lambda: "item(s) lost" in logs["continuous"].read_text(), 60, "the loss counted")
                server.resume()  # the store has closed: what it lost is lost; the rest of the close is quicker
                continuous_code = continuous.wait(timeout=90)
                following = background(
                    scrapy_cmd, cfg_b, logs["next"], "crawl", "bing", "-a", "topics=later", "-a", "once=1"
                )
                once_code = once.wait(timeout=180)
                next_code = following.wait(timeout=120)
            finally:
                for process in (once, continuous):
                    if process.poll() is None:
                        process.kill()
                if not server._running:
                    server.resume()
            health = scrapy_cmd("health", "--json", env={"TOPICSTREAMS_CONFIG": str(cfg_b)})
            table = scrapy_cmd("health", env={"TOPICSTREAMS_CONFIG": str(cfg_b)})
            yield SimpleNamespace(
                url=url,
                names=names,
                logs={name: path.read_text() for name, path in logs.items()},
                codes={"once": once_code, "continuous": continuous_code, "next": next_code},
                stalled=stalled,
                served={engine: served_topics(fakes, engine) for engine in ("google", "bing")},
                stored=stored(url),
                health=health,
                table=table,
                alerts=[posted.body for posted in receiver.received("/hook")],
                lost_file=disk_b / "bing.lost",
            )
    except PostgresUnavailable as exc:
        pytest.skip(str(exc))
    finally:
        receiver.stop()


def lost_count(log: str) -> int:
    [found] = LOST_LINE.findall(log)
    return int(found)


def test_both_engines_are_held_while_nothing_can_keep_their_items(run):
    for name in ("once", "continuous"):
        log = run.logs[name]
        assert log.count(HELD) == 1, log[-6000:]
        assert "No space left on device" in log
    assert all(count <= 1 for count in run.stalled.values()), run.stalled  # at most the page under way


def test_the_once_crawl_goes_on_by_itself_and_stores_every_article_served(run):
    log = run.logs["once"]
    assert run.codes["once"] == 0, log[-6000:]
    assert log.count(RELEASED) == 1 and "Traceback" not in log
    assert run.served["google"] == set(run.names)
    for name in run.names:
        assert sorted(run.stored.get(("google", name), [])) == sorted(expected_urls("google", name)), name


def test_the_continuous_crawl_stopped_while_held_exits_non_zero_and_counts_every_item_it_did_not_keep(run):
    log = run.logs["continuous"]
    assert run.codes["continuous"] == 1, log[-6000:]
    lost = lost_count(log)
    assert lost > 0 and f"items lost: {lost} of bing" in log
    assert f"'topicstreams/store/lost': {lost}" in log
    assert "nothing is lost" not in log.split(HELD)[1]  # never said once items waited in memory alone
    # Every article served is stored (what the journal kept, written by the next start) or counted as lost.
    missing = {
        url
        for name in run.served["bing"] - {"later"}
        for url in expected_urls("bing", name) - set(run.stored.get(("bing", name), []))
    }
    assert len(missing) == lost


def test_the_loss_is_alerted_recorded_by_the_next_start_and_listed_by_health(run):
    lost = lost_count(run.logs["continuous"])
    [alert] = [body for body in run.alerts if body.get("event") == "data_loss"]
    assert alert["node"] == "node-b" and f"{lost} scraped item(s)" in alert["text"]
    assert run.codes["next"] == 0 and f"recorded {lost} item(s) an earlier run lost" in run.logs["next"]
    assert json.loads(run.health.stdout)["lost"]["items"] == lost
    assert f"lost: {lost} item(s) in the last 7 days" in run.table.stdout
