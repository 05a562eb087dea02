"""The leaf checks of the configuration: each takes ``(key, value)`` and returns the value to keep (normalized),
or raises :class:`~topicstreams.config.errors.ConfigError` naming the key, the value and what was expected.

The schema (:mod:`topicstreams.config.schema`) puts them together, one per key.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import Any
from urllib.parse import SplitResult, urlsplit
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from topicstreams import ENGINES
from topicstreams.config.apprise_urls import is_valid, masked
from topicstreams.config.errors import ConfigError
from topicstreams.config.event_names import EVENTS
from topicstreams.config.secrets import mask_url, mask_webhook
from topicstreams.engines.topic_names import name_problem

Check = Callable[[str, Any], Any]
"""A check: ``(key, value)`` to the value to keep, or a ConfigError."""


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
    return str(value).strip().rstrip("/")


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
        raise ConfigError(
            key,
            shown,
            "a socks5:// URL without credentials: Chromium cannot log in to a SOCKS proxy (use an http:// proxy for "
            "one that wants credentials, or let the SOCKS proxy allow this machine's address)",
        )
    return str(value).strip()


def webhook_url(key: str, value: Any) -> str:
    expected = "an http:// or https:// URL, or empty for none"
    if value == "":
        return ""
    shown = mask_webhook(value) if isinstance(value, str) else value
    parts = _split_url(key, value, expected, shown)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ConfigError(key, shown, expected)
    return str(value).strip()


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
    return str(value)


def topic_name(key: str, value: Any) -> str:
    """A topic name, trimmed; empty or holding control characters it is refused
    (:mod:`topicstreams.engines.topic_names`; whether its results URLs fit is checked once the engines are known, by
    :func:`topicstreams.config.schema.check_urls`)."""
    if not isinstance(value, str) or not value.strip():
        raise ConfigError(key, value, "a non-empty topic name")
    problem = name_problem(value.strip())
    if problem is not None:
        raise ConfigError(key, value, f"a valid topic name: {problem}")
    return value.strip()


def optional(check: Check) -> Check:
    def wrapped(key: str, value: Any) -> Any:
        return None if value is None else check(key, value)

    return wrapped


def apprise_url(key: str, value: Any) -> str:
    """One Apprise URL (``mailto://…``, ``json://…``, ``slack://…``): one Apprise knows; the error shows it masked."""
    expected = "an Apprise URL such as mailto://user:password@smtp.example.org or json://host/path"
    if not isinstance(value, str):
        raise ConfigError(key, value, expected)
    if not is_valid(value):
        raise ConfigError(key, masked(value), expected)
    return value.strip()


def event_list(key: str, value: Any) -> list[str]:
    """``alerting.events``: event names of :data:`~topicstreams.config.event_names.EVENTS`, each once."""
    events: list[str] = distinct(list_of(one_of(*EVENTS), "a list of events"), None, "an event not already listed")(
        key, value
    )
    return events
