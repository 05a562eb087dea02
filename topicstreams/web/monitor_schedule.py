"""The monitor's schedule panel (CONTRACT "Freshness"): per engine (and node) the request budget used in the last
hour, its topic visits and their holes (last hour and 24 h) from ``schedule_hours``
(:mod:`topicstreams.storage.schedule_hours`), and the busiest topics from ``topic_rates`` (the highest learnt rates:
topic, engine, rate, interval, next visit).

"The last hour" is read from hourly rows: this hour's count plus the previous hour's, weighted by the share of the
previous hour still within the last 60 minutes (the sliding-window estimate rate limiters use); the budget is the
largest the engine had over those two hours. The schedule in force (``scraper.schedule``) is the app's
configuration's: under ``fixed``, the panel says so (every topic every ``scrape_interval``; the rates are learnt all
the same, and holes counted).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import Engine

from topicstreams.reports.health_report import engine_order
from topicstreams.reports.schedule_words import interval_text, rate_text
from topicstreams.storage.schedule_hours import ScheduleHourRow, hour_of, read_schedule_hours
from topicstreams.storage.topic_rates import TopicRateRow, read_topic_rates
from topicstreams.web.formats import Moment

BUSIEST = 5
"""Topics the panel lists."""

FIXED = "fixed"


@dataclass(frozen=True)
class EngineBudget:
    """One engine on one node, as the panel shows it."""

    node: str
    engine: str
    requests: int
    """Requests in the last hour (estimated from the hourly rows, rounded)."""
    budget: float | None
    """Requests an hour the engine may send (None: no visit said)."""
    visits: int
    holes_hour: int
    holes_day: int

    @property
    def share(self) -> float | None:
        """Requests over budget (None without a budget; 0 budget: None too, the engine is paused)."""
        return self.requests / self.budget if self.budget else None

    @property
    def bar(self) -> float:
        """The bar's length out of 100 (the budget's share used, at most all of it)."""
        share = self.share
        return 0.0 if share is None else round(min(1.0, share) * 100, 1)

    @property
    def level(self) -> str:
        """``over`` past the budget (the schedule's promise broken), ``used`` else; ``none`` without a budget."""
        share = self.share
        if share is None:
            return "none"
        return "over" if share > 1.05 else "used"

    @property
    def text(self) -> str:
        if self.budget is None:
            return f"{self.requests} requests (budget not known)"
        if self.budget == 0:
            return f"{self.requests} requests (budget 0: paused)"
        return f"{self.requests} of {self.budget:.0f} requests ({100 * (self.share or 0):.0f} %)"


@dataclass(frozen=True)
class BusyTopic:
    topic: str
    engine: str
    rate: str
    interval: str
    due: Moment | None


@dataclass(frozen=True)
class SchedulePanel:
    mode: str
    """``scraper.schedule``: ``adaptive`` or ``fixed``."""
    engines: list[EngineBudget]
    busiest: list[BusyTopic]
    several_nodes: bool

    @property
    def fixed(self) -> bool:
        return self.mode == FIXED


def last_hour(current: float, previous: float, now: datetime) -> float:
    """This hour's count plus the previous hour's share within the last 60 minutes."""
    elapsed = (now - hour_of(now)).total_seconds() / 3600
    return current + previous * (1 - elapsed)


def engine_budgets(rows: Iterable[ScheduleHourRow], now: datetime) -> list[EngineBudget]:
    """One :class:`EngineBudget` per (node, engine) with rows within the last 24 hours, by node then engine."""
    this_hour = hour_of(now)
    previous_hour, day_start = this_hour - timedelta(hours=1), this_hour - timedelta(hours=23)
    grouped: dict[tuple[str, str], list[ScheduleHourRow]] = {}
    for row in rows:
        if row.hour >= day_start:
            grouped.setdefault((row.node, row.engine), []).append(row)
    budgets = []
    for (node, engine), hours in grouped.items():
        current = next((row for row in hours if row.hour == this_hour), None)
        previous = next((row for row in hours if row.hour == previous_hour), None)

        def recent(name: str, current: ScheduleHourRow | None = current, previous: ScheduleHourRow | None = previous):
            return last_hour(getattr(current, name) if current else 0, getattr(previous, name) if previous else 0, now)

        seen = [row.budget_per_hour for row in (current, previous) if row and row.budget_per_hour is not None]
        budgets.append(
            EngineBudget(
                node=node,
                engine=engine,
                requests=round(recent("requests")),
                budget=max(seen) if seen else None,
                visits=round(recent("visits")),
                holes_hour=round(recent("holes")),
                holes_day=sum(row.holes for row in hours),
            )
        )
    order = {engine: index for index, engine in enumerate(engine_order({budget.engine for budget in budgets}))}
    return sorted(budgets, key=lambda budget: (budget.node, order[budget.engine]))


def busiest_topics(rows: Sequence[TopicRateRow], now: datetime, count: int = BUSIEST) -> list[BusyTopic]:
    """The ``count`` pairs with the highest learnt rates (a rate not learnt yet is left out)."""
    learnt = sorted(
        (row for row in rows if row.rate_per_hour is not None),
        key=lambda row: (-(row.rate_per_hour or 0.0), row.topic, row.engine),
    )
    return [
        BusyTopic(
            topic=row.topic,
            engine=row.engine,
            rate=rate_text(row.rate_per_hour),
            interval="-" if row.interval_seconds is None else interval_text(row.interval_seconds),
            due=Moment.of(row.next_due_at, now) if row.next_due_at is not None else None,
        )
        for row in learnt[:count]
    ]


def schedule_panel(db: Engine, mode: str, now: datetime) -> SchedulePanel:
    """The panel, read from ``db`` at ``now`` (two queries)."""
    engines = engine_budgets(read_schedule_hours(db, now - timedelta(hours=24)), now)
    return SchedulePanel(
        mode=mode,
        engines=engines,
        busiest=busiest_topics(read_topic_rates(db), now),
        several_nodes=len({budget.node for budget in engines}) > 1,
    )
