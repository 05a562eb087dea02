"""The process's delivery of alerts: every target of an alert tried in a thread of its own, retried with backoff,
each attempt recorded; what a stop leaves undelivered kept for the next start of the node.

The health extension, the digests and the silence watch build an :class:`~topicstreams.alerts.events.Alert` and
hand it to the :class:`Notifier` of their database (one per process and database URL, which the process's
:class:`~topicstreams.crawl.runtime.Runtime` keeps: the crawlers of ``crawlall`` share it). :meth:`Notifier.send` only
queues it — no network, no database, no exception
on the caller's thread (the Scrapy reactor's event loop) — and the notifier's thread:

* drops an event that ``alerting.events`` does not name (digests and test messages always go);
* records the alert (:func:`topicstreams.storage.alert_log.record_alert`: with its targets masked, as this node's to
  deliver, held by this process), then tries each target: the alert's own URLs (a digest's) or ``alerting.urls``, and
  for an event ``alerting.webhook_url`` with the webhook's JSON body (:mod:`topicstreams.alerts.targets`);
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
service URLs with their tokens at debug level.

The database may be away: a record that fails is logged once (a WARNING, until a record passes again) and the
alerts are delivered all the same. :meth:`Notifier.flush` waits for every alert handed over;
:meth:`Notifier.deliver_now` delivers on the caller's thread (``scrapy alerts test``).

**Stops.** A closing crawl waits at most ``stop_wait`` seconds (``TOPICSTREAMS_ALERT_STOP_WAIT``, 5 s) for its
deliveries (:meth:`Notifier.wait_at_stop`); when the process's last crawler has stopped, :meth:`Notifier.close` keeps
what is still on its way in the database (recorded now if it was not) and leaves it to the next start of the node,
with one WARNING. That start (:meth:`Notifier.resume_leftovers`, once per process) takes them up in the notifier's
thread: sent to the targets still owed, or marked ``abandoned`` with why (:mod:`topicstreams.alerts.leftovers`).
While a process delivers an alert it holds it (``alerts.claimed_until``, renewed at each attempt), so another
process of the node starting meanwhile leaves it alone; a process that died without a word leaves its hold to expire.
"""

from __future__ import annotations

import heapq
import itertools
import logging
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import Engine

from topicstreams.alerts.apprise_logs import AppriseLogs
from topicstreams.alerts.events import EVENTS, Alert
from topicstreams.alerts.leftovers import LEFTOVER_HOURS, judge
from topicstreams.alerts.targets import DETAIL_LENGTH, Delivery, Target, plural, summary
from topicstreams.alerts.webhook import WEBHOOK_TIMEOUT
from topicstreams.config.secrets import mask_url
from topicstreams.storage import alert_log as store
from topicstreams.storage.db import utcnow
from topicstreams.storage.failures import describe

logger = logging.getLogger(__name__)

ATTEMPTS = 4
"""How many times a target is tried before the alert is given up for it."""

DELAYS = (2.0, 10.0, 30.0)
"""Seconds before the 2nd, 3rd, 4th … attempt (the last repeats)."""

STOP_WAIT = 5.0
"""Seconds a stopping crawl waits for its deliveries (``TOPICSTREAMS_ALERT_STOP_WAIT``)."""

