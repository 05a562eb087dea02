"""The process's delivery of alerts: every target of an alert tried in a thread of its own, retried with backoff,
each attempt recorded.

The health extension, the digests and the silence watch build an :class:`~topicstreams.alerts.events.Alert` and
hand it to the :class:`Notifier` of their database (one per process and database URL, which the process's
:class:`~topicstreams.crawl.runtime.Runtime` keeps: the crawlers of ``crawlall`` share it). :meth:`Notifier.send` only
queues it — no network, no database, no exception
on the caller's thread (the Scrapy reactor's event loop) — and the notifier's thread:

* drops an event that ``alerting.events`` does not name (digests and test messages always go);
* records the alert (:func:`topicstreams.storage.alert_log.record_alert`), then tries each target: the alert's own
  URLs (a digest's) or ``alerting.urls``, and for an event ``alerting.webhook_url`` with the webhook's JSON body
  (:mod:`topicstreams.alerts.webhook`). One :class:`apprise.Apprise` per target, so that each has its own outcome; an
  e-mail (a service whose format is HTML) gets the alert's HTML, any other service its plain text, made inert
  again (:func:`topicstreams.alerts.inert_text.plain`: idempotent);
* tries a target up to ``attempts`` times (default 4), ``delays`` apart (default 2, 10, 30 s; a target waiting for
  its next try holds up no other), recording each attempt with what the service said, then the alert's
  summary (``delivered 2/2``, ``failed: mailto://user:****@host (after 4 attempts)``, ``no target``);
* logs a target that never took the alert as one WARNING with the masked target and the service's last word.

What Apprise says is captured by a filter on its logger (the notifier's
:class:`~topicstreams.alerts.apprise_logs.AppriseLogs`, put on the loggers when the notifier is made and taken off by
:meth:`Notifier.close`), in the delivering thread only: its WARNING lines become
the attempt's detail (with every secret part of the URL cut out) and go no further, so the log holds our one
masked line instead; the HTTP client's debug lines, which show request paths and queries, are dropped there too.
Apprise's logger is kept at WARNING or above (:func:`topicstreams.config.apprise_urls.quiet_apprise`), since it prints
service URLs with their tokens at debug level. Targets are only ever shown masked
(:func:`topicstreams.config.apprise_urls.masked`, the webhook by :func:`topicstreams.config.loading.mask_webhook`).

The database may be away: a record that fails is logged once (a WARNING, until a record passes again) and the
alerts are delivered all the same. :meth:`Notifier.flush` waits for every alert handed over (a closing crawl);
:meth:`Notifier.deliver_now` delivers on the caller's thread (``scrapy alerts test``).
"""

from __future__ import annotations

import heapq
import itertools
import logging
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote

from sqlalchemy import Engine

from topicstreams.alerts import inert_text as inert
from topicstreams.alerts.apprise_logs import AppriseLogs
from topicstreams.alerts.events import EVENTS, Alert
from topicstreams.alerts.webhook import WEBHOOK_TIMEOUT, payload_of, webhook_attempt
from topicstreams.config.apprise_urls import masked, quiet_apprise, secret_parts, service_of
from topicstreams.config.secrets import mask_url, mask_webhook
from topicstreams.storage import alert_log as store
from topicstreams.storage.db import utcnow
from topicstreams.storage.failures import describe

logger = logging.getLogger(__name__)

ATTEMPTS = 4
"""How many times a target is tried before the alert is given up for it."""

DELAYS = (2.0, 10.0, 30.0)
"""Seconds before the 2nd, 3rd, 4th … attempt (the last repeats)."""

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


# ---- one attempt ----------------------------------------------------------------------------------------------
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
    ok: bool = False
    detail: str = ""

    def __post_init__(self) -> None:
        if not self.shown:
            self.shown = mask_webhook(self.url) if self.webhook else masked(self.url)

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
    """How the deliveries of an alert went, in one line for the ``alerts`` row."""
    if not targets:
        return NO_TARGET
    failed = [target for target in targets if not target.ok]
    delivered = f"delivered {len(targets) - len(failed)}/{len(targets)}"
    if not failed:
        return delivered
    said = ", ".join(f"{target.shown} (after {plural(target.tried, 'attempt')})" for target in failed)
    return f"failed: {said}" if len(failed) == len(targets) else f"{delivered}; failed: {said}"


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


