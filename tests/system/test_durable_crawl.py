"""Nothing scraped is lost when the database goes away: real crawls (real Chromium, the fake engines) into a real
PostgreSQL server that is shut down mid-crawl and started again, and into an SQLite file that another process
locks and whose folder turns unwritable; a crawl killed (SIGKILL) while the database is away, whose journal the
next start writes."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from sqlalchemy import create_engine, text

from fake_engines import FakeEngines
from tests.support.crawl_checks import crawl_config, expected_urls, topics
from tests.support.postgres_server import PostgresServer, PostgresUnavailable
from topicstreams import ENGINES

pytestmark = pytest.mark.timeout(420)

AWAY = "cannot be written"
"""The start of the one WARNING when the database goes away."""
BACK = "is back after"
"""The one INFO when all that was kept is written."""
OUTAGE = 30
"""Seconds the long outage lasts (the PostgreSQL server down, the SQLite file locked)."""
ONCE_FLOOR, LITE_FLOOR = 1.8, 1.9
"""The pacing floors of the long outage's once crawls, on PostgreSQL and on SQLite."""
SQLITE_BUSY = 5
"""Seconds an SQLite write waits for the lock in the long outage (its URL's ``timeout``; 30 s by default): well
inside the outage, so the writes meanwhile fail with 'database is locked'."""


@pytest.fixture(scope="module")
def fakes():
    with FakeEngines(engines=ENGINES) as engines:
        yield engines


@pytest.fixture(scope="module")
def server():
    """A server of this module's own: its tests shut it down."""
    try:
        with PostgresServer() as started:
            yield started
    except PostgresUnavailable as exc:
        pytest.skip(str(exc))


@pytest.fixture
def pg_url(server: PostgresServer, request: pytest.FixtureRequest) -> str:
    name = f"durable_{request.node.name[5:40].lower()}"
    url = server.create_database(name)
    yield url
    server.drop_database(name)


def stored(url: str) -> dict[tuple[str, str], list[str]]:
    """(engine, topic) → the URLs stored for it, each as often as it has a row."""
    db = create_engine(url)
    try:
        with db.connect() as conn:
            found: dict[tuple[str, str], list[str]] = {}
            for engine, topic, link in conn.execute(
                text(
                    "SELECT e.engine, t.name, n.url FROM topic_news_engines e JOIN topics t ON t.id = e.topic_id "
                    "JOIN news n ON n.id = e.news_id"
                )
            ):
                found.setdefault((engine, topic), []).append(link)
            return found
    finally:
        db.dispose()


def assert_all_stored_once(url: str, served: dict[str, list[str]]) -> None:
    """Every topic each engine was asked for has exactly the articles the fake engine serves for it, once."""
    found = stored(url)
    for engine, names in served.items():
        for name in names:
            links = found.get((engine, name), [])
            assert sorted(links) == sorted(expected_urls(engine, name)), (engine, name)


def background(scrapy_cmd, cfg: Path, log: Path, *args: str, env: dict | None = None) -> subprocess.Popen:
    """``scrapy ARGS`` in the background, its log into ``log`` (a pipe would fill up and stall it)."""
    handle = log.open("w")
    try:
        return subprocess.Popen(
            [sys.executable, "-m", "scrapy", *args],
            cwd=scrapy_cmd.folder,
            env={**scrapy_cmd.env, "TOPICSTREAMS_CONFIG": str(cfg), **(env or {})},
            stdout=handle,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
        )
    finally:
        handle.close()


def wait_for(
    check: Callable[[], bool],
    timeout: float,
    what: str,
    process: subprocess.Popen | None = None,
    log: Path | None = None,
) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if process is not None and process.poll() is not None:
            raise AssertionError(f"the crawl ended before {what}:\n{log.read_text()[-4000:] if log else ''}")
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {timeout} s: {what}\n{log.read_text()[-4000:] if log else ''}")
        time.sleep(0.1)


def requests_of(fakes: FakeEngines, engine: str = "google") -> int:
    return len(fakes.results_requests(engine))


