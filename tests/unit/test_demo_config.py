"""The demo's own configuration (``topicstreams/commands/demo.py``): a valid one, faster than the packaged defaults, and
what the demo prints about it before it crawls is true of both."""

from __future__ import annotations

from fake_engines import FakeEngines
from tests.support.project import write_config
from topicstreams import ENGINES
from topicstreams.commands.demo import (
    HEALTH,
    HOSTILE_STEPS,
    SCRAPER,
    available_engines,
    demo_config,
    hostile_engine,
    sped_up,
)
from topicstreams.config.loading import load_config


def test_the_demo_configuration_is_valid_and_judges_health_within_seconds(tmp_path):
    with FakeEngines(available_engines()) as fakes:
        path = write_config(tmp_path, demo_config(fakes))
        config = load_config({"TOPICSTREAMS_CONFIG": str(path)}, environ={})
    defaults = load_config({}, environ={})
    assert config.get("health.min_requests") == HEALTH["min_requests"] < defaults.get("health.min_requests")
    assert config.get("health.window") == HEALTH["window"] < defaults.get("health.window")
    assert config.get("health.weights") == defaults.get("health.weights")  # the health model stays the real one
    assert config.get("health.smoothing") == defaults.get("health.smoothing")
    assert config.get("health.degrade_factor") == defaults.get("health.degrade_factor")
    assert config.get("scraper.scrape_interval") == SCRAPER["scrape_interval"]
    for engine in ENGINES:
        assert config.min_interval(engine) < defaults.min_interval(engine)
    assert config.get("scraper.cooldown") == {"initial": 0.5, "factor": 1, "max": 10}


def test_the_demo_says_what_it_changed_beside_the_defaults():
    assert sped_up() == [
        "to show health within a minute, the demo runs faster than a real crawl would (the defaults in brackets):",
        "  each engine judged on 6 requests or more in a 12 s window (50 in 600 s)",
        "  every topic scraped again every 3 s (adaptive: each topic every 60-3600 s by its rate), requests at least "
        "0.25 s, brave 0.5 s apart (2 s, brave 4 s)",
        "  an engine benched after a block for 0.5 s, the same each time (60 s, ×2 each time in a row)",
    ]


def test_the_hostile_part_goes_to_an_engine_with_a_challenge_page():
    assert hostile_engine(ENGINES) == "bing"
    assert hostile_engine(["yahoo", "brave"]) == "brave"
    assert hostile_engine(["yahoo"]) is None
    with FakeEngines(list(HOSTILE_STEPS)) as fakes:  # each one's steps are pages its fake knows
        for engine, steps in HOSTILE_STEPS.items():
            fakes.spell(engine, steps, after=0, lasting=1)
