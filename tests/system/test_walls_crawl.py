"""No wall becomes news, whoever's wall it is, in real Chromium: one ``crawlall -a once=1`` of all four engines
against fakes that answer each engine's results URL, one topic each, with another engine's consent wall, a
publisher's consent dialog (in Polish, named by its words alone), a login form and a hotel's Wi-Fi portal.

Each is a challenge (consent or wall), nothing is stored, and no button of anyone's wall is pressed, though the
crawl answers consent walls (``browser.consent: reject``, the default): these are not the engine's own.
"""

from __future__ import annotations

import json
import sqlite3

import pytest

from fake_engines import wall_pages
from tests.support.fakes_http import fetch, running_fakes
from tests.support.parsing import parsing_reader
from tests.support.project import ScrapyRunner, write_config
from topicstreams import ENGINES

pytestmark = pytest.mark.timeout(240)

fakes = running_fakes(*ENGINES)

OTHER = dict(zip(ENGINES, ENGINES[1:] + ENGINES[:1], strict=True))
"""Whose consent wall each engine's results URL serves."""
TOPICS = {
    # topic -> the page served at every engine's results URL for it (None: another engine's consent wall)
    "engine wall": None,
    "publisher consent": wall_pages.vendor_consent("pl", plain=True),
    "login": wall_pages.login_form("de"),
    "wifi": wall_pages.captive_portal(),
}
CONSENT_TOPICS = 2
"""Of the topics, the consent walls (the others are walls: login and portal)."""


def consent_wall_of(fakes, engine: str) -> str:
    """The fake ``engine``'s own consent wall, as it serves it at its results URL."""
    fakes.consent(engine, "wall")
    try:
        return fetch(parsing_reader(engine, fakes.base_url(engine)).engine.results_url("alpha", 0))[2]
    finally:
        fakes.consent(engine, "off")


@pytest.fixture(scope="module")
def crawl(fakes, tmp_path_factory):
    folder = tmp_path_factory.mktemp("walls")
    walls = {engine: consent_wall_of(fakes, engine) for engine in ENGINES}
    fakes.reset()
    for engine in ENGINES:
        for topic, page in TOPICS.items():
            fakes.route(engine, topic, {"body": page if page is not None else walls[OTHER[engine]]})
    config = write_config(
        folder,
        {
            "database": {"url": "sqlite:///news.db"},
            "node": {"id": "node-a"},
            "engines": {name: {"base_url": fakes.base_url(name)} for name in ENGINES},
            "scraper": {
                "schedule": "fixed",
                "once_attempts": 1,
                "pacing": {"default_min_interval": 0.2, "jitter_ratio": 0.0, "per_engine": {"brave": 0.2}},
                "cooldown": {"initial": 0.5, "factor": 1, "max": 0.5},
            },
            "browser": {"profile_dir": "profiles"},
        },
    )
    result = ScrapyRunner(folder)(
        "crawlall", "-a", f"topics={','.join(TOPICS)}", "-a", "once=1", env={"TOPICSTREAMS_CONFIG": str(config)}
    )
    requests = {engine: fakes.requests(engine) for engine in ENGINES}
    fakes.reset()
    return result, folder / "news.db", requests


def rows(db, sql: str) -> list[tuple]:
    with sqlite3.connect(db) as conn:
        return conn.execute(sql).fetchall()


def test_every_wall_was_served_and_nothing_is_stored(crawl):
    result, db, requests = crawl
    assert result.returncode == 0, result.stderr[-3000:]
    for engine in ENGINES:
        served = {entry["query"].get("p" if engine == "yahoo" else "q") for entry in requests[engine] if entry["step"]}
        assert set(TOPICS) <= served, (engine, served)
    assert rows(db, "select url from news") == []
    assert rows(db, "select count(*) from topic_news") == [(0,)]


def test_each_wall_is_a_challenge_and_the_consent_walls_say_so(crawl):
    result, db, _ = crawl
    counts = {
        engine: (requests, ok, challenges, consent_walls)
        for engine, requests, ok, challenges, consent_walls in rows(
            db,
            "select engine, sum(requests), sum(ok), sum(challenges), sum(consent_walls) from health_windows "
            "group by engine",
        )
    }
    assert counts == {engine: (len(TOPICS), 0, len(TOPICS), CONSENT_TOPICS) for engine in ENGINES}, result.stderr[
        -3000:
    ]
    reasons = dict(rows(db, "select engine, reasons from engine_status"))
    assert all("consent" in json.loads(reasons[engine]) for engine in ENGINES), reasons


def test_no_one_elses_wall_is_answered(crawl):
    result, _, requests = crawl
    for engine in ENGINES:
        assert not [entry for entry in requests[engine] if entry["method"] == "POST"], engine
        assert f"topicstreams/{engine}/consents_answered" not in result.stderr
