"""Each topic's schedule per engine as people read it (CONTRACT "Freshness"): the ``"engines"`` member of a
``/api/topics`` item and of ``scrapy topics list --json``, and the words of ``scrapy topics list``.

From the ``topic_rates`` rows (:mod:`topicstreams.storage.topic_rates`): per engine that has a row for the topic,
``{"rate_per_hour", "interval_seconds", "next_due_at"}`` — each null while not known (the rate until the pair has been
visited twice; the interval and the due time until the schedule gave one); an engine without a row is absent. In
words, one item per engine: ``google 12.0/h every 5 min, due 14:52 UTC``, ``bing learning, every 10 min, due …``
(the rate not learnt yet); a topic without any row is ``learning``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from datetime import UTC, datetime
from typing import Any

from topicstreams.storage.topic_rates import TopicRateRow

LEARNING = "learning"
"""What a rate not learnt yet (or a topic no engine has a row for) reads."""


def rows_by_topic(rows: Iterable[TopicRateRow]) -> dict[str, list[TopicRateRow]]:
    """The rows grouped by topic name (each topic's in the order given)."""
    grouped: dict[str, list[TopicRateRow]] = {}
    for row in rows:
        grouped.setdefault(row.topic, []).append(row)
    return grouped


def engines_json(
    rows: Iterable[TopicRateRow], iso: Callable[[datetime | None], str | None]
) -> dict[str, dict[str, Any]]:
    """The ``"engines"`` member of one topic's item: ``{ENGINE: {"rate_per_hour", "interval_seconds",
    "next_due_at"}}`` from its rows (``iso`` writes the due time as the caller writes times)."""
    return {
        row.engine: {
            "rate_per_hour": row.rate_per_hour,
            "interval_seconds": row.interval_seconds,
            "next_due_at": iso(row.next_due_at),
        }
        for row in rows
    }


def rate_text(rate: float | None) -> str:
    """``12.0/h``, ``0.04/h``, ``120/h``; ``learning`` for None."""
    if rate is None:
        return LEARNING
    if rate >= 100:
        return f"{rate:.0f}/h"
    if rate >= 0.1 or rate == 0:
        return f"{rate:.1f}/h"
    return f"{rate:.2g}/h"


def interval_text(seconds: float) -> str:
    """``every 45 s``, ``every 5 min``, ``every 1.5 h``."""
    if seconds < 120:
        return f"every {seconds:.0f} s"
    if seconds < 7200:
        return f"every {seconds / 60:.0f} min"
    return f"every {seconds / 3600:.3g} h"


def due_text(due: datetime, now: datetime) -> str:
    """``due 14:52 UTC`` (today, UTC), ``due 2026-12-05 14:52 UTC`` (another day); ``due now`` once it has passed."""
    if due <= now:
        return "due now"
    due, now = due.astimezone(UTC), now.astimezone(UTC)
    return f"due {due:%H:%M} UTC" if due.date() == now.date() else f"due {due:%Y-%m-%d %H:%M} UTC"


def engine_text(row: TopicRateRow, now: datetime) -> str:
    """One engine's schedule of a topic in words: ``google 12.0/h every 5 min, due 14:52 UTC``."""
    words = f"{row.engine} {rate_text(row.rate_per_hour)}"
    parts = [] if row.interval_seconds is None else [interval_text(row.interval_seconds)]
    if row.next_due_at is not None:
        parts.append(due_text(row.next_due_at, now))
    if not parts:
        return words
    return f"{words}{',' if row.rate_per_hour is None else ''} {', '.join(parts)}"


def topic_text(rows: Iterable[TopicRateRow], now: datetime) -> str:
    """A topic's schedule on every engine with a row, ``; ``-separated; ``learning`` without any row."""
    return "; ".join(engine_text(row, now) for row in rows) or LEARNING


def schedules_of(
    names: Iterable[str], rows: Iterable[TopicRateRow], iso: Callable[[datetime | None], str | None]
) -> Mapping[str, dict[str, dict[str, Any]]]:
    """``names`` -> the ``"engines"`` member of each (an empty object for a topic without rows)."""
    grouped = rows_by_topic(rows)
    return {name: engines_json(grouped.get(name, ()), iso) for name in names}
