"""The process's runtime (topicstreams/crawl/runtime.py): one per process through the settings, one of its own for a
crawler made otherwise, and what it keeps made once."""

from __future__ import annotations

import copy

from scrapy import signals
from scrapy.settings import Settings
from scrapy.utils.test import get_crawler

import topicstreams.settings as project_settings
from topicstreams.browser.provider import SharedBrowsers
from topicstreams.crawl.runtime import RUNTIME_SETTING, Runtime
from topicstreams.spiders.bing import BingSpider
from topicstreams.spiders.google import GoogleSpider

PROJECT = {name: getattr(project_settings, name) for name in dir(project_settings) if name.isupper()}


def test_a_copy_of_the_settings_keeps_the_one_runtime_and_its_browsers():
    runtime = Runtime()
    settings = Settings(PROJECT)
    runtime.install(settings)
    copied = copy.deepcopy(settings)
    assert copied.get(RUNTIME_SETTING) is runtime
    provider = copied.get("PLAYWRIGHT_BROWSER_PROVIDER")
    assert provider.__self__ is runtime.browsers and isinstance(provider.__self__, SharedBrowsers)


def test_a_provider_named_by_the_user_is_left_alone():
    settings = Settings(
        {**PROJECT, "PLAYWRIGHT_BROWSER_PROVIDER": "scrapy_playwright.provider.PlaywrightBrowserProvider"}
    )
    Runtime().install(settings)
    assert settings.get("PLAYWRIGHT_BROWSER_PROVIDER") == "scrapy_playwright.provider.PlaywrightBrowserProvider"


def test_the_crawlers_of_one_process_share_its_runtime_and_others_get_their_own(tmp_path):
    runtime = Runtime()
    google = get_crawler(GoogleSpider, {**PROJECT, RUNTIME_SETTING: runtime})
    bing = get_crawler(BingSpider, {**PROJECT, RUNTIME_SETTING: runtime})
    assert Runtime.of(google) is Runtime.of(bing) is runtime
    alone = get_crawler(GoogleSpider, PROJECT)
    own = Runtime.of(alone)
    assert own is not runtime and Runtime.of(alone) is own
    url = f"sqlite:///{tmp_path / 'news.db'}"
    assert runtime.outbox(url) is runtime.outbox(url) and own.outbox(url) is not runtime.outbox(url)
    assert runtime.outbox(url).availability is runtime.availability(url)
    assert runtime.database(url) is runtime.database(url)
    assert runtime.network_watch(url, "n1") is runtime.network_watch(url, "n1")
    assert runtime.network_watch(url, "n2") is not runtime.network_watch(url, "n1")


def test_each_engine_has_its_state_made_from_its_crawlers_settings():
    runtime = Runtime()
    google = get_crawler(GoogleSpider, {**PROJECT, RUNTIME_SETTING: runtime, "TOPICSTREAMS_MIN_INTERVAL": 7.0})
    bing = get_crawler(BingSpider, {**PROJECT, RUNTIME_SETTING: runtime})
    state = runtime.engine_state(google)
    assert state is runtime.engine_state(google) and state.engine == "google" and state.floor == 7.0
    assert runtime.engine_state(bing) is not state


def test_the_upgrade_runs_once_per_runtime(tmp_path, monkeypatch):
    done = []
    monkeypatch.setattr("topicstreams.crawl.runtime.upgrade", lambda url, db: done.append(url))
    runtime = Runtime()
    runtime.upgrade_once("sqlite:///a.db")
    runtime.upgrade_once("sqlite:///a.db")
    runtime.upgrade_once("sqlite:///b.db")
    Runtime().upgrade_once("sqlite:///a.db")  # another process
    assert done == ["sqlite:///a.db", "sqlite:///b.db", "sqlite:///a.db"]


def test_shared_objects_are_made_once_per_key_and_again_when_they_no_longer_fit():
    runtime = Runtime()
    first = runtime.shared(("watch", "n1"), lambda: {"policy": 1}, keep=lambda found: found["policy"] == 1)
    assert runtime.shared(("watch", "n1"), lambda: {"policy": 1}, keep=lambda found: found["policy"] == 1) is first
    changed = runtime.shared(("watch", "n1"), lambda: {"policy": 2}, keep=lambda found: found["policy"] == 2)
    assert changed is not first and changed == {"policy": 2}


def test_the_runtime_lets_its_database_handles_go_when_its_last_crawler_stops(tmp_path):
    runtime = Runtime()
    google = get_crawler(GoogleSpider, {**PROJECT, RUNTIME_SETTING: runtime})
    bing = get_crawler(BingSpider, {**PROJECT, RUNTIME_SETTING: runtime})
    Runtime.of(google), Runtime.of(bing)
    url = f"sqlite:///{tmp_path / 'news.db'}"
    db = runtime.database(url)
    with db.connect():
        pass
    assert db.pool.checkedin() == 1
    google.signals.send_catch_log(signal=signals.engine_stopped)
    assert db.pool.checkedin() == 1  # bing still runs
    bing.signals.send_catch_log(signal=signals.engine_stopped)
    assert db.pool.checkedin() == 0
