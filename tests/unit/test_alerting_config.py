"""The alerting.* keys the Alerts issue adds: Apprise URLs checked and masked, events, repeat, silence, digests with
their defaults and every way one can be wrong, health.coverage_drop."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from topicstreams.config.errors import ConfigError
from topicstreams.config.loading import load_config

SLACK = "slack://T0AAAAAAA/B0BBBBBBB/xoxSeCrEtT0kEn42xoxSeCrEt"
MAIL = "mailto://alerts:Pa55-w0rd-secret@smtp.example.org?to=ops@example.org"


def load(tmp_path: Path, data: dict):
    path = tmp_path / "config.yml"
    path.write_text(yaml.safe_dump(data))
    return load_config({"TOPICSTREAMS_CONFIG": str(path)}, environ={})


def error(tmp_path: Path, data: dict) -> str:
    with pytest.raises(ConfigError) as caught:
        load(tmp_path, data)
    return str(caught.value)


def test_the_defaults(tmp_path):
    config = load(tmp_path, {})
    assert config.get("alerting") == {
        "urls": [],
        "webhook_url": "",
        "events": [
            "paused",
            "resumed",
            "recovered",
            "degraded",
            "saturation",
            "canary_mismatch",
            "parser_critical",
            "coverage_drop",
            "silence",
            "network_down",
            "data_loss",
            "route_down",
            "route_recovered",
        ],
        "repeat": 21600,
        "silence_factor": 6,
        "silence_min_events": 10,
        "digests": [],
    }
    assert config.get("health.coverage_drop") == 0.2


def test_apprise_urls_are_masked_for_printing_and_known_as_secrets(tmp_path):
    config = load(
        tmp_path, {"alerting": {"urls": [SLACK, MAIL], "digests": [{"name": "daily", "every": "day", "urls": [MAIL]}]}}
    )
    shown = yaml.safe_dump(config.masked())
    assert "xoxSeCrEtT0kEn42" not in shown and "Pa55-w0rd-secret" not in shown
    assert "mailto://alerts:****@smtp.example.org" in shown and "slack://" in shown
    secrets = config.secrets()
    assert MAIL in secrets and "Pa55-w0rd-secret" in secrets and "xoxSeCrEtT0kEn42xoxSeCrEt" in secrets


def test_a_url_apprise_does_not_know_is_refused_without_showing_it(tmp_path):
    message = error(tmp_path, {"alerting": {"urls": ["nosuchservice://user:TopSecret99@host/path"]}})
    assert message.startswith("alerting.urls[0]: got ") and "expected an Apprise URL" in message
    assert "TopSecret99" not in message


def test_a_digest_gets_its_defaults(tmp_path):
    config = load(
        tmp_path,
        {
            "alerting": {
                "urls": [MAIL],
                "digests": [
                    {"name": " morning ", "every": "day"},
                    {"name": "weekly", "every": "week", "at": "FRI 17:45"},
                    {
                        "name": "live",
                        "every": "as_it_happens",
                        "topics": ["alpha"],
                        "engines": ["bing"],
                        "query": "rail strike",
                    },
                ],
            }
        },
    )
    day, week, live = config.get("alerting.digests")
    assert day == {
        "name": "morning",
        "topics": [],
        "engines": [],
        "query": "",
        "every": "day",
        "at": "08:00",
        "urls": [],
        "max_items": 50,
    }
    assert week["at"] == "fri 17:45"
    assert (live["at"], live["topics"], live["engines"], live["query"]) == (None, ["alpha"], ["bing"], "rail strike")


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        ({"events": ["paused", "nope"]}, "alerting.events[1]: got 'nope', expected one of paused, resumed"),
        ({"events": ["paused", "paused"]}, "alerting.events[1]: got 'paused', expected an event not already listed"),
        ({"repeat": -1}, "alerting.repeat: got -1, expected seconds >= 0"),
        ({"silence_factor": 0.5}, "alerting.silence_factor: got 0.5, expected a number >= 1"),
        ({"silence_min_events": 1}, "alerting.silence_min_events: got 1, expected an integer >= 2"),
        (
            {"digests": [{"name": "d", "every": "month"}]},
            "alerting.digests[0].every: got 'month', expected one of as_it_happens, hour, day, week",
        ),
        (
            {"digests": [{"name": "d", "every": "day", "at": "25:00"}]},
            "alerting.digests[0].at: got '25:00', expected \"HH:MM\"",
        ),
        (
            {"digests": [{"name": "d", "every": "week", "at": "07:30"}]},
            "alerting.digests[0].at: got '07:30', expected \"DAY",
        ),
        (
            {"digests": [{"name": "d", "every": "hour", "at": "07:30"}]},
            "alerting.digests[0].at: got '07:30', expected no value: only a day or week digest has a time",
        ),
        ({"digests": [{"every": "hour"}]}, "alerting.digests[0].name: got null, expected a non-empty name"),
        (
            {"digests": [{"name": "d", "every": "hour"}, {"name": "d", "every": "day"}]},
            "alerting.digests[1].name: got 'd', expected a name no other digest has",
        ),
        ({"digests": [{"name": "d", "every": "hour", "engines": ["duckduckgo"]}]}, "alerting.digests[0].engines[0]"),
        (
            {"digests": [{"name": "d", "every": "hour", "max_items": 0}]},
            "alerting.digests[0].max_items: got 0, expected an integer from 1 to 1000",
        ),
        (
            {"digests": [{"name": "d", "every": "hour", "query": "!!!"}]},
            "alerting.digests[0].query: got '!!!', expected search words, or empty for every event "
            "(nothing to search for",
        ),
        (
            {"digests": [{"name": "d", "every": "hour", "colour": "red"}]},
            "alerting.digests[0].colour: got 'red', expected no such key",
        ),
    ],
)
def test_every_wrong_value_names_its_key(tmp_path, data, expected):
    assert error(tmp_path, {"alerting": {"urls": [MAIL], **data}}).startswith(expected)


def test_a_digest_needs_somewhere_to_go(tmp_path):
    message = error(tmp_path, {"alerting": {"digests": [{"name": "d", "every": "hour"}]}})
    assert message == ("alerting.digests[0].urls: got [], expected at least one Apprise URL, here or in alerting.urls")


def test_coverage_drop_is_a_share(tmp_path):
    assert error(tmp_path, {"health": {"coverage_drop": 0}}).startswith(
        "health.coverage_drop: got 0, expected a number above 0, at most 1"
    )
    assert load(tmp_path, {"health": {"coverage_drop": 0.35}}).get("health.coverage_drop") == 0.35
