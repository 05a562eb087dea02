"""Loading the topicstreams configuration: packaged defaults, the user's YAML, the environment.

One YAML file configures a run. The defaults ship inside the package (:mod:`topicstreams.config.packaged`); the
user's file, named by the Scrapy setting or the environment variable ``TOPICSTREAMS_CONFIG``, merges over them:
mappings key by key, lists and scalars replace, ``null`` means "the default". ``TOPICSTREAMS_DB_URL`` and
``SCRAPER_PROXY`` from the environment win over both. Everything is validated (:mod:`topicstreams.config.schema`)
before a browser starts or a file is written; a problem raises :class:`ConfigError` naming the key, the value and
what was expected. A relative SQLite path and ``browser.profile_dir`` are made absolute against the file's folder.

A :class:`ConfigLoader` keeps what it loaded, by its inputs: a command loads through one and hands it to its
crawlers (the setting :data:`LOADER_SETTING`), so a command and every crawler it makes share one load.
"""

from __future__ import annotations

import copy
import os
import socket
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

import yaml

from topicstreams import ENGINES
from topicstreams.config.errors import ConfigError
from topicstreams.config.packaged import read_packaged
from topicstreams.config.schema import validate
from topicstreams.config.secrets import config_secrets, masked_config
from topicstreams.config.sections import Sections, pacing_floor
from topicstreams.engines.topic_names import url_length_limit

CONFIG_SETTING = "TOPICSTREAMS_CONFIG"
"""The Scrapy setting, and the environment variable, that name the user's YAML file."""

LOADER_SETTING = "TOPICSTREAMS_CONFIG_LOADER"
"""The Scrapy setting holding the :class:`ConfigLoader` a command loaded through (its crawlers load through it)."""

DB_URL_ENV = "TOPICSTREAMS_DB_URL"
PROXY_ENV = "SCRAPER_PROXY"


def merge(base: Any, override: Any) -> Any:
    """Merge ``override`` over ``base``: mappings key by key, lists and scalars replace, None keeps base."""
    if override is None:
        return copy.deepcopy(base)
    if isinstance(base, dict) and isinstance(override, dict):
        merged = copy.deepcopy(base)
        for key, value in override.items():
            merged[key] = merge(base[key], value) if key in base else copy.deepcopy(value)
        return merged
    return copy.deepcopy(override)


def parse_user_file(path: Path, content: str) -> dict[str, Any]:
    """The user's YAML (``content``, read from ``path``) as a mapping; broken YAML is a ConfigError."""
    try:
        data = yaml.safe_load(content)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" (line {mark.line + 1})" if mark else ""
        raise ConfigError(CONFIG_SETTING, str(path), f"valid YAML{where}") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(CONFIG_SETTING, str(path), "a YAML mapping at the top level")
    return data


def floor_for(pacing: Mapping[str, Any], engine: str) -> float:
    """An engine's pacing floor from a ``scraper.pacing`` mapping: its own, else the default."""
    return pacing_floor(pacing.get("per_engine"), pacing["default_min_interval"], engine)


@dataclass(frozen=True)
class Config:
    """A validated configuration (``data``, plain values) and where it came from; :attr:`sections` is the same,
    typed."""

    data: dict[str, Any]
    source: Path | None = None

    @cached_property
    def sections(self) -> Sections:
        """The typed sections (:mod:`topicstreams.config.sections`)."""
        return Sections.of(self.data)

    def get(self, dotted: str) -> Any:
        value: Any = self.data
        for part in dotted.split("."):
            value = value[part]
        return value

    def engine(self, name: str) -> dict[str, Any]:
        engine: dict[str, Any] = self.data["engines"][name]
        return engine

    def enabled_engines(self) -> list[str]:
        return [name for name in ENGINES if self.data["engines"][name]["enabled"]]

    def min_interval(self, engine: str) -> float:
        return floor_for(self.data["scraper"]["pacing"], engine)

    def masked(self) -> dict[str, Any]:
        """The configuration with secrets masked, for printing (:func:`topicstreams.config.secrets.masked_config`)."""
        return masked_config(self.data)

    def secrets(self) -> list[str]:
        """The secret values of this configuration as they could appear in a log line
        (:func:`topicstreams.config.secrets.config_secrets`)."""
        return config_secrets(self.data)


def config_file(settings: Mapping[str, Any] | None = None, environ: Mapping[str, str] | None = None) -> Path | None:
    """The user's YAML file: the Scrapy setting TOPICSTREAMS_CONFIG, else the environment variable."""
    environ = os.environ if environ is None else environ
    name = (settings.get(CONFIG_SETTING) if settings is not None else None) or environ.get(CONFIG_SETTING)
    return Path(name).expanduser() if name else None


