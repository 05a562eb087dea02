"""Crawlers built in-process as ``scrapy crawl`` builds them (the project's settings, a config file in the test's
folder), for the tests that drive an extension or a middleware by hand: nothing is opened until they open it."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from scrapy import Spider
from scrapy.crawler import Crawler
from scrapy.utils.test import get_crawler

import topicstreams.settings as project_settings
from tests.support.project import write_config
from topicstreams.spiders.google import GoogleSpider

PROJECT_SETTINGS = {name: getattr(project_settings, name) for name in dir(project_settings) if name.isupper()}
"""The project's Scrapy settings (topicstreams/settings.py), as ``scrapy crawl`` reads them."""


def project_crawler(
    folder: Path, config: dict | None = None, spidercls: type[Spider] = GoogleSpider, **settings: Any
) -> Crawler:
    """A crawler of *spidercls* with the project's settings and *config* written to ``folder/config.yml`` (empty:
    the packaged configuration; relative paths land in *folder*); *settings* over the project's."""
    path = write_config(folder, config or {})
    return get_crawler(spidercls, {**PROJECT_SETTINGS, "TOPICSTREAMS_CONFIG": str(path), **settings})


def make_crawler(
    folder: Path,
    health: dict | None = None,
    *,
    spidercls: type[Spider] = GoogleSpider,
    database: str = "news.db",
    node: str = "n1",
    interval: float | None = None,
    retention_days: float | None = None,
    history_days: float | None = None,
    saturation: dict | None = None,
    canaries: Iterable[str] = (),
    webhook_url: str = "",
    receiver=None,
    mail: str | None = None,
    repeat: float | None = None,
    **settings: Any,
) -> Crawler:
    """A crawler of node *node* on the SQLite file *database* in *folder* (see :func:`project_crawler`).

    The configuration holds only what is given, the packaged defaults do the rest: the ``health`` section (and its
    ``history_days``); the scraper's ``scrape_interval`` (*interval*), ``retention_days`` and ``saturation``;
    Google's canary queries (*canaries*); alerts to *webhook_url*, or to an alert *receiver* of
    tests/support/alert_receivers.py (its Apprise URL, and *mail* if given, and its webhook) reminding every *repeat*
    seconds. *settings*: Scrapy settings over the project's."""
    health = {**(health or {}), **({"history_days": history_days} if history_days is not None else {})}
    scraper = {
        "scrape_interval": interval,
        "schedule": "fixed",  # the tests' short intervals are the fixed schedule's
        "retention_days": retention_days,
        "saturation": saturation,
    }
    alerting = {"webhook_url": webhook_url or None, "repeat": repeat}
    if receiver is not None:
        alerting["urls"] = [receiver.apprise_url("/alerts")] + ([mail] if mail else [])
        alerting["webhook_url"] = receiver.http_url("/hook")
    sections = {
        "database": {"url": f"sqlite:///{folder / database}"},
        "node": {"id": node},
        "health": health,
        "scraper": {key: value for key, value in scraper.items() if value is not None},
        "alerting": {key: value for key, value in alerting.items() if value is not None},
        "canaries": {"queries": {"google": [{"query": query} for query in canaries]}} if canaries else {},
    }
    return project_crawler(
        folder, {name: section for name, section in sections.items() if section}, spidercls, **settings
    )