def check_log(log: Path, *, outages: int = 1) -> str:
    """The log says the outage once and its end once, and holds no traceback."""
    output = log.read_text()
    assert "Traceback" not in output, output[-6000:]
    assert "Error caught on signal handler" not in output
    assert output.count(AWAY) == outages, output[-6000:]
    assert output.count(BACK) == outages, output[-6000:]
    return output


def config(
    folder: Path, fakes: FakeEngines, url: str, *, floor: float, engines=("google",), node: str = "node-a", **scraper
) -> Path:
    return crawl_config(
        folder,
        fakes,
        floor=floor,
        engines=engines,
        scraper={"max_pages": 1, **scraper},
        database={"url": url},
        node={"id": node},
        filename=f"{node}.yml",
    )


@pytest.fixture(autouse=True)
def fresh_fakes(fakes):
    fakes.reset()
    yield


def test_a_ten_second_outage_during_a_once_crawl_loses_nothing(scrapy_cmd, fakes, server, pg_url, tmp_path):
    names = topics(40).split(",")
    cfg = config(tmp_path, fakes, pg_url, floor=0.6)  # 40 topics in about 25 s
    log = tmp_path / "crawl.log"
    crawl = background(scrapy_cmd, cfg, log, "crawl", "google", "-a", f"topics={','.join(names)}", "-a", "once=1")
    try:
        wait_for(lambda: requests_of(fakes) >= 8, 90, "the 8th request", crawl, log)
        server.halt()
        away_at = requests_of(fakes)
        time.sleep(10)
        served_meanwhile = requests_of(fakes) - away_at
        server.resume()
        assert crawl.wait(timeout=180) == 0, log.read_text()[-4000:]
    finally:
        if crawl.poll() is None:
            crawl.kill()
        if not server._running:
            server.resume()
    assert served_meanwhile >= 5  # the crawl went on while the database was away
    output = check_log(log)
    assert "nothing is lost" in output and "topicstreams/store/journaled" in output
    assert_all_stored_once(pg_url, {"google": names})
    journal = tmp_path / "profiles" / "node-a" / "journal" / "google.jsonl"
    assert journal.exists() and journal.stat().st_size == 0  # all of it written
    # The health and cycle rows written during the outage were kept and written too.
    db = create_engine(pg_url)
    try:
        with db.connect() as conn:
            swept = conn.execute(
                text(
                    "SELECT sum(topics_count), sum(requests) FROM scraper_cycles "
                    "WHERE engine = 'google' AND node = 'node-a'"
                )
            ).one()
            windows = conn.execute(text("SELECT sum(requests) FROM health_windows WHERE engine = 'google'")).scalar()
    finally:
        db.dispose()
    assert tuple(swept) == (40, 40) and windows == 40


def immutable(paths: list[Path], on: bool) -> None:
    """``chattr ±i``: the files and folder cannot be written, even by root (permissions do not stop root)."""
    for path in paths:
        result = subprocess.run(["chattr", "+i" if on else "-i", str(path)], capture_output=True, text=True)
        if result.returncode != 0 and on:
            pytest.skip(f"cannot make {path} unwritable here: {result.stderr.strip()}")


