"""Configuration: packaged defaults, merging, environment overrides, validation."""

from dataclasses import replace
from pathlib import Path

import pytest
import yaml

from topicstreams.addon import config_settings
from topicstreams.config.errors import ConfigError
from topicstreams.config.loading import load_config, merge
from topicstreams.config.packaged import load_defaults
from topicstreams.config.schema import validate


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "config.yml"
    path.write_text(text)
    return path


def load(path: Path | None = None, **environ: str):
    settings = {"TOPICSTREAMS_CONFIG": str(path)} if path else {}
    return load_config(settings, environ=environ)


def test_defaults_are_the_contracts():
    config = load()
    assert config.get("database.url").endswith("/topicstreams.db")
    assert config.get("scraper.scrape_interval") == 60
    assert config.get("scraper.max_pages") == 1
    assert config.get("scraper.once_attempts") == 5
    assert config.get("scraper.pacing.default_min_interval") == 2.0
    assert config.get("scraper.pacing.jitter_ratio") == 0.25
    assert config.min_interval("brave") == 4.0
    assert config.min_interval("google") == 2.0
    assert config.get("scraper.cooldown") == {"initial": 60, "factor": 2, "max": 3600}
    assert config.get("scraper.soft_block.min_size_ratio") == 0.3
    assert config.get("scraper.saturation") == {"canary_engines": ["brave"], "robust_threshold": 2}
    assert config.get("scraper.shard") == "0/1"
    assert config.get("scraper.retention_days") == 30
    assert config.get("browser.headless") is True
    assert config.get("anti_detection.proxy") == {"enabled": False, "proxies": []}
    assert config.enabled_engines() == ["google", "bing", "yahoo", "brave"]
    assert config.engine("google")["base_url"] == "https://www.google.com"
    assert config.engine("bing")["freshness"] == "hour"
    assert config.get("node.id")  # the host name
    assert config.source is None


def test_merge_mappings_key_by_key_lists_replace_null_means_default():
    base = {"a": {"x": 1, "y": [1, 2]}, "b": 3}
    assert merge(base, {"a": {"x": 5}}) == {"a": {"x": 5, "y": [1, 2]}, "b": 3}
    assert merge(base, {"a": {"y": [9]}}) == {"a": {"x": 1, "y": [9]}, "b": 3}
    assert merge(base, {"a": None, "b": None}) == base
    assert merge(base, {"a": {"x": None}}) == base


def test_user_file_merges_over_defaults(tmp_path):
    path = write(
        tmp_path,
        """
topics: [alpha, beta]
engines:
  google: {base_url: "http://127.0.0.1:8080", freshness: day}
  bing: {enabled: false}
scraper:
  scrape_interval: 5
  pacing: {per_engine: {google: 1.5}}
  cooldown: {initial: null}
""",
    )
    config = load(path)
    assert config.get("topics") == ["alpha", "beta"]
    assert config.engine("google") == {"enabled": True, "base_url": "http://127.0.0.1:8080", "freshness": "day"}
    assert config.engine("bing")["enabled"] is False
    assert config.enabled_engines() == ["google", "yahoo", "brave"]
    assert config.get("scraper.scrape_interval") == 5
    # lists and mappings: per_engine is a mapping, so brave's default stays beside google's override
    assert config.min_interval("google") == 1.5 and config.min_interval("brave") == 4.0
    assert config.get("scraper.cooldown.initial") == 60
    assert config.source == path.resolve()


def test_environment_variable_names_the_file(tmp_path):
    path = write(tmp_path, "scraper: {max_pages: 3}\n")
    config = load_config({}, environ={"TOPICSTREAMS_CONFIG": str(path)})
    assert config.get("scraper.max_pages") == 3


def test_setting_wins_over_environment_variable(tmp_path):
    setting = write(tmp_path, "scraper: {max_pages: 3}\n")
    other = tmp_path / "other.yml"
    other.write_text("scraper: {max_pages: 7}\n")
    config = load_config({"TOPICSTREAMS_CONFIG": str(setting)}, environ={"TOPICSTREAMS_CONFIG": str(other)})
    assert config.get("scraper.max_pages") == 3


def test_relative_sqlite_path_resolves_against_the_config_folder(tmp_path, monkeypatch):
    folder = tmp_path / "conf"
    folder.mkdir()
    path = folder / "c.yml"
    path.write_text("database: {url: 'sqlite:///data/news.db'}\n")
    assert load(path).get("database.url") == f"sqlite:///{folder / 'data' / 'news.db'}"
    monkeypatch.chdir(tmp_path)
    assert load().get("database.url") == f"sqlite:///{tmp_path / 'topicstreams.db'}"
    absolute = write(tmp_path, "database: {url: 'sqlite:////var/tmp/x.db'}\n")
    assert load(absolute).get("database.url") == "sqlite:////var/tmp/x.db"


