"""The project's commands as users run them: config, topics, db, crawl's refusals and config errors."""

import os
import sqlite3

import yaml

from tests.support.project import REPO, write_config
from topicstreams.browser.chromium import ProfileLock, profile_path


def table_names(db):
    with sqlite3.connect(db) as conn:
        return {row[0] for row in conn.execute("select name from sqlite_master where type='table'")}


def test_config_check_and_show_mask_secrets(scrapy_cmd, tmp_path):
    path = write_config(
        tmp_path,
        {
            "topics": ["alpha"],
            "anti_detection": {"proxy": {"enabled": True, "proxies": ["http://bob:hunter2@proxy.test:3128"]}},
        },
    )
    ok = scrapy_cmd("config", "check", "-s", f"TOPICSTREAMS_CONFIG={path}")
    assert ok.returncode == 0, ok.stderr
    assert f"config ok ({path})" in ok.stdout

    shown = scrapy_cmd("config", "show", env={"TOPICSTREAMS_CONFIG": str(path)})
    assert shown.returncode == 0, shown.stderr
    data = yaml.safe_load(shown.stdout)
    assert data["topics"] == ["alpha"]
    assert data["anti_detection"]["proxy"]["proxies"] == ["http://bob:***@proxy.test:3128"]
    assert "hunter2" not in shown.stdout + shown.stderr


def test_a_bad_value_stops_crawl_with_exit_78_one_line_and_no_database(scrapy_cmd, tmp_path):
    path = write_config(tmp_path, {"scraper": {"scrape_interval": "soon"}})
    for args in (["crawl", "google"], ["crawlall"], ["config", "check"], ["topics", "list"]):
        result = scrapy_cmd(
            *args,
            "-a" if args[0].startswith("crawl") else "-s",
            "once=1" if args[0].startswith("crawl") else "LOG_LEVEL=INFO",
            env={"TOPICSTREAMS_CONFIG": str(path)},
        )
        assert result.returncode == 78, (args, result.stderr)
        assert result.stderr.strip().splitlines() == [
            "config error: scraper.scrape_interval: got 'soon', expected seconds > 0"
        ], args
        assert "Traceback" not in result.stdout + result.stderr
    assert not list(tmp_path.glob("*.db*"))
    assert not (tmp_path / ".topicstreams").exists()


def test_a_bad_setting_over_the_configuration_stops_with_exit_78_and_one_line_naming_it(scrapy_cmd, tmp_path):
    path = write_config(tmp_path, {})
    for args, setting, line in (
        (
            ["crawl", "google", "-a", "once=1"],
            "TOPICSTREAMS_CONSENT=maybe",
            "TOPICSTREAMS_CONSENT (browser.consent): got 'maybe', expected one of reject, accept, none",
        ),
        (
            ["crawlall", "-a", "once=1"],
            'TOPICSTREAMS_PACING={"jitter_ratio": 2}',
            "TOPICSTREAMS_PACING (scraper.pacing.jitter_ratio): got 2, expected a number from 0 to 1",
        ),
        (
            ["config", "check"],
            "TOPICSTREAMS_HEALTH={not json",
            "TOPICSTREAMS_HEALTH: got '{not json', expected a mapping of health's keys (on the command line: a JSON "
            "object)",
        ),
        (
            ["crawl", "google", "-a", "once=1"],
            "TOPICSTREAMS_MAX_PAGES=many",
            "TOPICSTREAMS_MAX_PAGES: got 'many', expected a number (scraper.max_pages)",
        ),
    ):
        result = scrapy_cmd(*args, "-s", setting, env={"TOPICSTREAMS_CONFIG": str(path)})
        assert result.returncode == 78, (args, result.stderr)
        assert result.stderr.strip().splitlines() == [f"config error: {line}"], args
        assert "Traceback" not in result.stdout + result.stderr
    assert not list(tmp_path.glob("*.db*"))
    assert not (tmp_path / ".topicstreams").exists()


