"""Apprise URLs (``alerting.urls``, ``alerting.digests[].urls``): checked when the configuration loads, and shown
only masked — Apprise's own privacy rendering (tokens and passwords cut down), without the query string — in
``config show``, in log lines, in ``scrapy alerts test`` and in the ``alert_deliveries`` rows.

Apprise is imported when a URL is first looked at: a configuration without any costs nothing.
"""

from __future__ import annotations

import functools
import logging
from typing import Any
from urllib.parse import urlsplit

QUIET_LOGGER = "apprise"
"""Apprise's logger: at debug level it prints service URLs with their tokens, so it is kept at WARNING or above."""


def quiet_apprise() -> None:
    """Keep Apprise's logger at WARNING or above (never lower it if a user raised it)."""
    apprise_logger = logging.getLogger(QUIET_LOGGER)
    if apprise_logger.level < logging.WARNING:
        apprise_logger.setLevel(logging.WARNING)


@functools.lru_cache(maxsize=256)
def service_of(url: str) -> Any:
    """The Apprise service object of ``url``, or None when Apprise does not know the URL."""
    import apprise

    quiet_apprise()
    return apprise.Apprise.instantiate(url, suppress_exceptions=True)


def is_valid(url: str) -> bool:
    return isinstance(url, str) and bool(url.strip()) and service_of(url.strip()) is not None


def masked(url: str) -> str:
    """``url`` as it may be shown: Apprise's privacy rendering without its query; a URL Apprise cannot read shows
    only its scheme."""
    service = service_of(url.strip()) if isinstance(url, str) and url.strip() else None
    if service is not None:
        shown: str = service.url(privacy=True)
        return shown.split("?", 1)[0]
    try:
        scheme = urlsplit(url).scheme
    except (ValueError, AttributeError):
        scheme = ""
    return f"{scheme}://***" if scheme else "***"


def secret_parts(url: str) -> list[str]:
    """The parts of ``url`` that may be secret, as they could appear in a log line: the URL, its password, and its
    path segments and query values of 8 characters or more (tokens)."""
    found = [url]
    try:
        parts = urlsplit(url)
        found.append(parts.password or "")
        found.extend(parts.path.split("/"))
        found.extend(value for pair in parts.query.split("&") for value in pair.split("=")[1:])
        found.append(parts.username or "")
    except ValueError:
        return found
    return [value for value in found if len(value) >= 8 or value in (url, parts.password)]