def test_a_long_outage_of_the_database_on_postgresql_and_on_sqlite_loses_nothing(
    scrapy_cmd, fakes, server, pg_url, tmp_path
):
    """Three crawls at once, for the long outage's sake (the test waits it out once): on PostgreSQL, a once crawl of
    24 topics (node-a) and continuous crawls of the four engines (crawlall, node-b), the server shut down for
    OUTAGE s; on SQLite, a once crawl of 32 topics against a fake engine of its own, the file locked by another
    process as long (six times its busy timeout), then its folder made unwritable for a few seconds."""
    once_topics = topics(24).split(",")
    lite_topics = topics(32).split(",")
    # 24 topics in about 43 s: the outage falls inside it. Tries every 3 s at most (not 15): the test waits less.
    quick = ("-s", "TOPICSTREAMS_STORE_RETRY_MAX=3")
    once_cfg = config(tmp_path, fakes, pg_url, floor=ONCE_FLOOR, node="node-a")
    standing = ["s0", "s1", "s2"]
    all_cfg = crawl_config(
        tmp_path,
        fakes,
        floor=0.5,
        engines=ENGINES,
        scraper={"max_pages": 1, "scrape_interval": 8},
        database={"url": pg_url},
        node={"id": "node-b"},
        topics=standing,
        filename="node-b.yml",
    )
    folder = tmp_path / "data"
    folder.mkdir()
    database = folder / "news.db"
    # The folder, the database and its write-ahead log made unwritable; not the shared-memory index, which SQLite
    # maps into memory (a write to a mapping of an immutable file kills the process with SIGBUS: no database does
    # that to its users).
    unwritable = [database, folder / "news.db-wal", folder]
    logs = {name: tmp_path / f"{name}.log" for name in ("once", "crawlall", "sqlite")}
    with FakeEngines(engines=("google",)) as own:
        lite_cfg = config(
            tmp_path, own, f"sqlite:///{database}?timeout={SQLITE_BUSY}", floor=LITE_FLOOR, node="node-c"
        )  # 32 topics in 61 s: past the outage, the catching up and the 6 s
        crawls = {
            "once": background(
                scrapy_cmd,
                once_cfg,
                logs["once"],
                "crawl",
                "google",
                "-a",
                f"topics={','.join(once_topics)}",
                "-a",
                "once=1",
                *quick,
            ),
            "crawlall": background(scrapy_cmd, all_cfg, logs["crawlall"], "crawlall", *quick),
            "sqlite": background(
                scrapy_cmd,
                lite_cfg,
                logs["sqlite"],
                "crawl",
                "google",
                "-a",
                f"topics={','.join(lite_topics)}",
                "-a",
                "once=1",
                *quick,
            ),
        }
        locker = None
        try:
            wait_for(
                lambda: (
                    requests_of(fakes) >= 4
                    and all(requests_of(fakes, engine) >= 1 for engine in ENGINES)
                    and requests_of(own) >= 2
                ),
                120,
                "the crawls at work",
                crawls["once"],
                logs["once"],
            )
            server.halt()
            locker = sqlite3.connect(database, isolation_level=None)
            locker.execute("BEGIN EXCLUSIVE")  # another process holds the write lock
            before = {engine: requests_of(fakes, engine) for engine in ENGINES} | {"sqlite": requests_of(own)}
            time.sleep(OUTAGE)
            served = {engine: requests_of(fakes, engine) - before[engine] for engine in ENGINES} | {
                "sqlite": requests_of(own) - before["sqlite"]
            }
            server.resume()
            locker.execute("COMMIT")
            locker.close()
            locker = None

            wait_for(
                lambda: logs["sqlite"].read_text().count(BACK) == 1,
                60,
                "the lock's items written",
                crawls["sqlite"],
                logs["sqlite"],
            )
            immutable(unwritable, True)
            unwritable_at = requests_of(own)
            time.sleep(6)
            served["unwritable"] = requests_of(own) - unwritable_at
            immutable(unwritable, False)

            assert crawls["once"].wait(timeout=240) == 0, logs["once"].read_text()[-4000:]
            wait_for(
                lambda: logs["crawlall"].read_text().count(BACK) == 1,
                90,
                "crawlall catching up",
                crawls["crawlall"],
                logs["crawlall"],
            )
            time.sleep(2)  # a sweep under way when it caught up
            crawls["crawlall"].send_signal(signal.SIGTERM)
            assert crawls["crawlall"].wait(timeout=120) == 0, logs["crawlall"].read_text()[-4000:]
            assert crawls["sqlite"].wait(timeout=240) == 0, logs["sqlite"].read_text()[-4000:]
        finally:
            immutable(unwritable, False)
            if locker is not None:
                locker.close()
            for process in crawls.values():
                if process.poll() is None:
                    process.kill()
            if not server._running:
                server.resume()
    # Every crawl went on while the database was away, at its pace: nine tenths of what the floor allows over the
    # outage on PostgreSQL (the once crawl's; crawlall's google comes on top), two thirds on SQLite.
    assert served["google"] >= 0.9 * OUTAGE / ONCE_FLOOR and all(served[engine] >= 3 for engine in ENGINES), served
    assert served["sqlite"] >= 2 / 3 * OUTAGE / LITE_FLOOR, served
    assert served["unwritable"] >= 2, served
    check_log(logs["once"])
    check_log(logs["crawlall"])
    lite = check_log(logs["sqlite"], outages=2)
    assert "database is locked" in lite and "disk I/O error" in lite
    assert_all_stored_once(
        pg_url, {"google": once_topics + standing, **{engine: standing for engine in ENGINES if engine != "google"}}
    )
    assert_all_stored_once(f"sqlite:///{database}", {"google": lite_topics})


