"""The health extension's alerts: handing them to the notifier, the node's once-only ones, the network's verdict.

A part of :class:`~topicstreams.extensions.watch.HealthExtension` (which sets the attributes declared here). One alert
per transition of the engine on this node goes to the process's notifier (:mod:`topicstreams.alerts.delivery`),
which records and delivers it off the event loop; the node's ``saturation`` and ``network_down`` changes are sent
by whichever process moves the shared state (``alert_states``) first. Connection-level failures are held until the
node's network verdict (:mod:`topicstreams.alerts.network`) says whose they are.
"""

from __future__ import annotations

import logging
from datetime import datetime
from typing import TYPE_CHECKING, Any

from scrapy.crawler import Crawler
from sqlalchemy import Engine

from topicstreams.alerts import transitions
from topicstreams.alerts.delivery import Notifier
from topicstreams.alerts.events import Alert
from topicstreams.alerts.network import NetworkWatch
from topicstreams.crawl.engine_state import EngineState
from topicstreams.crawl.route_standing import DOWN
from topicstreams.crawl.signals import RouteChange
from topicstreams.extensions.timing import wall
from topicstreams.health.band import ParserAssessment
from topicstreams.health.score import CRITICAL, OK
from topicstreams.health.window import Sample
from topicstreams.storage import utcnow
from topicstreams.storage.alert_states import transition as change_alert_state
from topicstreams.storage.outbox import Outbox

logger = logging.getLogger(__name__)


class EngineAlerting:
    """Tells a person what changes (a mixin of the health extension)."""

    crawler: Crawler
    engine: str
    node: str
    notifier: Notifier | None
    outbox: Outbox | None
    network: NetworkWatch | None
    state: EngineState
    parser_alerted: bool
    bucket_start: float | None

    if TYPE_CHECKING:  # the other parts' methods this one calls

        def score(self, sample: Sample, bucket: bool = True) -> None: ...
        def save_status(self, *args: Any, **kwargs: Any) -> None: ...

    def settle_held(self, now: float) -> None:
        """Score the connection-level failures the network verdict clears as the engine's own, drop those it puts on
        the node's network, announce a change of the verdict, and tell the engine's state: its cooldowns do not grow
        while the network is down and are lifted when it is back."""
        if self.network is None:
            return
        release, dropped = self.network.settle(self.engine, now)
        for held in release:
            in_bucket = self.bucket_start is None or held.at >= self.bucket_start
            self.score(held.sample, bucket=in_bucket)
        if dropped:
            logger.debug(  # one per failure: the network's WARNING says it once
                "[%s] %d connection failure(s) left out of the score: the node's network is down",
                self.engine,
                len(dropped),
            )
        self.announce_network(now)
        if self.state.network_changed(self.network.verdict().down):
            logger.debug("[%s] the cooldown the network's outage began is lifted", self.engine)
            self.save_status()

    def report_parser(self, parser: ParserAssessment) -> None:
        if parser.score is not None:
            self.crawler.stats.set_value(f"topicstreams/{self.engine}/parser_score", parser.score)
        if parser.band == CRITICAL and not self.parser_alerted:
            self.parser_alerted = True
            self.alert(transitions.parser_critical(self.engine, self.node, parser.score, parser.reasons, utcnow()))
        elif parser.band == OK and self.parser_alerted:
            self.parser_alerted = False
            self.alert(transitions.parser_critical(self.engine, self.node, parser.score, (), utcnow(), ended=True))
        if not parser.changed:
            return
        if parser.band == OK:
            logger.info("[%s] parser health %s (ok): the results are read in full again", self.engine, parser.score)
        else:
            logger.warning(
                "[%s] parser health %s (%s): %s; the engine's result markup has probably changed and "
                "its parser needs a fix (not a block: the pace stays as it is)",
                self.engine,
                parser.score,
                parser.band,
                ", ".join(parser.reasons) or "no single signal",
            )

    def alert(self, alert: Alert) -> None:
        """Hand ``alert`` to the notifier, which records and delivers it in its own thread (``alerting.events``
        chooses what goes out)."""
        if self.notifier is not None:
            self.notifier.send(alert)

    def alert_once(self, key: str, from_states: tuple[str, ...], to_state: str, alert: Alert) -> None:
        """Send ``alert`` if this process is the one that moves the shared state ``key`` (``alert_states``) from
        one of ``from_states`` to ``to_state``: several processes may see the same node's change."""
        if self.notifier is None or self.outbox is None:
            return
        notifier = self.notifier

        def change(db: Engine) -> None:
            if change_alert_state(db, key, from_states, to_state, alert.at, alert.details):
                notifier.send(alert)

        self.outbox.put(f"the {alert.event} alert of node {self.node}", change)

    def route_changed(self, change: RouteChange) -> None:
        """A proxied route of the node turned down, or came back (:data:`~topicstreams.crawl.signals.route_changed`):
        one ``route_down`` / ``route_recovered`` alert per transition, whichever process of the node moves the
        route's shared state first."""
        key = f"route:{self.node}:{change.route}"
        if change.change == DOWN:
            alert = transitions.route_down(
                self.node, change.route, change.reason, change.engines, change.bench, change.at
            )
            self.alert_once(key, ("ok",), "down", alert)
        else:
            self.alert_once(
                key, ("down",), "ok", transitions.route_recovered(self.node, change.route, change.since, change.at)
            )

    def saturation_changed(self, begins: bool, cooling: tuple[str, ...], since: datetime | None, now: datetime) -> None:
        key = f"saturation:{self.node}"
        if begins:
            self.alert_once(key, ("ok",), "saturated", transitions.saturation(self.node, cooling, True, None, now))
        else:
            self.alert_once(key, ("saturated",), "ok", transitions.saturation(self.node, (), False, since, now))

    def announce_network(self, now: float) -> None:
        """Tell a person once when the node's network verdict changes (whichever crawler of the process sees it)."""
        verdict = self.network.verdict()
        announced = self.network.announced
        if verdict.down == announced.down:
            return
        self.network.announced = verdict
        key = f"network:{self.node}"
        if verdict.down:
            since = wall(verdict.since) if verdict.since is not None else wall(now)
            logger.warning(
                "node %s: every engine fails to connect (%s): the node's network, not the engines; "
                "these failures are left out of the scores, the engines retry every %g s until it is back",
                self.node,
                ", ".join(verdict.reasons) or "connection failures",
                self.state.cooldown.length(1),
            )
            self.alert_once(
                key,
                ("ok",),
                "down",
                transitions.network_down(self.node, verdict.engines, verdict.reasons, since, wall(now)),
            )
        else:
            since = wall(announced.since) if announced.since is not None else None
            logger.info(
                "node %s: network recovered%s: the engines answer again; their cooldowns from the outage are lifted",
                self.node,
                f" (down since {since:%H:%M:%S} UTC)" if since is not None else "",
            )
            self.alert_once(
                key,
                ("down",),
                "ok",
                transitions.network_down(self.node, announced.engines, (), since, wall(now), ended=True),
            )
