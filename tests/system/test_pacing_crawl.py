"""Pacing, cooldown, soft blocks and the topic scheduler end to end: the real spiders in real Chromium against
fake engines playing scripted responses. Only lower bounds on time are asserted (no gap below the floor, no
retry before its cooldown); how close the pace comes to the floor is the pacing benchmark's business."""

from __future__ import annotations

import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from fake_engines import FakeEngines
from tests.support.crawl_checks import (
    FLOAT_ROUNDING,
    classified,
    differences,
    gaps,
    recording,
    rows,
    sent_gaps,
    stat_count,
    topics,
)
from tests.support.fakes_http import reset_fakes_per_test, running_fakes
from tests.support.project import write_config
from topicstreams import ENGINES

pytestmark = pytest.mark.timeout(300)


fakes = running_fakes("google", "bing")
_clean = reset_fakes_per_test()


def config(
    folder: Path,
    fakes: FakeEngines,
    engines=("google",),
    *,
    floor=1.0,
    jitter=0.2,
    per_engine=None,
    cooldown=None,
    **scraper,
) -> Path:
    return write_config(
        folder,
        {
            "database": {"url": "sqlite:///news.db"},
            "engines": {
                name: {
                    "base_url": fakes.base_url(name) if name in fakes.engines else "http://127.0.0.1:9",
                    "enabled": name in engines,
                }
                for name in ENGINES
            },
            "scraper": {
                "schedule": "fixed",
                "pacing": {"default_min_interval": floor, "jitter_ratio": jitter, "per_engine": per_engine or {}},
                "cooldown": cooldown or {"initial": 1, "factor": 2, "max": 10},
                **scraper,
            },
            "browser": {"profile_dir": "profiles"},
        },
    )


def arrivals(fakes: FakeEngines, engine: str = "google") -> list[dict]:
    return fakes.results_requests(engine)