HOLD_MARGIN = 60.0
"""Seconds a process's hold on an alert lasts beyond its retries and their timeouts (renewed at each attempt)."""


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
        stop_wait: float = STOP_WAIT,
        leftover_hours: float = LEFTOVER_HOURS,
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
        self.stop_wait = max(0.0, float(stop_wait))
        self.max_age = timedelta(hours=leftover_hours)
        """How old an alert left undelivered by a stop may be and still be sent by the next start."""
        self._cond = threading.Condition()
        self._new: deque[Delivery] = deque()
        self._due: list[tuple[float, int, Delivery, Target]] = []
        self._order = itertools.count()
        self._unfinished = 0
        self._live: set[Delivery] = set()
        """The deliveries handed over and not finished (what a stop keeps for the next start)."""
        self._keeping = threading.Lock()
        """Held while an alert is recorded: the thread's start of it and a stop keeping it record it once."""
        self._leftovers = "not asked"
        """Whether the alerts an earlier process left were taken up: ``not asked``, ``asked``, ``taken``."""
        self._thread: threading.Thread | None = None
        self._record_failing = False
        self.logs = AppriseLogs()
        """The filters that catch what Apprise says in its thread (on the loggers until :meth:`close`)."""
        self.configure(alerting, node)

    def configure(self, alerting: Mapping[str, Any], node: str) -> None:
        """Take the ``alerting`` configuration (``urls``, ``events``, ``webhook_url``, and the ``digests``' ``urls``
        a leftover digest is matched to) for the alerts sent from now on."""
        self.urls = tuple(alerting.get("urls") or ())
        self.events = frozenset(EVENTS if alerting.get("events") is None else alerting.get("events"))
        self.webhook_url = alerting.get("webhook_url") or ""
        self.digest_urls = tuple(url for digest in alerting.get("digests") or () for url in digest.get("urls") or ())
        self.node = node

    def delay(self, attempt: int) -> float:
        """Seconds to wait after the failed ``attempt`` (1, 2, …)."""
        return self.delays[min(attempt, len(self.delays)) - 1]

    def held_until(self) -> datetime:
        """Until when this process holds an alert it delivers: its retries and their timeouts, and a margin."""
        retries = sum(self.delay(attempt) for attempt in range(1, self.attempts))
        return utcnow() + timedelta(seconds=retries + self.attempts * self.timeout + HOLD_MARGIN)

    # ---- any thread -------------------------------------------------------------------------------------
    def send(self, alert: Alert) -> None:
        """Deliver ``alert`` in the notifier's thread; returns at once and never raises."""
        try:
            if alert.event in EVENTS and alert.event not in self.events:
                logger.debug("not sending the %s alert: alerting.events does not name it", alert.event)
                return
            urls = self.urls if alert.urls is None else tuple(alert.urls)
            webhook = self.webhook_url if alert.event in EVENTS else ""
            self._hand_over(Delivery(alert, urls, webhook))
        except Exception as exc:  # never the caller's problem
            logger.error(
                "could not hand the %s alert over for delivery: %s", getattr(alert, "event", "?"), describe(exc)
            )

    def _hand_over(self, delivery: Delivery | None) -> None:
        """Queue ``delivery`` (None: the take-up of leftovers) for the thread, started if it is not running."""
        with self._cond:
            if delivery is not None:
                self._new.append(delivery)
                self._live.add(delivery)
            self._unfinished += 1
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, name="topicstreams-alerts", daemon=True)
                self._thread.start()
            self._cond.notify_all()

    def pending(self) -> int:
        """Alerts handed over and not yet delivered or given up."""
        with self._cond:
            return self._unfinished

    def flush(self, timeout: float, warn: bool = True) -> bool:
        """Wait until every alert handed over is delivered or given up, at most ``timeout`` seconds; whether all
        were (else, with ``warn``, one WARNING says how many are left)."""
        with self._cond:
            deadline = time.monotonic() + timeout
            while self._unfinished:
                left = deadline - time.monotonic()
                if left <= 0:
                    if warn:
                        logger.warning(
                            "%s still on the way after %g s (a target is slow, or its next attempt is not due yet)",
                            plural(self._unfinished, "alert"),
                            timeout,
                        )
                    return False
                self._cond.wait(left)
            return True

    def wait_at_stop(self) -> bool:
        """A crawler closes: wait at most :attr:`stop_wait` seconds for the deliveries (what is left then is kept
        for the node's next start by :meth:`close`); whether all were done."""
        return self.flush(self.stop_wait, warn=False)

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
                self._record_attempt(alert_id, target, renew=False)
                if ok:
                    break
        if alert_id is not None:
            self._record("the alert's delivery", store.set_delivery, alert_id, summary(targets))
        return [(target.shown, target.ok, target.detail) for target in targets]

    def close(self) -> None:
        """Its owner is done with it (the process's last crawler stopped): keep what is still on its way for the
        node's next start, and take the log filters off Apprise's loggers (a later delivery puts them back)."""
        with self._cond:
            left = [delivery for delivery in self._live if not delivery.done]
        if left:
            self._leave(left)
        self.logs.close()

    @staticmethod
    def targets_of(urls: Sequence[str] | Mapping[str, Any], webhook: str) -> list[Target]:
        """The targets of ``urls`` and ``webhook`` (each once, in order; ``webhook`` may be among ``urls``)."""
        found = dict.fromkeys([*urls, *([webhook] if webhook else [])])
        return [Target(url, webhook=bool(webhook) and url == webhook) for url in found if url]

    # ---- stops and starts --------------------------------------------------------------------------------------
    def _keep(self, delivery: Delivery, held: bool) -> tuple[int | None, bool]:
        """Record ``delivery``'s alert with its targets unless it is (``held``: by this process; else left for the
        node's next start): its id (None when the database did not take it), and whether it was recorded before."""
        with self._keeping:
            if not delivery.started:
                delivery.targets, delivery.started = self.targets_of(delivery.urls, delivery.webhook), True
            before = delivery.alert_id is not None
            if not before:
                delivery.alert_id = self._record(
                    "the alert",
                    store.record_alert,
                    delivery.alert,
                    sender=self.node,
                    targets=[target.shown for target in delivery.targets],
                    held_until=self.held_until() if held else None,
                )
            return delivery.alert_id, before

    def _leave(self, deliveries: list[Delivery]) -> None:
        """Keep ``deliveries`` in the database for the node's next start (one WARNING says so)."""
        released, lost = [], 0
        for delivery in deliveries:
            alert_id, recorded = self._keep(delivery, held=False)
            if alert_id is None:
                lost += 1  # still tried while the process lives
                continue
            if recorded:
                released.append(alert_id)
            with self._cond:  # the next start's now: this process tries it no more
                if not delivery.done:
                    delivery.done = True
                    self._unfinished -= 1
                    self._live.discard(delivery)
                    self._cond.notify_all()
        if released:  # if this fails, their hold expires: the next start after it takes them all the same
            self._record("the alerts left for the next start", store.release, released)
        kept = len(deliveries) - lost
        if kept:
            logger.warning(
                "%s not delivered within %g s of the stop (a target is slow or down): kept in the database; the next "
                "start of node %s delivers them (those older than %g h then are abandoned); see `scrapy alerts list`",
                plural(kept, "alert"),
                self.stop_wait,
                self.node,
                self.max_age.total_seconds() / 3600,
            )
        if lost:
            logger.error(
                "%s not delivered by the stop could not be kept: the database %s did not take %s; %s lost",
                plural(lost, "alert"),
                mask_url(self.database_url),
                "it" if lost == 1 else "them",
                "it is" if lost == 1 else "they are",
            )

    def resume_leftovers(self) -> None:
        """A crawl of the node starts: take up, once per process and in the notifier's thread, the alerts an
        earlier process of the node left undelivered (a database that does not answer: asked again at the next
        call)."""
        with self._cond:  # a re-entrant lock: _hand_over takes it again
            if self._leftovers != "not asked" or not self.record:
                return
            self._leftovers = "asked"
            self._hand_over(None)

    def _take_leftovers(self) -> None:
        db = self.database(self.database_url)
        now = utcnow()
        sent, abandoned = 0, []
        for row in store.leftovers(db, self.node, now):
            if not store.claim(db, row["id"], self.held_until(), now):
                continue  # another process of the node took it first
            left = judge(
                row,
                node=self.node,
                now=now,
                max_age=self.max_age,
                urls=(*self.urls, *self.digest_urls),
                webhook=self.webhook_url,
                events=self.events,
            )
            if left.abandoned:
                store.set_delivery(db, left.alert_id, left.abandoned)
                abandoned.append(f"{row['event']} of {row['created_at']:%Y-%m-%d %H:%M}Z: {left.abandoned}")
                continue
            note = f" (after a stop, by the next start of node {self.node})"
            self._hand_over(Delivery(left.alert, (), "", left.targets, left.alert_id, started=True, note=note))
            sent += 1
        if sent:
            logger.info("node %s: delivering %s an earlier process left undelivered", self.node, plural(sent, "alert"))
        if abandoned:
            logger.warning(
                "node %s: %s an earlier process left undelivered will not be sent: %s",
                self.node,
                plural(len(abandoned), "alert"),
                "; ".join(abandoned[:3]) + (f"; and {len(abandoned) - 3} more" if len(abandoned) > 3 else ""),
            )

    # ---- recording (the database may be away) --------------------------------------------------------------
    def _record(self, what: str, write: Any, *args: Any, **values: Any) -> Any:
        if not self.record:
            return None
        try:
            done = write(self.database(self.database_url), *args, **values)
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

    def _record_attempt(self, alert_id: int | None, target: Target, renew: bool = True) -> None:
        if alert_id is not None:
            self._record(
                "an alert's delivery attempt",
                store.record_attempt,
                alert_id,
                target.shown,
                target.attempts,
                target.ok,
                target.detail or None,
                utcnow(),
                self.held_until() if renew else None,
            )

    # ---- the thread -------------------------------------------------------------------------------------
    def _run(self) -> None:
        while True:
            with self._cond:
                while True:
                    if self._leftovers == "asked":
                        delivery, target = None, None
                        self._leftovers = "taking"
                        break
                    if self._new:
                        delivery, target = self._new.popleft(), None
                        if delivery.done:  # left for the next start before it began (see _leave)
                            continue
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
            if delivery is None:
                self._run_take_up()
                continue
            try:
                if target is None:
                    self._start(delivery)
                else:
                    self._try(delivery, target)
            except Exception as exc:  # a bug of ours must not stop the thread, nor leave flush() waiting
                logger.error("the delivery of a %s alert failed: %s", delivery.alert.event, describe(exc))
                self._finish(delivery, summary_line=f"failed: {describe(exc)}"[:DETAIL_LENGTH])

    def _run_take_up(self) -> None:
        taken = "not asked"
        try:
            self._take_leftovers()
            taken = "taken"
        except Exception as exc:  # the database away, or not upgraded yet: asked again at the next start's call
            logger.debug("could not take up the alerts left by an earlier process yet: %s", describe(exc))
        finally:
            with self._cond:
                self._leftovers = taken
                self._unfinished -= 1
                self._cond.notify_all()

    def _start(self, delivery: Delivery) -> None:
        self._keep(delivery, held=True)
        to_try = delivery.to_try
        delivery.left = len(to_try)
        if not to_try:
            logger.debug("the %s alert has no target left: recorded only", delivery.alert.event)
            self._finish(delivery)
            return
        now = time.monotonic()
        with self._cond:
            for target in to_try:
                heapq.heappush(self._due, (now, next(self._order), delivery, target))

    def _try(self, delivery: Delivery, target: Target) -> None:
        ok, detail = target.attempt(delivery.alert, self.logs, self.timeout)
        self._record_attempt(delivery.alert_id, target)
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
                plural(target.attempts, "attempt"),
                detail,
            )
        delivery.left -= 1
        if delivery.left <= 0:
            self._finish(delivery)

    def _finish(self, delivery: Delivery, summary_line: str | None = None) -> None:
        with self._cond:
            if delivery.done:  # left for the next start meanwhile (see _leave)
                return
            delivery.done = True
        try:
            if delivery.alert_id is not None:
                self._record(
                    "the alert's delivery",
                    store.set_delivery,
                    delivery.alert_id,
                    summary_line or summary(delivery.targets) + delivery.note,
                )
        finally:
            with self._cond:
                self._unfinished -= 1
                self._live.discard(delivery)
                self._cond.notify_all()


# ---- its options from a crawl's settings ---------------------------------------------------------------------
def options_from_settings(settings: Any) -> dict[str, Any]:
    """The notifier's options from the crawl's settings: its retries (``TOPICSTREAMS_ALERT_RETRY_DELAYS``: one
    attempt, then one after each delay), its wait at a stop (``TOPICSTREAMS_ALERT_STOP_WAIT``) and how old a
    leftover may be (``TOPICSTREAMS_ALERT_LEFTOVER_HOURS``)."""
    delays = [float(delay) for delay in settings.getlist("TOPICSTREAMS_ALERT_RETRY_DELAYS")]
    return {
        "attempts": len(delays) + 1,
        "delays": tuple(delays),
        "stop_wait": settings.getfloat("TOPICSTREAMS_ALERT_STOP_WAIT"),
        "leftover_hours": settings.getfloat("TOPICSTREAMS_ALERT_LEFTOVER_HOURS"),
    }
