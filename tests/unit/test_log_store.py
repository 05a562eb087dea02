"""The stored logs: masking, which records are kept and whose engine they are about, the sink's batches into real
SQLite files (through a locked database, the purge, a flood), the extension's one handler per process, and the read
(filters, paging by cursor, the bounded scan)."""

from __future__ import annotations

import asyncio
import base64
import logging
import sqlite3
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from scrapy import Spider
from scrapy.exceptions import NotConfigured
from scrapy.utils.test import get_crawler
from sqlalchemy import event

from tests.support.project import write_config
from topicstreams.config.loading import load_config
from topicstreams.config.secrets import Masker, mask
from topicstreams.crawl.runtime import Runtime
from topicstreams.extensions.log_store import LogStoreExtension, StoredLogHandler, engine_of
from topicstreams.extensions.timing import STORED
from topicstreams.storage import db as db_module
from topicstreams.storage import upgrade
from topicstreams.storage.batch_writes import Backoff
from topicstreams.storage.log_reads import LogCursor, LogCursorError, LogFilter, read_logs
from topicstreams.storage.log_records import LogSink, purge_logs, write_rows


def eventually(check, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "not within the timeout"
        time.sleep(0.02)


@pytest.fixture
def database(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A migrated SQLite file whose connections wait 0.1 s for a lock (not 30 s)."""
    monkeypatch.setattr(db_module, "SQLITE_BUSY_TIMEOUT_MS", 100)
    path = tmp_path / "logs.db"
    upgrade(f"sqlite:///{path}")
    return path


def url_of(path: Path) -> str:
    return f"sqlite:///{path}"


def stored(path: Path, where: str = "1=1") -> list[tuple]:
    with sqlite3.connect(path) as conn:
        return conn.execute(
            f"select node, engine, level, logger, message from scraper_logs where {where} order by id"
        ).fetchall()


def count(path: Path) -> int:
    with sqlite3.connect(path) as conn:
        return conn.execute("select count(*) from scraper_logs").fetchone()[0]


@pytest.fixture(autouse=True)
def _no_handler_left() -> Iterator[None]:
    """A test that ends with a handler still installed: taken off the root logger, its sink closed."""
    yield
    root = logging.getLogger()
    for handler in [h for h in root.handlers if isinstance(h, StoredLogHandler)]:
        root.removeHandler(handler)
        handler.sink.close(timeout=1.0)


class Exclusive:
    """Another connection holding the SQLite file's write lock until :meth:`end`."""

    def __init__(self, path: Path) -> None:
        self.conn = sqlite3.connect(path, isolation_level=None)
        self.conn.execute("BEGIN EXCLUSIVE")

    def end(self) -> None:
        self.conn.execute("ROLLBACK")
        self.conn.close()


def record(
    message: str, level: int = logging.WARNING, name: str = "topicstreams.middlewares.blocks", **extra
) -> logging.LogRecord:
    made = logging.LogRecord(name, level, __file__, 1, message, None, None)
    made.__dict__.update(extra)
    return made


# ---- masking -----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        ("proxy http://bob:hunter2@proxy.example:3128 refused", "proxy http://bob:***@proxy.example:3128 refused"),
        ("socks5://u:p4ss@10.0.0.1:1080 down", "socks5://u:***@10.0.0.1:1080 down"),
        (
            "db postgresql+psycopg://crawler:pw@db:5432/news away",
            "db postgresql+psycopg://crawler:***@db:5432/news away",
        ),
        ("header Authorization: Bearer eyJhbGciOi.J9x-y_z=", "header Authorization: Bearer ***"),
        ("sent bearer abc123 to the hook", "sent bearer *** to the hook"),
        ("Authorization: Basic dXNlcjpwYXNz", "Authorization: Basic ***"),
        ("GET https://hooks.example/x?token=abc123&page=2", "GET https://hooks.example/x?token=***&page=2"),
        ("api_key=zzz; access_token=yyy, ok", "api_key=***; access_token=***, ok"),
        ("https://x/?next=%2Fa%3Ftoken%3Dsecret1%26b", "https://x/?next=%2Fa%3Ftoken%3D***%26b"),
        # Nothing secret: kept as it is.
        (
            "[google] hard_block for topic 'x' (http://127.0.0.1:8000/search?q=x): status 429",
            "[google] hard_block for topic 'x' (http://127.0.0.1:8000/search?q=x): status 429",
        ),
        (
            "https://user@host/path monkey=1 sort_key=2 Basic settings",
            "https://user@host/path monkey=1 sort_key=2 Basic settings",
        ),
    ],
)
def test_secrets_in_urls_headers_and_queries_are_masked(message, expected):
    assert mask(message) == expected