def read_config_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(CONFIG_SETTING, str(path), f"a readable YAML file ({exc.strerror})") from None


class ConfigLoader:
    """Loads configurations (:meth:`load`), keeping each by its inputs: the file's path and content, the environment
    variables that override it, the working directory, the host name and the URL length limit. Loading again with
    the same inputs is free; each caller gets its own copy.

    Whoever loads owns the loader: a command keeps one and hands it to its crawlers in the setting
    :data:`LOADER_SETTING` (a copy of the settings shares the loader rather than copying it)."""

    def __init__(self) -> None:
        self._loaded: dict[tuple[Any, ...], Config] = {}

    def __deepcopy__(self, memo: dict[int, Any]) -> ConfigLoader:
        return self  # Scrapy deep-copies each crawler's settings: the crawlers share the command's loader

    def __copy__(self) -> ConfigLoader:
        return self

    def load(self, settings: Mapping[str, Any] | None = None, environ: Mapping[str, str] | None = None) -> Config:
        """Defaults, then the user's file, then the environment; validated. Raises ConfigError."""
        environ = os.environ if environ is None else environ
        path = config_file(settings, environ)
        content = read_config_text(path) if path is not None else None
        url_limit = url_length_limit(settings)
        key = (
            str(path.resolve()) if path is not None else None,
            content,
            environ.get(DB_URL_ENV),
            environ.get(PROXY_ENV),
            os.getcwd(),
            socket.gethostname(),
            url_limit,
        )
        loaded = self._loaded.get(key)
        if loaded is None:
            loaded = self._loaded[key] = _load(path, content, environ, url_limit)
        return copy.deepcopy(loaded)


def load_config(settings: Mapping[str, Any] | None = None, environ: Mapping[str, str] | None = None) -> Config:
    """The configuration for ``settings`` and ``environ`` (:meth:`ConfigLoader.load`), through the loader the
    settings hold (:data:`LOADER_SETTING`), else a new one. Raises ConfigError."""
    loader = settings.get(LOADER_SETTING) if settings is not None else None
    return (loader if isinstance(loader, ConfigLoader) else ConfigLoader()).load(settings, environ)


def _resolve_database_url(url: str, base_dir: Path) -> str:
    """Make a relative SQLite path absolute against ``base_dir``."""
    from sqlalchemy.engine import make_url

    parsed = make_url(url)
    if parsed.get_backend_name() != "sqlite" or not parsed.database or parsed.database == ":memory:":
        return url
    if parsed.database.startswith("file:") or Path(parsed.database).is_absolute():
        return url
    resolved: str = parsed.set(database=str((base_dir / parsed.database).resolve())).render_as_string(
        hide_password=False
    )
    return resolved


def _load(path: Path | None, content: str | None, environ: Mapping[str, str], url_limit: int) -> Config:
    packaged = read_packaged()
    data = packaged.config
    if path is not None and content is not None:
        data = merge(data, parse_user_file(path, content))

    if environ.get(DB_URL_ENV):
        data["database"]["url"] = environ[DB_URL_ENV]
    if environ.get(PROXY_ENV, "").strip():
        data["anti_detection"]["proxy"]["proxies"] = [p.strip() for p in environ[PROXY_ENV].split(",") if p.strip()]
        data["anti_detection"]["proxy"]["enabled"] = True

    checked = validate(data, url_limit=url_limit, packaged=packaged)
    if checked["node"]["id"] is None:
        checked["node"]["id"] = socket.gethostname()
    base_dir = path.resolve().parent if path is not None else Path.cwd()
    checked["database"]["url"] = _resolve_database_url(checked["database"]["url"], base_dir)
    profile_dir = Path(checked["browser"]["profile_dir"]).expanduser()
    if not profile_dir.is_absolute():
        profile_dir = base_dir / profile_dir
    checked["browser"]["profile_dir"] = str(profile_dir)
    proxy = checked["anti_detection"]["proxy"]
    if proxy["enabled"] and not proxy["proxies"]:
        raise ConfigError("anti_detection.proxy.proxies", [], "at least one proxy URL when the proxy is enabled")
    if proxy["enabled"] and checked["routes"]:
        raise ConfigError(
            "anti_detection.proxy.enabled",
            True,
            "false when `routes` is set: each route names its own proxy (move the proxies into routes)",
        )
    if checked["routes"]:
        for engine, section in checked["engines"].items():
            if section["enabled"] and not any(not r["engines"] or engine in r["engines"] for r in checked["routes"]):
                raise ConfigError(
                    f"engines.{engine}.enabled",
                    True,
                    f"false, or a route that serves {engine}: no entry of `routes` lists it in its `engines`",
                )
    return Config(checked, path.resolve() if path is not None else None)
