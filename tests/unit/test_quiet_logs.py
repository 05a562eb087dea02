"""A terminal a person can read (issue 34, item 5): what goes down to DEBUG and stays one ``-s LOG_LEVEL=DEBUG`` away,
one WARNING per cooldown with the failure that started it, the process's start and end lines, the URL said again by
``make run``'s supervisor, and counts in English. (The whole of it, two minutes of ``make run`` offline:
tests/system/test_quiet_terminal.py.)"""

from __future__ import annotations

import io
import logging
from types import SimpleNamespace

import pytest
from scrapy import Request
from scrapy.settings import Settings
from scrapy.signalmanager import SignalManager
from scrapy.utils.log import log_scrapy_info
from scrapy.utils.test import get_crawler
from twisted.internet.error import ConnectionRefusedError as Refused

from topicstreams.cli.crawl_summary import STARTED, StartedLine, summary
from topicstreams.cli.log_levels import DEMOTED, STATS_LOGGER, DemoteToDebug, quiet_library_logs
from topicstreams.cli.together import Together
from topicstreams.crawl import meta as keys
from topicstreams.crawl.signals import engine_starting
from topicstreams.middlewares.blocks import BlocksMiddleware
from topicstreams.spiders.google import GoogleSpider
from topicstreams.text.counts import counted, elapsed


@pytest.fixture
def demotions():
    """The demotions installed for the test, and taken off after it (they are the process's)."""
    yield quiet_library_logs
    for name in [*DEMOTED, STATS_LOGGER]:
        target = logging.getLogger(name)
        for old in [f for f in target.filters if isinstance(f, DemoteToDebug)]:
            target.removeFilter(old)


@pytest.fixture
def terminal():
    """Two root handlers as Scrapy sets one up: at INFO (the default) and at DEBUG (``-s LOG_LEVEL=DEBUG``)."""
    streams = {}
    handlers = []
    for level in (logging.INFO, logging.DEBUG):
        streams[level] = io.StringIO()
        handler = logging.StreamHandler(streams[level])
        handler.setLevel(level)
        handler.setFormatter(logging.Formatter("%(levelname)s [%(name)s] %(message)s"))
        logging.root.addHandler(handler)
        handlers.append(handler)
    before = logging.root.level
    logging.root.setLevel(logging.NOTSET)  # as Scrapy's configure_logging: the handlers choose
    yield streams
    logging.root.setLevel(before)
    for handler in handlers:
        logging.root.removeHandler(handler)


def test_scrapys_start_up_lists_and_minute_lines_go_down_to_debug_and_the_rest_stays(demotions, terminal):
    demotions(Settings())
    log_scrapy_info(Settings())  # Scrapy's own: "Scrapy 2.x started", the versions table
    logging.getLogger("scrapy.middleware").info("Enabled extensions:\n%s", "['a', 'b']")
    logging.getLogger("scrapy.crawler").info("Overridden settings:\n%s", "{}")
    logging.getLogger("scrapy.crawler").info("Received SIGINT, shutting down gracefully. Send again to force ")
    logging.getLogger("scrapy.extensions.logstats").info("Crawled 0 pages (at 0 pages/min)")
    logging.getLogger("scrapy.core.engine").info("Spider opened")
    logging.getLogger("scrapy.core.engine").info("Spider closed (%(reason)s)", {"reason": "shutdown"})
    logging.getLogger("scrapy-playwright").info("Starting download handler")
    logging.getLogger("scrapy-playwright").warning("the browser went away")
    logging.getLogger("alembic.runtime.migration").info("Context impl SQLiteImpl.")
    logging.getLogger("alembic.runtime.migration").info("Running upgrade a -> b")
    logging.getLogger(STATS_LOGGER).info("Dumping Scrapy stats:\n%s", "{'x': 1}")

    at_info = terminal[logging.INFO].getvalue()
    assert at_info.splitlines() == [
        "INFO [scrapy.crawler] Received SIGINT, shutting down gracefully. Send again to force ",
        "INFO [scrapy.core.engine] Spider closed (shutdown)",
        "WARNING [scrapy-playwright] the browser went away",
        "INFO [alembic.runtime.migration] Running upgrade a -> b",
        "INFO [scrapy.statscollectors] Dumping Scrapy stats:",  # scrapy crawl: its one dump stays
        "{'x': 1}",
    ]
    at_debug = terminal[logging.DEBUG].getvalue()  # one -s LOG_LEVEL=DEBUG away, as DEBUG lines
    for line in (
        "DEBUG [scrapy.utils.log] Versions:",
        "DEBUG [scrapy.middleware] Enabled extensions:",
        "DEBUG [scrapy.crawler] Overridden settings:",
        "DEBUG [scrapy.extensions.logstats] Crawled 0 pages (at 0 pages/min)",
        "DEBUG [scrapy.core.engine] Spider opened",
        "DEBUG [scrapy-playwright] Starting download handler",
        "DEBUG [alembic.runtime.migration] Context impl SQLiteImpl.",
    ):
        assert line in at_debug, (line, at_debug)
    assert "Scrapy " in at_debug and " started (bot: scrapybot)" in at_debug


