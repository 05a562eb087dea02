"""The health extension's new signals driven by hand (as in test_health_extension.py): a real crawler's settings,
a real SQLite file, classifications, parse outcomes and canary answers sent as the middleware and the spider send
them. Parser health, canary mismatches (across a restart too), the cost per valid record against the stored
baseline, and how ``scrapy health`` composes the reasons."""

from __future__ import annotations

import asyncio
import logging
from datetime import UTC, datetime, timedelta

from tests.support.crawler import make_crawler
from topicstreams.crawl.runtime import Runtime
from topicstreams.crawl.signals import CanaryChecked, Classification, PageParsed
from topicstreams.engines.classify import ResponseClass
from topicstreams.extensions.health_rows import baseline_history
from topicstreams.extensions.watch import HealthExtension, is_result_page
from topicstreams.health.window import WindowStats
from topicstreams.reports.health_report import EngineReport, engine_json, format_table
from topicstreams.storage import engine_status as store
from topicstreams.storage import upgrade

LOGGER = "topicstreams.extensions"
"""The health extension's modules log under it (the extension and its parts, below)."""
HEALTH_LOGGERS = {
    "topicstreams.extensions.watch",
    "topicstreams.extensions.health_alerts",
    "topicstreams.extensions.health_coverage",
    "topicstreams.extensions.health_pause",
    "topicstreams.extensions.health_rows",
}
OK, HARD, ERROR = ResponseClass.OK, ResponseClass.HARD_BLOCK, ResponseClass.ERROR


def database(crawler):
    url = crawler.settings.get("TOPICSTREAMS_DATABASE_URL")
    upgrade(url)
    return Runtime.of(crawler).database(url)


def classified(
    cls: ResponseClass = OK, items: int = 10, latency: float = 0.2, bytes_: int = 50_000, reason: str = ""
) -> Classification:
    return Classification(
        engine="google",
        topic="t",
        page=0,
        page_type="first",
        url="http://127.0.0.1/search",
        status=200,
        cls=cls,
        reason=reason,
        latency=latency,
        bytes=bytes_,
        items=items,
        probe=False,
        bench=None,
        at=datetime.now(UTC),
    )


def page(
    extension: HealthExtension, items: int = 10, valid: int | None = None, missing: dict | None = None, **kwargs
) -> Classification:
    """One results page: its classification, then the spider's parse outcome."""
    classification = classified(items=items, **kwargs)
    extension.response_classified(classification)
    extension.page_parsed(
        PageParsed(classification, items=items, valid_items=items if valid is None else valid, missing=missing or {})
    )
    return classification


def canary(extension: HealthExtension, query: str, problem: str | None, results: int = 0) -> None:
    extension.canary_checked(
        CanaryChecked(
            engine="google",
            query=query,
            matched=problem is None,
            results=results,
            problem=problem,
            at=datetime.now(UTC),
        )
    )


def run(crawler, body) -> HealthExtension:
    """Open the extension on ``crawler``, run ``body(extension)`` inside an asyncio loop, close it."""
    extension = HealthExtension.from_crawler(crawler)

    async def main():
        extension.spider_opened(None)
        try:
            body(extension)
        finally:
            await extension.spider_closed(None, "finished")

    asyncio.run(main())
    return extension


def status(crawler) -> store.EngineStatusRow:
    """The engine's row, once the extension's writes are taken (they are written off the event loop)."""
    assert Runtime.of(crawler).outbox(crawler.settings.get("TOPICSTREAMS_DATABASE_URL")).flush()
    return store.read_status(database(crawler), "google", "n1")


def messages(caplog, level: int) -> list[str]:
    return [
        record.getMessage() for record in caplog.records if record.levelno == level and record.name in HEALTH_LOGGERS
    ]


def parser_messages(caplog, level: int) -> list[str]:
    return [message for message in messages(caplog, level) if "parser health" in message]


# ---- which pages count -----------------------------------------------------------------------------------


def test_which_pages_are_result_pages():
    assert is_result_page(classified(OK, items=3))
    assert not is_result_page(classified(OK, items=0))  # "no results"
    assert is_result_page(classified(ERROR, items=0, reason="parse error: KeyError: 'title'"))
    assert not is_result_page(classified(ERROR, items=0, reason="timeout"))
    assert not is_result_page(classified(HARD, items=0, reason="captcha"))


