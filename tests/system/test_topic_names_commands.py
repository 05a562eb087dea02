"""A topic name that is empty, holds control characters or makes a results URL too long is refused wherever it
enters, through the real ``scrapy`` command: ``scrapy topics add`` (exit 2, nothing stored), the config's ``topics``
(exit 78), ``-a topics=`` of ``crawl`` and ``crawlall`` (exit 2, one message, no traceback, nothing started)."""

from __future__ import annotations

import sqlite3

from tests.support.project import write_config

LONG = "x" * 5000
SHOWN = repr("x" * 40 + "…" + "x" * 12) + " (5,000 characters)"


def stored_topics(db) -> list[tuple]:
    if not db.exists():
        return []
    with sqlite3.connect(db) as conn:
        return conn.execute("select name from topics order by name").fetchall()


def assert_one_clear_refusal(result, *expected: str) -> None:
    assert "Traceback" not in result.stdout + result.stderr
    assert "x" * 60 not in result.stderr  # the long name is never printed whole
    for text in expected:
        assert text in result.stderr, result.stderr[-3000:]


def test_topics_add_refuses_bad_names_with_exit_2_and_stores_nothing_of_the_call(scrapy_cmd, tmp_path):
    assert scrapy_cmd("topics", "add", "alpha", check=True).returncode == 0
    result = scrapy_cmd("topics", "add", "beta", LONG, "tab\there", "gamma")
    assert result.returncode == 2
    assert_one_clear_refusal(
        result,
        f"topic {SHOWN} is refused: its google results URL would be 5,06",
        "over the 2,083 the crawler accepts (Scrapy's URLLENGTH_LIMIT)",
        "topic 'tab\\there' is refused: it holds a control character (U+0009, a tab) at position 4",
        "nothing was added",
    )
    assert stored_topics(tmp_path / "topicstreams.db") == [("alpha",)]  # beta and gamma were not added either
    # the limit is the crawler's setting, and the engines as configured count
    assert scrapy_cmd("topics", "add", "y" * 80, "-s", "URLLENGTH_LIMIT=100").returncode == 2
    config = write_config(tmp_path, {"engines": {"bing": {"base_url": "https://" + "b" * 2030 + ".example"}}})
    refused = scrapy_cmd("topics", "add", "delta", env={"TOPICSTREAMS_CONFIG": str(config)})
    assert refused.returncode == 2 and "its bing results URL" in refused.stderr, refused.stderr[-2000:]
    assert stored_topics(tmp_path / "topicstreams.db") == [("alpha",)]


def test_the_config_refuses_a_bad_topic_with_exit_78_naming_the_entry(scrapy_cmd, tmp_path):
    database = tmp_path / "news.db"
    for bad, commands, expected in (
        (
            LONG,
            (["config", "check"], ["crawl", "google", "-a", "once=1"], ["topics", "list"]),
            (
                f"config error: topics[1]: got {SHOWN}, expected a topic name whose results URLs fit: its google "
                "results URL would be"
            ),
        ),
        (
            "a\u200bb",
            (["config", "check"],),
            (
                "config error: topics[1]: got 'a\\u200bb', expected a valid topic name: it holds an invisible "
                "formatting character (U+200B, ZERO WIDTH SPACE) at position 2"
            ),
        ),
    ):
        path = write_config(tmp_path, {"database": {"url": f"sqlite:///{database}"}, "topics": ["alpha", bad]})
        for args in commands:
            result = scrapy_cmd(*args, env={"TOPICSTREAMS_CONFIG": str(path)})
            assert result.returncode == 78, (args, result.stderr[-3000:])
            lines = result.stderr.strip().splitlines()
            assert len(lines) == 1 and lines[0].startswith(expected), (args, lines)
            assert_one_clear_refusal(result)
    assert not database.exists() and not (tmp_path / ".topicstreams").exists()


def test_a_bad_topics_argument_is_a_usage_error_before_anything_starts(scrapy_cmd, tmp_path):
    long_refused = f"-a topics: topic {SHOWN} is refused: its google results URL"
    for command, topics, expected in (
        (["crawl", "google"], f"alpha,{LONG}", long_refused),
        (
            ["crawl", "google"],
            "alpha,new\nline",
            "-a topics: topic 'new\\nline' is refused: it holds a control character (U+000A, a newline)",
        ),
        (["crawl", "google"], "", "-a topics= names no topic: give at least one (-a topics=a,b)"),
        (["crawl", "google"], " , ", "-a topics= names no topic"),
        (["crawlall", "-a", "engines=google,bing"], f"alpha,{LONG}", long_refused),
    ):
        result = scrapy_cmd(*command, "-a", f"topics={topics}", "-a", "once=1", "-s", "LOG_FILE=job.log")
        assert result.returncode == 2, (command, topics[:20], result.stderr[-3000:])
        assert_one_clear_refusal(result, expected)
        assert expected in (tmp_path / "job.log").read_text()  # where a Scrapyd job's operator looks
        (tmp_path / "job.log").unlink()
    # refused before any crawler was made: no database, no browser profile
    assert not (tmp_path / "topicstreams.db").exists() and not (tmp_path / ".topicstreams").exists()
