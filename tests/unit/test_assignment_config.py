"""Lease mode's configuration (``scraper.assignment``, ``scraper.lease_seconds``): the defaults, what is refused and
why (exit 78 with one ``config error:`` line), and the settings a crawl gets — through :func:`load_config` and, once
each, through the real ``scrapy config check``, ``scrapy config show`` and ``scrapy crawl`` commands."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from tests.support.project import write_config
from topicstreams.addon import config_settings
from topicstreams.config.errors import EX_CONFIG, ConfigError
from topicstreams.config.loading import load_config

PG_URL = "postgresql+psycopg://app:s3cret@db.invalid:5432/news"
"""A PostgreSQL URL: validation never connects to it."""


def load(folder: Path, data: dict, **environ: str):
    path = write_config(folder, data)
    return load_config({"TOPICSTREAMS_CONFIG": str(path)}, environ=environ)


def refusal(folder: Path, data: dict, **environ: str) -> ConfigError:
    with pytest.raises(ConfigError) as caught:
        load(folder, data, **environ)
    return caught.value


def test_the_defaults_are_shards_and_two_minutes(tmp_path):
    config = load(tmp_path, {})
    assert config.get("scraper.assignment") == "shard"
    assert config.get("scraper.lease_seconds") == 120
    settings = config_settings(config)
    assert settings["TOPICSTREAMS_ASSIGNMENT"] == "shard" and settings["TOPICSTREAMS_LEASE_SECONDS"] == 120


def test_lease_on_postgresql_is_taken_and_reaches_the_settings(tmp_path):
    config = load(
        tmp_path,
        {"database": {"url": PG_URL}, "scraper": {"assignment": "lease", "lease_seconds": 300, "shard": "0/1"}},
    )
    settings = config_settings(config)
    assert settings["TOPICSTREAMS_ASSIGNMENT"] == "lease"
    assert settings["TOPICSTREAMS_LEASE_SECONDS"] == 300


def test_lease_on_sqlite_is_refused_naming_the_key_and_why(tmp_path):
    error = refusal(
        tmp_path, {"database": {"url": f"sqlite:///{tmp_path / 'news.db'}"}, "scraper": {"assignment": "lease"}}
    )
    assert error.key == "scraper.assignment"
    assert str(error).startswith("scraper.assignment: got 'lease', expected shard while database.url is not PostgreSQL")
    assert "SQLite" in str(error)


def test_lease_on_the_default_database_is_refused(tmp_path):
    assert refusal(tmp_path, {"scraper": {"assignment": "lease"}}).key == "scraper.assignment"


def test_the_environment_database_url_decides(tmp_path):
    # the file says PostgreSQL, the environment (which wins) says SQLite: refused; and the other way round: taken
    error = refusal(
        tmp_path,
        {"database": {"url": PG_URL}, "scraper": {"assignment": "lease"}},
        TOPICSTREAMS_DB_URL=f"sqlite:///{tmp_path / 'env.db'}",
    )
    assert error.key == "scraper.assignment"
    config = load(tmp_path, {"scraper": {"assignment": "lease"}}, TOPICSTREAMS_DB_URL=PG_URL)
    assert config.get("scraper.assignment") == "lease"


@pytest.mark.parametrize("shard", ["1/2", "0/2", "2/3"])
def test_lease_beside_a_shard_is_refused_naming_the_shard(tmp_path, shard):
    error = refusal(tmp_path, {"database": {"url": PG_URL}, "scraper": {"assignment": "lease", "shard": shard}})
    assert error.key == "scraper.shard"
    assert str(error).startswith(f"scraper.shard: got '{shard}', expected \"0/1\" with scraper.assignment lease")


def test_a_shard_without_lease_is_still_fine(tmp_path):
    assert load(tmp_path, {"scraper": {"shard": "1/2"}}).get("scraper.shard") == "1/2"


@pytest.mark.parametrize("value", [0, -1, -0.5, "soon", True, [60], float("inf")])
def test_lease_seconds_must_be_positive_seconds(tmp_path, value):
    error = refusal(tmp_path, {"database": {"url": PG_URL}, "scraper": {"assignment": "lease", "lease_seconds": value}})
    assert error.key == "scraper.lease_seconds"
    assert "expected seconds > 0" in str(error)


def test_an_unknown_assignment_is_refused_listing_the_two(tmp_path):
    error = refusal(tmp_path, {"scraper": {"assignment": "raft"}})
    assert error.key == "scraper.assignment"
    assert "shard" in str(error) and "lease" in str(error)


def test_a_refusal_does_not_show_the_database_password(tmp_path):
    error = refusal(tmp_path, {"database": {"url": PG_URL}, "scraper": {"assignment": "lease", "shard": "1/2"}})
    assert "s3cret" not in str(error)


# ---- the commands, as an operator runs them -------------------------------------------------------------------


def test_config_check_refuses_lease_on_sqlite_with_one_line_and_exit_78(scrapy_cmd, tmp_path):
    config = write_config(
        tmp_path, {"database": {"url": f"sqlite:///{tmp_path / 'news.db'}"}, "scraper": {"assignment": "lease"}}
    )
    result = scrapy_cmd("config", "check", env={"TOPICSTREAMS_CONFIG": str(config)})
    assert result.returncode == EX_CONFIG == 78
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith(
        "config error: scraper.assignment: got 'lease', expected shard while database.url is not PostgreSQL"
    )
    assert "config ok" not in result.stdout


def test_a_crawl_in_lease_mode_on_sqlite_stops_before_any_browser(scrapy_cmd, tmp_path):
    config = write_config(
        tmp_path,
        {
            "database": {"url": f"sqlite:///{tmp_path / 'news.db'}"},
            "scraper": {"assignment": "lease"},
            "browser": {"profile_dir": str(tmp_path / "profiles")},
        },
    )
    result = scrapy_cmd("crawl", "google", "-a", "once=1", env={"TOPICSTREAMS_CONFIG": str(config)})
    assert result.returncode == 78
    errors = [line for line in result.stderr.splitlines() if line.startswith("config error:")]
    assert len(errors) == 1 and "scraper.assignment" in errors[0], result.stderr
    assert not (tmp_path / "news.db").exists()  # refused before anything was written
    assert not (tmp_path / "profiles").exists()


def test_config_check_takes_lease_on_postgresql_and_show_prints_it(scrapy_cmd, tmp_path):
    config = write_config(tmp_path, {"database": {"url": PG_URL}, "scraper": {"assignment": "lease"}})
    check = scrapy_cmd("config", "check", env={"TOPICSTREAMS_CONFIG": str(config)}, check=True)
    assert check.stdout.startswith("config ok")
    shown = yaml.safe_load(scrapy_cmd("config", "show", env={"TOPICSTREAMS_CONFIG": str(config)}, check=True).stdout)
    assert shown["scraper"]["assignment"] == "lease" and shown["scraper"]["lease_seconds"] == 120


def test_config_show_prints_the_defaults(scrapy_cmd):
    shown = yaml.safe_load(scrapy_cmd("config", "show", check=True).stdout)
    assert shown["scraper"]["assignment"] == "shard"
    assert shown["scraper"]["lease_seconds"] == 120
    assert shown["scraper"]["shard"] == "0/1"