# ---- parser health --------------------------------------------------------------------------------------


def test_items_without_source_and_date_make_the_parser_critical_while_the_engine_stays_healthy(tmp_path, caplog):
    crawler = make_crawler(tmp_path, {"min_requests": 1, "smoothing": 1})
    caplog.set_level(logging.INFO, logger=LOGGER)
    seen = {}

    def body(extension: HealthExtension):
        page(extension, items=10, valid=0, missing={"source": 10, "published_at": 10})
        seen["broken"] = (crawler.stats.get_value("topicstreams/google/parser_score"), status(crawler))
        page(extension, items=40, valid=40)  # 40 of 50 items valid: 80, ok again
        seen["fixed"] = (crawler.stats.get_value("topicstreams/google/parser_score"), status(crawler))

    extension = run(crawler, body)
    stat, row = seen["broken"]
    assert stat == 0
    assert (row.parser_score, row.parser_reasons) == (0, ["missing source", "missing published_at"])
    # The pages loaded fine: hostility knows nothing of it, and nothing slows down.
    assert (row.score, row.band, row.state, row.pace_multiplier) == (100, "ok", "running", 1.0)
    assert crawler.stats.get_value("topicstreams/google/health_score") == 100
    assert crawler.stats.get_value("topicstreams/google/health_band") == "ok"
    state = Runtime.of(crawler).engine_state(crawler)
    assert state.pace_multiplier == 1.0 and not state.paused
    warnings = parser_messages(caplog, logging.WARNING)
    assert len(warnings) == 1
    assert warnings[0].startswith("[google] parser health 0 (critical): missing source, missing published_at; ")
    assert not messages(caplog, logging.CRITICAL)
    assert messages(caplog, logging.WARNING) == warnings  # no slowdown, no pause

    stat, row = seen["fixed"]
    assert stat == 80 and row.parser_score == 80
    assert row.parser_reasons == ["missing source", "missing published_at"]  # still in the window, below the bar
    assert "[google] parser health 80 (ok): the results are read in full again" in parser_messages(caplog, logging.INFO)
    assert len(parser_messages(caplog, logging.WARNING)) == 1
    assert extension.health.parser_band == "ok"
    assert status(crawler).score == 100


def test_parser_health_needs_no_hostility_score(tmp_path, caplog):
    crawler = make_crawler(tmp_path)  # min_requests 50: no hostility score for a while
    caplog.set_level(logging.INFO, logger=LOGGER)

    def body(extension: HealthExtension):
        page(extension, items=10, valid=5, missing={"title": 5})

    run(crawler, body)
    row = status(crawler)
    assert (row.score, row.band) == (None, "unknown")
    assert (row.parser_score, row.parser_reasons) == (50, ["missing title"])
    assert crawler.stats.get_value("topicstreams/google/parser_score") == 50
    assert parser_messages(caplog, logging.WARNING) == [
        "[google] parser health 50 (degraded): missing title; the engine's result markup has probably changed "
        "and its parser needs a fix (not a block: the pace stays as it is)"
    ]


def test_parse_errors_and_empty_result_pages_are_named(tmp_path):
    crawler = make_crawler(tmp_path)

    def body(extension: HealthExtension):
        page(extension, items=10)
        failed = classified(ERROR, items=0, reason="parse error: KeyError: 'title'")
        extension.response_classified(failed)
        extension.page_parsed(PageParsed(failed, items=0, valid_items=0, error=failed.reason))
        empty = classified(OK, items=10)  # results on the page, none built
        extension.response_classified(empty)
        extension.page_parsed(PageParsed(empty, items=0, valid_items=0))

    run(crawler, body)
    row = status(crawler)
    assert (row.parser_score, row.parser_reasons) == (33, ["parse error", "pages without items"])
    counts = row.window_counts
    assert (counts["result_pages"], counts["yielding_pages"], counts["parse_errors"]) == (3, 1, 1)


