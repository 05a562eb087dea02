"""The counts ``GET /metrics`` reads besides the health report: every ``engine_totals`` row (the counts of every
``scraper_cycles`` row of an engine on a node, added up and never purged, so that counters never go down) and the
number of stored articles."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import Engine, func, select

from topicstreams.storage.models import engine_totals_table as engine_totals
from topicstreams.storage.models import news_table as news


@dataclass(frozen=True)
class MetricCounts:
    """``engine_totals`` by (engine, node), each row as a mapping of its columns; the articles stored."""

    totals: Mapping[tuple[str, str], Mapping[str, Any]] = field(default_factory=dict)
    news: int = 0


def read_metric_counts(db: Engine) -> MetricCounts:
    """Every ``engine_totals`` row and the number of articles, read from ``db`` on one connection."""
    with db.connect() as conn:
        totals = {(row.engine, row.node): row._mapping for row in conn.execute(select(engine_totals))}
        articles = conn.execute(select(func.count()).select_from(news)).scalar_one()
    return MetricCounts(totals, int(articles))
