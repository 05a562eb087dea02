"""Signals end to end: the real Google spider in real Chromium against the fake Google — a redesign that breaks the
parser lowers parser health and not the hostility score; canary queries with a known answer are fetched like
topics (paced, still while the engine is paused), and a wrong answer is flagged `canary mismatch`."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from urllib.parse import urlsplit

import pytest

from fake_engines import google as fake_google
from tests.support.crawl_checks import (
    FAST_COOLDOWN,
    FLOAT_ROUNDING,
    crawl_config,
    recording,
    rows,
    sent_gaps,
    stat_count,
    stat_text,
    topics,
)
from tests.support.fakes_http import reset_fakes_per_test, running_fakes

pytestmark = pytest.mark.timeout(300)

fakes = running_fakes("google")
_clean = reset_fakes_per_test()

FLOOR = 0.2


def report(scrapy_cmd, cfg, *args):
    return scrapy_cmd("health", *args, env={"TOPICSTREAMS_CONFIG": str(cfg)})


def google_json(scrapy_cmd, cfg) -> dict:
    shown = report(scrapy_cmd, cfg, "--json")
    return next(engine for engine in json.loads(shown.stdout)["engines"] if engine["engine"] == "google")


def test_a_redesign_that_drops_fields_lowers_parser_health_not_the_hostility_score(scrapy_cmd, fakes, tmp_path):
    cfg = crawl_config(
        tmp_path, fakes, floor=0.1, health={"smoothing": 1, "min_requests": 4}, scraper={"cooldown": FAST_COOLDOWN}
    )
    # Four normal pages, then the engine's result markup changes: items still found, source and time gone.
    fakes.script("google", ["results"] * 4 + ["restyled"] * 8)
    result = scrapy_cmd(
        "crawl", "google", "-a", f"topics={topics(12)}", "-a", "once=1", env={"TOPICSTREAMS_CONFIG": str(cfg)}
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert len(fakes.results_requests("google")) == 12  # every page loaded fine: nothing retried

    # Hostility: every page ok, 100, nothing slowed or paused.
    assert stat_text(result.stderr, "health_score") == "100"
    assert stat_count(result.stderr, "soft_blocks") == 0 and stat_count(result.stderr, "cooldowns") == 0
    assert not [line for line in result.stderr.splitlines() if "slowing down" in line or " CRITICAL: " in line]
    # Parser health: a third of the items carry every field at the end.
    parser = int(stat_text(result.stderr, "parser_score"))
    assert 25 <= parser <= 40, parser
    warnings = [line for line in result.stderr.splitlines() if "] parser health " in line]
    assert len(warnings) >= 1 and all(" WARNING: " in line for line in warnings), result.stderr[-3000:]
    assert "missing source, missing published_at" in warnings[-1] and "not a block" in warnings[-1]
    db = tmp_path / "news.db"
    assert rows(
        db, "select score, band, state, reasons, pace_multiplier, parser_score, parser_reasons from engine_status"
    ) == [(100, "ok", "running", "[]", 1.0, parser, '["missing source", "missing published_at"]')]

    shown = report(scrapy_cmd, cfg)
    assert shown.returncode == 0, shown.stdout + shown.stderr  # the band is the hostility score's
    line = next(line for line in shown.stdout.splitlines() if line.startswith("google"))
    cells = [cell.strip() for cell in line.split("  ") if cell.strip()]
    assert cells[:5] == ["google", "100", "ok", "stopped", str(parser)]  # the once run closed
    assert cells[-2] == "missing source, missing published_at"
    engine = google_json(scrapy_cmd, cfg)
    assert (engine["score"], engine["parser_score"], engine["reasons"]) == (
        100,
        parser,
        ["missing source", "missing published_at"],
    )
    # Cost per valid record: 12 attempts for the 4 pages' valid records.
    cost = engine["cost"]["window"]
    valid = rows(db, "select sum(valid_items) from health_windows")[0][0]
    assert cost["attempts"] == pytest.approx(12 / valid, abs=0.001) and cost["bytes"] > 0
    assert engine["cost"]["baseline"] is None and engine["cost"]["drift"] is None  # no history yet


def canary_config(tmp_path, fakes, **scraper):
    # "canary right" answers with these publishers (the fake's catalogue); nothing ever answers from wikipedia.org.
    right_domain = urlsplit(fake_google.expected_articles("canary right", 0)[0]).hostname.removeprefix("www.")
    return crawl_config(
        tmp_path,
        fakes,
        floor=FLOOR,
        scraper={"cooldown": FAST_COOLDOWN, **scraper},
        health={"min_requests": 2},
        canaries={
            "interval": 600,
            "queries": {
                "google": [
                    {"query": "canary right", "min_results": 5, "expect_domain": right_domain},
                    {"query": "canary wrong", "expect_domain": "wikipedia.org"},
                ]
            },
        },
    )


def test_a_canary_with_the_wrong_answer_is_flagged_and_its_results_are_not_stored(scrapy_cmd, fakes, tmp_path):
    cfg = canary_config(tmp_path, fakes)
    result = scrapy_cmd(
        "crawl",
        "google",
        "-a",
        "topics=t00,t01",
        "-a",
        "once=1",
        *recording(tmp_path),
        env={"TOPICSTREAMS_CONFIG": str(cfg)},
    )
    assert result.returncode == 0, result.stderr[-3000:]
    seen = fakes.results_requests("google")
    assert [entry["query"]["q"] for entry in seen] == ["canary right", "canary wrong", "t00", "t01"]
    left = sent_gaps(tmp_path)
    assert len(left) == 3 and min(left) >= FLOOR - FLOAT_ROUNDING, left  # canaries keep the engine's pace
    assert stat_count(result.stderr, "requests") == 4  # canaries counted among the engine's requests
    assert stat_count(result.stderr, "canaries") == 2 and stat_count(result.stderr, "canary_mismatches") == 1

    mismatches = [line for line in result.stderr.splitlines() if "[google] canary mismatch: " in line]
    assert len(mismatches) == 1 and " WARNING: " in mismatches[0], result.stderr[-3000:]
    assert "canary 'canary wrong': no result from wikipedia.org (hosts: " in mismatches[0]

    db = tmp_path / "news.db"
    assert rows(db, "select canary_mismatches from engine_status") == [('["canary wrong"]',)]
    # The canaries' results are checked, not stored: only the two topics' articles are.
    assert rows(db, "select name from topics order by name") == [("t00",), ("t01",)]
    stored = rows(db, "select count(*) from news")[0][0]
    assert stored == len(set(fake_google.expected_articles("t00", 0)) | set(fake_google.expected_articles("t01", 0)))

    engine = google_json(scrapy_cmd, cfg)
    assert engine["reasons"] == ["canary mismatch"] and engine["score"] == 100  # not part of the score
    shown = report(scrapy_cmd, cfg)
    assert shown.returncode == 0
    assert next(line for line in shown.stdout.splitlines() if line.startswith("google")).endswith("canary mismatch  -")

    # The next run finds that canary answering right: the flag is lifted.
    cfg = crawl_config(
        tmp_path,
        fakes,
        floor=FLOOR,
        scraper={"cooldown": FAST_COOLDOWN},
        health={"min_requests": 2},
        canaries={"queries": {"google": [{"query": "canary wrong", "min_results": 3}]}},
    )
    again = scrapy_cmd("crawl", "google", "-a", "topics=t00", "-a", "once=1", env={"TOPICSTREAMS_CONFIG": str(cfg)})
    assert again.returncode == 0, again.stderr[-3000:]
    assert "canary 'canary wrong' answers right again" in again.stderr
    assert rows(db, "select canary_mismatches from engine_status") == [("[]",)]
    assert google_json(scrapy_cmd, cfg)["reasons"] == []


def test_canaries_keep_running_while_the_engine_is_paused(scrapy_cmd, fakes, tmp_path, databases):
    from topicstreams.storage import upgrade
    from topicstreams.storage.engine_status import pause

    cfg = crawl_config(
        tmp_path,
        fakes,
        floor=FLOOR,
        scraper={"cooldown": FAST_COOLDOWN},
        canaries={"interval": 1.5, "queries": {"google": [{"query": "canary right"}]}},
    )
    url = f"sqlite:///{tmp_path / 'news.db'}"
    upgrade(url)
    pause(databases.of(url), "google", "node-a", score=30, band="critical", reasons=["hard_block"])
    crawl = subprocess.Popen(
        [sys.executable, "-m", "scrapy", "crawl", "google", "-a", "topics=t00,t01", *recording(tmp_path)],
        cwd=scrapy_cmd.folder,
        env={**scrapy_cmd.env, "TOPICSTREAMS_CONFIG": str(cfg)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.time() + 60
        while len(fakes.results_requests("google")) < 3 and time.time() < deadline:
            time.sleep(0.2)
    finally:
        crawl.send_signal(signal.SIGINT)
        _, stderr = crawl.communicate(timeout=60)
    queries = [entry["query"]["q"] for entry in fakes.results_requests("google")]
    # Only the canary, again and again on its own schedule: the paused engine's topics wait for a person.
    assert len(queries) >= 3 and set(queries) == {"canary right"}, (queries, stderr[-3000:])
    left = sent_gaps(tmp_path)
    assert left and min(left) >= 1.5 - FLOAT_ROUNDING, left
    assert rows(tmp_path / "news.db", "select state, canary_mismatches from engine_status") == [("paused", "[]")]
