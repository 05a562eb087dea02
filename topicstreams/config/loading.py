"""The topicstreams configuration: packaged defaults, the user's YAML, the environment, validation.

One YAML file configures a run. The defaults ship inside the package (``defaults.yml``, read with
:mod:`pkgutil` so they load from a zipped egg under Scrapyd too); the user's file, named by the Scrapy
setting or the environment variable ``TOPICSTREAMS_CONFIG``, merges over them: mappings key by key, lists
and scalars replace, ``null`` means "the default". ``TOPICSTREAMS_DB_URL`` and ``SCRAPER_PROXY`` from the
environment win over both. Everything is validated before a browser starts or a file is written; a
problem raises :class:`ConfigError` naming the key, the value and what was expected.
"""

from __future__ import annotations

import copy
import functools
import math
import os
import pkgutil
import re
import socket
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import SplitResult, urlsplit
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import yaml

from topicstreams import ENGINES
from topicstreams.engines.consent_walls import CHOICES as CONSENT_CHOICES
from topicstreams.engines.topic_names import (
    configured_engines,
    name_problem,
    shown,
    topic_problem,
    url_length_limit,
    url_problem,
)

EX_CONFIG = 78
"""Exit status for a configuration error (sysexits.h ``EX_CONFIG``)."""

CONFIG_SETTING = "TOPICSTREAMS_CONFIG"
"""The Scrapy setting, and the environment variable, that name the user's YAML file."""

DB_URL_ENV = "TOPICSTREAMS_DB_URL"
PROXY_ENV = "SCRAPER_PROXY"

FRESHNESS = ("hour", "day", "week", "month", "any")
ASSIGNMENTS = ("shard", "lease")
"""How a node finds its topics: a static hash shard (``scraper.shard``), or leases on the shared schedule."""


SECRET_TOKENS = ("admin_token", "metrics_token")
"""The ``web.*`` keys that hold secrets (masked by ``config show``)."""

DIGEST_KEYS = ("name", "topics", "engines", "query", "every", "at", "urls", "max_items")
DIGEST_EVERY = ("as_it_happens", "hour", "day", "week")
WEEKDAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
DIGEST_DEFAULT_AT = {"day": "08:00", "week": "mon 08:00"}
"""When a daily or weekly digest without ``at`` is sent (UTC)."""
DIGEST_MAX_ITEMS = 50


def apprise_url(key: str, value: Any) -> str:
    """One Apprise URL (``mailto://…``, ``json://…``, ``slack://…``): one Apprise knows; the error shows it masked."""
    from topicstreams.config.apprise_urls import is_valid, masked

    expected = "an Apprise URL such as mailto://user:password@smtp.example.org or json://host/path"
    if not isinstance(value, str):
        raise ConfigError(key, value, expected)
    if not is_valid(value):
        raise ConfigError(key, masked(value), expected)
    return value.strip()


def event_list(key: str, value: Any) -> list[str]:
    from topicstreams.config.event_names import EVENTS

    return distinct(list_of(one_of(*EVENTS), "a list of events"), None, "an event not already listed")(key, value)


_HH_MM = r"([01]\d|2[0-3]):[0-5]\d"


def digest_at(key: str, every: str, value: Any) -> str | None:
    """A digest's ``at``: ``"HH:MM"`` (UTC) for ``day``, ``"mon HH:MM"`` … ``"sun HH:MM"`` for ``week``, nothing for
    the others."""
    if every not in DIGEST_DEFAULT_AT:
        if value not in (None, ""):
            raise ConfigError(key, value, f"no value: only a day or week digest has a time (every: {every})")
        return None
    if value in (None, ""):
        return DIGEST_DEFAULT_AT[every]
    if every == "day":
        if not isinstance(value, str) or not re.fullmatch(_HH_MM, value.strip()):
            raise ConfigError(key, value, '"HH:MM" in UTC, such as "07:30"')
        return value.strip()
    pattern = "(" + "|".join(WEEKDAYS) + r")\s+" + _HH_MM
    if not isinstance(value, str) or not re.fullmatch(pattern, value.strip().lower()):
        raise ConfigError(
            key, value, '"DAY HH:MM" in UTC with DAY one of ' + ", ".join(WEEKDAYS) + ', such as "mon 07:30"'
        )
    day, time_of_day = value.strip().lower().split()
    return f"{day} {time_of_day}"