def test_the_configuration_s_secrets_are_masked_wherever_they_appear(tmp_path):
    cfg = write_config(
        tmp_path,
        {
            "database": {"url": "postgresql+psycopg://crawler:db-Pa55word@db/news"},
            "web": {"admin_token": "adm1n-t0ken-xyz-0123", "metrics_token": "m3trics-token-456789"},
            "alerting": {"webhook_url": "https://hooks.example/services/T0KEN/abc"},
            "anti_detection": {"proxy": {"enabled": True, "proxies": ["http://bob:pr0xy pass@proxy:3128"]}},
        },
    )
    masker = Masker(load_config({"TOPICSTREAMS_CONFIG": str(cfg)}, environ={}).secrets())
    message = (
        "token adm1n-t0ken-xyz-0123, m3trics-token-456789, posted to https://hooks.example/services/T0KEN/abc; "
        "password db-Pa55word; proxy pass pr0xy%20pass and pr0xy+pass and pr0xy pass"
    )
    masked = masker.mask(message)
    for secret in ("adm1n-t0ken-xyz-0123", "m3trics-token-456789", "T0KEN", "db-Pa55word", "pr0xy"):
        assert secret not in masked, masked
    assert masked == ("token ***, ***, posted to ***; password ***; proxy pass *** and *** and ***")
    # Too short to mask as a plain string: "ab" stays in a word, a count stays a count.
    assert Masker(["ab", "7"]).mask("about 17 tabs") == "about 17 tabs"


# ---- which records, and their engine ----------------------------------------------------------------------------


class GoogleSpider(Spider):
    name = "google"


def test_a_record_s_engine_is_its_spider_then_its_logger_then_its_message():
    assert engine_of(record("anything", spider=GoogleSpider()), "anything") == "google"
    assert engine_of(record("x", name="bing"), "x") == "bing"  # a spider's own logger
    assert engine_of(record("x", name="topicstreams.engines.yahoo"), "x") == "yahoo"
    assert engine_of(record("[brave] cooling down"), "[brave] cooling down") == "brave"
    assert engine_of(record("[duckduckgo] no"), "[duckduckgo] no") is None
    assert engine_of(record("The database went away"), "The database went away") is None
    assert engine_of(record("[bing] x", spider=GoogleSpider()), "[bing] x") == "google"


@pytest.mark.parametrize(
    ("made", "kept"),
    [
        (record("a warning"), True),
        (record("an error", logging.ERROR), True),
        (record("critical", logging.CRITICAL), True),
        (record("info", logging.INFO), False),
        (record("debug", logging.DEBUG), False),
        (record("[google] swept 3 topics", logging.INFO, **STORED), True),
        (record("tgram://123:SECRET/ notified", logging.DEBUG, name="apprise"), False),
        (record("tgram://123:SECRET/ failed", logging.ERROR, name="apprise"), False),
        (record("failed", logging.WARNING, name="apprise.plugins.telegram"), False),
        (record("stored", logging.WARNING, name="appriser"), True),
        (record("log flood", logging.WARNING, name="topicstreams.storage.log_records"), False),
    ],
)
def test_warnings_and_marked_lines_are_kept_never_a_notification_library_s_or_the_store_s_own(made, kept):
    assert StoredLogHandler.wanted(made) is kept


# ---- the sink, on real SQLite files ------------------------------------------------------------------------------


