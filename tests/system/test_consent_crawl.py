"""Consent walls in real Chromium: the real spiders of all four engines (``scrapy crawlall``) against fake engines
that put their wall in front of the results — at the results URL in the engine's second language, or behind a
redirect to their consent host in English.

With ``browser.consent: none`` a wall is a challenge (reason consent) and nothing is stored; with ``reject`` or
``accept`` each engine presses that button once, stores its results, and its next run in the same profile meets no
wall; a wall whose form never works is answered once per cooldown, never in a loop.
"""

from __future__ import annotations

import json
import sqlite3
from itertools import pairwise
from pathlib import Path

import pytest

from fake_engines import FakeEngines
from tests.support.crawl_checks import STATS_DUMP, expected_urls
from tests.support.fakes_http import reset_fakes_per_test, running_fakes
from tests.support.project import write_config
from topicstreams import ENGINES

pytestmark = pytest.mark.timeout(300)

SETUPS = {
    # engine -> (where its wall is served, its language)
    "walls in the second language, redirects in English": {
        "google": ("wall", "de"),
        "yahoo": ("redirect", "en"),
        "bing": ("wall", "fr"),
        "brave": ("redirect", "en"),
    },
    "redirects in English, walls in the second language": {
        "google": ("redirect", "en"),
        "yahoo": ("wall", "it"),
        "bing": ("redirect", "en"),
        "brave": ("wall", "es"),
    },
}


fakes = running_fakes(*ENGINES)
_clean = reset_fakes_per_test()  # consent walls off, no request log, before each test


def crawl_config(folder: Path, fakes: FakeEngines, consent: str, only: tuple[str, ...] = ENGINES, **scraper) -> Path:
    return write_config(
        folder,
        {
            "database": {"url": "sqlite:///news.db"},
            "engines": {name: {"base_url": fakes.base_url(name), "enabled": name in only} for name in ENGINES},
            "scraper": {
                "schedule": "fixed",
                "pacing": {"default_min_interval": 0.2, "per_engine": {"brave": 0.2}},
                "cooldown": {"initial": 1, "max": 5},
                **scraper,
            },
            "browser": {"profile_dir": "profiles", "consent": consent},
        },
    )


def node_id(config: Path) -> str:
    from topicstreams.config.loading import load_config

    return load_config(environ={"TOPICSTREAMS_CONFIG": str(config)}).get("node.id")


def stored(db: Path) -> set[str]:
    with sqlite3.connect(db) as conn:
        return {row[0] for row in conn.execute("select url from news")}


def status_reasons(db: Path) -> dict[str, list[str]]:
    with sqlite3.connect(db) as conn:
        return {
            engine: json.loads(reasons) for engine, reasons in conn.execute("select engine, reasons from engine_status")
        }


def saves(fakes: FakeEngines, engine: str) -> list[dict]:
    """The wall's form answered: the save requests the fake received (with the choice they carried)."""
    return [entry for entry in fakes.requests(engine) if entry.get("step") in ("consent_saved", "consent_dropped")]


def walls_met(fakes: FakeEngines, engine: str) -> list[dict]:
    return [entry for entry in fakes.requests(engine) if entry.get("step") in ("consent_wall", "consent_redirect")]


def put_walls(fakes: FakeEngines, setup: str) -> None:
    for engine, (mode, language) in SETUPS[setup].items():
        fakes.consent(engine, mode, language)


@pytest.mark.parametrize("setup", SETUPS)
def test_with_consent_none_every_wall_is_a_consent_challenge_and_nothing_is_stored(scrapy_cmd, fakes, tmp_path, setup):
    put_walls(fakes, setup)
    config = crawl_config(tmp_path, fakes, "none", once_attempts=1)
    result = scrapy_cmd(
        "crawlall", "-a", "topics=alpha", "-a", "once=1", *STATS_DUMP, env={"TOPICSTREAMS_CONFIG": str(config)}
    )
    assert result.returncode == 0, result.stderr[-3000:]
    stderr = result.stderr
    assert stored(tmp_path / "news.db") == set()
    for engine in ENGINES:
        assert walls_met(fakes, engine), engine
        assert f"[{engine}] challenge for topic 'alpha' (" in stderr
        assert f"'topicstreams/{engine}/challenges': 1" in stderr
        assert f"topicstreams/{engine}/consents_answered" not in stderr
        assert saves(fakes, engine) == []  # nobody pressed a button
    assert stderr.count("): consent; cooling down for ") == len(ENGINES), stderr[-3000:]  # the reason, each engine once
    assert all("consent" in reasons for reasons in status_reasons(tmp_path / "news.db").values())


