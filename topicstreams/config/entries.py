"""The checks of one entry of the lists whose entries have keys of their own: a digest (``alerting.digests``) and a
canary query (``canaries.queries.<engine>``). What an entry leaves out takes the packaged entry defaults
(:attr:`topicstreams.config.packaged.Packaged.entries`), given to :func:`digest_list` and :func:`canary_list`,
which make the list's check."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from topicstreams.config.checks import Check, apprise_url, distinct, engine_name, list_of, number, topic_name
from topicstreams.config.errors import ConfigError
from topicstreams.text.search_words import SearchError, SearchQuery

DIGEST_KEYS = ("name", "topics", "engines", "query", "every", "at", "urls", "max_items")
DIGEST_EVERY = ("as_it_happens", "hour", "day", "week")
WEEKDAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")

_HH_MM = r"([01]\d|2[0-3]):[0-5]\d"


def digest_at(key: str, every: str, value: Any, default_at: Mapping[str, str]) -> str | None:
    """A digest's ``at``: ``"HH:MM"`` (UTC) for ``day``, ``"mon HH:MM"`` … ``"sun HH:MM"`` for ``week``, nothing for
    the others; ``default_at`` (by ``every``) when left out."""
    if every not in default_at:
        if value not in (None, ""):
            raise ConfigError(key, value, f"no value: only a day or week digest has a time (every: {every})")
        return None
    if value in (None, ""):
        return default_at[every]
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


def digest(key: str, value: Any, defaults: Mapping[str, Any]) -> dict[str, Any]:
    """One ``alerting.digests`` entry, with ``defaults`` filled in."""
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
    query = value.get("query") or defaults["query"]
    if not isinstance(query, str):
        raise ConfigError(f"{key}.query", query, "search words, or empty for every event")
    if query.strip():
        try:
            SearchQuery.parse(query)
        except SearchError as exc:
            raise ConfigError(f"{key}.query", query, f"search words, or empty for every event ({exc})") from None
    max_items = value.get("max_items")
    max_items = defaults["max_items"] if max_items is None else max_items
    number("an integer from 1 to 1000", low=1, high=1000, integer=True)(f"{key}.max_items", max_items)
    return {
        "name": name.strip(),
        "topics": list_of(topic_name, "a list of topic names ([] for every topic)")(
            f"{key}.topics", value.get("topics") or defaults["topics"]
        ),
        "engines": list_of(engine_name, "a list of engine names ([] for every engine)")(
            f"{key}.engines", value.get("engines") or defaults["engines"]
        ),
        "query": query.strip(),
        "every": every,
        "at": digest_at(f"{key}.at", every, value.get("at"), defaults["at"]),
        "urls": list_of(apprise_url, "a list of Apprise URLs ([] for alerting.urls)")(
            f"{key}.urls", value.get("urls") or defaults["urls"]
        ),
        "max_items": max_items,
    }


def digest_list(defaults: Mapping[str, Any]) -> Check:
    """The check of ``alerting.digests``: digests (``defaults`` filled in), each with a name no other has."""

    def one(key: str, value: Any) -> dict[str, Any]:
        return digest(key, value, defaults)

    return distinct(list_of(one, "a list of digests"), "name", "a name no other digest has")


CANARY_KEYS = ("query", "min_results", "expect_domain")
HOST_NAME = re.compile(r"(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*")


def canary(key: str, value: Any, defaults: Mapping[str, Any]) -> dict[str, Any]:
    """One canary query: ``{query, min_results, expect_domain}``, with ``defaults`` filled in."""
    if not isinstance(value, dict) or not set(value) <= set(CANARY_KEYS) or "query" not in value:
        raise ConfigError(key, value, "{query: text, min_results: integer >= 1, expect_domain: host name}")
    query = value["query"]
    if not isinstance(query, str) or not query.strip():
        raise ConfigError(f"{key}.query", query, "a non-empty query")
    min_results = value.get("min_results", defaults["min_results"])
    number("an integer >= 1", low=1, integer=True)(f"{key}.min_results", min_results)
    domain = value.get("expect_domain")
    domain = defaults["expect_domain"] if domain is None else domain
    if not isinstance(domain, str) or (domain and not HOST_NAME.fullmatch(domain.strip().lower().strip("."))):
        raise ConfigError(
            f"{key}.expect_domain", value.get("expect_domain"), "a host name such as example.org, or empty for any"
        )
    return {"query": query.strip(), "min_results": min_results, "expect_domain": domain.strip().lower().strip(".")}


def canary_list(defaults: Mapping[str, Any]) -> Check:
    """The check of one engine's canary queries (``defaults`` filled in), each query once."""

    def one(key: str, value: Any) -> dict[str, Any]:
        return canary(key, value, defaults)

    return distinct(list_of(one, "a list of canary queries"), "query", "a query not already listed for the engine")
