"""The coverage signal's reads: what the other engines found that an engine found too, per window, and the engine's
stored history of it. What the counts mean is :mod:`topicstreams.health.coverage_model`'s to say.

:func:`window_counts` — one health window ``[start, end)`` of one engine, from ``topic_news_engines``:

* *expected*: the distinct feed events ``(topic_id, news_id)`` of ``topics`` (names, joined through the table
  ``topics``) whose earliest ``first_seen_at`` among the *other* engines is in ``[start − grace, end − grace)`` —
  lagged by the grace (one scrape interval) so the engine had that long to find them too. The earliest one, so that
  an event found by several other engines counts in one window only, and stored windows add up — and whose article
  is news: published no more than :data:`NEWS_MAX_AGE` before the window (or of unknown date). An engine serving
  stale pages finds old articles no other engine shows; without that bound they would count against every *other*
  engine's coverage, and one stale engine would make all the honest ones look blind;
* *found*: of those, the ones the engine has a ``topic_news_engines`` row for that began before ``end`` (whenever it
  found them: before the others, or within the grace).

``topic_news_engines`` keeps engines, not nodes: what an engine found on any node counts as found, and what the
others found on any node as expected. With one node per engine (the common case) that is exact; with several, an
engine served stale pages on one node only is covered by its honest nodes, and its coverage there drops less.

The other engines are :data:`topicstreams.ENGINES` but this one (the only engine names the crawl stores): an
``engine IN (…)`` over them lets SQLite and PostgreSQL read the window from the existing ``(engine, first_seen_at)``
index, one range per engine, where an ``engine <> …`` could not. Each candidate is then checked by primary-key
lookups on ``(topic_id, news_id, engine)``: that no other engine found it before the window, and whether this one
found it. A window thus reads the rows of its own span however large the table is (``EXPLAIN QUERY PLAN`` on SQLite:
``SEARCH seen USING INDEX ix_topic_news_engines_engine_first_seen_at``; about 3 ms for a 10-minute window over
100,000 events); it needs no index of its own.

:func:`baseline_counts` — the engine's stored windows on a node (``health_windows.coverage_expected`` /
``coverage_found``) that ended over the last ``days`` days, the most recent day left out (the health score's baseline
rules, :func:`topicstreams.storage.engine_status.baseline_totals`), added up; windows stored without coverage do not
count.
"""

from __future__ import annotations

from collections.abc import Collection
from datetime import datetime, timedelta

from sqlalchemy import Engine, Select, and_, case, exists, func, select

from topicstreams import ENGINES
from topicstreams.storage.models import health_windows_table as health_windows
from topicstreams.storage.models import news_table as news
from topicstreams.storage.models import topic_news_engines_table as topic_news_engines
from topicstreams.storage.models import topics_table

NEWS_MAX_AGE = timedelta(hours=12)
"""How old an article may be (its ``published_at`` before the window) and still be expected of every engine."""


def others_of(engine: str) -> list[str]:
    """The engines whose findings ``engine``'s are compared with."""
    return [name for name in ENGINES if name != engine]


def window_query(engine: str, topics: Collection[str], start: datetime, end: datetime, grace: float) -> Select:
    """The query :func:`window_counts` runs: one row, ``(expected, found)``."""
    low, high = start - timedelta(seconds=grace), end - timedelta(seconds=grace)
    seen = topic_news_engines.alias("seen")
    earlier = topic_news_engines.alias("earlier")
    mine = topic_news_engines.alias("mine")
    candidates = (
        select(seen.c.topic_id, seen.c.news_id)
        .where(
            seen.c.engine.in_(others_of(engine)),
            seen.c.first_seen_at >= low,
            seen.c.first_seen_at < high,
            seen.c.topic_id.in_(select(topics_table.c.id).where(topics_table.c.name.in_(sorted(set(topics))))),
            ~exists().where(
                earlier.c.topic_id == seen.c.topic_id,
                earlier.c.news_id == seen.c.news_id,
                earlier.c.engine.in_(others_of(engine)),
                earlier.c.first_seen_at < low,
            ),
            ~exists().where(news.c.id == seen.c.news_id, news.c.published_at < low - NEWS_MAX_AGE),
        )
        .group_by(seen.c.topic_id, seen.c.news_id)
        .subquery("candidates")
    )
    found = exists().where(
        mine.c.topic_id == candidates.c.topic_id,
        mine.c.news_id == candidates.c.news_id,
        mine.c.engine == engine,
        mine.c.first_seen_at < end,
    )
    return select(func.count(), func.coalesce(func.sum(case((found, 1), else_=0)), 0)).select_from(candidates)


def window_counts(
    db: Engine, engine: str, topics: Collection[str], start: datetime, end: datetime, grace: float
) -> tuple[int, int]:
    """``(expected, found)`` of ``engine``'s window ``[start, end)`` over the topics it scraped in it (names), with
    ``grace`` seconds for the engine to find what another engine found (one scrape interval). One query."""
    if not topics:
        return 0, 0
    with db.connect() as conn:
        expected, found = conn.execute(window_query(engine, topics, start, end, grace)).one()
    return int(expected), int(found)


def baseline_counts(db: Engine, engine: str, node: str, days: float, now: datetime) -> tuple[int, int]:
    """``(expected, found)`` added up over ``engine``'s stored windows on ``node`` that ended in
    ``[now − days, now − 1 day)``."""
    period = and_(
        health_windows.c.engine == engine,
        health_windows.c.node == node,
        health_windows.c.window_end >= now - timedelta(days=days),
        health_windows.c.window_end < now - timedelta(days=1),
        health_windows.c.coverage_expected.is_not(None),
        health_windows.c.coverage_found.is_not(None),
    )
    with db.connect() as conn:
        expected, found = conn.execute(
            select(
                func.coalesce(func.sum(health_windows.c.coverage_expected), 0),
                func.coalesce(func.sum(health_windows.c.coverage_found), 0),
            ).where(period)
        ).one()
    return int(expected), int(found)