def row(n: int, **values) -> dict:
    return {
        "at": datetime.now(UTC),
        "node": "node-a",
        "engine": "google",
        "level": "WARNING",
        "logger": "tests",
        "message": f"record {n}",
        **values,
    }


def test_records_are_written_in_batches_of_at_most_500_within_a_second(database, databases):
    url = url_of(database)
    inserts: list[int] = []
    event.listen(
        databases.of(url),
        "before_cursor_execute",
        lambda conn, cursor, statement, params, context, many: (
            inserts.append(len(params) if many else 1) if statement.startswith("INSERT INTO scraper_logs") else None
        ),
    )
    sink = LogSink(url, "node-a", rate=10_000, burst=10_000, db=databases.of(url))
    for n in range(1_200):
        sink.put(row(n))
    eventually(lambda: count(database) == 1_200, timeout=5)
    assert max(inserts) <= 500 and len(inserts) <= 4, inserts  # two full batches, then the rest within the second
    started = time.monotonic()
    sink.put(row(9_999))
    eventually(lambda: count(database) == 1_201, timeout=3)
    assert time.monotonic() - started <= 1.5  # FLUSH_SECONDS (1 s) and a little
    assert inserts[-1] == 1
    assert sink.close() and sink.stored == 1_201 and sink.dropped == 0
    assert [message for *_, message in stored(database)][:3] == ["record 0", "record 1", "record 2"]


def test_a_locked_database_keeps_the_records_in_memory_and_writes_them_once_back_without_logging_each_try(
    database, caplog, databases
):
    caplog.set_level(logging.DEBUG)
    sink = LogSink(
        url_of(database), "node-a", flush_seconds=0.05, backoff=Backoff(0.05, 0.2), db=databases.of(url_of(database))
    )
    sink.put(row(1))
    eventually(lambda: count(database) == 1)
    lock = Exclusive(database)
    for n in range(2, 8):
        sink.put(row(n))
    eventually(lambda: sink.away)
    time.sleep(0.8)  # several tries meanwhile
    assert sink.pending() == 6
    lock.end()
    eventually(lambda: count(database) == 7)
    assert not sink.away and sink.stored == 7 and sink.dropped == 0
    assert [message for *_, message in stored(database)] == [f"record {n}" for n in range(1, 8)]  # in order
    assert not [r for r in caplog.records if r.name == "topicstreams.storage.log_records"]  # no line per failed try
    sink.close()


def test_memory_stays_bounded_while_the_database_is_away_the_oldest_give_way(database, databases):
    sink = LogSink(
        url_of(database),
        "node-a",
        flush_seconds=0.01,
        max_queued=50,
        backoff=Backoff(0.05, 0.1),
        db=databases.of(url_of(database)),
    )
    lock = Exclusive(database)
    try:
        for n in range(120):
            sink.put(row(n))
        eventually(lambda: sink.away)
        assert sink.pending() <= 50
    finally:
        lock.end()
    eventually(lambda: sink.pending() == 0)
    assert sink.close()
    assert count(database) == sink.stored and sink.stored + sink.dropped == 120
    assert sink.dropped >= 70
    assert stored(database)[-1][-1] == "record 119"  # the newest kept


def test_closing_while_the_database_is_away_does_not_hold_up_the_end_and_counts_what_is_lost(database, databases):
    sink = LogSink(
        url_of(database), "node-a", flush_seconds=0.01, backoff=Backoff(0.05, 0.1), db=databases.of(url_of(database))
    )
    lock = Exclusive(database)
    try:
        for n in range(5):
            sink.put(row(n))
        eventually(lambda: sink.away)
        started = time.monotonic()
        assert not sink.close(timeout=10)
        assert time.monotonic() - started < 3  # one more try (and the write it waits on), not the 10 s asked
    finally:
        lock.end()
    assert (sink.stored, sink.dropped) == (0, 5) and count(database) == 0