# ---- the notifier ---------------------------------------------------------------------------------------------
class Notifier:
    """The alerts of one database in one process: queued by :meth:`send`, delivered by a thread of its own (see
    the module docstring). Thread-safe."""

    def __init__(
        self,
        database_url: str,
        alerting: Mapping[str, Any],
        node: str,
        *,
        attempts: int = ATTEMPTS,
        delays: Sequence[float] = DELAYS,
        timeout: float = WEBHOOK_TIMEOUT,
        database: Callable[[str], Engine],
        record: bool = True,
    ) -> None:
        self.database_url = database_url
        self.database = database
        """Where its thread gets the database's handle (the process runtime's)."""
        self.record = record
        """Whether alerts are recorded (False: a command whose database cannot be reached said so already)."""
        self.attempts = max(1, int(attempts))
        self.delays = tuple(float(delay) for delay in delays) or (0.0,)
        self.timeout = timeout
        self._cond = threading.Condition()
        self._new: deque[Delivery] = deque()
        self._due: list[tuple[float, int, Delivery, Target]] = []
        self._order = itertools.count()
        self._unfinished = 0
        self._thread: threading.Thread | None = None
        self._record_failing = False
        self.logs = AppriseLogs()
        """The filters that catch what Apprise says in its thread (on the loggers until :meth:`close`)."""
        self.configure(alerting, node)

    def configure(self, alerting: Mapping[str, Any], node: str) -> None:
        """Take the ``alerting`` configuration (``urls``, ``events``, ``webhook_url``) for the alerts sent from
        now on."""
        self.urls = tuple(alerting.get("urls") or ())
        self.events = frozenset(EVENTS if alerting.get("events") is None else alerting.get("events"))
        self.webhook_url = alerting.get("webhook_url") or ""
        self.node = node

    def delay(self, attempt: int) -> float:
        """Seconds to wait after the failed ``attempt`` (1, 2, …)."""
        return self.delays[min(attempt, len(self.delays)) - 1]

    # ---- any thread -------------------------------------------------------------------------------------
    def send(self, alert: Alert) -> None:
        """Deliver ``alert`` in the notifier's thread; returns at once and never raises."""
        try:
            if alert.event in EVENTS and alert.event not in self.events:
                logger.debug("not sending the %s alert: alerting.events does not name it", alert.event)
                return
            urls = self.urls if alert.urls is None else tuple(alert.urls)
            webhook = self.webhook_url if alert.event in EVENTS else ""
            with self._cond:
                self._new.append(Delivery(alert, urls, webhook))
                self._unfinished += 1
                if self._thread is None or not self._thread.is_alive():
                    self._thread = threading.Thread(target=self._run, name="topicstreams-alerts", daemon=True)
                    self._thread.start()
                self._cond.notify_all()
        except Exception as exc:  # never the caller's problem
            logger.error(
                "could not hand the %s alert over for delivery: %s", getattr(alert, "event", "?"), describe(exc)
            )

    def pending(self) -> int:
        """Alerts handed over and not yet delivered or given up."""
        with self._cond:
            return self._unfinished

    def flush(self, timeout: float) -> bool:
        """Wait until every alert handed over is delivered or given up, at most ``timeout`` seconds; whether all
        were (else one WARNING says how many are left)."""
        with self._cond:
            deadline = time.monotonic() + timeout
            while self._unfinished:
                left = deadline - time.monotonic()
                if left <= 0:
                    logger.warning(
                        "%s still on the way after %g s (a target is slow, or its next attempt is not due yet)",
                        plural(self._unfinished, "alert"),
                        timeout,
                    )
                    return False
                self._cond.wait(left)
            return True

    def deliver_now(self, alert: Alert, urls: Sequence[str], attempts: int = 1) -> list[tuple[str, bool, str]]:
        """Deliver ``alert`` to ``urls`` on this thread (``alerting.webhook_url`` among them gets the webhook's
        body), recorded as any alert; (masked URL, delivered, detail) per URL, in their order, each once."""
        targets = [
            Target(url, webhook=bool(self.webhook_url) and url == self.webhook_url)
            for url in dict.fromkeys(urls)
            if url
        ]
        alert_id = self._record("the alert", store.record_alert, alert)
        for target in targets:
            for attempt in range(1, max(1, attempts) + 1):
                if attempt > 1:
                    time.sleep(self.delay(attempt - 1))
                ok, detail = target.attempt(alert, self.logs, self.timeout)
                self._record_attempt(alert_id, target, attempt)
                if ok:
                    break
        if alert_id is not None:
            self._record("the alert's delivery", store.set_delivery, alert_id, summary(targets))
        return [(target.shown, target.ok, target.detail) for target in targets]

    def close(self) -> None:
        """Take the notifier's log filters off Apprise's loggers (its owner is done with it; a later delivery puts
        them back)."""
        self.logs.close()

    @staticmethod
    def targets_of(urls: Sequence[str] | Mapping[str, Any], webhook: str) -> list[Target]:
        """The targets of ``urls`` and ``webhook`` (each once, in order; ``webhook`` may be among ``urls``)."""
        found = dict.fromkeys([*urls, *([webhook] if webhook else [])])
        return [Target(url, webhook=bool(webhook) and url == webhook) for url in found if url]

    # ---- recording (the database may be away) --------------------------------------------------------------
    def _record(self, what: str, write: Any, *args: Any) -> Any:
        if not self.record:
            return None
        try:
            done = write(self.database(self.database_url), *args)
        except Exception as exc:
            if not self._record_failing:
                self._record_failing = True
                logger.warning(
                    "could not record %s in the database %s (%s): alerts are delivered all the same, "
                    "not recorded until it answers",
                    what,
                    mask_url(self.database_url),
                    describe(exc),
                )
            return None
        if self._record_failing:
            self._record_failing = False
            logger.info("alerts are recorded in the database %s again", mask_url(self.database_url))
        return done

    def _record_attempt(self, alert_id: int | None, target: Target, attempt: int) -> None:
        if alert_id is not None:
            self._record(
                "an alert's delivery attempt",
                store.record_attempt,
                alert_id,
                target.shown,
                attempt,
                target.ok,
                target.detail or None,
                utcnow(),
            )

    # ---- the thread -------------------------------------------------------------------------------------
    def _run(self) -> None:
        while True:
            with self._cond:
                while True:
                    if self._new:
                        delivery, target = self._new.popleft(), None
                        break
                    if self._due:
                        wait = self._due[0][0] - time.monotonic()
                        if wait <= 0:
                            _, _, delivery, target = heapq.heappop(self._due)
                            if delivery.done:  # ended early (see below): its other targets are not tried
                                continue
                            break
                        self._cond.wait(wait)
                    else:
                        self._cond.wait()
            try:
                if target is None:
                    self._start(delivery)
                else:
                    self._try(delivery, target)
            except Exception as exc:  # a bug of ours must not stop the thread, nor leave flush() waiting
                logger.error("the delivery of a %s alert failed: %s", delivery.alert.event, describe(exc))
                self._finish(delivery, summary_line=f"failed: {describe(exc)}"[:DETAIL_LENGTH])

    def _start(self, delivery: Delivery) -> None:
        delivery.alert_id = self._record("the alert", store.record_alert, delivery.alert)
        delivery.targets = self.targets_of(delivery.urls, delivery.webhook)
        delivery.left = len(delivery.targets)
        if not delivery.targets:
            logger.debug("the %s alert has no target: recorded only", delivery.alert.event)
            self._finish(delivery)
            return
        now = time.monotonic()
        with self._cond:
            for target in delivery.targets:
                heapq.heappush(self._due, (now, next(self._order), delivery, target))

    def _try(self, delivery: Delivery, target: Target) -> None:
        ok, detail = target.attempt(delivery.alert, self.logs, self.timeout)
        self._record_attempt(delivery.alert_id, target, target.tried)
        if not ok and target.tried < self.attempts:
            delay = self.delay(target.tried)
            logger.info(
                "attempt %d of %d to deliver the %s alert to %s failed (%s); next in %g s",
                target.tried,
                self.attempts,
                delivery.alert.event,
                target.shown,
                detail,
                delay,
            )
            with self._cond:
                heapq.heappush(self._due, (time.monotonic() + delay, next(self._order), delivery, target))
                self._cond.notify_all()
            return
        if not ok:
            logger.warning(
                "could not deliver the %s alert to %s after %s: %s",
                delivery.alert.event,
                target.shown,
                plural(target.tried, "attempt"),
                detail,
            )
        delivery.left -= 1
        if delivery.left <= 0:
            self._finish(delivery)

    def _finish(self, delivery: Delivery, summary_line: str | None = None) -> None:
        if delivery.done:
            return
        delivery.done = True
        try:
            if delivery.alert_id is not None:
                self._record(
                    "the alert's delivery",
                    store.set_delivery,
                    delivery.alert_id,
                    summary_line or summary(delivery.targets),
                )
        finally:
            with self._cond:
                self._unfinished -= 1
                self._cond.notify_all()


# ---- its options from a crawl's settings ---------------------------------------------------------------------
def options_from_settings(settings: Any) -> dict[str, Any]:
    """The notifier's retries from the crawl's ``TOPICSTREAMS_ALERT_RETRY_DELAYS`` setting: one attempt, then one
    after each delay."""
    delays = [float(delay) for delay in settings.getlist("TOPICSTREAMS_ALERT_RETRY_DELAYS")]
    return {"attempts": len(delays) + 1, "delays": tuple(delays)}
