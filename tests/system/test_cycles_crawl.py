"""Cycle accounting end to end: the real spiders in real Chromium against the fake engines, the cycles extension
writing one ``scraper_cycles`` row and one INFO line per engine and window, read back against the closing stats
dump and the stored rows; and the purge of rows past retention when a crawl starts."""

from __future__ import annotations

import re
import signal
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from sqlalchemy import insert, select

from fake_engines import FakeEngines
from tests.support.crawl_checks import STATS_DUMP, crawl_config, rows, stat_count, topics
from tests.support.fakes_http import reset_fakes_per_test, running_fakes
from topicstreams.extensions.cycle_accounting import COUNTERS
from topicstreams.storage import upgrade
from topicstreams.storage.models import health_windows_table, scraper_cycles_table

pytestmark = pytest.mark.timeout(120)

fakes = running_fakes("google", "bing")
_clean = reset_fakes_per_test()

LINE = re.compile(r"\[(\w+)\] swept (\d+) topics?, (\d+) entr(?:y|ies), (\d+) new events?$")


def config(folder: Path, fakes: FakeEngines, engines: tuple[str, ...], **scraper) -> Path:
    return crawl_config(
        folder,
        fakes,
        floor=0.2,
        engines=engines,
        scraper={"cooldown": {"initial": 1, "factor": 2, "max": 5}, **scraper},
    )


def cycles(databases, db: Path, engine: str) -> list[dict]:
    """The engine's rows, in the order written, with aware UTC datetimes."""
    url = f"sqlite:///{db}"
    try:
        with databases.of(url).connect() as conn:
            return [
                dict(row._mapping)
                for row in conn.execute(
                    select(scraper_cycles_table)
                    .where(scraper_cycles_table.c.engine == engine)
                    .order_by(scraper_cycles_table.c.id)
                )
            ]
    finally:
        databases.dispose()


def swept_lines(stderr: str, engine: str) -> list[tuple[int, int, int]]:
    """The numbers of the engine's ``[engine] swept …`` INFO lines, in order."""
    found = []
    for line in stderr.splitlines():
        if (
            "[topicstreams.extensions.cycle_accounting] INFO: " in line
            and (match := LINE.search(line))
            and match[1] == engine
        ):
            found.append((int(match[2]), int(match[3]), int(match[4])))
    return found