def digest(key: str, value: Any) -> dict:
    """One ``alerting.digests`` entry, with its defaults filled in."""
    shape = "{name, every: " + " | ".join(DIGEST_EVERY) + ", at, topics, engines, query, urls, max_items}"
    if not isinstance(value, dict):
        raise ConfigError(key, value, shape)
    unknown = set(value) - set(DIGEST_KEYS)
    if unknown:
        name = sorted(unknown, key=str)[0]
        raise ConfigError(f"{key}.{name}", value[name], "no such key (known: " + ", ".join(DIGEST_KEYS) + ")")
    name = value.get("name")
    if not isinstance(name, str) or not name.strip() or any(ord(c) < 32 or ord(c) == 127 for c in name):
        raise ConfigError(f"{key}.name", name, "a non-empty name without control characters")
    every = value.get("every")
    if every not in DIGEST_EVERY:
        raise ConfigError(f"{key}.every", every, "one of " + ", ".join(DIGEST_EVERY))
    query = value.get("query") or ""
    if not isinstance(query, str):
        raise ConfigError(f"{key}.query", query, "search words, or empty for every event")
    if query.strip():
        from topicstreams.text.search_words import SearchError, SearchQuery

        try:
            SearchQuery.parse(query)
        except SearchError as exc:
            raise ConfigError(f"{key}.query", query, f"search words, or empty for every event ({exc})") from None
    max_items = value.get("max_items", DIGEST_MAX_ITEMS)
    max_items = DIGEST_MAX_ITEMS if max_items is None else max_items
    number("an integer from 1 to 1000", low=1, high=1000, integer=True)(f"{key}.max_items", max_items)
    return {
        "name": name.strip(),
        "topics": list_of(topic_name, "a list of topic names ([] for every topic)")(
            f"{key}.topics", value.get("topics") or []
        ),
        "engines": list_of(engine_name, "a list of engine names ([] for every engine)")(
            f"{key}.engines", value.get("engines") or []
        ),
        "query": query.strip(),
        "every": every,
        "at": digest_at(f"{key}.at", every, value.get("at")),
        "urls": list_of(apprise_url, "a list of Apprise URLs ([] for alerting.urls)")(
            f"{key}.urls", value.get("urls") or []
        ),
        "max_items": max_items,
    }


def digest_list(key: str, value: Any) -> list[dict]:
    return distinct(list_of(digest, "a list of digests"), "name", "a name no other digest has")(key, value)


class ConfigError(ValueError):
    """A configuration value is wrong: ``KEY: got VALUE, expected WHAT``."""

    def __init__(self, key: str, value: Any, expected: str) -> None:
        self.key, self.value, self.expected = key, value, expected
        super().__init__(f"{key}: got {_show(value)}, expected {expected}")


def _show(value: Any) -> str:
    if isinstance(value, str):
        return shown(value, longest=200)  # a 5,000-character topic is not printed whole
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


# ---------------------------------------------------------------------------------------------------------
# Leaf checks: each takes (key, value) and returns the value to keep, or raises ConfigError.

Check = Callable[[str, Any], Any]


