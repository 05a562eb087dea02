"""Shared test helpers: running the project's Scrapy commands in a scratch folder, writing configs."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parent.parent


class ScrapyRunner:
    """Runs ``scrapy …`` as users do, in its own folder, with the project's settings module."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.env = {k: v for k, v in os.environ.items()
                    if k not in ("TOPICSTREAMS_CONFIG", "TOPICSTREAMS_DB_URL", "SCRAPER_PROXY")}
        self.env["SCRAPY_SETTINGS_MODULE"] = "topicstreams.settings"
        self.env["PYTHONPATH"] = str(REPO)

    def __call__(self, *args: str, timeout: float = 180, env: dict | None = None,
                 check: bool = False) -> subprocess.CompletedProcess:
        result = subprocess.run(
            [sys.executable, "-m", "scrapy", *args], cwd=self.folder, env={**self.env, **(env or {})},
            capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)
        if check and result.returncode != 0:
            raise AssertionError(f"scrapy {' '.join(args)} exited {result.returncode}:\n{result.stderr[-4000:]}")
        return result


@pytest.fixture
def scrapy_cmd(tmp_path: Path) -> ScrapyRunner:
    return ScrapyRunner(tmp_path)


def write_config(folder: Path, data: dict, name: str = "config.yml") -> Path:
    path = folder / name
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def parsing_spider(spider_class, base_url: str, freshness: str = "hour"):
    """An engine spider ready to build URLs and parse pages without a crawl (no profile, no browser)."""
    from scrapy.utils.test import get_crawler

    spider = spider_class()
    spider._set_crawler(get_crawler(spider_class))
    spider.base_url, spider.freshness = base_url, freshness
    spider.redirector_hosts = {"127.0.0.1"}
    spider.fallback_warned = False
    spider.page = None
    return spider