def test_pages_that_are_not_result_pages_or_unknown_outcomes_make_no_parser_score(tmp_path, caplog):
    crawler = make_crawler(tmp_path)
    caplog.set_level(logging.INFO, logger=LOGGER)

    def body(extension: HealthExtension):
        no_results = classified(OK, items=0)
        extension.response_classified(no_results)
        extension.page_parsed(PageParsed(no_results, items=0, valid_items=0))
        extension.response_classified(classified(HARD, items=0))
        extension.page_parsed(PageParsed(None, items=10, valid_items=0, missing={"url": 10}))  # no classification
        extension.page_parsed(PageParsed(classified(), items=10, valid_items=0))  # never classified here

    run(crawler, body)
    assert crawler.stats.get_value("topicstreams/google/parser_score") is None
    row = status(crawler)
    assert (row.parser_score, row.parser_reasons) == (None, [])
    assert not parser_messages(caplog, logging.INFO) and not parser_messages(caplog, logging.WARNING)


def test_a_first_good_page_logs_no_recovery(tmp_path, caplog):
    crawler = make_crawler(tmp_path)
    caplog.set_level(logging.INFO, logger=LOGGER)
    run(crawler, lambda extension: page(extension, items=10))
    assert status(crawler).parser_score == 100
    assert parser_messages(caplog, logging.INFO) == []


# ---- canaries -------------------------------------------------------------------------------------------


def test_a_canary_mismatch_is_kept_until_the_canary_answers_right(tmp_path, caplog):
    crawler = make_crawler(tmp_path, canaries=["q"])
    caplog.set_level(logging.INFO, logger=LOGGER)
    seen = {}

    def body(extension: HealthExtension):
        canary(extension, "q", None, results=8)  # right from the start: nothing to say
        seen["right"] = status(crawler).canary_mismatches
        canary(extension, "q", "no result from python.org (hosts: a.example)", results=3)
        seen["wrong"] = (status(crawler).canary_mismatches, set(extension.mismatches))
        canary(extension, "q", "0 results, expected at least 1")  # still wrong: flagged again, with its problem
        seen["still"] = set(extension.mismatches)
        canary(extension, "q", None, results=9)
        seen["again"] = (status(crawler).canary_mismatches, set(extension.mismatches))

    run(crawler, body)
    assert seen["right"] == []
    assert seen["wrong"] == (["q"], {"q"})
    assert seen["still"] == {"q"}
    assert seen["again"] == ([], set())
    warnings = messages(caplog, logging.WARNING)
    assert len(warnings) == 2
    assert "canary mismatch: canary 'q': no result from python.org (hosts: a.example)" in warnings[0]
    assert "canary mismatch: canary 'q': 0 results, expected at least 1" in warnings[1]
    assert all(message.startswith("[google] ") for message in warnings)
    assert messages(caplog, logging.INFO) == ["[google] canary 'q' answers right again (9 results)"]
    assert status(crawler).canary_mismatches == []


def test_canary_mismatches_are_stored_sorted(tmp_path):
    crawler = make_crawler(tmp_path, canaries=["zebra", "apple", "mango"])

    def body(extension: HealthExtension):
        canary(extension, "zebra", "0 results, expected at least 1")
        canary(extension, "apple", "0 results, expected at least 1")
        canary(extension, "mango", None, results=4)

    run(crawler, body)
    assert status(crawler).canary_mismatches == ["apple", "zebra"]


def test_a_restart_keeps_the_mismatches_of_canaries_still_configured(tmp_path, caplog):
    first = make_crawler(tmp_path, canaries=["kept", "dropped"])

    def mismatch_both(extension: HealthExtension):
        canary(extension, "kept", "0 results, expected at least 1")
        canary(extension, "dropped", "0 results, expected at least 1")

    run(first, mismatch_both)
    assert status(first).canary_mismatches == ["dropped", "kept"]

    caplog.set_level(logging.INFO, logger=LOGGER)
    restarted = make_crawler(tmp_path, canaries=["kept", "new"])
    seen = {}

    def body(extension: HealthExtension):
        seen["restored"] = (set(extension.mismatches), status(restarted).canary_mismatches)
        canary(extension, "kept", None, results=5)

    run(restarted, body)
    assert seen["restored"] == ({"kept"}, ["kept"])  # written back as soon as it opened
    assert "[google] canary 'kept' answers right again (5 results)" in messages(caplog, logging.INFO)
    assert status(restarted).canary_mismatches == []


