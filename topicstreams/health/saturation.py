"""Exit-IP saturation: when the robust engines of one node cool down together, the node's exit IP is at capacity.
Pure.

All engines on a node leave through one exit IP. One engine cooling down is that engine's business; two or more
*robust* engines (those outside ``scraper.saturation.canary_engines``, the engines that throttle first) cooling at
the same time mean the IP itself is over its budget — the remedy is another node, not a slower crawl.

The verdict is read from the node's status rows (``engine_status``, written by every crawling process, see
:mod:`topicstreams.extensions.watch`), so it works in ``scrapy crawlall`` and across separate processes (Scrapyd
jobs) alike. A row counts only while it is fresh — updated within two of its engine's pace floors plus a minute —
so the row of a process that died is not taken for a cooling engine. An engine cooling in a run of connection-level
failures (``connection_failures_since``) is not counted: it cannot connect, no site is throttling it.

:func:`judge_saturation` judges a node from its rows at a given time; the crawl's watch of a node, which logs the
verdict's changes, is :mod:`topicstreams.extensions.saturation_watch`, and ``scrapy health`` shows each node's
verdict (:mod:`topicstreams.reports.health_report`).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Protocol

from topicstreams import ENGINES
from topicstreams.config.sections import ScraperSection
from topicstreams.engines.states import COOLING, GONE
from topicstreams.health.network_state import NetworkState, judge_network

FRESH_SLACK = 60.0
"""Seconds a status row stays fresh beyond two pace floors."""


class StatusRow(Protocol):
    """What the judgement reads of an engine's status row on a node (an ``engine_status`` row as storage reads
    it is one)."""

    engine: str
    updated_at: datetime
    pace_multiplier: float | None
    connection_failures_since: datetime | None

    def state_at(self, now: datetime) -> str: ...


@dataclass(frozen=True)
class SaturationPolicy:
    """``scraper.saturation.*`` and the engines' pacing floors."""

    canary_engines: frozenset[str]
    robust_threshold: int
    floors: Mapping[str, float] = field(default_factory=dict)
    """Engine -> its configured pacing floor (seconds); 0 when not known."""

    def freshness(self, row: StatusRow) -> timedelta:
        floor = self.floors.get(row.engine, 0.0) * (row.pace_multiplier or 1.0)
        return timedelta(seconds=2 * floor + FRESH_SLACK)


@dataclass(frozen=True)
class Saturation:
    suspected: bool
    cooling: tuple[str, ...]
    """The robust engines cooling, sorted."""

    def as_json(self) -> dict[str, Any]:
        return {"suspected": self.suspected, "cooling": list(self.cooling)}

    def describe(self) -> str:
        if self.suspected:
            return "EXIT IP SATURATION SUSPECTED: robust engines cooling: " + ", ".join(self.cooling)
        if self.cooling:
            return "not suspected (robust engines cooling: " + ", ".join(self.cooling) + ")"
        return "not suspected"


def running_rows(rows: Iterable[StatusRow], now: datetime) -> list[StatusRow]:
    """The rows a running crawl is behind at ``now`` (not ``stale``, not ``stopped``)."""
    return [row for row in rows if row.state_at(now) not in GONE]


def network_of(rows: Iterable[StatusRow], now: datetime) -> NetworkState:
    """The node's network from its status rows at ``now`` (:func:`~topicstreams.health.network_state.judge_network`
    over its running engines)."""
    return judge_network((row.engine, row.connection_failures_since) for row in running_rows(rows, now))


def judge_saturation(rows: Iterable[StatusRow], now: datetime, policy: SaturationPolicy) -> Saturation:
    """The saturation of one node from its status rows at ``now``. Never suspected while the node's network is
    down (:func:`network_of`): engines that cannot connect at all are not throttled by their sites."""
    rows = list(rows)
    if network_of(rows, now).down:
        return Saturation(False, ())
    cooling = sorted(
        {
            row.engine
            for row in rows
            if row.engine not in policy.canary_engines
            and now - row.updated_at <= policy.freshness(row)
            and row.state_at(now) == COOLING
            and row.connection_failures_since is None  # it cannot connect: no site throttles it
        }
    )
    return Saturation(len(cooling) >= policy.robust_threshold, tuple(cooling))


def saturation_policy(scraper: ScraperSection, engines: Collection[str] = ENGINES) -> SaturationPolicy:
    """The saturation policy of the configuration's ``scraper`` section: its canary engines, its threshold, and the
    pacing floor of each of ``engines``."""
    return SaturationPolicy(
        frozenset(scraper.saturation.canary_engines),
        scraper.saturation.robust_threshold,
        {engine: scraper.pacing.floor(engine) for engine in engines},
    )