def test_environment_overrides(tmp_path):
    path = write(tmp_path, "anti_detection: {proxy: {enabled: false, proxies: ['http://file:1']}}\n")
    config = load(
        path, TOPICSTREAMS_DB_URL="sqlite:////tmp/env.db", SCRAPER_PROXY="http://u:p@one:3128, socks5://two:1080"
    )
    assert config.get("database.url") == "sqlite:////tmp/env.db"
    assert config.get("anti_detection.proxy") == {
        "enabled": True,
        "proxies": ["http://u:p@one:3128", "socks5://two:1080"],
    }


def test_show_masks_secrets():
    config = load(
        SCRAPER_PROXY="http://user:hunter2@proxy:3128", TOPICSTREAMS_DB_URL="postgresql+psycopg://app:s3cret@db/news"
    )
    text = yaml.safe_dump(config.masked())
    assert "hunter2" not in text and "s3cret" not in text
    assert "http://user:***@proxy:3128" in text
    assert config.get("anti_detection.proxy.proxies") == ["http://user:hunter2@proxy:3128"]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("scraper: {scrape_interval: soon}", "scraper.scrape_interval: got 'soon', expected seconds > 0"),
        ("scraper: {scrape_interval: 0}", "scraper.scrape_interval: got 0, expected seconds > 0"),
        ("scraper: {max_pages: 1.5}", "scraper.max_pages: got 1.5, expected an integer >= 1"),
        ("scraper: {max_pages: true}", "scraper.max_pages: got true, expected an integer >= 1"),
        ("scraper: {pacing: {jitter_ratio: 2}}", "scraper.pacing.jitter_ratio: got 2, expected a number from 0 to 1"),
        ("scraper: {shard: '2/2'}", "scraper.shard: got '2/2', expected \"i/n\" with 0 <= i < n"),
        ("scraper: {cooldown: {initial: 100, max: 10}}", "scraper.cooldown.max: got 10, expected seconds >= "),
        ("scraper: {pacing: {per_engine: {duckduckgo: 3}}}", "scraper.pacing.per_engine.duckduckgo:"),
        ("scraper: {intervall: 3}", "scraper.intervall: got 3, expected no such key"),
        ("colour: blue", "colour: got 'blue', expected no such key"),
        (
            "engines: {google: {base_url: 'http://x.test/search'}}",
            "engines.google.base_url: got 'http://x.test/search', expected scheme://host[:port] with no path",
        ),
        ("engines: {google: {freshness: year}}", "engines.google.freshness: got 'year', expected one of hour,"),
        ("engines: {google: {enabled: maybe}}", "engines.google.enabled: got 'maybe', expected true or false"),
        ("topics: alpha", "topics: got 'alpha', expected a list of topic names"),
        ("topics: ['  ']", "topics[0]: got '  ', expected a non-empty topic name"),
        ("anti_detection: {proxy: {proxies: ['socks5://u:p@h:1']}}", "anti_detection.proxy.proxies[0]:"),
        ("anti_detection: {proxy: {proxies: ['ftp://h:1']}}", "anti_detection.proxy.proxies[0]: got 'ftp://h:1'"),
        ("anti_detection: {proxy: {enabled: true}}", "anti_detection.proxy.proxies: got [], expected at least one"),
        ("anti_detection: {timezone_id: Mars/Olympus}", "anti_detection.timezone_id: got 'Mars/Olympus'"),
        ("anti_detection: {geolocation: {latitude: 95, longitude: 0}}", "anti_detection.geolocation.latitude: got 95"),
        ("database: {url: 'not a url'}", "database.url: got 'not a url', expected a SQLAlchemy URL"),
        ("- just\n- a list", "TOPICSTREAMS_CONFIG:"),
    ],
)
def test_bad_values_name_key_value_and_expectation(tmp_path, text, message):
    with pytest.raises(ConfigError) as caught:
        load(write(tmp_path, text + "\n"))
    assert str(caught.value).startswith(message)


def test_a_credentialed_socks5_proxy_is_refused_without_showing_the_password(tmp_path):
    with pytest.raises(ConfigError) as caught:
        load(SCRAPER_PROXY="socks5://user:hunter2@h:1080")
    assert "hunter2" not in str(caught.value)


def test_missing_file_and_broken_yaml(tmp_path):
    with pytest.raises(ConfigError, match="TOPICSTREAMS_CONFIG: got .*nope.yml', expected a readable YAML file"):
        load(tmp_path / "nope.yml")
    with pytest.raises(ConfigError, match=r"expected valid YAML \(line \d+\)"):
        load(write(tmp_path, "scraper:\n  max_pages: [1,\n"))


