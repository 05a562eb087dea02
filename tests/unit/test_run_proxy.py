"""The run's proxy endpoint: drawn once per process runtime, so every engine crawler of a run shares one exit."""

from __future__ import annotations

from types import SimpleNamespace

from scrapy.settings import Settings

from topicstreams.addon import run_proxy
from topicstreams.config.loading import load_config
from topicstreams.crawl.runtime import RUNTIME_SETTING, Runtime

PROXIES = [f"http://proxy-{n}.test:3128" for n in range(20)]


def config_with(tmp_path, enabled: bool = True):
    path = tmp_path / "topicstreams.yml"
    path.write_text(f"anti_detection:\n  proxy: {{enabled: {str(enabled).lower()}, proxies: {PROXIES}}}\n")
    return load_config({"TOPICSTREAMS_CONFIG": str(path)}, environ={})


def crawler_of(runtime: Runtime) -> SimpleNamespace:
    return SimpleNamespace(settings=Settings({RUNTIME_SETTING: runtime}))


def test_the_crawlers_of_one_runtime_share_one_proxy_and_another_runtime_draws_its_own(tmp_path):
    config = config_with(tmp_path)
    runtime = Runtime()
    chosen = {run_proxy(crawler_of(runtime), config) for _ in range(10)}
    assert len(chosen) == 1 and chosen <= set(PROXIES)
    others = {run_proxy(crawler_of(Runtime()), config) for _ in range(40)}
    assert len(others) > 1  # a draw per runtime (20 proxies, 40 runtimes: one exit each time would be a fluke)


def test_no_proxy_when_proxies_are_off(tmp_path):
    assert run_proxy(crawler_of(Runtime()), config_with(tmp_path, enabled=False)) is None
