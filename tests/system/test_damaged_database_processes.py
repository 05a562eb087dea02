"""A damaged database file through the real processes (issue 33, item 3): ``scrapy crawl`` refuses to start on it
(one line, exit 1, nothing written), ``scrapy db upgrade`` says so without a traceback, and the web app on a real
uvicorn server answers 503 with the message and logs it once. The rest (every other command, the store, the
extension, the test client): tests/unit/test_damaged_database.py. A crawl on an unreachable PostgreSQL is still told
as an outage: tests/system/test_durable_crawl.py."""

from __future__ import annotations

import json
import logging
import urllib.error
import urllib.request
from pathlib import Path

from tests.support.damaged_sqlite import damaged_database
from tests.support.feed_data import serving
from tests.support.project import write_config
from topicstreams.storage.damage_notice import damage_message


def test_a_crawl_on_a_damaged_file_refuses_to_start_in_one_line(scrapy_cmd, tmp_path: Path) -> None:
    damaged = damaged_database(tmp_path, "bad header")
    config = write_config(tmp_path, {"database": {"url": damaged.url}, "browser": {"profile_dir": "profiles"}})
    result = scrapy_cmd("crawl", "google", "-a", "once=1", "-a", "topics=x", env={"TOPICSTREAMS_CONFIG": str(config)})
    assert result.returncode == 1, result.stderr[-2000:]
    [line] = [line for line in result.stderr.splitlines() if line.startswith("could not start")]
    assert line == f"could not start: {damage_message(damaged.url, damaged.said)}"
    assert "Traceback" not in result.stderr and "cannot be reached" not in result.stderr
    assert damaged.unchanged()


def test_scrapy_db_upgrade_on_a_truncated_file_says_so_without_a_traceback(scrapy_cmd, tmp_path: Path) -> None:
    damaged = damaged_database(tmp_path, "truncated")
    config = write_config(tmp_path, {"database": {"url": damaged.url}})
    result = scrapy_cmd("db", "upgrade", env={"TOPICSTREAMS_CONFIG": str(config)})
    assert result.returncode == 1
    assert result.stderr.strip() == damage_message(damaged.url, "database disk image is malformed")
    assert result.stdout == "" and damaged.unchanged()


def test_the_served_app_answers_503_with_the_message_and_logs_it_once(tmp_path: Path, caplog) -> None:
    damaged = damaged_database(tmp_path, "truncated")
    message = damage_message(damaged.url, damaged.said)
    with serving(damaged.url) as app:
        for path in ("/api/feed", "/feed.json", "/api/feed"):
            try:
                urllib.request.urlopen(app.url + path, timeout=10)
                raise AssertionError(f"{path} answered")
            except urllib.error.HTTPError as answer:
                assert answer.code == 503, path
                assert json.loads(answer.read()) == {"detail": message}, path
    told = [r.getMessage() for r in caplog.records if r.name == "topicstreams.web.app" and r.levelno >= logging.WARNING]
    assert told == [f"Answering 503 where the database is read: {message}"]
    assert damaged.unchanged()