def test_a_row_the_database_refuses_is_dropped_and_the_rest_of_its_batch_written(database, databases):
    sink = LogSink(url_of(database), "node-a", flush_seconds=0.05, db=databases.of(url_of(database)))
    sink.put(row(1))
    sink.put(row(2, level=None))  # NOT NULL: never passes
    sink.put(row(3))
    assert sink.close()
    assert [message for *_, message in stored(database)] == ["record 1", "record 3"]
    assert (sink.stored, sink.dropped) == (2, 1)


def test_rows_past_retention_are_purged_when_the_sink_starts(database, databases):
    url = url_of(database)
    now = datetime.now(UTC)
    write_rows(
        databases.of(url),
        [row(n, at=now - timedelta(days=40, seconds=n)) for n in range(7)]
        + [row(100, at=now - timedelta(days=29)), row(101, at=now)],
    )
    sink = LogSink(url, "node-a", retention_days=30, db=databases.of(url))
    sink.start()
    eventually(lambda: count(database) == 2)
    assert [message for *_, message in stored(database)] == ["record 100", "record 101"]
    sink.close()
    assert purge_logs(databases.of(url), now + timedelta(days=1), chunk=1) == 2  # chunk by chunk, to the end
    assert count(database) == 0


# ---- the handler, the extension --------------------------------------------------------------------------------


def crawler_for(tmp_path: Path, database: Path | None, runtime: Runtime | None = None, **settings):
    cfg = write_config(tmp_path, {"web": {"admin_token": "s3cret-admin-token-99"}}, "logs-config.yml")
    return get_crawler(
        GoogleSpider,
        {
            "TOPICSTREAMS_RUNTIME": runtime,
            "TOPICSTREAMS_CONFIG": str(cfg),
            "TOPICSTREAMS_LOGS_ENABLED": True,
            "TOPICSTREAMS_DATABASE_URL": url_of(database) if database else "",
            "TOPICSTREAMS_NODE_ID": "node-a",
            "TOPICSTREAMS_RETENTION_DAYS": 30,
            **settings,
        },
    )


def closed(extension: LogStoreExtension) -> None:
    """The spider_closed handler, run as Scrapy runs it (a coroutine on an event loop)."""
    asyncio.run(extension.spider_closed())


def test_the_extension_is_off_without_its_switch_or_a_database(tmp_path, database):
    with pytest.raises(NotConfigured, match="TOPICSTREAMS_LOGS_ENABLED is off"):
        LogStoreExtension.from_crawler(crawler_for(tmp_path, database, TOPICSTREAMS_LOGS_ENABLED=False))
    with pytest.raises(NotConfigured, match="TOPICSTREAMS_DATABASE_URL is empty"):
        LogStoreExtension.from_crawler(crawler_for(tmp_path, None))


def test_crawlers_of_one_process_share_one_handler_removed_and_flushed_by_the_last(tmp_path, database, caplog):
    caplog.set_level(logging.INFO)  # as Scrapy's logging lets INFO records through
    root = logging.getLogger()
    runtime = Runtime()  # one process
    google, bing = (LogStoreExtension.from_crawler(crawler_for(tmp_path, database, runtime)) for _ in range(2))
    before = list(root.handlers)
    google.spider_opened()
    bing.spider_opened()
    ours = [h for h in root.handlers if isinstance(h, StoredLogHandler)]
    assert len(ours) == 1 and google.handler is bing.handler is ours[0]
    log = logging.getLogger("topicstreams.tests.logs")
    log.warning("[bing] token s3cret-admin-token-99 via http://u:pw@proxy:1 failed")
    log.info("[google] swept 2 topics, 5 entries, 1 new events", extra=STORED)
    log.info("an ordinary info line")
    logging.getLogger("apprise").warning("tgram://bot:TOKEN/ failed")
    closed(google)
    assert google.handler is None and ours[0] in root.handlers  # bing still runs
    log.error("after the first closed")
    closed(bing)
    assert root.handlers == before
    assert stored(database) == [
        ("node-a", "bing", "WARNING", "topicstreams.tests.logs", "[bing] token *** via http://u:***@proxy:1 failed"),
        ("node-a", "google", "INFO", "topicstreams.tests.logs", "[google] swept 2 topics, 5 entries, 1 new events"),
        ("node-a", None, "ERROR", "topicstreams.tests.logs", "after the first closed"),
    ]
    assert bing.crawler.stats.get_value("topicstreams/logs/stored") == 3
    assert bing.crawler.stats.get_value("topicstreams/logs/dropped") == 0
    log.warning("after the last closed: not stored")
    assert count(database) == 3