def test_validate_takes_the_packaged_defaults_as_they_are():
    assert validate(load_defaults())["scraper"]["scrape_interval"] == 60


def test_addon_settings_carry_the_config_and_browser_context(tmp_path):
    from topicstreams.browser.chromium import CHROMIUM_ARGS, context_options

    path = write(
        tmp_path,
        """
anti_detection:
  timezone_id: Europe/Amsterdam
  locale: nl-NL
  geolocation: {latitude: 52.37, longitude: 4.9}
  proxy: {enabled: true, proxies: ['http://u:pw@proxy.test:3128']}
""",
    )
    settings = config_settings(load(path))
    options = context_options(load(path).sections.anti_detection)  # each engine's tab's (EngineTab.from_settings)
    assert options["proxy"] == {"server": "http://proxy.test:3128", "username": "u", "password": "pw"}
    assert options["timezone_id"] == "Europe/Amsterdam" and options["locale"] == "nl-NL"
    assert options["geolocation"] == {"latitude": 52.37, "longitude": 4.9}
    assert options["permissions"] == ["geolocation"]
    launch = settings["PLAYWRIGHT_LAUNCH_OPTIONS"]  # the process's one browser: its executable, headless, flags
    assert launch["executable_path"]  # a Chromium found on this machine
    assert launch["headless"] is True and launch["args"] == list(CHROMIUM_ARGS)
    assert launch["handle_sigint"] is False  # a Ctrl-C stops the crawl, which closes the browser itself
    assert not set(launch) & set(options)
    assert settings["TOPICSTREAMS_ENGINES"]["google"]["base_url"] == "https://www.google.com"


def test_the_addon_enables_what_every_crawl_needs_whatever_a_user_sets(tmp_path, monkeypatch):
    from scrapy.utils.test import get_crawler

    from topicstreams.addon import TopicstreamsAddon
    from topicstreams.extensions.profile_lock import ProfileLockExtension
    from topicstreams.extensions.schema_upgrade import SchemaExtension
    from topicstreams.middlewares.blocks import BlocksMiddleware
    from topicstreams.middlewares.pacing import PacingMiddleware
    from topicstreams.spiders.google import GoogleSpider

    monkeypatch.setenv(
        "TOPICSTREAMS_CONFIG",
        str(
            write(
                tmp_path, f"database: {{url: 'sqlite:///{tmp_path}/a.db'}}\nbrowser: {{profile_dir: '{tmp_path}/p'}}\n"
            )
        ),
    )
    # a user's own lists replace the project's
    crawler = get_crawler(
        GoogleSpider, {"ADDONS": {TopicstreamsAddon: 0}, "EXTENSIONS": {}, "DOWNLOADER_MIDDLEWARES": {}}
    )
    extensions = crawler.settings.getdict("EXTENSIONS")
    middlewares = crawler.settings.getdict("DOWNLOADER_MIDDLEWARES")
    assert (extensions[ProfileLockExtension], extensions[SchemaExtension]) == (0, 1)
    assert (middlewares[BlocksMiddleware], middlewares[PacingMiddleware]) == (940, 950)
    assert crawler.settings.get("TOPICSTREAMS_PROFILE_PATH") == str(
        tmp_path / "p" / load(None).get("node.id") / "google"
    )
    assert (tmp_path / "a.db").exists()  # the schema extension ran with the crawler


def test_typed_sections_follow_the_configuration(tmp_path):
    from topicstreams.config.sections import CanaryQuerySection, DigestSection, PacingSection

    path = write(
        tmp_path,
        """
scraper: {max_pages: 2, pacing: {per_engine: {google: 1.5}}}
alerting:
  urls: ['json://localhost/hook']
  digests: [{name: daily, every: day}]
canaries: {queries: {bing: [{query: weather}]}}
engines: {yahoo: {enabled: false}}
""",
    )
    config = load(path)
    sections = config.sections
    assert sections.scraper.max_pages == 2 and isinstance(sections.scraper.scrape_interval, float)
    assert sections.scraper.pacing == PacingSection(2.0, 0.25, {"google": 1.5, "brave": 4.0})
    assert sections.scraper.pacing.floor("google") == config.min_interval("google") == 1.5
    assert sections.scraper.pacing.floor("bing") == config.min_interval("bing") == 2.0
    assert sections.scraper.saturation.canary_engines == ("brave",)
    assert sections.node.id == config.get("node.id")
    assert sections.enabled_engines() == config.enabled_engines() == ["google", "bing", "brave"]
    assert sections.engines["google"].base_url == "https://www.google.com"
    # an entry's packaged defaults (defaults.yml's second document) are filled in
    assert sections.alerting.digests == (DigestSection("daily", (), (), "", "day", "08:00", (), 50),)
    assert sections.canaries.queries["bing"] == (CanaryQuerySection("weather", 1, ""),)
    assert sections.web.sla.errors_critical == 0.05 and sections.anti_detection.geolocation is None
    assert "admin_token" not in repr(sections.web)


