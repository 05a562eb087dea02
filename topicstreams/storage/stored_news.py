"""Which of a results page's articles a (topic, engine) pair has stored already: what the schedule counts as new.

A visit's articles are new for the pair when the feed has no event of the topic found by the engine for them
(``topic_news_engines``): an article another engine found first is still new to this engine's stream of the topic,
whose rate the schedule learns.
"""

from __future__ import annotations

from collections.abc import Collection

from sqlalchemy import Engine, select

from topicstreams.storage.feed_tables import Topic, TopicNewsEngine

CHUNK = 500
"""News ids per ``IN (…)`` list."""


def stored_news(db: Engine, topic: str, engine: str, news_ids: Collection[str]) -> set[str]:
    """The ids among ``news_ids`` that ``engine`` has found for ``topic`` before (stored)."""
    wanted = list(dict.fromkeys(news_ids))
    if not wanted:
        return set()
    topics, events = Topic.__table__, TopicNewsEngine.__table__
    found: set[str] = set()
    with db.connect() as conn:
        topic_id = conn.execute(select(topics.c.id).where(topics.c.name == topic)).scalar()
        if topic_id is None:
            return found
        for start in range(0, len(wanted), CHUNK):
            found.update(
                conn.execute(
                    select(events.c.news_id).where(
                        events.c.topic_id == topic_id,
                        events.c.engine == engine,
                        events.c.news_id.in_(wanted[start : start + CHUNK]),
                    )
                ).scalars()
            )
    return found