def test_a_traceback_is_stored_with_its_message_and_a_nul_as_text(tmp_path, database):
    extension = LogStoreExtension.from_crawler(crawler_for(tmp_path, database))
    extension.spider_opened()
    try:
        raise ValueError("bad \x00 value")
    except ValueError:
        logging.getLogger("topicstreams.tests.logs").exception("it failed")
    closed(extension)
    (message,) = [message for *_, message in stored(database)]
    assert message.startswith("it failed\nTraceback (most recent call last):")
    assert message.endswith("ValueError: bad \\x00 value")


def test_a_flood_is_capped_counted_summarized_and_never_holds_up_the_logging_code(tmp_path, database):
    extension = LogStoreExtension.from_crawler(crawler_for(tmp_path, database))
    extension.spider_opened()
    sink = extension.handler.sink
    log = logging.getLogger("topicstreams.tests.flood")
    log.propagate = False  # this test measures our handler alone, not pytest's capture of 50,000 lines
    log.addHandler(extension.handler)
    # The database is held by another writer for the whole flood: a handler that waited for it (a write per
    # record, or a queue that blocks when full) would stop here; the logging code never waits for the database.
    holder = sqlite3.connect(database, isolation_level=None)
    holder.execute("begin exclusive")
    try:
        started = time.perf_counter()
        for n in range(50_000):
            log.warning("[google] flood %d for http://u:pw@h/", n)
        took = time.perf_counter() - started
        assert sink.dropped > 0  # the cap refused most of the flood while nothing could be written
    finally:
        holder.execute("rollback")
        holder.close()
        log.removeHandler(extension.handler)
        log.propagate = True
    admitted = 50_000 - sink.dropped
    assert 1_000 <= admitted <= 1_000 + 100 * took + 1  # the burst, and the rate over the time it took
    eventually(lambda: count(database) == admitted + 1, timeout=5)  # the summary, once a second passed without drops
    summary = stored(database, "logger = 'topicstreams.storage.log_records'")
    assert len(summary) == 1
    node, engine, level, _, message = summary[0]
    assert (node, engine, level) == ("node-a", None, "WARNING")
    assert message.startswith(f"log flood: {50_000 - admitted} record(s) not stored from ")
    assert "at most 100 a second are stored, in bursts of 1000" in message
    assert all(message.endswith("http://u:***@h/") for *_, message in stored(database, "engine = 'google'"))
    closed(extension)
    assert extension.crawler.stats.get_value("topicstreams/logs/dropped") == 50_000 - admitted
    assert extension.crawler.stats.get_value("topicstreams/logs/stored") == admitted + 1


# ---- reading ------------------------------------------------------------------------------------------------


T0 = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)


