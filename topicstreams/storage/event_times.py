"""What a topic's silence is judged on (:mod:`topicstreams.alerts.topic_silence`): the moments its new events were
stored.

:func:`moments_since` is what a crawl reads at each silence check: the moments since the last check (kept between
checks in :class:`topicstreams.alerts.topic_silence.TopicMoments`). :func:`new_event_times` is the whole period at once:
one read for every active topic: ``topic_news.first_seen_at`` since a moment, grouped by moment (a store batch writes
its events with one time, so a moment stands for every event of a batch: far fewer rows than events), through the
``first_seen_at`` index. SQLite and PostgreSQL alike. The state each topic's silence is in lives in ``alert_states``
(:mod:`topicstreams.storage.alert_states`).
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import Engine, func, select

from topicstreams.storage.models import topic_news_table as events
from topicstreams.storage.models import topics_table as topics


def active_topics(db: Engine) -> dict[int, str]:
    """The active topics, id -> name."""
    with db.connect() as conn:
        return dict(conn.execute(select(topics.c.id, topics.c.name).where(topics.c.active)).all())


def moments_since(db: Engine, since: datetime, topic_names: dict[int, str]) -> list[tuple[str, float, int]]:
    """The moments new events of the topics ``topic_names`` (id -> name) were stored after ``since``: ``(name, Unix
    seconds, how many)``, in no particular order. Grouped by topic id and moment through the ``first_seen_at``
    index, the names mapped here: no join, no sort in the database."""
    per_moment = (
        select(events.c.topic_id, events.c.first_seen_at, func.count())
        .where(events.c.first_seen_at > since)
        .group_by(events.c.topic_id, events.c.first_seen_at)
    )
    found = []
    with db.connect() as conn:
        for topic_id, moment, count in conn.execute(per_moment):
            name = topic_names.get(topic_id)
            if name is not None:
                found.append((name, moment.timestamp(), int(count)))
    return found


def new_event_times(db: Engine, since: datetime) -> dict[str, list[tuple[datetime, int]]]:
    """Per active topic (every one of them, by name; an empty list when it had none), the moments its new events
    were stored after ``since``, each with how many were stored then, oldest first."""
    found: dict[str, list[tuple[datetime, int]]] = {}
    with db.connect() as conn:
        for (name,) in conn.execute(select(topics.c.name).where(topics.c.active).order_by(topics.c.name)):
            found[name] = []
        per_moment = (
            select(events.c.topic_id, events.c.first_seen_at, func.count().label("events"))
            .where(events.c.first_seen_at > since)
            .group_by(events.c.topic_id, events.c.first_seen_at)
            .subquery()
        )
        rows = conn.execute(
            select(topics.c.name, per_moment.c.first_seen_at, per_moment.c.events)
            .join(topics, topics.c.id == per_moment.c.topic_id)
            .where(topics.c.active)
            .order_by(topics.c.name, per_moment.c.first_seen_at)
        )
        for name, moment, count in rows:
            found.setdefault(name, []).append((moment, int(count)))
    return found
