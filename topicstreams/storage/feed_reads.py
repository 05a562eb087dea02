"""What the web app reads: feed events in keyset order, with their engines; topics; whether the schema is there.

One query layer for every rendering (the page, the JSON API, the feeds). SQLAlchemy Core on the project's models,
read-only. The order of the feed is the event's ``first_seen_at``, newest first, ties (a batch of events is
stored with one time) broken by ``topic_id`` then ``news_id``, also newest first: a total order, so a cursor
(:class:`Cursor`, an event's place in it) pages without OFFSET and stays right while new events land.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime

from sqlalchemy import Connection, Engine, and_, exists, func, select, text, tuple_
from sqlalchemy.exc import DBAPIError

from topicstreams.storage.cursors import decode_key, encode_key
from topicstreams.storage.failures import damaged_file
from topicstreams.storage.migrate import head_revisions
from topicstreams.storage.models import news_table as news
from topicstreams.storage.models import topic_news_engines_table as attributions
from topicstreams.storage.models import topic_news_table as events
from topicstreams.storage.models import topics_table as topics
from topicstreams.storage.search import matching
from topicstreams.text.search_words import SearchQuery

MAX_LIMIT = 200
"""The most events one request may ask for."""


class CursorError(ValueError):
    """A cursor that is not one this app gave out."""


@dataclass(frozen=True, slots=True, order=True)
class Cursor:
    """An event's place in the feed's order; opaque to clients (URL-safe base64 of a small JSON array)."""

    first_seen_at: datetime
    topic_id: int
    news_id: str

    def encode(self) -> str:
        return encode_key(self.first_seen_at, self.topic_id, self.news_id)

    @classmethod
    def decode(cls, value: str) -> Cursor:
        try:
            moment, topic_id, news_id = decode_key(value, 3)
        except ValueError:
            raise CursorError("not a cursor of this feed") from None
        if (
            moment.tzinfo is None
            or not isinstance(topic_id, int)
            or isinstance(topic_id, bool)
            or not isinstance(news_id, str)
            or not 0 < len(news_id) <= 32
            or not news_id.isprintable()
            or abs(topic_id) >= 2**63
        ):
            raise CursorError("not a cursor of this feed")
        return cls(moment.astimezone(UTC), topic_id, news_id)


@dataclass(frozen=True)
class FeedFilter:
    """Which events: of any of ``topics`` (names; empty: all), found by any of ``engines`` (empty: all), matching
    ``search``, first seen at or after ``since``. The filters combine by AND."""

    topics: tuple[str, ...] = ()
    engines: tuple[str, ...] = ()
    search: SearchQuery | None = None
    since: datetime | None = None


@dataclass(frozen=True, slots=True)
class Sighting:
    """One engine that found an event, and when it first did."""

    engine: str
    first_seen_at: datetime


@dataclass(slots=True)
class FeedEvent:
    """A feed event: an article first found for a topic, with every engine that found it (earliest first)."""

    topic: str
    topic_id: int
    news_id: str
    url: str
    title: str
    source: str | None
    snippet: str | None
    published_at: datetime | None
    first_seen_at: datetime
    engines: list[Sighting] = field(default_factory=list)

    @property
    def cursor(self) -> Cursor:
        return Cursor(self.first_seen_at, self.topic_id, self.news_id)

    @property
    def last_change(self) -> datetime:
        """When this event last changed: its newest engine sighting."""
        return max([self.first_seen_at, *(each.first_seen_at for each in self.engines)])


@dataclass(slots=True)
class FeedPage:
    items: list[FeedEvent]
    next: Cursor | None
    """The cursor for the next (older) page, None when this is the last one."""


@dataclass(frozen=True, slots=True)
class TopicSummary:
    name: str
    active: bool
    events: int
    last_event_at: datetime | None


_KEY = (events.c.first_seen_at, events.c.topic_id, events.c.news_id)
_NEWEST_FIRST = [column.desc() for column in _KEY]
_OLDEST_FIRST = [column.asc() for column in _KEY]


class FeedReader:
    """Reads the feed from one database handle (the web app's read-only one)."""

    def __init__(self, db: Engine) -> None:
        self.db = db

    def events(
        self,
        feed: FeedFilter,
        *,
        limit: int,
        before: Cursor | None = None,
        after: Cursor | None = None,
        offset: int | None = None,
    ) -> FeedPage:
        """A page of events newest first: the newest ones, those older than ``before``, or — with ``after`` — the
        ``limit`` events newer than it that are nearest to it (``next`` is then None: poll again from the newest).
        ``offset`` pages by ``OFFSET`` instead (the benchmark's baseline only)."""
        if before is not None and after is not None:
            raise ValueError("before and after exclude each other")
        if not 1 <= limit <= MAX_LIMIT:
            raise ValueError(f"limit must be from 1 to {MAX_LIMIT}, not {limit}")
        with self.db.connect() as conn:
            query = select(*_KEY).select_from(events).where(*self.conditions(conn, feed, before, after))
            query = query.order_by(*(_OLDEST_FIRST if after is not None else _NEWEST_FIRST))
            query = query.limit(limit if after is not None else limit + 1)
            if offset:
                query = query.offset(offset)
            keys = [tuple(row) for row in conn.execute(query)]
            if after is not None:
                keys.reverse()
            more = after is None and len(keys) > limit
            keys = keys[:limit]
            items = self.load(conn, keys)
        return FeedPage(items, items[-1].cursor if more else None)

    @staticmethod
    def conditions(conn: Connection, feed: FeedFilter, before: Cursor | None, after: Cursor | None) -> list:
        conditions = []
        if feed.topics:
            # The ids first: one topic is then an equality, whose index gives the order (no sort of its events).
            ids = conn.execute(select(topics.c.id).where(topics.c.name.in_(feed.topics))).scalars().all()
            conditions.append(events.c.topic_id == ids[0] if len(ids) == 1 else events.c.topic_id.in_(ids))
        if feed.engines:
            conditions.append(
                exists().where(
                    attributions.c.topic_id == events.c.topic_id,
                    attributions.c.news_id == events.c.news_id,
                    attributions.c.engine.in_(feed.engines),
                )
            )
        if feed.search is not None:
            conditions.append(matching(conn, events.c.news_id, feed.search))
        if feed.since is not None:
            conditions.append(events.c.first_seen_at >= feed.since)
        if before is not None:
            # The first condition is a plain range of the index; the row value then drops the ties it let in.
            conditions += [
                events.c.first_seen_at <= before.first_seen_at,
                tuple_(*_KEY) < tuple_(before.first_seen_at, before.topic_id, before.news_id),
            ]
        if after is not None:
            conditions += [
                events.c.first_seen_at >= after.first_seen_at,
                tuple_(*_KEY) > tuple_(after.first_seen_at, after.topic_id, after.news_id),
            ]
        return conditions

    @staticmethod
    def load(conn, keys: Sequence[tuple]) -> list[FeedEvent]:
        """The events of *keys* (in that order), with their articles, topics and engines."""
        if not keys:
            return []
        pairs = [(topic_id, news_id) for _, topic_id, news_id in keys]
        # By news id, an index on each side; the other topics' events of these articles are dropped below. (A
        # row-value list, ``(topic_id, news_id) IN (VALUES …)``, makes SQLite scan the whole table; a VALUES table
        # would be compiled anew for every page.)
        news_ids = sorted({news_id for _, news_id in pairs})
        rows = conn.execute(
            select(
                events.c.topic_id,
                events.c.news_id,
                events.c.first_seen_at,
                topics.c.name,
                news.c.url,
                news.c.title,
                news.c.source,
                news.c.snippet,
                news.c.published_at,
            )
            .join(topics, topics.c.id == events.c.topic_id)
            .join(news, news.c.id == events.c.news_id)
            .where(events.c.news_id.in_(news_ids))
        )
        loaded = {
            (row.topic_id, row.news_id): FeedEvent(
                topic=row.name,
                topic_id=row.topic_id,
                news_id=row.news_id,
                url=row.url,
                title=row.title,
                source=row.source,
                snippet=row.snippet,
                published_at=row.published_at,
                first_seen_at=row.first_seen_at,
            )
            for row in rows
        }
        sightings = conn.execute(
            select(attributions.c.topic_id, attributions.c.news_id, attributions.c.engine, attributions.c.first_seen_at)
            .join(
                events, and_(events.c.topic_id == attributions.c.topic_id, events.c.news_id == attributions.c.news_id)
            )
            .where(events.c.news_id.in_(news_ids))
            .order_by(attributions.c.first_seen_at, attributions.c.engine)
        )
        for row in sightings:
            event = loaded.get((row.topic_id, row.news_id))
            if event is not None:
                event.engines.append(Sighting(row.engine, row.first_seen_at))
        return [loaded[pair] for pair in pairs if pair in loaded]

    def topics(self) -> list[TopicSummary]:
        """Every topic by name, with its number of events and the time of its newest."""
        counts = (
            select(
                events.c.topic_id, func.count().label("events"), func.max(events.c.first_seen_at).label("last_event_at")
            )
            .group_by(events.c.topic_id)
            .subquery()
        )
        query = (
            select(topics.c.name, topics.c.active, func.coalesce(counts.c.events, 0), counts.c.last_event_at)
            .outerjoin(counts, counts.c.topic_id == topics.c.id)
            .order_by(topics.c.name)
        )
        with self.db.connect() as conn:
            return [
                TopicSummary(name, bool(active), int(count), last) for name, active, count, last in conn.execute(query)
            ]

    def topic_names(self) -> list[tuple[str, bool]]:
        """Every topic's name and whether it is active, by name (the page's filter list)."""
        with self.db.connect() as conn:
            return [
                (name, bool(active))
                for name, active in conn.execute(select(topics.c.name, topics.c.active).order_by(topics.c.name))
            ]

    def has_events(self) -> bool:
        with self.db.connect() as conn:
            return conn.execute(select(events.c.news_id).limit(1)).first() is not None

    def schema_problem(self) -> str | None:
        """Why this database cannot be read (no file, no schema, an older schema), or None when it can."""
        try:
            with self.db.connect() as conn:
                revisions = {row[0] for row in conn.execute(text("SELECT version_num FROM alembic_version"))}
        except DBAPIError as exc:
            if damaged_file(exc) is not None:
                raise  # no schema to upgrade: the file is damaged (the caller says so)
            return f"the database cannot be read ({_first_line(exc)})"
        if revisions != head_revisions():
            return (
                f"the database schema is at {', '.join(sorted(revisions)) or 'nothing'}, "
                f"this version needs {', '.join(sorted(head_revisions()))}"
            )
        return None


def _first_line(exc: DBAPIError) -> str:
    return str(exc.orig).splitlines()[0] if exc.orig is not None else type(exc).__name__