def test_a_restart_without_canaries_forgets_every_mismatch(tmp_path):
    run(
        make_crawler(tmp_path, canaries=["q"]),
        lambda extension: canary(extension, "q", "0 results, expected at least 1"),
    )
    restarted = make_crawler(tmp_path)
    extension = run(restarted, lambda extension: None)
    assert extension.mismatches == set()
    assert status(restarted).canary_mismatches == []


# ---- cost -----------------------------------------------------------------------------------------------


def feed_costly_window(extension: HealthExtension) -> None:
    """3 requests (a hard block among them), 100 000 bytes, 0.5 browser seconds, 18 valid items."""
    page(extension, items=10, valid=8, missing={"published_at": 2}, latency=0.2, bytes_=50_000)
    page(extension, items=10, valid=10, latency=0.2, bytes_=50_000)
    extension.response_classified(classified(HARD, items=0, latency=0.1, bytes_=0))


WINDOW_COST = {"attempts": 0.167, "bytes": 5555.556, "browser_seconds": 0.028}


def test_the_cost_per_valid_record_has_no_baseline_without_history(tmp_path):
    crawler = make_crawler(tmp_path)
    extension = run(crawler, feed_costly_window)
    row = status(crawler)
    assert row.cost == {"window": WINDOW_COST, "baseline": None, "drift": None}
    assert row.window_counts["requests"] == 3 and row.window_counts["valid_items"] == 18
    assert row.window_counts["bytes"] == 100_000
    stats = extension.health.window.stats(datetime.now(UTC).timestamp())
    assert stats.cost() == WINDOW_COST


def test_the_cost_is_written_with_the_parse_outcome_of_the_latest_page(tmp_path):
    crawler = make_crawler(tmp_path)
    seen = {}

    def body(extension: HealthExtension):
        classification = classified(items=10, latency=0.5, bytes_=40_000)
        extension.response_classified(classification)
        seen["before"] = status(crawler).cost  # no valid record yet
        extension.page_parsed(PageParsed(classification, items=10, valid_items=4, missing={"source": 6}))
        seen["after"] = status(crawler).cost

    run(crawler, body)
    assert seen["before"] == {"window": None, "baseline": None, "drift": None}
    assert seen["after"] == {
        "window": {"attempts": 0.25, "bytes": 10000.0, "browser_seconds": 0.125},
        "baseline": None,
        "drift": None,
    }


def test_the_cost_is_compared_with_the_engines_stored_history(tmp_path):
    crawler = make_crawler(tmp_path)  # min_requests 50, baseline_days 14
    db = database(crawler)
    now = datetime.now(UTC)
    # Its normal, three days ago: 100 requests, 5 MB, 50 browser seconds for 500 valid records.
    store.save_window(
        db,
        "google",
        "n1",
        now - timedelta(days=3),
        now - timedelta(days=3) + timedelta(minutes=10),
        WindowStats(
            requests=100,
            ok=100,
            items=500,
            valid_items=500,
            bytes=5_000_000,
            browser_seconds=50.0,
            p95_latency_ms=200.0,
        ).counts(),
    )
    # The most recent day is never part of the baseline, nor is another node's or another engine's history.
    store.save_window(
        db,
        "google",
        "n1",
        now - timedelta(hours=2),
        now - timedelta(hours=1),
        WindowStats(requests=1000, ok=1000, valid_items=1, bytes=10**9, browser_seconds=10**4).counts(),
    )
    store.save_window(
        db,
        "google",
        "n2",
        now - timedelta(days=3),
        now - timedelta(days=2),
        WindowStats(requests=1000, ok=1000, valid_items=1, bytes=10**9, browser_seconds=10**4).counts(),
    )
    store.save_window(
        db,
        "bing",
        "n1",
        now - timedelta(days=3),
        now - timedelta(days=2),
        WindowStats(requests=1000, ok=1000, valid_items=1, bytes=10**9, browser_seconds=10**4).counts(),
    )
    history = baseline_history(db, "google", "n1", 14, now)
    assert history.cost == {"attempts": 0.2, "bytes": 10000.0, "browser_seconds": 0.1}
    assert history.window.requests == 100

    extension = run(crawler, feed_costly_window)
    assert extension.cost_baseline == history.cost
    assert status(crawler).cost == {
        "window": WINDOW_COST,
        "baseline": {"attempts": 0.2, "bytes": 10000.0, "browser_seconds": 0.1},
        "drift": {"attempts": 0.835, "bytes": 0.556, "browser_seconds": 0.28},
    }