@pytest.fixture
def filled(database, databases) -> Path:
    """60 records, one a second from T0: engines in turn (every 5th none), levels in turn, nodes a/b."""
    engines = ["google", "bing", "yahoo", "brave", None]
    levels = ["WARNING", "INFO", "ERROR", "WARNING", "CRITICAL", "WARNING"]
    write_rows(
        databases.of(url_of(database)),
        [
            {
                "at": T0 + timedelta(seconds=n // 2),
                "node": "node-a" if n % 2 else "node-b",
                "engine": engines[n % 5],
                "level": levels[n % 6],
                "logger": "tests",
                "message": f"m{n} {'100%_done' if n % 7 == 0 else 'Plain'}",
            }
            for n in range(60)
        ],
    )
    return database


def read_all(databases, path: Path, filters: LogFilter, limit: int, scan_rows: int = 10_000) -> tuple[list[str], int]:
    db = databases.of(url_of(path))
    seen, pages, before = [], 0, None
    while True:
        page = read_logs(db, filters, limit=limit, before=before, scan_rows=scan_rows)
        pages += 1
        assert len(page.items) <= limit
        seen += [entry.message.split()[0] for entry in page.items]
        if page.next is None:
            return seen, pages
        before = LogCursor.decode(page.next.encode())


def expected(predicate) -> list[str]:
    engines = ["google", "bing", "yahoo", "brave", None]
    levels = ["WARNING", "INFO", "ERROR", "WARNING", "CRITICAL", "WARNING"]
    rank = {"DEBUG": 0, "INFO": 1, "WARNING": 2, "ERROR": 3, "CRITICAL": 4}
    rows = [(n, engines[n % 5], "node-a" if n % 2 else "node-b", levels[n % 6], rank[levels[n % 6]]) for n in range(60)]
    return [f"m{n}" for n, *rest in sorted(rows, key=lambda r: (r[0] // 2, r[0]), reverse=True) if predicate(*rest)]


@pytest.mark.parametrize("scan_rows", [10_000, 7])
@pytest.mark.parametrize(
    ("filters", "predicate"),
    [
        (LogFilter(), lambda e, node, level, rank: True),
        (LogFilter(engine="google"), lambda e, node, level, rank: e == "google"),
        (LogFilter(node="node-a"), lambda e, node, level, rank: node == "node-a"),
        (LogFilter(level="WARNING"), lambda e, node, level, rank: rank >= 2),
        (LogFilter(level="ERROR"), lambda e, node, level, rank: rank >= 3),
        (LogFilter(level="CRITICAL"), lambda e, node, level, rank: rank == 4),
        (LogFilter(level="DEBUG"), lambda e, node, level, rank: True),
        (
            LogFilter(engine="bing", node="node-a", level="WARNING"),
            lambda e, node, level, rank: e == "bing" and node == "node-a" and rank >= 2,
        ),
    ],
)
def test_every_filter_pages_newest_first_by_cursor_once_each(filled, filters, predicate, scan_rows, databases):
    seen, _ = read_all(databases, filled, filters, limit=4, scan_rows=scan_rows)
    assert seen == expected(predicate)


def test_the_text_is_a_plain_case_insensitive_substring(filled, databases):
    matching = [f"m{n}" for n in range(60) if n % 7 == 0]
    found, _ = read_all(databases, filled, LogFilter(text="100%_DONE"), limit=50)
    assert sorted(found) == sorted(matching)
    assert read_all(databases, filled, LogFilter(text="100__done"), limit=50)[0] == []  # "_" is not a wildcard
    assert read_all(databases, filled, LogFilter(text="%"), limit=50)[0] == found
    assert len(read_all(databases, filled, LogFilter(text="plain"), limit=50)[0]) == 60 - len(matching)


def test_a_scan_bounded_read_says_where_to_go_on_even_with_no_match_in_its_stretch(filled, databases):
    db = databases.of(url_of(filled))
    page = read_logs(db, LogFilter(text="m0 "), limit=10, scan_rows=5)  # m0 is the oldest record
    assert page.items == [] and page.next is not None
    found, pages = read_all(databases, filled, LogFilter(text="m0 "), limit=10, scan_rows=5)
    assert found == ["m0"] and pages == 12


def test_a_cursor_round_trips_and_a_forged_one_is_refused():
    cursor = LogCursor(T0, 42)
    assert LogCursor.decode(cursor.encode()) == cursor
    for forged in [
        "",
        "abc",
        "WyIyMDI2In0",
        LogCursor(T0, 1).encode()[:-3],
        "WyIyMDI2LTEyLTAxVDEyOjAwOjAwIiwgNDJd",  # a time without an offset
        "WyIyMDI2LTEyLTAxVDEyOjAwOjAwKzAwOjAwIiwgdHJ1ZV0",  # true as the id
        base64.urlsafe_b64encode(b'["0001-01-01T00:00:00+14:00",1]').decode(),
    ]:  # before the calendar
        with pytest.raises(LogCursorError):
            LogCursor.decode(forged)