@pytest.mark.parametrize(("setup", "choice"), list(zip(SETUPS, ("reject", "accept"), strict=True)))
def test_a_wall_is_answered_once_the_results_are_stored_and_the_next_run_meets_no_wall(
    scrapy_cmd, fakes, tmp_path, setup, choice
):
    put_walls(fakes, setup)
    config = crawl_config(tmp_path, fakes, choice)
    env = {"TOPICSTREAMS_CONFIG": str(config)}
    result = scrapy_cmd("crawlall", "-a", "topics=alpha", "-a", "once=1", *STATS_DUMP, env=env)
    assert result.returncode == 0, result.stderr[-3000:]
    stderr = result.stderr
    assert stored(tmp_path / "news.db") == set().union(*(expected_urls(engine, "alpha") for engine in ENGINES))
    for engine in ENGINES:
        assert [entry["consent_choice"] for entry in saves(fakes, engine)] == [choice], engine
        assert f"'topicstreams/{engine}/consents_answered': 1" in stderr
        assert f"'topicstreams/{engine}/challenges'" not in stderr  # answered: no cooldown, no challenge
        told = [line for line in stderr.splitlines() if f"[{engine}] answered its consent wall" in line]
        assert len(told) == 1 and " INFO: " in told[0], told
        assert told[0].endswith(
            f"answered its consent wall ({choice}) once, as a person would; the browser "
            f"profile {tmp_path.resolve() / 'profiles'}/{node_id(config)}/{engine} keeps the "
            "choice"
        ), told

    # The next start, in the same profiles: the cookie was kept, no engine meets its wall.
    fakes.reset()
    put_walls(fakes, setup)
    again = scrapy_cmd("crawlall", "-a", "topics=beta", "-a", "once=1", *STATS_DUMP, env=env)
    assert again.returncode == 0, again.stderr[-3000:]
    for engine in ENGINES:
        assert walls_met(fakes, engine) == [] and saves(fakes, engine) == [], engine
        assert all(entry["consent_cookie"] for entry in fakes.results_requests(engine))
        assert f"topicstreams/{engine}/consents_answered" not in again.stderr
    assert expected_urls("google", "beta") <= stored(tmp_path / "news.db")


def test_a_form_that_never_works_is_answered_once_per_cooldown_never_in_a_loop(scrapy_cmd, fakes, tmp_path):
    fakes.consent("google", "broken", "de")
    config = crawl_config(tmp_path, fakes, "reject", only=("google",), once_attempts=3)
    result = scrapy_cmd(
        "crawl", "google", "-a", "topics=alpha", "-a", "once=1", env={"TOPICSTREAMS_CONFIG": str(config)}
    )
    assert result.returncode == 0, result.stderr[-3000:]
    stderr = result.stderr
    # three attempts, two cooldowns between them: one answer each time, and each answer's page met the wall again
    answered = saves(fakes, "google")
    assert [entry["consent_choice"] for entry in answered] == ["reject"] * 3
    assert "'topicstreams/google/consents_answered': 3" in stderr
    assert "'topicstreams/google/challenges': 3" in stderr
    assert "'topicstreams/google/cooldowns': 3" in stderr
    assert "ERROR: gave up topic 'alpha' after 3 attempts: last challenge (consent)" in stderr
    # never two answers without a cooldown between them
    times = [entry["time"] for entry in answered]
    assert all(later - earlier >= 1 for earlier, later in pairwise(times)), times
    assert stored(tmp_path / "news.db") == set()
