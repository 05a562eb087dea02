"""No topic can stall an engine, end to end: the real Google spider in real Chromium against the fake Google, with
test middlewares (tests/support/dropping_middleware.py) that drop one topic's request without an errback and hold
another's past its deadline. Each of those topics resolves as an error within the budget, the others are all stored,
and the once crawl ends."""

from __future__ import annotations

import json
import time

import pytest

from tests.support.crawl_checks import crawl_config, expected_urls, rows, stat_count
from tests.support.fakes_http import reset_fakes_per_test, running_fakes

pytestmark = pytest.mark.timeout(180)

fakes = running_fakes("google")
_clean = reset_fakes_per_test()

NAVIGATION_MS, MARGIN = 2000, 3
BUDGET = NAVIGATION_MS / 1000 + MARGIN
"""With consent walls left unanswered (TOPICSTREAMS_CONSENT=none): answering them adds a navigation timeout."""
HOLD = BUDGET + 2.5
"""The held request comes back this long after pacing let it go: past its deadline, before the crawl could end."""


def test_a_dropped_and_a_lost_request_resolve_as_errors_and_the_other_topics_go_on(scrapy_cmd, fakes, tmp_path):
    config = crawl_config(tmp_path, fakes, floor=0.2, scraper={"once_attempts": 1})
    started = time.monotonic()
    result = scrapy_cmd(
        "crawl",
        "google",
        "-a",
        "topics=alpha,beta,gamma,delta",
        "-a",
        "once=1",
        "-s",
        f"PLAYWRIGHT_DEFAULT_NAVIGATION_TIMEOUT={NAVIGATION_MS}",
        "-s",
        f"TOPICSTREAMS_RESPONSE_MARGIN={MARGIN}",
        "-s",
        "TOPICSTREAMS_CONSENT=none",
        "-s",
        "SPIDER_MIDDLEWARES=" + json.dumps({"tests.support.dropping_middleware.DropTopicsSpiderMiddleware": 100}),
        "-s",
        "DOWNLOADER_MIDDLEWARES="
        + json.dumps({"tests.support.dropping_middleware.HoldTopicsDownloaderMiddleware": 960}),
        "-s",
        "TEST_DROP_TOPICS=beta",
        "-s",
        "TEST_HOLD_TOPICS=gamma",
        "-s",
        f"TEST_HOLD_SECONDS={HOLD}",
        env={"TOPICSTREAMS_CONFIG": str(config)},
        timeout=120,
    )
    took = time.monotonic() - started
    log = result.stderr
    assert result.returncode == 0, log[-4000:]
    assert "Traceback" not in log
    assert "test middleware: dropping the request of topic 'beta'" in log  # the middlewares did their part
    assert "test middleware: holding the request of topic 'gamma'" in log

    # each lost topic: one WARNING naming it, the page and why; an error verdict (given up: one attempt here)
    for topic in ("beta", "gamma"):
        lost = [line for line in log.splitlines() if f"topic '{topic}', page 1: its request never came back" in line]
        assert len(lost) == 1, log[-4000:]
        assert "WARNING" in lost[0] and (
            f"within {BUDGET:g} s: dropped by a middleware, or lost by the browser" in lost[0]
        )
        assert f"gave up topic '{topic}' after 1 attempt: last error (no response)" in log
    assert stat_count(log, "requests_lost") == 2
    assert stat_count(log, "topics_given_up") == 2

    # the others went on: delta was asked for about one budget after gamma went, not after gamma's late answer
    arrivals = [(entry["query"]["q"], entry["time"]) for entry in fakes.results_requests("google")]
    assert [topic for topic, _ in arrivals] == ["alpha", "delta", "gamma"]  # beta never left; gamma came late
    times = dict(arrivals)
    assert 2 * BUDGET - 1 < times["delta"] - times["alpha"] < 2 * BUDGET + 3
    assert times["gamma"] - times["delta"] > 0.5
    db = tmp_path / "news.db"
    stored = {row[0] for row in rows(db, "select url from news")}
    # gamma's late answer is kept: its items are stored like any others, under gamma
    assert stored == expected_urls("google", "alpha", "delta", "gamma")
    assert "topic 'gamma', page 1: a late answer, after its run timed out" in log
    by_topic = {
        name for (name,) in rows(db, "select distinct t.name from topic_news tn join topics t on t.id = tn.topic_id")
    }
    assert by_topic == {"alpha", "delta", "gamma"}
    assert took < 2 * BUDGET + HOLD + 30
