"""Calling a person: the webhook POST of an alert (a JSON body whose ``text`` chat webhooks show as is), when the
health extension pauses an engine (:mod:`topicstreams.extensions.watch`)."""

from __future__ import annotations

import json
import logging
import urllib.error
import urllib.request
from datetime import datetime
from typing import Any

from topicstreams.config import mask_webhook

logger = logging.getLogger(__name__)

WEBHOOK_TIMEOUT = 10.0
"""Seconds a webhook may take to answer."""


def alert_payload(engine: str, node: str, score: int | None, band: str, reasons: list[str], message: str,
                  at: datetime) -> dict[str, Any]:
    return {"text": message, "engine": engine, "node": node, "score": score, "band": band, "reasons": reasons,
            "at": at.isoformat()}


def post_webhook(url: str, payload: dict[str, Any], timeout: float = WEBHOOK_TIMEOUT) -> str:
    """POST ``payload`` as JSON to ``url``; returns how it went (``webhook 200``, ``webhook failed: …``). Never
    raises: an alert that cannot be delivered is still logged and in the alerts table."""
    request = urllib.request.Request(url, data=json.dumps(payload).encode("utf-8"), method="POST",
                                     headers={"Content-Type": "application/json", "User-Agent": "topicstreams"})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return f"webhook {response.status}"
    except urllib.error.HTTPError as exc:
        outcome = f"webhook failed: HTTP {exc.code}"
    except (urllib.error.URLError, OSError, ValueError) as exc:
        outcome = f"webhook failed: {getattr(exc, 'reason', exc)}"
    logger.error("could not deliver the alert to %s: %s", mask_webhook(url), outcome.removeprefix("webhook failed: "))
    return outcome
