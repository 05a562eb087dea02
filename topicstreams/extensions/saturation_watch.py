"""The crawl's watch of its node's exit-IP saturation: one per node and process, shared by its engine crawlers.

The verdict itself is pure (:func:`topicstreams.health.saturation.judge_saturation`); the watch reads the node's
``engine_status`` rows for it — every process's, so ``scrapy crawlall`` and separate Scrapyd jobs alike — at most
every ``every`` seconds, and says when the verdict changes: a WARNING ``EXIT IP SATURATION SUSPECTED: robust
engines cooling: bing, google`` when saturation begins (or the set of cooling engines changes while it lasts),
and an INFO line when it has ended for :data:`CLEAR_AFTER` seconds (an engine sending its probe after a cooldown
is briefly not cooling: no end, no second WARNING). The health extension
(:mod:`topicstreams.extensions.watch`) asks it at each of its ticks; one watch per node and process
(:func:`watch_for`), so ``crawlall`` warns once. While the process's network watch (:attr:`SaturationWatch.network`)
is in doubt — the node's network down, or connection-level failures still held for its verdict — nothing is
suspected: the node's verdict is the network.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import datetime

from sqlalchemy import Engine

from topicstreams.alerts.network import NetworkWatch
from topicstreams.crawl.runtime import Runtime
from topicstreams.health.saturation import (
    Saturation,
    SaturationPolicy,
    judge_saturation,
)
from topicstreams.storage.engine_status import EngineStatusRow, read_statuses

logger = logging.getLogger(__name__)

CLEAR_AFTER = 30.0
"""Seconds the verdicts must stay clear before the end of saturation is announced: between a cooldown's end and
its probe's answer an engine is not cooling, and a failed probe benches it again — that is no end."""


class SaturationWatch:
    """The saturation of one node as one process sees it (see the module docstring)."""

    def __init__(self, node: str, policy: SaturationPolicy, every: float) -> None:
        self.node = node
        self.policy = policy
        self.every = every
        self.checked_at: float | None = None
        self.current = Saturation(False, ())
        self.announced: tuple[str, ...] | None = None
        """The cooling engines the last WARNING named, until the end of saturation is announced."""
        self.clear_since: float | None = None
        """When the verdicts turned clear while saturation is announced (see :data:`CLEAR_AFTER`)."""
        self.begun_at: datetime | None = None
        """When the saturation announced began."""
        self.rows: list[EngineStatusRow] = []
        """The node's status rows as last read (the network verdict reads the other processes' engines from them)."""
        self.on_change: Callable[[bool, tuple[str, ...], datetime | None, datetime], None] | None = None
        """Told of each change announced: (begins, the cooling engines, since when, now) — the alerts."""
        self.network: NetworkWatch | None = None
        """The process's watch of the node's network (set by the health extension): no saturation while in doubt."""

    def check(self, db: Engine, now: datetime) -> Saturation:
        """Judge now unless judged less than ``every`` seconds ago; log a change. Returns the verdict."""
        moment = now.timestamp()
        if self.checked_at is not None and moment - self.checked_at < self.every:
            return self.current
        self.checked_at = moment
        self.rows = read_statuses(db, self.node)
        verdict = judge_saturation(self.rows, now, self.policy)
        if verdict.suspected and self.network is not None and self.network.in_doubt():
            verdict = Saturation(False, ())
        self.current = verdict
        if verdict.suspected:
            self.clear_since = None
            if verdict.cooling != self.announced:
                if self.announced is None:
                    self.begun_at = now
                    if self.on_change is not None:
                        self.on_change(True, verdict.cooling, None, now)
                self.announced = verdict.cooling
                logger.warning(
                    "%s (node %s): the node's exit IP is probably at capacity; add a node with its own "
                    "exit IP rather than slowing down",
                    verdict.describe(),
                    self.node,
                )
        elif self.announced is not None:
            self.clear_since = moment if self.clear_since is None else self.clear_since
            if moment - self.clear_since >= CLEAR_AFTER:
                self.announced = self.clear_since = None
                if self.on_change is not None:
                    self.on_change(False, (), self.begun_at, now)
                logger.info(
                    "exit IP saturation over on node %s: fewer than %d robust engines cooling for %g s",
                    self.node,
                    self.policy.robust_threshold,
                    CLEAR_AFTER,
                )
        return verdict


def watch_for(
    runtime: Runtime, database_url: str, node: str, policy: SaturationPolicy, every: float
) -> SaturationWatch:
    """The process's watch of ``node`` in the database at ``database_url`` (made on first use, kept in the process's
    runtime; made anew when the policy differs). The engine crawlers of a process share its event loop: no two call
    it at once."""
    return runtime.shared(
        (SaturationWatch, database_url, node),
        lambda: SaturationWatch(node, policy, every),
        keep=lambda watch: watch.policy == policy,
    )