def _is_number(value: Any) -> bool:
    """An int or a finite float (YAML's ``.inf`` and ``.nan`` are floats, and no setting means them)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def number(
    expected: str, *, low: float | None = None, high: float | None = None, low_open: bool = False, integer: bool = False
) -> Check:
    def check(key: str, value: Any) -> Any:
        ok = isinstance(value, int) and not isinstance(value, bool) if integer else _is_number(value)
        if ok and low is not None:
            ok = value > low if low_open else value >= low
        if ok and high is not None:
            ok = value <= high
        if not ok:
            raise ConfigError(key, value, expected)
        return value

    return check


def boolean(key: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise ConfigError(key, value, "true or false")
    return value


def text(expected: str = "a string", pattern: str | None = None, *, empty_ok: bool = True) -> Check:
    regex = re.compile(pattern) if pattern else None

    def check(key: str, value: Any) -> Any:
        if not isinstance(value, str) or (not empty_ok and not value.strip()):
            raise ConfigError(key, value, expected)
        if value and regex and not regex.fullmatch(value):
            raise ConfigError(key, value, expected)
        return value

    return check


def one_of(*choices: str) -> Check:
    def check(key: str, value: Any) -> Any:
        if value not in choices:
            raise ConfigError(key, value, "one of " + ", ".join(choices))
        return value

    return check


def list_of(item: Check, expected: str) -> Check:
    def check(key: str, value: Any) -> Any:
        if not isinstance(value, list):
            raise ConfigError(key, value, expected)
        return [item(f"{key}[{i}]", v) for i, v in enumerate(value)]

    return check


def distinct(check: Check, field: str | None, expected: str) -> Check:
    """``check`` (a list's), then no two entries alike (by their ``field``, or whole): the second is the error."""

    def checked(key: str, value: Any) -> Any:
        entries = check(key, value)
        seen: list[Any] = []
        for index, entry in enumerate(entries):
            mark = entry if field is None else entry[field]
            if mark in seen:
                raise ConfigError(f"{key}[{index}]" + (f".{field}" if field else ""), mark, expected)
            seen.append(mark)
        return entries

    return checked


def _split_url(key: str, value: Any, expected: str, shown: Any) -> SplitResult:
    """``value`` split into its parts, or a ConfigError showing ``shown`` (masked where secret)."""
    if not isinstance(value, str):
        raise ConfigError(key, value, expected)
    try:
        parts = urlsplit(value.strip())
        parts.port  # noqa: B018 - raises ValueError on a bad port
    except ValueError:
        raise ConfigError(key, shown, expected) from None
    return parts


def origin(key: str, value: Any) -> str:
    expected = "scheme://host[:port] with no path"
    parts = _split_url(key, value, expected, value)
    if (
        parts.scheme not in ("http", "https")
        or not parts.hostname
        or parts.path not in ("", "/")
        or parts.query
        or parts.fragment
        or parts.username
        or parts.password
    ):
        raise ConfigError(key, value, expected)
    return value.strip().rstrip("/")


def database_url(key: str, value: Any) -> str:
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError

    expected = "a SQLAlchemy URL such as sqlite:///topicstreams.db"
    if not isinstance(value, str) or not value.strip():
        raise ConfigError(key, value, expected)
    try:
        make_url(value)
    except ArgumentError:
        raise ConfigError(key, value, expected) from None
    return value


def proxy_url(key: str, value: Any) -> str:
    expected = "an http://, https:// or socks5:// proxy URL (socks5 without credentials)"
    shown = mask_url(value) if isinstance(value, str) else value
    parts = _split_url(key, value, expected, shown)
    if parts.scheme not in ("http", "https", "socks5") or not parts.hostname:
        raise ConfigError(key, shown, expected)
    if parts.scheme == "socks5" and (parts.username or parts.password):
        raise ConfigError(key, shown, expected)
    return value.strip()


def webhook_url(key: str, value: Any) -> str:
    expected = "an http:// or https:// URL, or empty for none"
    if value == "":
        return value
    shown = mask_webhook(value) if isinstance(value, str) else value
    parts = _split_url(key, value, expected, shown)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ConfigError(key, shown, expected)
    return value.strip()


TOKEN_MIN_LENGTH = 16
"""The shortest ``web.admin_token`` / ``web.metrics_token`` accepted (a short one is guessed)."""

_TOKEN = re.compile(r"[!-~]+")


def token(key: str, value: Any) -> str:
    """A bearer token: empty (off), or at least :data:`TOKEN_MIN_LENGTH` printable ASCII characters without white
    space (it travels in an ``Authorization`` header). The value is never shown in the error."""
    if not isinstance(value, str):
        raise ConfigError(key, "***" if value is not None else None, "a string (empty: off)")
    if value and (len(value) < TOKEN_MIN_LENGTH or not _TOKEN.fullmatch(value)):
        raise ConfigError(
            key,
            "***",
            f"empty (off), or a token of at least {TOKEN_MIN_LENGTH} printable ASCII "
            "characters without spaces, e.g. the output of "
            "`python -c 'import secrets; print(secrets.token_urlsafe())'`",
        )
    return value


def shard(key: str, value: Any) -> str:
    expected = '"i/n" with 0 <= i < n'
    match = re.fullmatch(r"\s*(\d+)\s*/\s*(\d+)\s*", value) if isinstance(value, str) else None
    if not match or not int(match[1]) < int(match[2]):
        raise ConfigError(key, value, expected)
    return f"{int(match[1])}/{int(match[2])}"


def timezone_id(key: str, value: Any) -> str:
    if not isinstance(value, str):
        raise ConfigError(key, value, "an IANA time zone name such as Europe/Amsterdam")
    if value:
        try:
            ZoneInfo(value)
        except (ZoneInfoNotFoundError, ValueError):
            raise ConfigError(key, value, "an IANA time zone name such as Europe/Amsterdam") from None
    return value


def geolocation(key: str, value: Any) -> Any:
    expected = "{latitude: -90…90, longitude: -180…180}"
    if value is None:
        return None
    if not isinstance(value, dict) or set(value) != {"latitude", "longitude"}:
        raise ConfigError(key, value, expected)
    number(expected, low=-90, high=90)(f"{key}.latitude", value["latitude"])
    number(expected, low=-180, high=180)(f"{key}.longitude", value["longitude"])
    return {"latitude": float(value["latitude"]), "longitude": float(value["longitude"])}


def engine_name(key: str, value: Any) -> str:
    if value not in ENGINES:
        raise ConfigError(key, value, "one of " + ", ".join(ENGINES))
    return value


def topic_name(key: str, value: Any) -> str:
    """A topic name, trimmed; empty or holding control characters it is refused (:mod:`topicstreams.engines.topic_names`;
    whether its results URLs fit is checked once the engines are known, by :func:`check_urls`)."""
    if not isinstance(value, str) or not value.strip():
        raise ConfigError(key, value, "a non-empty topic name")
    problem = name_problem(value.strip())
    if problem is not None:
        raise ConfigError(key, value, f"a valid topic name: {problem}")
    return value.strip()


CANARY_KEYS = ("query", "min_results", "expect_domain")
HOST_NAME = re.compile(r"(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*")


def canary(key: str, value: Any) -> dict:
    """One canary query: ``{query, min_results (1), expect_domain (none)}``."""
    if not isinstance(value, dict) or not set(value) <= set(CANARY_KEYS) or "query" not in value:
        raise ConfigError(key, value, "{query: text, min_results: integer >= 1, expect_domain: host name}")
    query = value["query"]
    if not isinstance(query, str) or not query.strip():
        raise ConfigError(f"{key}.query", query, "a non-empty query")
    min_results = value.get("min_results", 1)
    number("an integer >= 1", low=1, integer=True)(f"{key}.min_results", min_results)
    domain = value.get("expect_domain")
    domain = "" if domain is None else domain
    if not isinstance(domain, str) or (domain and not HOST_NAME.fullmatch(domain.strip().lower().strip("."))):
        raise ConfigError(
            f"{key}.expect_domain", value.get("expect_domain"), "a host name such as example.org, or empty for any"
        )
    return {"query": query.strip(), "min_results": min_results, "expect_domain": domain.strip().lower().strip(".")}


def canary_list(key: str, value: Any) -> list[dict]:
    return distinct(list_of(canary, "a list of canary queries"), "query", "a query not already listed for the engine")(
        key, value
    )


def optional(check: Check) -> Check:
    def wrapped(key: str, value: Any) -> Any:
        return None if value is None else check(key, value)

    return wrapped


@dataclass(frozen=True)
class Each:
    """A mapping whose keys are engine names, each value checked by ``schema``."""

    schema: Any
    keys: tuple[str, ...] = field(default=ENGINES)


def _engine_schema() -> dict:
    return {
        "enabled": boolean,
        "base_url": origin,
        "freshness": one_of(*FRESHNESS),
    }


SECONDS_POSITIVE = number("seconds > 0", low=0, low_open=True)
SECONDS = number("seconds >= 0", low=0)
RATIO = number("a number from 0 to 1", low=0, high=1)

WEIGHT = number("a number >= 0", low=0)


@functools.cache
def health_signals() -> tuple[str, ...]:
    """The signals of the health score, in the order that breaks ties: the packaged ``health.weights``."""
    return tuple(load_defaults()["health"]["weights"])


def health_weights(key: str, value: Any) -> dict:
    """``health.weights``: a number >= 0 for each signal of :func:`health_signals`; another name is refused."""
    return _validate(dict.fromkeys(health_signals(), WEIGHT), value, key)


SCHEMA: dict = {
    "database": {"url": database_url},
    "topics": list_of(topic_name, "a list of topic names"),
    "node": {"id": optional(text("a non-empty string", empty_ok=False))},
    "engines": Each(_engine_schema()),
    "scraper": {
        "scrape_interval": SECONDS_POSITIVE,
        "max_pages": number("an integer >= 1", low=1, integer=True),
        "once_attempts": number("an integer >= 1", low=1, integer=True),
        "pacing": {
            "default_min_interval": SECONDS,
            "jitter_ratio": RATIO,
            "per_engine": Each(SECONDS),
        },
        "cooldown": {
            "initial": SECONDS_POSITIVE,
            "factor": number("a number >= 1", low=1),
            "max": SECONDS_POSITIVE,
        },
        "soft_block": {"min_size_ratio": RATIO},
        "saturation": {
            "canary_engines": list_of(engine_name, "a list of engine names"),
            "robust_threshold": number("an integer >= 1", low=1, integer=True),
        },
        "shard": shard,
        "assignment": one_of(*ASSIGNMENTS),
        "lease_seconds": SECONDS_POSITIVE,
        "retention_days": number("days > 0", low=0, low_open=True),
    },
    "health": {
        "window": SECONDS_POSITIVE,
        "min_requests": number("an integer >= 1", low=1, integer=True),
        "baseline_days": number("days > 1 (the most recent day is never part of the baseline)", low=1, low_open=True),
        "smoothing": number("a number above 0, at most 1", low=0, low_open=True, high=1),
        "degrade_factor": number("a number >= 1", low=1),
        "weights": health_weights,
        "history_days": number("days > 0", low=0, low_open=True),
        "coverage_drop": number("a number above 0, at most 1", low=0, low_open=True, high=1),
    },
    "alerting": {
        "webhook_url": webhook_url,
        "urls": list_of(apprise_url, "a list of Apprise URLs"),
        "events": event_list,
        "repeat": SECONDS,
        "silence_factor": number("a number >= 1", low=1),
        "silence_min_events": number("an integer >= 2", low=2, integer=True),
        "digests": digest_list,
    },
    "canaries": {
        "interval": SECONDS_POSITIVE,
        "queries": Each(canary_list),
    },
    "web": {
        "host": text(
            "a host name or IP address to listen on, such as 127.0.0.1", r"[A-Za-z0-9._:\-\[\]]+", empty_ok=False
        ),
        "port": number("a port number from 1 to 65535", low=1, high=65535, integer=True),
        "page_size": number("an integer from 1 to 200", low=1, high=200, integer=True),
        "admin_token": token,
        "metrics_token": token,
        "sla": {
            "latency_good_ms": number("milliseconds > 0", low=0, low_open=True),
            "latency_critical_ms": number("milliseconds > 0", low=0, low_open=True),
            "errors_good": RATIO,
            "errors_critical": RATIO,
        },
    },
    "browser": {
        "executable_path": text("a path to a Chromium executable, or empty to find one"),
        "headless": boolean,
        "profile_dir": text("a folder path", empty_ok=False),
        "consent": one_of(*CONSENT_CHOICES),
    },
    "anti_detection": {
        "proxy": {
            "enabled": boolean,
            "proxies": list_of(proxy_url, "a list of proxy URLs"),
        },
        "timezone_id": timezone_id,
        "locale": text("a BCP 47 language tag such as en-US", r"[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})*"),
        "geolocation": geolocation,
    },
}


# ---------------------------------------------------------------------------------------------------------
# Loading and merging


def load_defaults() -> dict:
    """The packaged defaults (read with pkgutil: they load from an egg too)."""
    raw = pkgutil.get_data("topicstreams.config", "defaults.yml")
    if raw is None:  # pragma: no cover - a broken install
        raise RuntimeError("topicstreams/config/defaults.yml is missing from the installed package")
    return yaml.safe_load(raw)


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


def parse_user_file(path: Path, content: str) -> dict:
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


def _validate(schema: Any, value: Any, key: str) -> Any:
    if callable(schema):
        return schema(key, value)
    if isinstance(schema, Each):
        if not isinstance(value, dict):
            raise ConfigError(key, value, "a mapping of engine names (" + ", ".join(schema.keys) + ")")
        out = {}
        for name, sub in value.items():
            if name not in schema.keys:
                raise ConfigError(f"{key}.{name}", "", "an engine name: one of " + ", ".join(schema.keys))
            out[name] = _validate(schema.schema, sub, f"{key}.{name}")
        return out
    if not isinstance(value, dict):
        raise ConfigError(key, value, "a mapping")
    out = {}
    for name, sub in value.items():
        subkey = f"{key}.{name}" if key else str(name)
        if name not in schema:
            raise ConfigError(subkey, sub, "no such key (known: " + ", ".join(schema) + ")")
        out[name] = _validate(schema[name], sub, subkey)
    return out


def validate(data: Mapping, *, url_limit: int | None = None) -> dict:
    """Check a merged configuration against :data:`SCHEMA`; return it with values normalized.

    ``url_limit`` is the crawler's ``URLLENGTH_LIMIT`` (Scrapy's default when None) that topics and canary queries
    must fit (see :func:`check_urls`)."""
    checked = _validate(SCHEMA, dict(data), "")
    cooldown = checked["scraper"]["cooldown"]
    if cooldown["max"] < cooldown["initial"]:
        raise ConfigError(
            "scraper.cooldown.max", cooldown["max"], f"seconds >= scraper.cooldown.initial ({cooldown['initial']})"
        )
    check_assignment(checked)
    alerting = checked["alerting"]
    for index, each in enumerate(alerting["digests"]):
        if not each["urls"] and not alerting["urls"]:
            raise ConfigError(
                f"alerting.digests[{index}].urls", [], "at least one Apprise URL, here or in alerting.urls"
            )
    sla = checked["web"]["sla"]
    for kind, unit in (("latency", "_ms"), ("errors", "")):
        good, critical = sla[f"{kind}_good{unit}"], sla[f"{kind}_critical{unit}"]
        if critical < good:
            raise ConfigError(
                f"web.sla.{kind}_critical{unit}", critical, f"a value >= web.sla.{kind}_good{unit} ({good})"
            )
    check_urls(checked, url_length_limit() if url_limit is None else url_limit)
    return checked


def check_assignment(checked: Mapping) -> None:
    """Lease mode needs the shared schedule of a PostgreSQL database, and replaces static shards."""
    scraper = checked["scraper"]
    if scraper["assignment"] != "lease":
        return
    if not str(checked["database"]["url"]).startswith("postgresql"):
        raise ConfigError(
            "scraper.assignment",
            "lease",
            "shard while database.url is not PostgreSQL (the leases "
            "live in a database every node shares; SQLite is one machine's file)",
        )
    if scraper["shard"] != "0/1":
        raise ConfigError(
            "scraper.shard",
            scraper["shard"],
            '"0/1" with scraper.assignment lease (the nodes share the topics through leases, not shards)',
        )


def check_urls(checked: Mapping, url_limit: int) -> None:
    """Every topic's results URL fits ``url_limit`` on every engine as configured (enabled or not: the topics
    table is every engine's, and an engine enabled later reads it too), on each page up to ``scraper.max_pages``;
    each canary query's on its own engine. Otherwise a ConfigError naming the entry."""
    max_pages = checked["scraper"]["max_pages"]
    engines = configured_engines(checked["engines"])
    for index, topic in enumerate(checked["topics"]):
        problem = topic_problem(topic, engines, limit=url_limit, max_pages=max_pages)
        if problem is not None:
            raise ConfigError(f"topics[{index}]", topic, f"a topic name whose results URLs fit: {problem}")
    for engine in engines:
        for index, canary_query in enumerate(checked["canaries"]["queries"].get(engine.name) or []):
            problem = name_problem(canary_query["query"]) or url_problem(
                canary_query["query"], engine, limit=url_limit, max_pages=1
            )
            if problem is not None:
                raise ConfigError(
                    f"canaries.queries.{engine.name}[{index}].query",
                    canary_query["query"],
                    f"a query whose results URL fits: {problem}",
                )


def mask_url(url: str) -> str:
    """The URL with any password replaced by ``***`` (the user name is kept)."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return "***"
    if parts.password is None:
        return url
    netloc = parts.netloc.rsplit("@", 1)[1]
    user = parts.username or ""
    return parts._replace(netloc=f"{user}:***@{netloc}").geturl()


def mask_webhook(url: str) -> str:
    """A webhook URL without its secret: the scheme and host are kept, the path and query (the token) masked."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return "***"
    if not (parts.path.strip("/") or parts.query or parts.fragment or parts.username or parts.password):
        return url
    return f"{parts.scheme}://{parts.hostname or ''}{f':{port}' if port else ''}/***"


def _resolve_database_url(url: str, base_dir: Path) -> str:
    """Make a relative SQLite path absolute against ``base_dir``."""
    from sqlalchemy.engine import make_url

    parsed = make_url(url)
    if parsed.get_backend_name() != "sqlite" or not parsed.database or parsed.database == ":memory:":
        return url
    if parsed.database.startswith("file:") or Path(parsed.database).is_absolute():
        return url
    return parsed.set(database=str((base_dir / parsed.database).resolve())).render_as_string(hide_password=False)


def floor_for(pacing: Mapping[str, Any], engine: str) -> float:
    """An engine's pacing floor from the ``scraper.pacing`` mapping: its own, else the default."""
    own = (pacing.get("per_engine") or {}).get(engine)
    return float(pacing["default_min_interval"] if own is None else own)


@dataclass(frozen=True)
class Config:
    """A validated configuration and where it came from."""

    data: dict
    source: Path | None = None

    def get(self, dotted: str) -> Any:
        value: Any = self.data
        for part in dotted.split("."):
            value = value[part]
        return value

    def engine(self, name: str) -> dict:
        return self.data["engines"][name]

    def enabled_engines(self) -> list[str]:
        return [name for name in ENGINES if self.data["engines"][name]["enabled"]]

    def min_interval(self, engine: str) -> float:
        return floor_for(self.data["scraper"]["pacing"], engine)

    def masked(self) -> dict:
        """The configuration with secrets (proxy and database passwords) masked, for printing."""
        data = copy.deepcopy(self.data)
        proxy = data["anti_detection"]["proxy"]
        proxy["proxies"] = [mask_url(p) for p in proxy["proxies"]]
        data["database"]["url"] = mask_url(data["database"]["url"])
        if data["alerting"]["webhook_url"]:
            data["alerting"]["webhook_url"] = mask_webhook(data["alerting"]["webhook_url"])
        if data["alerting"]["urls"] or data["alerting"]["digests"]:
            from topicstreams.config.apprise_urls import masked

            data["alerting"]["urls"] = [masked(url) for url in data["alerting"]["urls"]]
            for each in data["alerting"]["digests"]:
                each["urls"] = [masked(url) for url in each["urls"]]
        for name in SECRET_TOKENS:
            if data["web"][name]:
                data["web"][name] = "***"
        return data

    def secrets(self) -> list[str]:
        """The secret values of this configuration as they could appear in a log line: the tokens, the webhook
        URL, proxy and database passwords (for :mod:`topicstreams.config.secrets`)."""
        found = [self.data["web"][name] for name in SECRET_TOKENS]
        found.append(self.data["alerting"]["webhook_url"])
        urls = [
            *self.data["alerting"]["urls"],
            *(url for each in self.data["alerting"]["digests"] for url in each["urls"]),
        ]
        if urls:
            from topicstreams.config.apprise_urls import secret_parts

            found.extend(part for url in urls for part in secret_parts(url))
        for url in [*self.data["anti_detection"]["proxy"]["proxies"], self.data["database"]["url"]]:
            try:
                found.append(urlsplit(url).password or "")
            except ValueError:
                continue
        return [value for value in found if value]


def config_file(settings: Mapping | None = None, environ: Mapping[str, str] | None = None) -> Path | None:
    """The user's YAML file: the Scrapy setting TOPICSTREAMS_CONFIG, else the environment variable."""
    environ = os.environ if environ is None else environ
    name = (settings.get(CONFIG_SETTING) if settings is not None else None) or environ.get(CONFIG_SETTING)
    return Path(name).expanduser() if name else None


def load_config(settings: Mapping | None = None, environ: Mapping[str, str] | None = None) -> Config:
    """Defaults, then the user's file, then the environment; validated. Raises ConfigError.

    Loaded once per process for the same inputs (the file's path and content, the environment variables that
    override it, the working directory): a command and every crawler it makes share one load. Each caller gets
    its own copy."""
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
    loaded = _loaded.get(key)
    if loaded is None:
        loaded = _loaded[key] = _load(path, content, environ, url_limit)
    return copy.deepcopy(loaded)


_loaded: dict[tuple, Config] = {}


def read_config_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(CONFIG_SETTING, str(path), f"a readable YAML file ({exc.strerror})") from None


def _load(path: Path | None, content: str | None, environ: Mapping[str, str], url_limit: int) -> Config:
    data = load_defaults()
    if path is not None:
        data = merge(data, parse_user_file(path, content))

    if environ.get(DB_URL_ENV):
        data["database"]["url"] = environ[DB_URL_ENV]
    if environ.get(PROXY_ENV, "").strip():
        data["anti_detection"]["proxy"]["proxies"] = [p.strip() for p in environ[PROXY_ENV].split(",") if p.strip()]
        data["anti_detection"]["proxy"]["enabled"] = True

    checked = validate(data, url_limit=url_limit)
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
    return Config(checked, path.resolve() if path is not None else None)