def test_crawler_settings_carry_the_typed_sections(tmp_path):
    from dataclasses import replace

    from scrapy.settings import Settings

    from topicstreams.config.loading import LOADER_SETTING, ConfigLoader
    from topicstreams.config.setting_names import SECTIONS_SETTING, sections_from, sections_with_settings

    path = write(tmp_path, "scraper: {scrape_interval: 30}\n")
    # a crawler the add-on did not configure: its configuration, its own TOPICSTREAMS_* settings in their places
    settings = Settings(
        {
            "TOPICSTREAMS_CONFIG": str(path),
            "TOPICSTREAMS_PACING": {"jitter_ratio": 0.0},
            "TOPICSTREAMS_MAX_PAGES": "3",  # as -s gives it
            "TOPICSTREAMS_CONSENT": "none",
        }
    )
    sections = sections_from(settings)
    assert sections.scraper.scrape_interval == 30.0
    assert sections.scraper.max_pages == 3
    assert sections.scraper.pacing == replace(load(path).sections.scraper.pacing, jitter_ratio=0.0)
    assert sections.browser.consent == "none"
    # the add-on's: kept in the settings, and each crawler's copy of the settings has them
    settings.set(SECTIONS_SETTING, sections_with_settings(load(path), settings))
    assert sections_from(settings.copy()) == sections
    # a command's loader is shared by the copies of its settings: its crawlers load through it
    loader = ConfigLoader()
    settings.set(LOADER_SETTING, loader)
    assert settings.copy().get(LOADER_SETTING) is loader
    assert load_config(settings.copy(), environ={}) == load_config(settings, environ={}) == load(path)


def test_settings_over_the_configuration_are_read_as_its_values_and_checked_as_it_is(tmp_path):
    from scrapy.settings import Settings

    from topicstreams.config.setting_names import sections_with_settings

    config = load(write(tmp_path, "topics: [alpha]\n"))

    def sections(**settings):
        return sections_with_settings(config, Settings(settings))

    assert sections() == config.sections
    # as -s gives them: a number from text, a mapping as JSON (over the configuration's), a list comma-separated;
    # blank text keeps the configuration's value (an empty TOPICSTREAMS_DATABASE_URL turns the database's parts off)
    made = sections(
        TOPICSTREAMS_MAX_PAGES="3",
        TOPICSTREAMS_SCRAPE_INTERVAL="0.5",
        TOPICSTREAMS_PACING='{"jitter_ratio": 0}',
        TOPICSTREAMS_TOPICS="a,b",
        TOPICSTREAMS_DATABASE_URL="",
    )
    assert made.scraper.max_pages == 3 and made.scraper.scrape_interval == 0.5
    assert made.scraper.pacing == replace(config.sections.scraper.pacing, jitter_ratio=0.0)
    assert made.topics == ("a", "b") and made.database == config.sections.database
    # a bad one is a ConfigError naming the setting, and the key when the value is read but wrong
    for setting, value, message in (
        ("TOPICSTREAMS_CONSENT", "maybe", "TOPICSTREAMS_CONSENT (browser.consent): got 'maybe', expected one of "),
        ("TOPICSTREAMS_MAX_PAGES", "2.5", "TOPICSTREAMS_MAX_PAGES (scraper.max_pages): got 2.5, expected an integer"),
        ("TOPICSTREAMS_MAX_PAGES", "x", "TOPICSTREAMS_MAX_PAGES: got 'x', expected a number (scraper.max_pages)"),
        ("TOPICSTREAMS_PACING", "[1]", "TOPICSTREAMS_PACING: got '[1]', expected a mapping of scraper.pacing's keys"),
        ("TOPICSTREAMS_HEALTH", '{"windows": 5}', "TOPICSTREAMS_HEALTH (health.windows): got 5, expected no such key"),
        ("TOPICSTREAMS_TOPICS", "a,,b", "TOPICSTREAMS_TOPICS (topics[1]): got '', expected "),
        ("TOPICSTREAMS_ASSIGNMENT", "lease", "TOPICSTREAMS_ASSIGNMENT (scraper.assignment): got 'lease', expected "),
    ):
        with pytest.raises(ConfigError) as raised:
            sections(**{setting: value})
        assert str(raised.value).startswith(message), str(raised.value)
