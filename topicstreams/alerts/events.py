"""The events a person can be told of (``alerting.events``), and what every alert carries.

Engine transitions, per engine and node: ``paused``, ``resumed``, ``recovered``, ``degraded``,
``canary_mismatch``, ``parser_critical``, ``coverage_drop``; per node: ``saturation`` (begins / ends) and
``network_down`` (and its recovery); per topic: ``silence`` (and the "news again" line). Digests and test messages
are alerts too (``digest``, ``test``), sent to their own URLs whatever ``alerting.events`` says.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

PAUSED, RESUMED, RECOVERED, DEGRADED = "paused", "resumed", "recovered", "degraded"
SATURATION, CANARY_MISMATCH, PARSER_CRITICAL = "saturation", "canary_mismatch", "parser_critical"
COVERAGE_DROP, SILENCE, NETWORK_DOWN = "coverage_drop", "silence", "network_down"

EVENTS: tuple[str, ...] = (PAUSED, RESUMED, RECOVERED, DEGRADED, SATURATION, CANARY_MISMATCH, PARSER_CRITICAL,
                           COVERAGE_DROP, SILENCE, NETWORK_DOWN)
"""Every event ``alerting.events`` may name (its default: all of them)."""

DIGEST, TEST = "digest", "test"
"""The alerts that are not events: a news digest, ``scrapy alerts test``'s message."""


@dataclass(frozen=True)
class Alert:
    """One message for a person: ``title`` and ``text`` (plain, scraped parts already inert for plain text),
    ``html`` (for e-mail; every scraped part escaped) when it differs from the text, and the facts of the event."""

    event: str
    title: str
    text: str
    at: datetime
    html: str | None = None
    engine: str | None = None
    node: str | None = None
    topic: str | None = None
    score: int | None = None
    band: str | None = None
    reasons: tuple[str, ...] = ()
    details: dict[str, Any] = field(default_factory=dict)
    urls: tuple[str, ...] | None = None
    """Where to send it: None for ``alerting.urls`` (and ``alerting.webhook_url``); a digest names its own."""
