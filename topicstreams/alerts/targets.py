"""One alert to one target: the attempt (an Apprise URL, or ``alerting.webhook_url``'s JSON POST), what it said with
every secret cut out, and the one-line summary of how an alert's targets went.

The delivery thread (:mod:`topicstreams.alerts.delivery`) makes a :class:`Target` per URL of an alert and calls
:meth:`Target.attempt` once per attempt. One :class:`apprise.Apprise` per attempt, so that each target has its own
outcome; an e-mail (a service whose format is HTML) gets the alert's HTML, any other service its plain text, made
inert again (:func:`topicstreams.alerts.inert_text.plain`: idempotent). Targets are only ever shown masked
(:func:`topicstreams.config.apprise_urls.masked`, the webhook by :func:`topicstreams.config.secrets.mask_webhook`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote

from topicstreams.alerts import inert_text as inert
from topicstreams.alerts.apprise_logs import AppriseLogs
from topicstreams.alerts.events import Alert
from topicstreams.alerts.webhook import WEBHOOK_TIMEOUT, payload_of, webhook_attempt
from topicstreams.config.apprise_urls import masked, quiet_apprise, secret_parts, service_of
from topicstreams.config.secrets import mask_webhook

NO_TARGET = "no target"
"""The summary of an alert that had nowhere to go (it is recorded all the same)."""

DETAIL_LENGTH = 300
"""The longest detail of an attempt kept."""


def scrubbed(detail: str, url: str) -> str:
    """``detail`` on one line, every secret part of ``url`` (as written or decoded) cut out, at most
    :data:`DETAIL_LENGTH` characters."""
    detail = " ".join(str(detail).split())
    parts = {part for secret in secret_parts(url) for part in (secret, unquote(secret)) if part}
    for part in sorted(parts, key=len, reverse=True):
        detail = detail.replace(part, "****")
    return detail if len(detail) <= DETAIL_LENGTH else detail[: DETAIL_LENGTH - 3] + "..."


def html_of(alert: Alert) -> str:
    """The alert's HTML: its own, else its text escaped with line breaks."""
    if alert.html is not None:
        return alert.html
    return inert.html(alert.text).replace("\n", "<br>\n")


def apprise_attempt(url: str, alert: Alert, logs: AppriseLogs) -> tuple[bool, str]:
    """Send ``alert`` to the Apprise URL ``url`` once: (whether it went through, what the service said, as ``logs``
    caught it)."""
    import apprise

    quiet_apprise()
    service = service_of(url)
    if service is None:
        return False, "not a URL Apprise can send to"
    if service.notify_format == apprise.NotifyFormat.HTML:
        body, body_format = html_of(alert), apprise.NotifyFormat.HTML
    else:
        body, body_format = inert.plain(alert.text), apprise.NotifyFormat.TEXT
    with logs.said() as said:
        sender = apprise.Apprise(asset=apprise.AppriseAsset(async_mode=False))
        if not sender.add(url):
            return False, "; ".join(said) or "not a URL Apprise can send to"
        ok = sender.notify(body=body, title=inert.plain(alert.title), body_format=body_format)
    if ok:
        return True, "; ".join(said) or "sent"
    return False, "; ".join(said) or "the service did not take it"


def webhook_body(alert: Alert) -> dict[str, Any]:
    """The webhook's JSON body of ``alert``, its text made inert."""
    body = payload_of(alert)
    body["text"] = inert.plain(alert.text)
    return body


@dataclass
class Target:
    """Where an alert goes, and how it went there."""

    url: str
    webhook: bool = False
    """``alerting.webhook_url`` (today's JSON POST), not an Apprise URL."""
    shown: str = ""
    tried: int = 0
    """Attempts made by this process."""
    ok: bool = False
    detail: str = ""
    before: int = 0
    """Attempts an earlier process made (a leftover taken up after a stop): this process's are numbered after them."""
    abandoned: str = ""
    """Why the target is no longer tried (its URL is no longer configured), or empty."""

    def __post_init__(self) -> None:
        if not self.shown:
            self.shown = mask_webhook(self.url) if self.webhook else masked(self.url)

    @property
    def attempts(self) -> int:
        """Every attempt made to deliver the alert here, by this process and any before it."""
        return self.before + self.tried

    def attempt(self, alert: Alert, logs: AppriseLogs, timeout: float = WEBHOOK_TIMEOUT) -> tuple[bool, str]:
        """Try once (what Apprise says caught by ``logs``); never raises."""
        self.tried += 1
        try:
            if self.webhook:
                ok, detail = webhook_attempt(self.url, webhook_body(alert), timeout)
            else:
                ok, detail = apprise_attempt(self.url, alert, logs)
        except Exception as exc:  # a service's plugin failing in its own way: this attempt failed, nothing else
            ok, detail = False, f"{type(exc).__name__}: {exc}"
        self.ok, self.detail = ok, scrubbed(detail, self.url)
        return self.ok, self.detail


def plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def summary(targets: Sequence[Target]) -> str:
    """How the deliveries of an alert went, in one line for the ``alerts`` row: ``delivered 2/2``, ``failed: …
    (after 4 attempts)``, ``delivered 1/2; failed: …``, ``…; abandoned: … (no longer configured)``."""
    if not targets:
        return NO_TARGET
    given_up = [target for target in targets if target.abandoned]
    tried = [target for target in targets if not target.abandoned]
    failed = [target for target in tried if not target.ok]
    parts = []
    if len(failed) < len(tried):
        parts.append(f"delivered {len(tried) - len(failed)}/{len(targets)}")
    if failed:
        parts.append(
            "failed: " + ", ".join(f"{target.shown} (after {plural(target.attempts, 'attempt')})" for target in failed)
        )
    if given_up:
        parts.append("abandoned: " + ", ".join(f"{target.shown} ({target.abandoned})" for target in given_up))
    return "; ".join(parts)


@dataclass(eq=False)
class Delivery:
    """An alert handed over, on its way to its targets."""

    alert: Alert
    urls: tuple[str, ...]
    webhook: str
    targets: list[Target] = field(default_factory=list)
    alert_id: int | None = None
    left: int = 0
    done: bool = False
    started: bool = False
    """Its targets are made (a leftover comes with its own)."""
    note: str = ""
    """Added to its summary (a leftover's: who delivered it)."""

    @property
    def to_try(self) -> list[Target]:
        return [target for target in self.targets if not target.ok and not target.abandoned]
