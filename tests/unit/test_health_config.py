"""The health.* and alerting.* configuration keys: defaults, validation, merging, masking the webhook."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from topicstreams.config.errors import ConfigError
from topicstreams.config.loading import load_config
from topicstreams.config.packaged import load_defaults
from topicstreams.config.schema import validate
from topicstreams.config.secrets import mask_webhook
from topicstreams.health.band import HealthSettings
from topicstreams.health.score import DEFAULT_WEIGHTS

TOKEN = "T0AAAA/B0BBBB/xoxSeCrEtT0kEn42"


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "config.yml"
    path.write_text(text)
    return path


def load(tmp_path: Path, text: str | None = None):
    settings = {"TOPICSTREAMS_CONFIG": str(write(tmp_path, text))} if text is not None else {}
    return load_config(settings, environ={})


def test_defaults(tmp_path):
    config = load(tmp_path)
    assert config.get("health") == {
        "window": 600,
        "min_requests": 50,
        "baseline_days": 14,
        "smoothing": 0.3,
        "degrade_factor": 2,
        "weights": {"hard_block": 35, "challenge": 25, "soft_block": 25, "latency": 15},
        "history_days": 730,
        "coverage_drop": 0.2,
    }
    assert config.get("alerting.webhook_url") == ""
    assert config.get("health.weights") == dict(DEFAULT_WEIGHTS)
    assert validate(load_defaults())["health"] == config.get("health")


def test_an_empty_user_file_keeps_the_defaults(tmp_path):
    assert load(tmp_path, "health: null\nalerting: null\n").get("health.min_requests") == 50


def test_good_values_are_kept(tmp_path):
    config = load(
        tmp_path,
        """
health:
  window: 0.5
  min_requests: 1
  baseline_days: 1.5
  smoothing: 1
  degrade_factor: 1
  weights: {hard_block: 0, challenge: 0.5, soft_block: 100, latency: 0}
alerting:
  webhook_url: "  http://alerts.example:8080/hook  "