def start_crawl(scrapy_cmd, fakes: FakeEngines, cfg: Path, *args: str) -> subprocess.Popen:
    """A crawl in the background, returned once its first request has reached the engine."""
    process = subprocess.Popen(
        [sys.executable, "-m", "scrapy", "crawl", "google", *args],
        cwd=scrapy_cmd.folder,
        env={**scrapy_cmd.env, "TOPICSTREAMS_CONFIG": str(cfg)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.time() + 60
    while not arrivals(fakes) and time.time() < deadline and process.poll() is None:
        time.sleep(0.1)
    if not arrivals(fakes):
        process.kill()
        raise AssertionError(f"the crawl never reached the engine:\n{process.communicate()[1][-3000:]}")
    return process


def test_no_gap_below_the_floor_with_jitter_and_slow_pages_and_each_classification_is_handed_on(
    scrapy_cmd, fakes, tmp_path
):
    cfg = config(tmp_path, fakes, floor=1.0, jitter=0.2)
    fakes.route("google", "t03", {"delay": 1.4})  # slower than the floor
    fakes.route("google", "t07", {"delay": 0.6})
    result = scrapy_cmd(
        "crawl",
        "google",
        "-a",
        f"topics={topics(12)}",
        "-a",
        "once=1",
        *recording(tmp_path),
        env={"TOPICSTREAMS_CONFIG": str(cfg)},
    )
    assert result.returncode == 0, result.stderr[-3000:]
    seen = arrivals(fakes)
    assert [entry["query"]["q"] for entry in seen] == [f"t{i:02d}" for i in range(12)]
    assert min(sent_gaps(tmp_path)) >= 1.0 - FLOAT_ROUNDING, sent_gaps(tmp_path)
    assert len({round(gap, 2) for gap in sent_gaps(tmp_path)}) > 3  # jittered, not a fixed beat
    assert stat_count(result.stderr, "requests") == 12 and stat_count(result.stderr, "ok") == 12
    assert rows(tmp_path / "news.db", "select count(distinct topic_id) from topic_news") == [(12,)]

    responses = classified(tmp_path)
    assert [c["topic"] for c in responses] == [f"t{i:02d}" for i in range(12)]
    assert {c["cls"] for c in responses} == {"ok"} and {c["engine"] for c in responses} == {"google"}
    assert all(c["bytes"] > 10_000 and c["items"] >= 10 and c["page_type"] == "first" for c in responses)
    latency = {c["topic"]: c["latency"] for c in responses}
    assert latency["t03"] >= 1.4 and latency["t07"] >= 0.6
    assert not any(c["probe"] or c["bench"] for c in responses)


def test_a_per_engine_floor_holds_for_its_engine_and_scrapys_delays_do_not_undercut_it(scrapy_cmd, fakes, tmp_path):
    cfg = config(tmp_path, fakes, ("google", "bing"), floor=0.4, jitter=0.1, per_engine={"google": 2.0})
    result = scrapy_cmd(
        "crawlall",
        "-a",
        f"topics={topics(4)}",
        "-a",
        "once=1",
        # Scrapy's own delay, randomised 0.5-1.5x, and AutoThrottle are on: they may only add
        "-s",
        "DOWNLOAD_DELAY=0.2",
        "-s",
        "DOWNLOAD_DELAY_JITTER=0.5",
        "-s",
        "AUTOTHROTTLE_ENABLED=1",
        "-s",
        "AUTOTHROTTLE_START_DELAY=0.1",
        "-s",
        "AUTOTHROTTLE_TARGET_CONCURRENCY=8",
        *recording(tmp_path),
        env={"TOPICSTREAMS_CONFIG": str(cfg)},
    )
    assert result.returncode == 0, result.stderr[-3000:]
    google, bing = arrivals(fakes, "google"), arrivals(fakes, "bing")
    assert len(google) == 4 and len(bing) >= 4
    assert min(sent_gaps(tmp_path, "google")) >= 2.0 - FLOAT_ROUNDING, sent_gaps(tmp_path, "google")
    assert min(sent_gaps(tmp_path, "bing")) >= 0.4 - FLOAT_ROUNDING, sent_gaps(tmp_path, "bing")
    assert min(gaps(bing)) < 2.0  # bing keeps its own, shorter floor


def test_two_429s_bench_for_2_then_4_seconds_then_the_pace_resumes_and_every_topic_is_stored(
    scrapy_cmd, fakes, tmp_path
):
    cfg = config(tmp_path, fakes, floor=0.5, jitter=0.2, cooldown={"initial": 2, "factor": 2, "max": 30})
    fakes.script("google", [{"status": 429, "body": "Too Many Requests"}, {"status": 429, "body": "Slow down"}])
    result = scrapy_cmd(
        "crawl",
        "google",
        "-a",
        f"topics={topics(5)}",
        "-a",
        "once=1",
        *recording(tmp_path),
        env={"TOPICSTREAMS_CONFIG": str(cfg)},
    )
    assert result.returncode == 0, result.stderr[-3000:]
    seen = arrivals(fakes)
    assert [entry["status"] for entry in seen] == [429, 429] + [200] * 5
    # the topic that met the block is the probe: it goes first once each cooldown is over
    assert [entry["query"]["q"] for entry in seen] == ["t00", "t00", "t00", "t01", "t02", "t03", "t04"]
    between = sent_gaps(tmp_path)
    assert len(between) == 6 and between[0] >= 2.0 and between[1] >= 4.0, between  # each cooldown whole
    assert min(between[2:]) >= 0.5 - FLOAT_ROUNDING and max(gaps(seen)[2:]) < 2.0, between  # back to the pace
    assert stat_count(result.stderr, "hard_blocks") == 2 and stat_count(result.stderr, "cooldowns") == 2
    assert stat_count(result.stderr, "probes") == 2 and stat_count(result.stderr, "requests") == 7
    assert "cooling down for 2 s (1 in a row)" in result.stderr and "cooling down for 4 s (2 in a row)" in result.stderr
    assert rows(tmp_path / "news.db", "select count(distinct topic_id) from topic_news") == [(5,)]


def test_a_long_retry_after_outlasts_the_cooldown(scrapy_cmd, fakes, tmp_path):
    cfg = config(tmp_path, fakes, floor=0.3, cooldown={"initial": 1, "factor": 2, "max": 2})
    fakes.script("google", [{"status": 503, "headers": {"Retry-After": "3"}}])
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
    between = sent_gaps(tmp_path)
    assert len(arrivals(fakes)) == 3 and between[0] >= 3.0, between
    assert "Retry-After 3 s" in result.stderr


SMALL_RESULTS = (
    '<!DOCTYPE html><html lang="en"><body><div id="rso"><div data-news-doc-id="1">'
    '<a class="WlydOe" href="https://thin.example.org/one"><div role="heading">One thin result</div></a>'
    "</div></div></body></html>"
)


def test_captcha_pages_empty_lists_and_thin_pages_bench_the_engine(scrapy_cmd, fakes, tmp_path):
    cfg = config(tmp_path, fakes, floor=0.3, jitter=0, cooldown={"initial": 1, "factor": 1, "max": 1})
    fakes.route("google", "captcha", ["captcha200", "results"])  # a CAPTCHA served with 200 OK
    fakes.route("google", "hollow", ["blank", "results"])  # no items and no "no results" message
    fakes.route("google", "thin", [{"body": SMALL_RESULTS}, "results"])  # a result, but far below normal size
    fakes.route("google", "nothing", "empty")  # a genuine "no results" page
    names = "t00,t01,t02,t03,t04,captcha,hollow,thin,nothing"
    result = scrapy_cmd(
        "crawl",
        "google",
        "-a",
        f"topics={names}",
        "-a",
        "once=1",
        *recording(tmp_path),
        env={"TOPICSTREAMS_CONFIG": str(cfg)},
    )
    assert result.returncode == 0, result.stderr[-3000:]
    stderr = result.stderr
    assert "challenge for topic 'captcha'" in stderr
    assert "soft_block for topic 'hollow'" in stderr and "no result items and no 'no results' message" in stderr
    assert "soft_block for topic 'thin'" in stderr and "below 0.3 x the median" in stderr
    assert "for topic 'nothing'" not in stderr
    assert stat_count(stderr, "challenges") == 1 and stat_count(stderr, "soft_blocks") == 2
    assert stat_count(stderr, "cooldowns") == 3 and stat_count(stderr, "probes") == 3
    seen = arrivals(fakes)
    order = [entry["query"]["q"] for entry in seen]
    sent = sorted(classified(tmp_path), key=lambda c: c["sent_at"])
    assert [c["topic"] for c in sent] == order
    for blocked in ("captcha", "hollow", "thin"):
        first = order.index(blocked)
        assert order[first + 1] == blocked  # retried first, as the probe
        assert sent[first + 1]["sent_at"] - sent[first]["sent_at"] >= 1.0  # ... after the whole cooldown
    stored = {
        name
        for (name,) in rows(
            tmp_path / "news.db", "select distinct t.name from topic_news tn join topics t on t.id = tn.topic_id"
        )
    }
    assert stored == {"t00", "t01", "t02", "t03", "t04", "captcha", "hollow", "thin"}


def test_continuous_mode_rescrapes_each_interval_follows_the_table_and_stops_cleanly(scrapy_cmd, fakes, tmp_path):
    cfg = config(tmp_path, fakes, floor=0.3, jitter=0.2, scrape_interval=4)
    scrapy_cmd("topics", "add", "alpha", "beta", "gamma", env={"TOPICSTREAMS_CONFIG": str(cfg)}, check=True)
    process = start_crawl(scrapy_cmd, fakes, cfg, "-s", "CLOSESPIDER_TIMEOUT=17", *recording(tmp_path))
    try:
        started = arrivals(fakes)[0]["time"]
        time.sleep(max(0.0, started + 5 - time.time()))
        changed = time.time()
        db = tmp_path / "news.db"
        with sqlite3.connect(db) as conn:
            conn.execute("insert into topics (name) values ('delta')")
            conn.execute("update topics set active = 0 where name = 'alpha'")
        _, stderr = process.communicate(timeout=120)
    finally:
        process.kill()
    assert process.returncode == 0, stderr[-3000:]
    assert "Spider closed (closespider_timeout)" in stderr and "Traceback" not in stderr
    seen = [(entry["query"]["q"], entry["time"]) for entry in arrivals(fakes)]
    when = {name: [at for q, at in seen if q == name] for name in ("alpha", "beta", "gamma", "delta")}
    # staggered across the first interval, then about once per interval (4 s, jitter +-10 %)
    assert sorted(at[0] - started for at in (when["alpha"], when["beta"], when["gamma"]))[-1] < 4
    for name in ("beta", "gamma"):
        assert 3 <= len(when[name]) <= 5, when
        assert min(gaps([{"time": at} for at in when[name]])) >= 4 * 0.9 - 0.5, when[name]
    # the new topic within about one interval of its insertion; the deactivated one no more after a reconcile
    assert when["delta"] and when["delta"][0] - changed <= 4 * 1.1 + 1.0, (when["delta"], changed)
    assert all(at <= changed + 4 * 1.1 + 1.0 for at in when["alpha"]), (when["alpha"], changed)
    assert min(sent_gaps(tmp_path)) >= 0.3 - FLOAT_ROUNDING, sent_gaps(tmp_path)


def test_more_topics_than_the_floor_allows_run_at_the_floor_and_cycle_slower(scrapy_cmd, fakes, tmp_path):
    # 6 topics, an interval of 1 s and a floor of 0.4 s: at most 2.5 topics fit in an interval
    cfg = config(tmp_path, fakes, floor=0.4, jitter=0, scrape_interval=1)
    result = scrapy_cmd(
        "crawl",
        "google",
        "-a",
        f"topics={topics(6)}",
        "-s",
        "CLOSESPIDER_TIMEOUT=9",
        *recording(tmp_path),
        env={"TOPICSTREAMS_CONFIG": str(cfg)},
    )
    assert result.returncode == 0, result.stderr[-3000:]
    seen = arrivals(fakes)
    assert min(sent_gaps(tmp_path)) >= 0.4 - FLOAT_ROUNDING, sent_gaps(tmp_path)  # never faster than the floor
    counts = {name: [entry["time"] for entry in seen if entry["query"]["q"] == name] for name in topics(6).split(",")}
    assert all(len(times) >= 2 for times in counts.values()), counts  # every topic comes round: none starves
    sent = {name: sorted(c["sent_at"] for c in classified(tmp_path) if c["topic"] == name) for name in counts}
    for times in sent.values():  # ... slower than the interval, as the floor allows (on the crawl's own clock)
        assert min(differences(times)) >= 6 * 0.4 - 0.1, times


@pytest.mark.parametrize(
    ("sig", "benched"),
    [(signal.SIGINT, False), (signal.SIGTERM, False), (signal.SIGINT, True)],
    ids=["SIGINT", "SIGTERM", "SIGINT-while-benched"],
)
def test_a_continuous_crawl_closes_cleanly_on_a_signal(scrapy_cmd, fakes, tmp_path, sig, benched):
    cfg = config(tmp_path, fakes, floor=0.3, scrape_interval=600, cooldown={"initial": 600, "factor": 2, "max": 600})
    if benched:  # a ten-minute cooldown does not hold the shutdown up
        fakes.script("google", [{"status": 429}])
    process = start_crawl(scrapy_cmd, fakes, cfg, "-a", "topics=alpha,beta")
    try:
        time.sleep(1.0)
        process.send_signal(sig)
        _, stderr = process.communicate(timeout=30)
    finally:
        process.kill()
    assert process.returncode == 0, stderr[-3000:]
    assert "Spider closed (shutdown)" in stderr and "Traceback" not in stderr, stderr[-3000:]
    assert ("cooling down for 600 s" in stderr) is benched


def test_closespider_itemcount_closes_a_continuous_crawl(scrapy_cmd, fakes, tmp_path):
    cfg = config(tmp_path, fakes, floor=0.3, scrape_interval=600)
    result = scrapy_cmd(
        "crawl",
        "google",
        "-a",
        "topics=alpha,beta,gamma",
        "-s",
        "CLOSESPIDER_ITEMCOUNT=5",
        env={"TOPICSTREAMS_CONFIG": str(cfg)},
        timeout=120,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert "Spider closed (closespider_itemcount)" in result.stderr and "Traceback" not in result.stderr
