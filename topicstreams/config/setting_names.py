"""The configuration as a crawler's Scrapy settings, and back as typed sections.

The add-on (:mod:`topicstreams.addon`) sets one ``TOPICSTREAMS_*`` setting per key of :data:`SETTING_KEYS`
(:func:`setting_values`), at "addon" priority: a ``-s`` option, a project or a spider setting still wins. It then
sets :data:`SECTIONS_SETTING` to the typed sections of the configuration with those settings in their places
(:func:`sections_with_settings`), so that a crawler-side component reads its section typed::

    from topicstreams.config.setting_names import sections_from

    health = sections_from(crawler.settings).health  # a HealthSection
    health.min_requests

:func:`sections_from` builds them the same way for a crawler the add-on did not configure (a test's, with a few
``TOPICSTREAMS_*`` settings of its own): the configuration its settings name, each of those settings in its place.
"""

from __future__ import annotations

import copy
from typing import Any

from topicstreams.config.loading import Config, load_config, merge
from topicstreams.config.sections import Sections

SETTING_KEYS: dict[str, str] = {
    "TOPICSTREAMS_DATABASE_URL": "database.url",
    "TOPICSTREAMS_NODE_ID": "node.id",
    "TOPICSTREAMS_TOPICS": "topics",
    "TOPICSTREAMS_ENGINES": "engines",
    "TOPICSTREAMS_SCRAPE_INTERVAL": "scraper.scrape_interval",
    "TOPICSTREAMS_MAX_PAGES": "scraper.max_pages",
    "TOPICSTREAMS_ONCE_ATTEMPTS": "scraper.once_attempts",
    "TOPICSTREAMS_PACING": "scraper.pacing",
    "TOPICSTREAMS_COOLDOWN": "scraper.cooldown",
    "TOPICSTREAMS_SOFT_BLOCK_MIN_SIZE_RATIO": "scraper.soft_block.min_size_ratio",
    "TOPICSTREAMS_SATURATION": "scraper.saturation",
    "TOPICSTREAMS_SHARD": "scraper.shard",
    "TOPICSTREAMS_ASSIGNMENT": "scraper.assignment",
    "TOPICSTREAMS_LEASE_SECONDS": "scraper.lease_seconds",
    "TOPICSTREAMS_RETENTION_DAYS": "scraper.retention_days",
    "TOPICSTREAMS_HEALTH": "health",
    "TOPICSTREAMS_ALERTING": "alerting",
    "TOPICSTREAMS_CANARIES": "canaries",
    "TOPICSTREAMS_CONSENT": "browser.consent",
}
"""Each ``TOPICSTREAMS_*`` setting the configuration gives a crawler, and the key it comes from."""

SECTIONS_SETTING = "TOPICSTREAMS_SECTIONS"
"""The setting holding the crawler's :class:`~topicstreams.config.sections.Sections` (set by the add-on)."""


def setting_values(config: Config) -> dict[str, Any]:
    """The ``TOPICSTREAMS_*`` settings of ``config`` (:data:`SETTING_KEYS`), each its own copy."""
    return {name: copy.deepcopy(config.get(key)) for name, key in SETTING_KEYS.items()}


def sections_with_settings(config: Config, settings: Any) -> Sections:
    """The sections of ``config`` with each ``TOPICSTREAMS_*`` setting ``settings`` has (Scrapy settings or a plain
    mapping) in its place: a mapping merged over the configuration's (key by key, as the user's file is), a list
    or a value replacing it, a null keeping it."""
    data = copy.deepcopy(config.data)
    for name, key in SETTING_KEYS.items():
        value = _setting(settings, name, config.get(key))
        if value is None:
            continue
        *parents, last = key.split(".")
        place = data
        for part in parents:
            place = place[part]
        place[last] = merge(place[last], value) if isinstance(place[last], dict) else value
    return Sections.of(data)


def sections_from(settings: Any) -> Sections:
    """The typed sections of a crawler's settings: the add-on's (:data:`SECTIONS_SETTING`), else built from the
    configuration the settings name and their ``TOPICSTREAMS_*`` settings (:func:`sections_with_settings`).
    Raises :class:`~topicstreams.config.errors.ConfigError` on a bad configuration."""
    found = settings.get(SECTIONS_SETTING)
    if isinstance(found, Sections):
        return found
    return sections_with_settings(load_config(settings), settings)


def _setting(settings: Any, name: str, like: Any) -> Any:
    """The setting ``name`` read as the configuration's value ``like`` is (a mapping, a list, a value), or None."""
    if not hasattr(settings, "getdict") or settings.get(name) is None:  # a plain mapping, or not set
        return settings.get(name)
    if isinstance(like, dict):
        return settings.getdict(name)
    if isinstance(like, list):
        return settings.getlist(name)
    return settings.get(name)