@pytest.mark.parametrize(
    ("setting", "command", "dumped_at_info"),
    [("", "INFO", True), ("", "DEBUG", False), ("INFO", "DEBUG", True), ("debug", "INFO", False)],
)
def test_the_stats_dump_goes_down_where_the_command_or_the_setting_says(
    demotions, terminal, setting, command, dumped_at_info
):
    demotions(Settings({"TOPICSTREAMS_STATS_DUMP_LEVEL": setting}), command)
    logging.getLogger(STATS_LOGGER).info("Dumping Scrapy stats:\n%s", "{'x': 1}")
    assert ("Dumping Scrapy stats" in terminal[logging.INFO].getvalue()) is dumped_at_info
    assert "Dumping Scrapy stats" in terminal[logging.DEBUG].getvalue()


def test_uvicorns_life_cycle_lines_go_where_its_own_info_handler_does_not_show_them(demotions):
    demotions()
    uvicorn = logging.getLogger("uvicorn.error")
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)  # as uvicorn's own: no level of its own, the logger's is INFO
    uvicorn.addHandler(handler)
    uvicorn.setLevel(logging.INFO)
    uvicorn.propagate = False
    try:
        uvicorn.info("Started server process [%d]", 1)
        uvicorn.info("Application startup complete.")
        uvicorn.error("could not bind")
    finally:
        uvicorn.removeHandler(handler)
        uvicorn.setLevel(logging.NOTSET)
        uvicorn.propagate = True
    assert stream.getvalue() == "could not bind\n"


def test_quieting_twice_puts_one_filter_on_each_logger(demotions):
    demotions()
    demotions()
    for name in DEMOTED:
        assert len([f for f in logging.getLogger(name).filters if isinstance(f, DemoteToDebug)]) == 1


def test_a_failure_that_benches_the_engine_is_one_warning_with_its_cooldown(caplog):
    crawler = get_crawler(
        GoogleSpider,
        {
            "TOPICSTREAMS_ENGINES": {"google": {"base_url": "http://127.0.0.1:9", "freshness": "hour"}},
            "TOPICSTREAMS_COOLDOWN": {"initial": 60, "factor": 2, "max": 3600},
        },
    )
    crawler.spider = GoogleSpider.from_crawler(crawler)
    middleware = BlocksMiddleware.from_crawler(crawler)
    with caplog.at_level(logging.DEBUG, logger="topicstreams.middlewares.blocks"):
        for probe in (False, True):  # refused, then its probe refused too
            meta = {keys.ENGINE: "google", keys.TOPIC: "alpha", keys.PAGE: 0, keys.PROBE: probe}
            middleware.process_exception(Request("http://127.0.0.1:9/search?q=alpha", meta=meta), Refused())
    failure = "[google] hard_block for topic 'alpha' (http://127.0.0.1:9/search?q=alpha): ConnectionRefusedError; "
    assert [(r.levelno, r.getMessage()) for r in caplog.records] == [
        (
            logging.WARNING,
            failure + "cooling down for 60 s (1 in a row): nothing goes to it until then, then one probe",
        ),
        (
            logging.WARNING,
            failure + "cooling down for 120 s (2 in a row): nothing goes to it until then, then one probe",
        ),
    ]


