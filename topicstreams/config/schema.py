"""The schema of the configuration: every key and its check, in one place, and :func:`validate`.

A key's check is a leaf check (:mod:`topicstreams.config.checks`), an entry list's
(:mod:`topicstreams.config.entries`), a mapping of keys (a ``dict``) or a mapping keyed by engine name
(:class:`Each`). After each key is checked, :func:`validate` checks what involves several keys (the cooldown's
bounds, the assignment, a digest's URLs, the service levels' order, every topic's results URL).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from topicstreams import ENGINES
from topicstreams.config.checks import (
    apprise_url,
    boolean,
    database_url,
    engine_name,
    event_list,
    geolocation,
    list_of,
    number,
    one_of,
    optional,
    origin,
    proxy_url,
    shard,
    text,
    timezone_id,
    token,
    topic_name,
    webhook_url,
)
from topicstreams.config.entries import canary_list, digest_list
from topicstreams.config.errors import ConfigError
from topicstreams.config.packaged import CANARIES, DIGESTS, Packaged, read_packaged
from topicstreams.config.route_entries import route_list
from topicstreams.engines.base import FRESHNESS_WINDOWS
from topicstreams.engines.consent_walls import CHOICES as CONSENT_CHOICES
from topicstreams.engines.topic_names import (
    configured_engines,
    name_problem,
    topic_problem,
    url_length_limit,
    url_problem,
)

FRESHNESS = FRESHNESS_WINDOWS
"""The values of ``engines.<name>.freshness`` (the engines' own: :mod:`topicstreams.engines.base`)."""

ASSIGNMENTS = ("shard", "lease")
"""How a node finds its topics: a static hash shard (``scraper.shard``), or leases on the shared schedule."""

SCHEDULES = ("adaptive", "fixed")
"""``scraper.schedule``: each topic's interval from its rate under the fixed schedule's budget, or every topic every
``scraper.scrape_interval``."""

SECONDS_POSITIVE = number("seconds > 0", low=0, low_open=True)
SECONDS = number("seconds >= 0", low=0)
RATIO = number("a number from 0 to 1", low=0, high=1)
WEIGHT = number("a number >= 0", low=0)


@dataclass(frozen=True)
class Each:
    """A mapping whose keys are engine names, each value checked by ``schema``."""

    schema: Any
    keys: tuple[str, ...] = field(default=ENGINES)


def schema_of(packaged: Packaged) -> dict[str, Any]:
    """The schema, with what it takes from the packaged defaults: the health signals (``health.weights``' keys)
    and the defaults of a digest and of a canary query."""
    return {
        "database": {"url": database_url},
        "topics": list_of(topic_name, "a list of topic names"),
        "node": {"id": optional(text("a non-empty string", empty_ok=False))},
        "engines": Each(
            {
                "enabled": boolean,
                "base_url": origin,
                "freshness": one_of(*FRESHNESS),
            }
        ),
        "scraper": {
            "scrape_interval": SECONDS_POSITIVE,
            "max_pages": number("an integer >= 1", low=1, integer=True),
            "once_attempts": number("an integer >= 1", low=1, integer=True),
            "schedule": one_of(*SCHEDULES),
            "adaptive": {
                "min_interval": SECONDS_POSITIVE,
                "max_interval": SECONDS_POSITIVE,
                "burst_pages": number("an integer >= 0", low=0, integer=True),
            },
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
            "limits": {
                "items_per_page": number("an integer >= 1", low=1, integer=True),
                "title_chars": number("an integer >= 1", low=1, integer=True),
                "snippet_chars": number("an integer >= 1", low=1, integer=True),
                "page_bytes": number("an integer >= 1 (bytes)", low=1, integer=True),
            },
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
            "baseline_days": number(
                "days > 1 (the most recent day is never part of the baseline)", low=1, low_open=True
            ),
            "smoothing": number("a number above 0, at most 1", low=0, low_open=True, high=1),
            "degrade_factor": number("a number >= 1", low=1),
            # A number >= 0 for each signal of the score; another name is refused.
            "weights": dict.fromkeys(packaged.health_signals, WEIGHT),
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
            "digests": digest_list(packaged.entries[DIGESTS]),
        },
        "canaries": {
            "interval": SECONDS_POSITIVE,
            "queries": Each(canary_list(packaged.entries[CANARIES])),
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
        "routes": route_list(),
    }


def check(schema: Any, value: Any, key: str) -> Any:
    """``value`` at ``key`` checked against ``schema`` (a check, an :class:`Each` or a mapping of keys)."""
    if callable(schema):
        return schema(key, value)
    if isinstance(schema, Each):
        if not isinstance(value, dict):
            raise ConfigError(key, value, "a mapping of engine names (" + ", ".join(schema.keys) + ")")
        out = {}
        for name, sub in value.items():
            if name not in schema.keys:
                raise ConfigError(f"{key}.{name}", "", "an engine name: one of " + ", ".join(schema.keys))
            out[name] = check(schema.schema, sub, f"{key}.{name}")
        return out
    if not isinstance(value, dict):
        raise ConfigError(key, value, "a mapping")
    out = {}
    for name, sub in value.items():
        subkey = f"{key}.{name}" if key else str(name)
        if name not in schema:
            raise ConfigError(subkey, sub, "no such key (known: " + ", ".join(schema) + ")")
        out[name] = check(schema[name], sub, subkey)
    return out


def validate(
    data: Mapping[str, Any], *, url_limit: int | None = None, packaged: Packaged | None = None
) -> dict[str, Any]:
    """Check a merged configuration against the schema (:func:`schema_of` the ``packaged`` defaults, read when
    None); return it with values normalized.

    ``url_limit`` is the crawler's ``URLLENGTH_LIMIT`` (Scrapy's default when None) that topics and canary queries
    must fit (see :func:`check_urls`)."""
    schema = schema_of(read_packaged() if packaged is None else packaged)
    checked: dict[str, Any] = check(schema, dict(data), "")
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
    adaptive = checked["scraper"]["adaptive"]
    if adaptive["max_interval"] < adaptive["min_interval"]:
        raise ConfigError(
            "scraper.adaptive.max_interval",
            adaptive["max_interval"],
            f"seconds >= scraper.adaptive.min_interval ({adaptive['min_interval']:g})",
        )
    check_urls(checked, url_length_limit() if url_limit is None else url_limit)
    return checked


def check_assignment(checked: Mapping[str, Any]) -> None:
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


def check_urls(checked: Mapping[str, Any], url_limit: int) -> None:
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
