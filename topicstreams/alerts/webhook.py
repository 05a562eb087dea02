"""Calling a person through ``alerting.webhook_url``: the JSON body of an alert (its ``text`` chat webhooks show as
is, with the facts beside it) and its POST.

The body is the same as before Apprise came: ``{"text", "engine", "node", "score", "band", "reasons", "at"}``, now
with ``"event"`` and ``"topic"`` (``engine``, ``node``, ``band`` and ``topic`` null where the event has none). The
delivery thread (:mod:`topicstreams.alerts.delivery`) posts it with :func:`webhook_attempt`, once per attempt, and
records each.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from topicstreams.alerts.events import Alert


WEBHOOK_TIMEOUT = 10.0
"""Seconds a webhook may take to answer."""


def alert_payload(
    engine: str | None,
    node: str | None,
    score: int | None,
    band: str | None,
    reasons: Sequence[str],
    message: str,
    at: datetime,
    *,
    event: str = "paused",
    topic: str | None = None,
) -> dict[str, Any]:
    """The webhook's JSON body of an alert."""
    return {
        "text": message,
        "engine": engine,
        "node": node,
        "score": score,
        "band": band,
        "reasons": list(reasons),
        "at": at.isoformat(),
        "event": event,
        "topic": topic,
    }


def payload_of(alert: Alert) -> dict[str, Any]:
    """:func:`alert_payload` of an :class:`~topicstreams.alerts.events.Alert` (its plain text as ``text``)."""
    return alert_payload(
        alert.engine,
        alert.node,
        alert.score,
        alert.band,
        alert.reasons,
        alert.text,
        alert.at,
        event=alert.event,
        topic=alert.topic,
    )


def webhook_attempt(url: str, payload: dict[str, Any], timeout: float = WEBHOOK_TIMEOUT) -> tuple[bool, str]:
    """POST ``payload`` as JSON to ``url`` once: (whether a 2xx came back, what happened — ``HTTP 200``,
    ``HTTP 500``, ``Connection refused`` …; never the URL). Never raises, logs nothing."""
    request = urllib.request.Request(
        url,
        data=json.dumps(payload).encode("utf-8"),
        method="POST",
        headers={"Content-Type": "application/json", "User-Agent": "topicstreams"},
    )
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return True, f"HTTP {response.status}"
    except urllib.error.HTTPError as exc:
        return False, f"HTTP {exc.code}"
    except urllib.error.URLError as exc:
        reason = exc.reason
        return False, str(getattr(reason, "strerror", None) or reason)
    except (OSError, ValueError) as exc:
        return False, str(getattr(exc, "strerror", None) or exc) or type(exc).__name__
