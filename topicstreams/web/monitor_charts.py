"""The monitor's charts, drawn on the server (:mod:`topicstreams.web.charts`): per engine its cycles over the last 24
hours, its score and p95 over the last 24 hours (``health_windows``) and the last 12 months (``health_daily``), from
what :class:`topicstreams.storage.cycle_timeline.ChartReads` read."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta

from topicstreams.web.charts import Chart, Series, hour_ticks, line_chart, milliseconds, month_ticks

HOURS, DAYS = 24, 365
"""What the charts cover: the last 24 hours, the last 12 months."""


@dataclass(frozen=True)
class EngineCharts:
    engine: str
    charts: list[Chart]


def _hours(end: datetime, count: int) -> list[datetime]:
    last = end.replace(minute=0, second=0, microsecond=0)
    return [last - timedelta(hours=count - 1 - index) for index in range(count)]


def _days(end: datetime, count: int) -> list[date]:
    today = end.date()
    return [today - timedelta(days=count - 1 - index) for index in range(count)]


def _seconds(moment: datetime | date, middle: float) -> float:
    if isinstance(moment, datetime):
        return moment.timestamp() + middle
    return datetime(moment.year, moment.month, moment.day, tzinfo=UTC).timestamp() + middle


def engine_charts(engine: str, now: datetime, cycles: Sequence, hours: Sequence, days: Sequence) -> EngineCharts:
    """The five charts of one engine: cycles, score and p95 over 24 hours; score and p95 over 12 months. Each
    hour (day) without data is a gap."""
    hour_slots = _hours(now, HOURS)
    start, end = hour_slots[0].timestamp(), now.timestamp()
    ticks = hour_ticks(start, end)
    cycle_at = {each.hour: each for each in cycles}
    hour_at = {each.hour: each for each in hours}

    def hourly(source: dict, field: str) -> list[tuple[float, float | None]]:
        # Each hour at its middle; the current one, not over yet, at most at the chart's end (now).
        return [
            (min(_seconds(slot, 1800), end), getattr(source[slot], field) if slot in source else None)
            for slot in hour_slots
        ]

    day_slots = _days(now, DAYS)
    day_at = {each.day: each for each in days}
    year_start = _seconds(day_slots[0], 0)

    def daily(field: str) -> list[tuple[float, float | None]]:
        return [
            (min(_seconds(slot, 43_200), end), getattr(day_at[slot], field) if slot in day_at else None)
            for slot in day_slots
        ]

    score_bands = [(0, 50, "zone-critical"), (50, 80, "zone-degraded")]
    charts = [
        line_chart(
            "Cycles per hour, last 24 h",
            [
                Series("topics", "s-topics", hourly(cycle_at, "topics")),
                Series("entries", "s-entries", hourly(cycle_at, "entries")),
                Series("new events", "s-events", hourly(cycle_at, "new_events")),
            ],
            start,
            end,
            x_ticks=ticks,
        ),
        line_chart(
            "Score, last 24 h",
            [
                Series("mean", "s-score", hourly(hour_at, "score_mean")),
                Series("lowest", "s-low", hourly(hour_at, "score_min")),
            ],
            start,
            end,
            x_ticks=ticks,
            y_max=100,
            bands=score_bands,
        ),
        line_chart(
            "p95 latency, last 24 h",
            [Series("p95", "s-p95", hourly(hour_at, "p95_ms"))],
            start,
            end,
            x_ticks=ticks,
            y_format=milliseconds,
        ),
        line_chart(
            "Score, last 12 months",
            [Series("mean", "s-score", daily("score_mean")), Series("lowest", "s-low", daily("score_min"))],
            year_start,
            end,
            x_ticks=month_ticks(year_start, end),
            y_max=100,
            bands=score_bands,
        ),
        line_chart(
            "p95 latency, last 12 months",
            [Series("p95", "s-p95", daily("p95_ms"))],
            year_start,
            end,
            x_ticks=month_ticks(year_start, end),
            y_format=milliseconds,
        ),
    ]
    return EngineCharts(engine, charts)