def test_a_crawl_killed_while_the_database_is_away_leaves_a_journal_the_next_start_writes_once(
    scrapy_cmd, fakes, server, pg_url, tmp_path
):
    names = topics(12).split(",")
    cfg = config(tmp_path, fakes, pg_url, floor=0.3)
    log = tmp_path / "crawl.log"
    crawl = background(scrapy_cmd, cfg, log, "crawl", "google", "-a", f"topics={','.join(names)}", "-a", "once=1")
    journal = tmp_path / "profiles" / "node-a" / "journal" / "google.jsonl"
    try:
        wait_for(lambda: requests_of(fakes) >= 2, 90, "the 2nd request", crawl, log)
        server.halt()
        wait_for(
            lambda: journal.exists() and journal.read_bytes().count(b"\n") >= 20, 60, "items journaled", crawl, log
        )
        os.kill(crawl.pid, signal.SIGKILL)
        crawl.wait(timeout=30)
        journaled = journal.read_bytes().count(b"\n")
        served_before_kill = requests_of(fakes)
    finally:
        if crawl.poll() is None:
            crawl.kill()
        server.resume()
    before = stored(pg_url)
    health = scrapy_cmd("health", env={"TOPICSTREAMS_CONFIG": str(cfg)})
    assert f"journal: {journal.resolve()}" in health.stdout or f"journal: {journal}" in health.stdout, health.stdout

    # The next start (a one-off topic nobody served before) writes the journal before anything else.
    fakes.reset()
    again = scrapy_cmd(
        "crawl", "google", "-a", "topics=later", "-a", "once=1", env={"TOPICSTREAMS_CONFIG": str(cfg)}, timeout=180
    )
    assert again.returncode == 0, again.stderr[-4000:]
    assert "left in the journal" in again.stderr and "Traceback" not in again.stderr
    assert journal.read_bytes() == b""
    after = stored(pg_url)
    served = names[:served_before_kill]
    journaled_topics = {topic for (_, topic) in after} - {topic for (_, topic) in before} - {"later"}
    assert journaled_topics  # what was journaled is stored now
    assert_all_stored_once(pg_url, {"google": [*sorted(journaled_topics), "later"]})
    assert set(journaled_topics) <= set(served) and journaled >= 20