def test_duckduckgo_is_refused_and_not_listed(scrapy_cmd):
    refused = scrapy_cmd("crawl", "duckduckgo")
    assert refused.returncode != 0
    assert refused.stderr.startswith("DuckDuckGo is not supported:")
    refused = scrapy_cmd("crawlall", "-a", "engines=google,duckduckgo")
    assert refused.returncode != 0 and refused.stderr.startswith("DuckDuckGo is not supported:")
    listed = scrapy_cmd("list")
    assert listed.returncode == 0, listed.stderr
    assert sorted(listed.stdout.split()) == ["bing", "brave", "google", "yahoo"]
    assert "docs/DUCKDUCKGO_UNSUPPORTED.md" in refused.stderr
    assert (REPO / "docs" / "DUCKDUCKGO_UNSUPPORTED.md").is_file()


def test_db_upgrade_creates_the_schema(scrapy_cmd, tmp_path):
    result = scrapy_cmd("db", "upgrade")
    assert result.returncode == 0, result.stderr
    assert {"topics", "news", "topic_news", "topic_news_engines", "scraper_cycles"} <= table_names(
        tmp_path / "topicstreams.db"
    )
    again = scrapy_cmd("db", "upgrade")
    assert again.returncode == 0, again.stderr


def test_topics_add_list_deactivate_activate(scrapy_cmd, tmp_path):
    added = scrapy_cmd("topics", "add", "alpha", " beta ", "alpha")
    assert added.returncode == 0, added.stderr
    assert "added: alpha" in added.stdout and "added: beta" in added.stdout

    listed = scrapy_cmd("topics", "list", check=True).stdout.splitlines()
    assert [line.split()[:2] for line in listed] == [["alpha", "active"], ["beta", "active"]]

    assert scrapy_cmd("topics", "deactivate", "beta", check=True).stdout.strip() == "deactivated: beta"
    listed = scrapy_cmd("topics", "list", check=True).stdout.splitlines()
    assert [line.split()[:2] for line in listed] == [["alpha", "active"], ["beta", "inactive"]]

    missing = scrapy_cmd("topics", "activate", "beta", "gamma")
    assert missing.returncode == 1
    assert "activated: beta" in missing.stdout
    assert "no such topic: gamma" in missing.stderr

    with sqlite3.connect(tmp_path / "topicstreams.db") as conn:
        assert conn.execute("select name, active from topics order by name").fetchall() == [("alpha", 1), ("beta", 1)]


def test_topics_without_a_subcommand_is_a_usage_error(scrapy_cmd):
    result = scrapy_cmd("topics", "rename", "x")
    assert result.returncode == 2
    assert "expected one of: add, list, deactivate, activate" in result.stderr


def test_crawlall_refuses_an_unknown_engine_by_name(scrapy_cmd):
    result = scrapy_cmd("crawlall", "-a", "engines=google,altavista")
    assert result.returncode == 2
    assert "unknown engine altavista" in result.stderr


def test_an_engine_whose_profile_another_process_holds_is_refused_in_one_line(scrapy_cmd, tmp_path):
    config = write_config(
        tmp_path,
        {"node": {"id": "node-1"}, "browser": {"profile_dir": "profiles"}, "database": {"url": "sqlite:///news.db"}},
    )
    held = ProfileLock(profile_path(str(tmp_path / "profiles"), "node-1", "bing"))
    held.acquire()  # as a running crawl of bing on this node does
    try:
        for command in (["crawl", "bing"], ["crawlall", "-a", "engines=google,bing"]):
            result = scrapy_cmd(
                *command, "-a", "once=1", "-s", "LOG_FILE=job.log", env={"TOPICSTREAMS_CONFIG": str(config)}
            )
            assert result.returncode == 1, result.stderr[-3000:]
            expected = (
                f"could not start bing: the browser profile {tmp_path / 'profiles' / 'node-1' / 'bing'} "
                f"is in use by process {os.getpid()}"
            )
            assert result.stderr.startswith(expected), result.stderr[-3000:]
            assert len(result.stderr.splitlines()) == 1 and "Traceback" not in result.stderr
            # where a Scrapyd job looks: its log file
            assert f"ERROR: {expected}" in (tmp_path / "job.log").read_text()
            (tmp_path / "job.log").unlink()
            assert not (tmp_path / "news.db").exists()  # refused before anything started
    finally:
        held.release()