def test_a_continuous_crawlall_writes_one_row_and_one_line_per_engine_and_window(
    scrapy_cmd, fakes, tmp_path, databases
):
    interval = 3
    cfg = config(tmp_path, fakes, ("google", "bing"), scrape_interval=interval)
    process = subprocess.Popen(
        [sys.executable, "-m", "scrapy", "crawlall", "-a", f"topics={topics(4)}", *STATS_DUMP],
        cwd=scrapy_cmd.folder,
        env={**scrapy_cmd.env, "TOPICSTREAMS_CONFIG": str(cfg)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.time() + 60
        while not fakes.results_requests("google") and time.time() < deadline and process.poll() is None:
            time.sleep(0.1)
        assert fakes.results_requests("google"), "the crawl never reached the engine"
        time.sleep(11)
        stopped = time.time()
        process.send_signal(signal.SIGINT)
        _, stderr = process.communicate(timeout=60)
    finally:
        process.kill()
    assert process.returncode == 0, stderr[-3000:]
    assert "Traceback" not in stderr, stderr[-3000:]
    db = tmp_path / "news.db"
    new_events = 0
    for engine in ("google", "bing"):
        windows = cycles(databases, db, engine)
        assert len(windows) >= 4, windows  # ~11 s and more of crawl, windows of 3 s
        assert len({row["node"] for row in windows}) == 1
        starts, ends = [row["window_start"] for row in windows], [row["window_end"] for row in windows]
        assert all(end == start for end, start in zip(ends, starts[1:], strict=False)), windows  # consecutive
        for row in windows[1:-1]:  # the inner windows: whole, aligned
            assert row["window_end"] - row["window_start"] == timedelta(seconds=interval), row
            assert row["window_end"].timestamp() % interval == 0, row
        assert ends[0].timestamp() % interval == 0 and ends[0] - starts[0] <= timedelta(seconds=interval)
        assert starts[-1].timestamp() % interval == 0 and ends[-1] - starts[-1] <= timedelta(seconds=interval)
        assert ends[-1].timestamp() == pytest.approx(stopped, abs=15)  # the close ends the last one
        # every window's line, with the row's numbers
        assert swept_lines(stderr, engine) == [
            (row["topics_count"], row["entries"], row["new_events"]) for row in windows
        ]
        # the rows add up to the closing stats
        for column, stat in COUNTERS.items():
            assert sum(row[column] for row in windows) == stat_count(stderr, stat, engine), (engine, column)
        assert stat_count(stderr, "topics_swept", engine) >= 8 and stat_count(stderr, "items_scraped", engine) > 0
        assert all(row["topics_count"] >= 1 for row in windows[1:-1]), windows  # spread over the windows
        new_events += sum(row["new_events"] for row in windows)
    # each new topic_news row was counted once, by the engine whose item inserted it
    assert rows(db, "select count(*) from topic_news") == [(new_events,)]


def test_a_once_run_writes_one_row_and_purges_what_is_past_retention(scrapy_cmd, fakes, tmp_path, databases):
    # One window a day: a run of seconds crosses no boundary (but for one in ~10 000 at midnight UTC).
    cfg = config(tmp_path, fakes, ("google",), scrape_interval=86400, retention_days=1)
    db = tmp_path / "news.db"
    url = f"sqlite:///{db}"
    upgrade(url)
    now = datetime.now(UTC)
    old, recent = now - timedelta(days=2), now - timedelta(hours=12)
    with databases.of(url).begin() as conn:
        conn.execute(
            insert(scraper_cycles_table),
            [
                {
                    "engine": engine,
                    "node": "other",
                    "window_start": end - timedelta(minutes=1),
                    "window_end": end,
                    "topics_count": 7,
                }
                for engine, end in (("google", old), ("bing", old), ("google", recent))
            ],
        )
        conn.execute(
            insert(health_windows_table),
            [
                {"engine": "google", "node": "other", "window_start": end - timedelta(minutes=5), "window_end": end}
                for end in (old, recent)
            ],
        )
    databases.dispose()
    started = time.time()
    result = scrapy_cmd(
        "crawl",
        "google",
        "-a",
        f"topics={topics(5)}",
        "-a",
        "once=1",
        env={"TOPICSTREAMS_CONFIG": str(cfg)},
        timeout=90,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    windows = cycles(databases, db, "google")
    assert [row["window_end"] for row in windows if row["node"] == "other"] == [recent]  # the old ones purged
    assert rows(db, "select count(*) from scraper_cycles where engine = 'bing'") == [(0,)]
    try:
        with databases.of(url).connect() as conn:
            kept = list(
                conn.execute(
                    select(health_windows_table.c.window_end).where(health_windows_table.c.node == "other")
                ).scalars()
            )
    finally:
        databases.dispose()
    assert kept == [recent]
    assert "purged the rows older than 1 days" in result.stderr
    assert "2 from scraper_cycles, 1 from health_windows" in result.stderr

    (row,) = [row for row in windows if row["node"] != "other"]
    assert row["topics_count"] == 5 and row["ok"] >= 5 and row["requests"] == stat_count(result.stderr, "requests")
    assert row["entries"] == stat_count(result.stderr, "items_scraped") > 0
    assert (
        row["new_events"]
        == stat_count(result.stderr, "new_events")
        == rows(db, "select count(*) from topic_news")[0][0]
    )
    assert started - 1 <= row["window_start"].timestamp() < row["window_end"].timestamp() <= time.time()
    assert swept_lines(result.stderr, "google") == [(5, row["entries"], row["new_events"])]