def test_db_replay_writes_this_nodes_journals_leaves_a_held_one_and_tries_a_reject_file_again(scrapy_cmd, tmp_path):
    import json

    from tests.support.project import write_config
    from tests.unit.test_durable_store import item
    from topicstreams.storage.journal import Journal, encode

    cfg = write_config(
        tmp_path,
        {"database": {"url": "sqlite:///news.db"}, "node": {"id": "n1"}, "browser": {"profile_dir": "profiles"}},
    )
    env = {"TOPICSTREAMS_CONFIG": str(cfg)}
    folder = tmp_path / "profiles" / "n1" / "journal"
    with Journal(folder / "google.jsonl") as journal:
        journal.append([item(n) for n in range(5)])
    with Journal(folder / "bing.jsonl") as journal:
        journal.append([item(n, engine="bing") for n in range(2)])
    (folder / "brave.rejected.jsonl").write_bytes(encode(item(9, engine="brave"), reason="value too long"))

    health = scrapy_cmd("health", "--json", env=env)
    assert sorted(
        (entry["path"].rsplit("/", 1)[1], entry["kind"], entry["items"])
        for entry in json.loads(health.stdout)["journal"]
    ) == [("bing.jsonl", "journal", 2), ("brave.rejected.jsonl", "rejects", 1), ("google.jsonl", "journal", 5)]
    table = scrapy_cmd("health", env=env).stdout
    assert "journal: " in table and "google.jsonl holds 5 item(s) not yet in the database" in table
    assert "brave.rejected.jsonl holds 1 item(s) the database refused" in table

    with Journal(folder / "bing.jsonl"):  # a running crawl of bing holds its journal
        replay = scrapy_cmd("db", "replay", env=env)
    assert replay.returncode == 1
    assert "google.jsonl: 5 item(s) written (5 new articles, 5 new feed events)" in replay.stdout
    assert "bing.jsonl is held by another process" in replay.stderr and "left to it" in replay.stderr
    assert "brave" not in replay.stdout  # a reject file is tried again only when named
    replay = scrapy_cmd("db", "replay", env=env)
    assert replay.returncode == 0 and "bing.jsonl: 2 item(s) written" in replay.stdout, replay.stderr
    assert "nothing to replay" in scrapy_cmd("db", "replay", env=env).stdout

    again = scrapy_cmd("db", "replay", str(folder / "brave.rejected.jsonl"), env=env)
    assert again.returncode == 0 and "1 item(s) written" in again.stdout, again.stderr
    assert (folder / "brave.rejected.jsonl").read_bytes() == b""
    assert "journal" not in json.loads(scrapy_cmd("health", "--json", env=env).stdout)
    with sqlite3.connect(tmp_path / "news.db") as conn:
        assert conn.execute(
            "SELECT engine, count(*) FROM topic_news_engines GROUP BY engine ORDER BY engine"
        ).fetchall() == [("bing", 2), ("brave", 1), ("google", 5)]

    missing = scrapy_cmd("db", "replay", str(tmp_path / "nowhere.jsonl"), env=env)
    assert missing.returncode == 2 and "no such journal or folder" in missing.stderr


def test_a_crawl_refuses_to_start_in_one_line_when_the_database_cannot_be_reached(scrapy_cmd, tmp_path):
    from tests.support.project import write_config

    cfg = write_config(
        tmp_path,
        {
            "database": {"url": "postgresql+psycopg://crawler:s3cret@127.0.0.1:9/news"},
            "browser": {"profile_dir": "profiles"},
        },
    )
    result = scrapy_cmd("crawl", "google", "-a", "once=1", "-a", "topics=x", env={"TOPICSTREAMS_CONFIG": str(cfg)})
    assert result.returncode == 1
    [line] = [line for line in result.stderr.splitlines() if line.startswith("could not start")]
    assert "the database postgresql+psycopg://crawler:***@127.0.0.1:9/news cannot be reached" in line
    assert "Connection refused" in line and "nothing is crawled until it answers" in line
    assert "Traceback" not in result.stderr and "s3cret" not in result.stderr


def test_scrapy_health_without_its_database_says_why_exits_3_and_still_lists_the_journal(scrapy_cmd, tmp_path):
    from tests.support.project import write_config
    from tests.unit.test_durable_store import item
    from topicstreams.storage.journal import Journal

    cfg = write_config(
        tmp_path,
        {
            "database": {"url": "postgresql+psycopg://crawler:s3cret@127.0.0.1:9/news"},
            "node": {"id": "n1"},
            "browser": {"profile_dir": "profiles"},
        },
    )
    with Journal(tmp_path / "profiles" / "n1" / "journal" / "google.jsonl") as journal:
        journal.append([item(1), item(2)])
    result = scrapy_cmd("health", env={"TOPICSTREAMS_CONFIG": str(cfg)})
    assert result.returncode == 3, result.stderr[-3000:]
    lines = result.stderr.splitlines()
    assert lines[0].startswith(
        "cannot read the health from the database postgresql+psycopg://crawler:***@127.0.0.1:9/news: OperationalError"
    )
    assert any(line.startswith("journal: ") and "google.jsonl holds 2 item(s)" in line for line in lines)
    assert "Traceback" not in result.stderr and "s3cret" not in result.stderr
