"""Exit-IP saturation: when the robust engines of one node cool down together, the node's exit IP is at capacity.

All engines on a node leave through one exit IP. One engine cooling down is that engine's business; two or more
*robust* engines (those outside ``scraper.saturation.canary_engines``, the engines that throttle first) cooling at
the same time mean the IP itself is over its budget — the remedy is another node, not a slower crawl.

The verdict is read from the node's ``engine_status`` rows (written by every crawling process, see
:mod:`topicstreams.health.extension`), so it works in ``scrapy crawlall`` and across separate processes (Scrapyd
jobs) alike. A row counts only while it is fresh — updated within two of its engine's pace floors plus a minute —
so the row of a process that died is not taken for a cooling engine.

:func:`judge_saturation` is pure. :class:`SaturationWatch` is the one watcher of a node in a process (every engine
crawler of the process shares it, :func:`watch_for`): it judges at most every ``every`` seconds and logs a
WARNING ``EXIT IP SATURATION SUSPECTED: robust engines cooling: bing, google`` when saturation begins (or the
set of cooling engines changes while it lasts), and an INFO line when it has ended for :data:`CLEAR_AFTER`
seconds (an engine sending its probe after a cooldown is briefly not cooling: no end, no second WARNING).
"""

from __future__ import annotations

import logging
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from sqlalchemy import Engine

from topicstreams.config import floor_for
from topicstreams.storage.health import COOLING, EngineStatusRow, read_statuses

logger = logging.getLogger(__name__)

FRESH_SLACK = 60.0
"""Seconds a status row stays fresh beyond two pace floors."""

CLEAR_AFTER = 30.0
"""Seconds the verdicts must stay clear before the end of saturation is announced: between a cooldown's end and
its probe's answer an engine is not cooling, and a failed probe benches it again — that is no end."""


@dataclass(frozen=True)
class SaturationPolicy:
    """``scraper.saturation.*`` and the engines' pacing floors."""

    canary_engines: frozenset[str]
    robust_threshold: int
    floors: Mapping[str, float] = field(default_factory=dict)
    """Engine -> its configured pacing floor (seconds); 0 when not known."""

    def freshness(self, row: EngineStatusRow) -> timedelta:
        floor = self.floors.get(row.engine, 0.0) * (row.pace_multiplier or 1.0)
        return timedelta(seconds=2 * floor + FRESH_SLACK)


@dataclass(frozen=True)
class Saturation:
    suspected: bool
    cooling: tuple[str, ...]
    """The robust engines cooling, sorted."""

    def as_json(self) -> dict:
        return {"suspected": self.suspected, "cooling": list(self.cooling)}

    def describe(self) -> str:
        if self.suspected:
            return "EXIT IP SATURATION SUSPECTED: robust engines cooling: " + ", ".join(self.cooling)
        if self.cooling:
            return "not suspected (robust engines cooling: " + ", ".join(self.cooling) + ")"
        return "not suspected"


def judge_saturation(rows: Iterable[EngineStatusRow], now: datetime, policy: SaturationPolicy) -> Saturation:
    """The saturation of one node from its status rows at ``now``."""
    cooling = sorted({row.engine for row in rows
                      if row.engine not in policy.canary_engines
                      and now - row.updated_at <= policy.freshness(row)
                      and row.state_at(now) == COOLING})
    return Saturation(len(cooling) >= policy.robust_threshold, tuple(cooling))


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

    def check(self, db: Engine, now: datetime) -> Saturation:
        """Judge now unless judged less than ``every`` seconds ago; log a change. Returns the verdict."""
        moment = now.timestamp()
        if self.checked_at is not None and moment - self.checked_at < self.every:
            return self.current
        self.checked_at = moment
        self.current = verdict = judge_saturation(read_statuses(db, self.node), now, self.policy)
        if verdict.suspected:
            self.clear_since = None
            if verdict.cooling != self.announced:
                self.announced = verdict.cooling
                logger.warning("%s (node %s): the node's exit IP is probably at capacity; add a node with its own "
                               "exit IP rather than slowing down", verdict.describe(), self.node)
        elif self.announced is not None:
            self.clear_since = moment if self.clear_since is None else self.clear_since
            if moment - self.clear_since >= CLEAR_AFTER:
                self.announced = self.clear_since = None
                logger.info("exit IP saturation over on node %s: fewer than %d robust engines cooling for %g s",
                            self.node, self.policy.robust_threshold, CLEAR_AFTER)
        return verdict


_WATCHES: dict[tuple[str, str], SaturationWatch] = {}


def watch_for(database_url: str, node: str, policy: SaturationPolicy, every: float) -> SaturationWatch:
    """The process's watch of ``node`` in the database at ``database_url`` (made on first use). The engine
    crawlers of a process share its event loop: no two call it at once."""
    watch = _WATCHES.get((database_url, node))
    if watch is None or watch.policy != policy:
        watch = _WATCHES[(database_url, node)] = SaturationWatch(node, policy, every)
    return watch


def policy_from_settings(saturation: Mapping, pacing: Mapping, engines: Collection[str]) -> SaturationPolicy:
    """The policy from the ``TOPICSTREAMS_SATURATION`` and ``TOPICSTREAMS_PACING`` settings (config mappings)."""
    return SaturationPolicy(frozenset(saturation["canary_engines"]), int(saturation["robust_threshold"]),
                            {engine: floor_for(pacing, engine) for engine in engines})
