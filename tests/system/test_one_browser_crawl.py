"""Four engines in one browser, end to end: ``scrapy crawlall`` of the four real spiders in real Chromium against the
four fake engines.

* one Chromium and one Playwright driver for the whole process (its process tree counted while it crawls), and
  each engine in its own context: a cookie one engine's fake sets is never sent to another's (every fake listens
  on 127.0.0.1, and cookies ignore ports, so a shared context would send it), and cookies survive a second run;
* the shared Chromium killed mid-crawl: a new one is launched, every engine goes on, every topic is stored;
* one engine's page that never answers: the other engines keep their pace meanwhile;
* one engine's renderer that crashes: that engine's topic fails and it goes on in a fresh tab, the browser and the
  other engines never notice.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from benchmarks.soak import process_kind
from tests.support.crawl_checks import FAST_COOLDOWN, crawl_config, differences, gaps, rows
from tests.support.fakes_http import reset_fakes_per_test, running_fakes
from tests.support.project import REPO
from topicstreams import ENGINES
from topicstreams.browser.chromium import STATE_FILE

pytestmark = pytest.mark.timeout(240)

fakes = running_fakes(*ENGINES)
_clean = reset_fakes_per_test()


def start_crawlall(folder: Path, config: Path, *args: str) -> subprocess.Popen:
    env = {k: v for k, v in os.environ.items() if k not in ("TOPICSTREAMS_CONFIG", "TOPICSTREAMS_DB_URL")}
    env.update(SCRAPY_SETTINGS_MODULE="topicstreams.settings", PYTHONPATH=str(REPO), TOPICSTREAMS_CONFIG=str(config))
    return subprocess.Popen(
        [sys.executable, "-m", "scrapy", "crawlall", *args],
        cwd=folder,
        env=env,
        text=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
    )


def tree(pid: int) -> dict[str, list[psutil.Process]]:
    """The crawl's descendants by kind, as the soak's sampler tells them apart (:func:`benchmarks.soak.process_kind`):
    ``browser`` (the Chromium the driver started), ``driver`` (Playwright's node), ``other`` (renderers, GPU,
    network…, and a helper Chromium has forked but not yet turned into one)."""
    kinds: dict[str, list[psutil.Process]] = {"browser": [], "driver": [], "other": []}
    try:
        root = psutil.Process(pid)
        children = root.children(recursive=True)
    except psutil.NoSuchProcess:
        return kinds
    for proc in children:
        try:
            kind = process_kind(proc, root)
        except psutil.Error:
            continue
        kinds[kind if kind in ("browser", "driver") else "other"].append(proc)
    return kinds


def finish(crawl: subprocess.Popen, timeout: float = 150) -> str:
    _, err = crawl.communicate(timeout=timeout)
    assert crawl.returncode == 0, err[-4000:]
    assert "Traceback" not in err, err[max(0, err.find("Traceback") - 1500) : err.find("Traceback") + 4000]
    return err


def same_pace(floor: float) -> dict:
    """Every engine at ``floor``, Brave too (its shipped floor is twice the others'), no jitter."""
    return {"pacing": {"default_min_interval": floor, "jitter_ratio": 0.0, "per_engine": {"brave": floor}}}


def stored_pairs(db: Path) -> set[tuple[str, str]]:
    """(topic, engine) for every attribution stored."""
    return set(
        rows(db, "select distinct t.name, tne.engine from topic_news_engines tne join topics t on t.id = tne.topic_id")
    )


def test_crawlall_runs_one_browser_and_keeps_each_engines_cookies_its_own_across_runs(fakes, tmp_path):
    for engine in ENGINES:  # each fake's first results page sets a cookie of its own
        fakes.script(
            engine, [{"page": "results", "headers": {"Set-Cookie": f"{engine}_probe=1; Path=/; Max-Age=86400"}}]
        )
    config = crawl_config(tmp_path, fakes, floor=0.2, engines=ENGINES, scraper=same_pace(0.2))
    crawl = start_crawlall(tmp_path, config, "-a", "topics=alpha,beta,gamma", "-a", "once=1")
    seen, descendants = {"browser": 0, "driver": 0, "other": 0}, set()
    while crawl.poll() is None:
        for kind, procs in tree(crawl.pid).items():
            seen[kind] = max(seen[kind], len(procs))
            descendants.update(procs)
        time.sleep(0.2)
    finish(crawl)
    assert psutil.wait_procs(list(descendants), timeout=10)[1] == []  # the crawl closed its browser and driver
    assert seen["browser"] == 1 and seen["driver"] == 1, seen  # (before: one Chromium per engine, two drivers each)
    assert seen["other"] >= len(ENGINES)  # a renderer per engine's context, at least

    for engine in ENGINES:
        cookies = [entry["cookies"] for entry in fakes.results_requests(engine)]
        assert len(cookies) == 3 and cookies[0] == []
        assert all(f"{engine}_probe" in names for names in cookies[1:]), (engine, cookies)  # its own: sent back
        foreign = {name for entry in fakes.requests(engine) for name in entry["cookies"]} - {f"{engine}_probe"}
        assert not foreign, (engine, foreign)  # the others': never
        state = tmp_path / "profiles" / "node-a" / engine / STATE_FILE
        assert f"{engine}_probe" in state.read_text()
        assert stat.S_IMODE(state.stat().st_mode) == 0o600

    fakes.reset()  # a second run: each engine's first request already carries its cookie, and only its own
    crawl = start_crawlall(tmp_path, config, "-a", "topics=delta", "-a", "once=1")
    finish(crawl)
    for engine in ENGINES:
        [first] = fakes.results_requests(engine)
        assert first["cookies"] == [f"{engine}_probe"], (engine, first["cookies"])


def test_killing_the_shared_chromium_mid_crawlall_every_engine_recovers_and_every_topic_is_stored(fakes, tmp_path):
    topics = [f"t{i}" for i in range(6)]
    config = crawl_config(
        tmp_path,
        fakes,
        floor=0.3,
        engines=ENGINES,
        scraper={"cooldown": FAST_COOLDOWN, "once_attempts": 4, **same_pace(0.3)},
    )
    crawl = start_crawlall(tmp_path, config, "-a", "topics=" + ",".join(topics), "-a", "once=1")
    deadline = time.monotonic() + 60
    while not all(fakes.results_requests(engine) for engine in ENGINES):  # every engine is crawling
        assert crawl.poll() is None and time.monotonic() < deadline, "the crawl ended before every engine started"
        time.sleep(0.05)
    [browser] = tree(crawl.pid)["browser"]
    browser.kill()
    killed_at = time.time()
    err = finish(crawl)

    assert "the shared chromium went away (it crashed or was killed)" in err
    assert "(launch 2: the previous one died)" in err
    assert stored_pairs(tmp_path / "news.db") == {(topic, engine) for topic in topics for engine in ENGINES}
    for engine in ENGINES:  # each engine went on in the new browser
        assert any(entry["time"] > killed_at for entry in fakes.results_requests(engine)), engine
    assert tree(crawl.pid)["browser"] == []


def test_a_page_that_never_answers_on_one_engine_leaves_the_others_at_their_pace(fakes, tmp_path):
    floor, navigation_s = 0.4, 6
    fakes.route("google", "t1", {"page": "results", "delay": 30})  # never, within the test: the navigation times out
    topics = [f"t{i}" for i in range(8)]
    config = crawl_config(
        tmp_path,
        fakes,
        floor=floor,
        engines=ENGINES,
        scraper={"cooldown": FAST_COOLDOWN, "once_attempts": 1, **same_pace(floor)},
    )
    crawl = start_crawlall(
        tmp_path,
        config,
        "-a",
        "topics=" + ",".join(topics),
        "-a",
        "once=1",
        "-s",
        f"PLAYWRIGHT_DEFAULT_NAVIGATION_TIMEOUT={navigation_s * 1000}",
    )
    err = finish(crawl)

    # the hung request is logged only once its answer goes, after the crawl: google's t0 and t2 frame the hang
    google = {entry["query"]["q"]: entry["time"] for entry in fakes.results_requests("google")}
    assert "t1" not in google and "gave up topic 't1' after 1 attempt" in err
    hang_began, hang_ended = google["t0"], google["t2"]
    assert hang_ended - hang_began >= navigation_s
    for engine in ("bing", "yahoo", "brave"):
        requests = fakes.results_requests(engine)
        assert len(requests) == len(topics)
        # all through google's hang they went on: several pages, never held up for anything like its length (a gap
        # is the floor, or a page's render when that takes longer: a busy 2-core machine renders in up to ~2 s)
        # (until the hang ended, or the engine had crawled its last topic)
        during = [hang_began] + [e["time"] for e in requests if hang_began < e["time"] < hang_ended]
        if requests[-1]["time"] > hang_ended:
            during.append(hang_ended)
        assert len(during) >= 4, (engine, during)
        assert max(differences(during)) < navigation_s / 2, (engine, during)
    db = tmp_path / "news.db"
    assert stored_pairs(db) == {(topic, engine) for topic in topics for engine in ENGINES} - {("t1", "google")}


CRASHING_PAGE = (
    "<!doctype html><html><head><script>const hoard = []; for (;;) hoard.push(new Array(1e6).fill(1.5));"
    "</script></head><body></body></html>"
)
"""A page whose script allocates until its renderer dies (of V8's heap limit, made small for this test)."""


def test_a_renderer_that_crashes_takes_one_engines_page_and_the_others_go_on(fakes, tmp_path):
    from topicstreams.browser.chromium import launch_options
    from topicstreams.config.loading import load_config

    floor = 0.3
    fakes.route("google", "t1", {"page": "results", "body": CRASHING_PAGE})
    topics = [f"t{i}" for i in range(5)]
    config = crawl_config(
        tmp_path,
        fakes,
        floor=floor,
        engines=ENGINES,
        scraper={"cooldown": FAST_COOLDOWN, "once_attempts": 1, **same_pace(floor)},
    )
    launch = launch_options(load_config({}, environ={}).sections.browser)
    launch["args"] = [*launch["args"], "--js-flags=--max-old-space-size=64"]  # the hoarding page dies in a second
    crawl = start_crawlall(
        tmp_path,
        config,
        "-a",
        "topics=" + ",".join(topics),
        "-a",
        "once=1",
        "-s",
        "PLAYWRIGHT_LAUNCH_OPTIONS=" + json.dumps(launch),
    )
    err = finish(crawl)

    [given_up] = [line for line in err.splitlines() if "gave up topic 't1' after 1 attempt" in line]
    assert "last error" in given_up and "crash" in given_up.lower(), given_up
    assert "went away" not in err  # the browser itself lived on
    # google went on in a fresh tab; the others never noticed
    assert stored_pairs(tmp_path / "news.db") == {(topic, engine) for topic in topics for engine in ENGINES} - {
        ("t1", "google")
    }
    assert [entry["query"]["q"] for entry in fakes.results_requests("google")] == topics
    for engine in ("bing", "yahoo", "brave"):
        assert max(gaps(fakes.results_requests(engine))) < 2.0, engine
