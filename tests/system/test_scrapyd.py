"""Under a real Scrapyd: the project deployed with ``scrapyd-deploy`` as an egg, its spiders scheduled through
``schedule.json`` against the fake engines, each job judged by its rows and its log (Scrapyd calls a job that failed
at start "finished")."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from tests.support.crawl_checks import expected_urls, rows, stat_count
from tests.support.fakes_http import reset_fakes_per_test, running_fakes
from tests.support.project import write_config
from tests.support.scrapyd_node import ScrapydNode, log_problems, project_copy
from topicstreams import ENGINES

pytestmark = pytest.mark.timeout(300)

fakes = running_fakes(*ENGINES)
_clean = reset_fakes_per_test()


def job_config(folder: Path, fakes, db: str, engines=("google",), **extra) -> Path:
    """A config for ``engines`` against the fakes, into the SQLite file ``db`` of ``folder``; absolute paths only
    (the job runs in Scrapyd's folder)."""
    folder.mkdir(parents=True, exist_ok=True)
    return write_config(
        folder,
        {
            "database": {"url": f"sqlite:///{folder / db}"},
            "node": {"id": "node-a"},
            "engines": {name: {"base_url": fakes.base_url(name), "enabled": name in engines} for name in ENGINES},
            "scraper": {
                "schedule": "fixed",
                "pacing": {"default_min_interval": 0.2, "jitter_ratio": 0.0, "per_engine": {"brave": 0.2}},
            },
            "browser": {"profile_dir": str(folder / "profiles")},
            **extra,
        },
    )


@pytest.fixture(scope="module")
def scrapyd(tmp_path_factory, fakes):
    """One Scrapyd whose own environment names a config (``env/config.yml``), with the project deployed to it."""
    folder = tmp_path_factory.mktemp("scrapyd")
    env_config = job_config(folder / "env", fakes, "env.db")
    with ScrapydNode(folder, "node-a", env={"TOPICSTREAMS_CONFIG": str(env_config)}) as node:
        deployed = node.deploy(project_copy(folder))
        node.deployed = deployed
        node.env_config = env_config
        yield node


def test_scrapyd_deploy_uploads_an_egg_with_every_spider_but_duckduckgo(scrapyd):
    assert '"status": "ok"' in scrapyd.deployed.stdout + scrapyd.deployed.stderr
    eggs = list((scrapyd.folder / "eggs" / "topicstreams").glob("*.egg"))
    assert len(eggs) == 1
    assert sorted(scrapyd.get("listspiders.json", project="topicstreams")["spiders"]) == sorted(ENGINES)


def test_a_scheduled_google_job_runs_from_the_egg_and_stores_its_rows(scrapyd, fakes, tmp_path):
    config = job_config(tmp_path, fakes, "news.db")
    job = scrapyd.schedule(
        "google", {"TOPICSTREAMS_CONFIG": str(config), "LOG_LEVEL": "DEBUG"}, topics="alpha,beta", once="1"
    )
    scrapyd.wait(job)
    log = scrapyd.job_log("google", job)
    assert log_problems(log) == []
    assert "google spider starting (once" in log
    # the window's stats count the last page's items too (they are published once the page is parsed)
    assert stat_count(log, "window/yielding_pages") == stat_count(log, "window/result_pages") == 2
    assert stat_count(log, "window/items") == stat_count(log, "items_scraped") > 0
    # the code and its migrations came from the zipped egg, not from this checkout
    assert "Extracted the migration scripts from " + str(scrapyd.folder / "eggs") in log

    wanted = expected_urls("google", "alpha", "beta")
    assert {url for (url,) in rows(tmp_path / "news.db", "select url from news")} == wanted
    events = rows(
        tmp_path / "news.db",
        "select t.name, count(*) from topic_news tn join topics t on t.id = tn.topic_id"
        " group by t.name order by t.name",
    )
    assert events == [("alpha", len(expected_urls("google", "alpha"))), ("beta", len(expected_urls("google", "beta")))]
    assert rows(tmp_path / "news.db", "select distinct engine from topic_news_engines") == [("google",)]
    topics_asked = sorted(entry["query"]["q"] for entry in fakes.requests("google") if entry["kind"] == "results")
    assert topics_asked == ["alpha", "beta"]
    # the job's setting won over the config named by Scrapyd's environment
    assert not (scrapyd.env_config.parent / "env.db").exists()


def test_without_the_setting_a_job_reads_the_config_named_by_scrapyds_environment(scrapyd):
    job = scrapyd.schedule("google", topics="gamma", once="1")
    scrapyd.wait(job)
    assert log_problems(scrapyd.job_log("google", job)) == []
    db = scrapyd.env_config.parent / "env.db"
    assert {url for (url,) in rows(db, "select url from news")} == expected_urls("google", "gamma")


def test_a_job_that_fails_at_start_is_finished_to_scrapyd_and_its_log_says_why(scrapyd, fakes, tmp_path):
    config = job_config(tmp_path, fakes, "news.db", scraper={"max_pages": 0})
    job = scrapyd.schedule("google", {"TOPICSTREAMS_CONFIG": str(config)}, once="1")
    assert scrapyd.wait(job)[job]["end_time"]  # "finished", as Scrapyd sees it
    log = scrapyd.job_log("google", job)
    problems = log_problems(log)
    assert problems[0].endswith("ERROR: config error: scraper.max_pages: got 0, expected an integer >= 1"), log
    assert "the spider never closed" in problems
    assert not (tmp_path / "news.db").exists()
    assert fakes.requests("google") == []


def test_a_job_given_an_argument_it_does_not_understand_fails_and_its_log_says_which(scrapyd, fakes, tmp_path):
    config = job_config(tmp_path, fakes, "news.db")
    job = scrapyd.schedule("google", {"TOPICSTREAMS_CONFIG": str(config)}, topics="alpha", once="maybe")
    assert scrapyd.wait(job)[job]["end_time"]
    problems = log_problems(scrapyd.job_log("google", job))
    assert problems[0].endswith(
        "ERROR: scrapy crawl: error: -a once: got 'maybe', expected 1, true, yes, 0, false or no"
    ), problems
    assert not (tmp_path / "news.db").exists() and fakes.requests("google") == []


def test_every_other_engine_runs_as_a_job_of_its_own_at_the_same_time(scrapyd, fakes, tmp_path):
    others = [engine for engine in ENGINES if engine != "google"]
    config = job_config(tmp_path, fakes, "news.db", engines=others)
    jobs = {
        engine: scrapyd.schedule(engine, {"TOPICSTREAMS_CONFIG": str(config)}, topics="alpha", once="1")
        for engine in others
    }
    scrapyd.wait(*jobs.values())
    for engine, job in jobs.items():
        assert log_problems(scrapyd.job_log(engine, job)) == [], engine
    stored = rows(
        tmp_path / "news.db", "select n.url, e.engine from topic_news_engines e join news n on n.id = e.news_id"
    )
    assert set(stored) == {(url, engine) for engine in others for url in expected_urls(engine, "alpha")}


def test_a_continuous_job_runs_until_scrapyd_cancels_it_and_then_closes_cleanly(scrapyd, fakes, tmp_path):
    config = job_config(
        tmp_path,
        fakes,
        "news.db",
        scraper={"scrape_interval": 1, "pacing": {"default_min_interval": 0.2, "jitter_ratio": 0.0}},
    )
    job = scrapyd.schedule("google", {"TOPICSTREAMS_CONFIG": str(config)}, topics="delta")
    deadline = time.monotonic() + 60
    while len([e for e in fakes.requests("google") if e["kind"] == "results"]) < 2:  # it came back for the topic
        assert time.monotonic() < deadline, scrapyd.job_log("google", job)[-3000:]
        time.sleep(0.2)
    assert scrapyd.post("cancel.json", [("project", "topicstreams"), ("job", job)])["prevstate"] == "running"
    scrapyd.wait(job, timeout=60)
    log = scrapyd.job_log("google", job)
    assert "google spider starting (continuous" in log
    assert [line for line in log.splitlines() if " ERROR: " in line or "Traceback" in line] == []
    assert "Spider closed (shutdown)" in log
    assert {url for (url,) in rows(tmp_path / "news.db", "select url from news")} == expected_urls("google", "delta")