""",
    )
    health = config.get("health")
    assert (health["window"], health["min_requests"], health["baseline_days"]) == (0.5, 1, 1.5)
    assert (health["smoothing"], health["degrade_factor"]) == (1, 1)
    assert health["weights"] == {"hard_block": 0, "challenge": 0.5, "soft_block": 100, "latency": 0}
    assert config.get("alerting.webhook_url") == "http://alerts.example:8080/hook"  # stripped


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("health: {window: 0}", "health.window: got 0, expected seconds > 0"),
        ("health: {window: -10}", "health.window: got -10, expected seconds > 0"),
        ("health: {window: ten}", "health.window: got 'ten', expected seconds > 0"),
        ("health: {min_requests: 0}", "health.min_requests: got 0, expected an integer >= 1"),
        ("health: {min_requests: 2.5}", "health.min_requests: got 2.5, expected an integer >= 1"),
        ("health: {min_requests: true}", "health.min_requests: got true, expected an integer >= 1"),
        ("health: {baseline_days: 1}", "health.baseline_days: got 1, expected days > 1"),
        ("health: {baseline_days: 0.5}", "health.baseline_days: got 0.5, expected days > 1"),
        ("health: {smoothing: 0}", "health.smoothing: got 0, expected a number above 0, at most 1"),
        ("health: {smoothing: 1.5}", "health.smoothing: got 1.5, expected a number above 0, at most 1"),
        ("health: {smoothing: -0.1}", "health.smoothing: got -0.1, expected "),
        ("health: {degrade_factor: 0.5}", "health.degrade_factor: got 0.5, expected a number >= 1"),
        ("health: {degrade_factor: fast}", "health.degrade_factor: got 'fast', expected a number >= 1"),
        ("health: {weights: {hard_block: -1}}", "health.weights.hard_block: got -1, expected a number >= 0"),
        ("health: {weights: {latency: -0.5}}", "health.weights.latency: got -0.5, expected a number >= 0"),
        ("health: {weights: {challenge: lots}}", "health.weights.challenge: got 'lots', expected a number >= 0"),
        ("health: {weights: {soft_block: false}}", "health.weights.soft_block: got false, expected a number >= 0"),
        ("health: {weights: {captcha: 10}}", "health.weights.captcha: got 10, expected no such key"),
        ("health: {weights: [35, 25, 25, 15]}", "health.weights: got [35, 25, 25, 15], expected a mapping"),
        ("health: {windw: 60}", "health.windw: got 60, expected no such key"),
        (
            "alerting: {webhook_url: 'ftp://x'}",
            "alerting.webhook_url: got 'ftp://x', expected an http:// or https:// URL, or empty for none",
        ),
        ("alerting: {webhook_url: 'hooks.example/abc'}", "alerting.webhook_url: got "),
        ("alerting: {webhook_url: 'https://'}", "alerting.webhook_url: got 'https://', expected an http://"),
        ("alerting: {webhook_url: 42}", "alerting.webhook_url: got 42, expected an http:// or https:// URL"),
        ("alerting: {webhook_url: [a]}", "alerting.webhook_url: got ['a'], expected an http://"),
        ("alerting: {webhook: 'https://x.example'}", "alerting.webhook: got 'https://x.example', expected no such"),
    ],
)
def test_bad_values_name_the_key(tmp_path, text, message):
    with pytest.raises(ConfigError) as caught:
        load(tmp_path, text + "\n")
    assert str(caught.value).startswith(message)


def test_unknown_weight_lists_the_known_signals(tmp_path):
    with pytest.raises(ConfigError) as caught:
        load(tmp_path, "health: {weights: {captcha: 10}}\n")
    assert caught.value.key == "health.weights.captcha"
    for name in DEFAULT_WEIGHTS:
        assert name in caught.value.expected


def test_a_refused_webhook_url_does_not_show_its_token(tmp_path):
    with pytest.raises(ConfigError) as caught:
        load(tmp_path, f"alerting: {{webhook_url: 'ftp://hooks.example/services/{TOKEN}'}}\n")
    message = str(caught.value)
    assert message.startswith("alerting.webhook_url: got 'ftp://hooks.example/***', expected")
    assert "xoxSeCrEtT0kEn42" not in message and "services" not in message


@pytest.mark.parametrize("port", ["99999", "abc"])
def test_a_webhook_url_with_a_bad_port_is_a_config_error(tmp_path, port):
    with pytest.raises(ConfigError) as caught:
        load(tmp_path, f"alerting: {{webhook_url: 'https://hooks.example:{port}/services/{TOKEN}'}}\n")
    assert str(caught.value).startswith("alerting.webhook_url: got ")
    assert "xoxSeCrEtT0kEn42" not in str(caught.value)


@pytest.mark.parametrize(
    "url", [f"https://{TOKEN}@hooks.example", f"https://hooks.example/#{TOKEN}", f"https://user:{TOKEN}@hooks.example"]
)
def test_a_webhook_token_in_the_user_part_or_the_fragment_is_masked_too(url):
    assert TOKEN not in mask_webhook(url)


def test_a_partial_weights_override_merges_key_by_key(tmp_path):
    config = load(tmp_path, "health: {weights: {latency: 40}, smoothing: 0.5}\n")
    assert config.get("health.weights") == {"hard_block": 35, "challenge": 25, "soft_block": 25, "latency": 40}
    assert list(config.get("health.weights")) == list(DEFAULT_WEIGHTS)  # the tie order stays
    assert config.get("health.smoothing") == 0.5
    assert config.get("health.window") == 600 and config.get("health.min_requests") == 50
    # null means the default
    assert load(tmp_path, "health: {weights: {hard_block: null}}\n").get("health.weights.hard_block") == 35


def test_health_settings_from_a_user_file(tmp_path):
    config = load(tmp_path, "health: {window: 300, min_requests: 20, weights: {challenge: 30}}\n")
    settings = HealthSettings.from_config(config.get("health"))
    assert settings.window == 300.0 and settings.min_requests == 20
    assert settings.weights == {"hard_block": 35, "challenge": 30, "soft_block": 25, "latency": 15}
    assert (settings.smoothing, settings.degrade_factor, settings.baseline_days) == (0.3, 2.0, 14.0)


def test_the_webhook_token_is_masked_for_printing(tmp_path):
    url = f"https://hooks.example/services/{TOKEN}"
    config = load(tmp_path, f"alerting: {{webhook_url: '{url}'}}\n")
    assert config.get("alerting.webhook_url") == url  # the real one is kept for use
    masked = config.masked()
    assert masked["alerting"]["webhook_url"] == "https://hooks.example/***"
    text = yaml.safe_dump(masked)
    for part in TOKEN.split("/"):
        assert part not in text
    assert config.get("alerting.webhook_url") == url  # masking did not touch the config


def test_an_empty_webhook_stays_empty_when_masked(tmp_path):
    config = load(tmp_path)
    assert config.masked()["alerting"]["webhook_url"] == ""
    assert load(tmp_path, "alerting: {webhook_url: ''}\n").masked()["alerting"]["webhook_url"] == ""


@pytest.mark.parametrize(
    ("url", "masked"),
    [
        ("https://hooks.example/services/abc", "https://hooks.example/***"),
        ("https://hooks.example:8443/abc", "https://hooks.example:8443/***"),
        ("https://hooks.example/?token=abc", "https://hooks.example/***"),
        ("https://hook:s3cret@hooks.example", "https://hooks.example/***"),
        ("https://hooks.example", "https://hooks.example"),  # nothing secret to hide
        ("https://hooks.example/", "https://hooks.example/"),
    ],
)
def test_mask_webhook(url, masked):
    assert mask_webhook(url) == masked
    for secret in ("abc", "s3cret"):
        assert secret not in mask_webhook(url)
