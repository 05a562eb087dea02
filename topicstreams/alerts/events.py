"""The events a person can be told of (``alerting.events``), and what every alert carries.

Engine transitions, per engine and node: ``paused``, ``resumed``, ``recovered``, ``degraded``,
``canary_mismatch``, ``parser_critical``, ``coverage_drop``; per node: ``saturation`` (begins / ends) and
``network_down`` (and its recovery), ``route_down`` / ``route_recovered`` (a proxied route failing on every engine
that takes it, and back), ``data_loss`` (a crawl had to stop with items neither stored nor journaled);
per topic: ``silence`` (and the "news again" line). Digests and test messages
are alerts too (``digest``, ``test``), sent to their own URLs whatever ``alerting.events`` says.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from topicstreams.config.event_names import (  # noqa: F401  (the events' names, where alerts are made)
    CANARY_MISMATCH,
    COVERAGE_DROP,
    DATA_LOSS,
    DEGRADED,
    EVENTS,
    NETWORK_DOWN,
    PARSER_CRITICAL,
    PAUSED,
    RECOVERED,
    RESUMED,
    ROUTE_DOWN,
    ROUTE_RECOVERED,
    SATURATION,
    SILENCE,
)

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