def test_crawl_started_is_said_once_when_every_engine_has_started(caplog):
    crawlers = [SimpleNamespace(spidercls=SimpleNamespace(name=n), signals=SignalManager()) for n in ("google", "bing")]
    StartedLine(crawlers)  # kept by the signals alone, as crawlall leaves it
    with caplog.at_level(logging.INFO, logger="topicstreams.cli.crawl_summary"):
        crawlers[1].signals.send_catch_log(signal=engine_starting, engine="bing")
        assert not caplog.records
        crawlers[0].signals.send_catch_log(signal=engine_starting, engine="google")
        crawlers[0].signals.send_catch_log(signal=engine_starting, engine="google")
    assert [r.getMessage() for r in caplog.records] == [f"{STARTED}google, bing"]


class Stats(dict):
    def get_value(self, key, default=None):
        return self.get(key, default)


def test_the_summary_is_one_line_for_the_whole_process_in_words():
    google = Stats(
        {
            "start_time": 1,
            "finish_reason": "shutdown",
            "elapsed_time_seconds": 116.4,
            "topicstreams/google/requests": 1,
            "topicstreams/google/ok": 1,
            "topicstreams/google/items_scraped": 1,
            "topicstreams/google/new_events": 1,
        }
    )
    bing = Stats({"start_time": 1, "finish_reason": "shutdown", "elapsed_time_seconds": 115.0})
    crawlers = [
        SimpleNamespace(spidercls=SimpleNamespace(name=n), stats=s) for n, s in (("google", google), ("bing", bing))
    ]
    assert summary(crawlers) == (
        "crawl ended (shutdown) after 1 min 56 s: google 1 request (1 ok), 1 entry, 1 new event; "
        "bing 0 requests (0 ok), 0 entries, 0 new events"
    )
    assert summary([SimpleNamespace(spidercls=SimpleNamespace(name="brave"), stats=Stats())]) is None  # never began


def test_counts_and_times_read_as_english():
    assert [counted(n, "topic") for n in (0, 1, 2)] == ["0 topics", "1 topic", "2 topics"]
    assert [counted(n, "entry") for n in (1, 3)] == ["1 entry", "3 entries"]
    assert counted(1, "new event") == "1 new event" and counted(5, "new event") == "5 new events"
    assert [elapsed(s) for s in (0.4, 45, 60, 116, 3600, 7500)] == [
        "0 s",
        "45 s",
        "1 min",
        "1 min 56 s",
        "1 h",
        "2 h 5 min",
    ]


def test_the_supervisor_says_the_url_again_right_after_the_crawls_start_line(capsys):
    url = "http://127.0.0.1:8080/"
    crawl = io.StringIO(
        "2026-01-01 00:00:00 [google] INFO: google spider starting (continuous: every 300 s until stopped)\n"
        f"2026-01-01 00:00:00 [topicstreams.cli.crawl_summary] INFO: {STARTED}google\n"
        "2026-01-01 00:00:01 [topicstreams.middlewares.blocks] WARNING: [google] …\n"
        f"2026-01-01 00:05:00 [topicstreams.cli.crawl_summary] INFO: {STARTED}google\n"
    )
    Together.relay(crawl, url)
    out, err = capsys.readouterr()
    assert out == f"topicstreams: the crawl has started; open {url} to read the feed\n"  # once
    assert err == crawl.getvalue()  # every line passed on, in order


def test_a_cooling_engine_on_the_monitor_reads_until_a_time_and_how_long_from_now():
    from datetime import UTC, datetime, timedelta

    from topicstreams.web.formats import Moment

    now = datetime(2026, 12, 4, 14, 44, tzinfo=UTC)
    ahead = [Moment.of(now + timedelta(seconds=s), now) for s in (90, 150 * 60)]
    assert [(moment.clock, moment.relative) for moment in ahead] == [
        ("14:45 UTC", "in 1 minute"),
        ("17:14 UTC", "in 2 hours"),
    ]