def test_too_little_history_is_no_cost_baseline(tmp_path):
    crawler = make_crawler(tmp_path)  # min_requests 50
    db = database(crawler)
    three_days_ago = datetime.now(UTC) - timedelta(days=3)
    store.save_window(
        db,
        "google",
        "n1",
        three_days_ago,
        three_days_ago + timedelta(minutes=10),
        WindowStats(requests=10, ok=10, valid_items=50, bytes=500_000, browser_seconds=5.0).counts(),
    )
    assert baseline_history(db, "google", "n1", 14).cost is not None  # there is one, but too thin to trust
    run(crawler, feed_costly_window)
    assert status(crawler).cost == {"window": WINDOW_COST, "baseline": None, "drift": None}


def test_history_without_a_valid_record_has_no_cost(tmp_path):
    crawler = make_crawler(tmp_path)
    db = database(crawler)
    three_days_ago = datetime.now(UTC) - timedelta(days=3)
    store.save_window(
        db,
        "google",
        "n1",
        three_days_ago,
        three_days_ago + timedelta(minutes=10),
        WindowStats(requests=100, hard_blocks=100, p95_latency_ms=300.0).counts(),
    )
    history = baseline_history(db, "google", "n1", 14)
    assert history.cost is None and history.window.requests == 100
    empty = baseline_history(db, "bing", "n1", 14)
    assert empty.cost is None and empty.window.requests == 0


# ---- the report -----------------------------------------------------------------------------------------


def test_the_report_puts_hostility_first_then_canaries_then_the_parser(tmp_path):
    crawler = make_crawler(tmp_path, {"min_requests": 1, "smoothing": 1}, canaries=["q"])

    def body(extension: HealthExtension):
        extension.response_classified(classified(HARD, items=0, bytes_=0))
        page(extension, items=10, valid=5, missing={"source": 5})  # 1 hard block of 2: 65, degraded
        canary(extension, "q", "0 results, expected at least 1")

    run(crawler, body)
    row = status(crawler)
    assert (row.score, row.band, row.reasons) == (65, "degraded", ["hard_block"])
    assert (row.parser_score, row.parser_reasons, row.canary_mismatches) == (50, ["missing source"], ["q"])
    report = EngineReport.of("n1", "google", row, datetime.now(UTC))
    assert report.reasons == ("hard_block", "canary mismatch", "missing source")
    assert (report.parser_score, report.cost) == (50, row.cost)
    assert report.cost["window"] == {"attempts": 0.4, "bytes": 10000.0, "browser_seconds": 0.08}
    table = format_table([report])
    assert "hard_block, canary mismatch, missing source" in table
    assert table.splitlines()[1].split()[:5] == ["google", "65", "degraded", "stopped", "50"]  # its crawler closed
    entry = engine_json(report)
    assert (entry["reasons"], entry["parser_score"], entry["cost"]) == (
        ["hard_block", "canary mismatch", "missing source"],
        50,
        row.cost,
    )


def test_the_report_of_a_row_without_the_new_signals(tmp_path):
    crawler = make_crawler(tmp_path)
    db = database(crawler)
    store.save_status(db, "google", "n1", state="running", score=90, band="ok", reasons=[])
    report = EngineReport.of("n1", "google", status(crawler), datetime.now(UTC))
    assert (report.reasons, report.parser_score, report.cost) == ((), None, None)
    store.save_status(db, "google", "n1", state="running", canary_mismatches=["a", "b"], parser_reasons=["parse error"])
    report = EngineReport.of("n1", "google", status(crawler), datetime.now(UTC))
    assert report.reasons == ("canary mismatch", "parse error")  # one reason however many canaries
