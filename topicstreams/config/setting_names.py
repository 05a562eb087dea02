"""The configuration as a crawler's Scrapy settings, and back as typed sections.

The add-on (:mod:`topicstreams.addon`) sets one ``TOPICSTREAMS_*`` setting per key of :data:`SETTING_KEYS`
(:func:`setting_values`), at "addon" priority: a ``-s`` option, a project or a spider setting still wins. It then
sets :data:`SECTIONS_SETTING` to the typed sections of the configuration with those settings in their places,
validated as the configuration is (:func:`sections_with_settings`: a bad one is a ``ConfigError`` naming the
setting, which the project's commands report as any other, before a crawler is made), so that a crawler-side
component reads its section typed, and nothing else of the configuration::

    from topicstreams.config.setting_names import sections_from

    health = sections_from(crawler.settings).health  # a HealthSection
    health.min_requests

:func:`sections_from` builds them the same way for a crawler the add-on did not configure (a test's, with a few
``TOPICSTREAMS_*`` settings of its own): the configuration its settings name, each of those settings in its place.
"""

from __future__ import annotations

import copy
from typing import Any

from topicstreams.config.errors import ConfigError
from topicstreams.config.loading import Config, load_config, merge
from topicstreams.config.schema import validate
from topicstreams.config.sections import Sections
from topicstreams.engines.topic_names import url_length_limit

SETTING_KEYS: dict[str, str] = {
    "TOPICSTREAMS_DATABASE_URL": "database.url",
    "TOPICSTREAMS_NODE_ID": "node.id",
    "TOPICSTREAMS_TOPICS": "topics",
    "TOPICSTREAMS_ENGINES": "engines",
    "TOPICSTREAMS_SCRAPE_INTERVAL": "scraper.scrape_interval",
    "TOPICSTREAMS_MAX_PAGES": "scraper.max_pages",
    "TOPICSTREAMS_ONCE_ATTEMPTS": "scraper.once_attempts",
    "TOPICSTREAMS_SCHEDULE": "scraper.schedule",
    "TOPICSTREAMS_ADAPTIVE": "scraper.adaptive",
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
    mapping) in its place (:func:`setting_overrides`), validated as the configuration is. Raises
    :class:`~topicstreams.config.errors.ConfigError` naming the setting when one of them is not a valid value of
    its key."""
    overrides = setting_overrides(config, settings)
    if not overrides:
        return config.sections
    data = copy.deepcopy(config.data)
    for name, value in overrides.items():
        *parents, last = SETTING_KEYS[name].split(".")
        place = data
        for part in parents:
            place = place[part]
        place[last] = value
    try:
        checked = validate(data, url_limit=url_length_limit(settings))
    except ConfigError as exc:
        raise ConfigError(_blamed(exc.key, overrides), exc.value, exc.expected) from None
    return Sections.of(checked)


def setting_overrides(config: Config, settings: Any) -> dict[str, Any]:
    """The ``TOPICSTREAMS_*`` settings of ``settings`` whose value differs from ``config``'s, each as the value of
    its key: a mapping merged over the configuration's (key by key, as the user's file is; a ``-s`` option gives it
    as JSON), a list replacing it (``-s``: comma-separated), a number read from a ``-s`` option's text; a null or
    blank text keeps the configuration's. Raises :class:`~topicstreams.config.errors.ConfigError` naming a setting
    that cannot be read so."""
    overrides = {}
    for name, key in SETTING_KEYS.items():
        like = config.get(key)
        value = _setting(settings, name, key, like)
        if value is None:
            continue
        if isinstance(like, dict):
            value = merge(like, value)
        if value != like:
            overrides[name] = value
    return overrides


def sections_from(settings: Any) -> Sections:
    """The typed sections of a crawler's settings: the add-on's (:data:`SECTIONS_SETTING`), else built from the
    configuration the settings name and their ``TOPICSTREAMS_*`` settings (:func:`sections_with_settings`).
    Raises :class:`~topicstreams.config.errors.ConfigError` on a bad configuration."""
    found = settings.get(SECTIONS_SETTING)
    if isinstance(found, Sections):
        return found
    return sections_with_settings(load_config(settings), settings)


def _setting(settings: Any, name: str, key: str, like: Any) -> Any:
    """The setting ``name`` read as the configuration's value ``like`` (of ``key``) is: a mapping, a list, a number
    or a string; None when it is not set, or set to blank text (but for a list: an empty one)."""
    value = settings.get(name)
    if value is None or (isinstance(value, str) and not value.strip() and not isinstance(like, list)):
        return None  # as a null in the user's file; an empty TOPICSTREAMS_DATABASE_URL turns the database's parts off
    if isinstance(like, dict):
        try:
            value = settings.getdict(name) if hasattr(settings, "getdict") else dict(value)
        except (TypeError, ValueError):
            raise ConfigError(name, value, f"a mapping of {key}'s keys (on the command line: a JSON object)") from None
    elif isinstance(like, list):
        value = settings.getlist(name) if hasattr(settings, "getlist") else value
    elif isinstance(value, str) and isinstance(like, (int, float)) and not isinstance(like, bool):
        value = _number(name, key, value)
    return value


def _number(name: str, key: str, text: str) -> int | float:
    """A number a ``-s`` option gives as text (an integer when it reads as one)."""
    try:
        return int(text)
    except ValueError:
        pass
    try:
        return float(text)
    except ValueError:
        raise ConfigError(name, text, f"a number ({key})") from None


def _blamed(key: str, overrides: dict[str, Any]) -> str:
    """What a configuration error at ``key`` names: the setting whose key holds it, with the key; else the key, with
    the settings that were given."""
    for name in overrides:
        own = SETTING_KEYS[name]
        if key == own or key.startswith((own + ".", own + "[")):
            return f"{name} ({key})"
    return f"{key} (with the setting {', '.join(overrides)})"
