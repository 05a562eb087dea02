"""News digests in the database: each digest's progress and claims (``digest_states``), and the feed events a digest
lists. SQLite and PostgreSQL.

Progress and claims. A digest's row holds ``sent_until``: feed events first seen up to that moment are covered (sent,
or an empty period passed). Every crawl process may send the next period; one does, once:

* :func:`ensure` — a digest seen for the first time starts from that moment (never from the whole history);
* :func:`claim` — a compare-and-set: the row's ``sent_until`` is still the one read and earlier than the period's
  end, and no other process holds an unexpired claim → this process holds it for ``hold_seconds``; it gets the
  period's start (the old ``sent_until``), every other caller None;
* :func:`complete` — ``sent_until`` moves to the period's end and the claim is cleared, only while the claim is
  still this process's (guarded by ``claimed_by``);
* :func:`release` — a claim given up (the read failed): the period is left to the next try.

A process that dies between its claim and its completion leaves the claim to expire: another process then sends
the period again — at most once more, and only if the first died after sending.

The events (:func:`period_events`, :func:`stored_events`): the feed's own filters and loading
(:class:`topicstreams.storage.feed_reads.FeedReader`: topics by name, engines — an event found by any of them —, the
search words as the feed's ``q`` reads them), newest first, at most ``max_items`` of them and how many there are in all,
each with its article (title, source, url), topic and every engine that found it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import Connection, Engine, func, select, update

from topicstreams.storage.db import immediate, insert_ignore, utcnow
from topicstreams.storage.feed_reads import FeedEvent, FeedFilter, FeedReader
from topicstreams.storage.models import digest_states_table as digest_states
from topicstreams.storage.models import topic_news_table as events
from topicstreams.text.search_words import SearchQuery

KEYS_PER_QUERY = 500
"""News ids per ``IN (…)`` when an as-it-happens batch is looked up."""


# ---- progress and claims -----------------------------------------------------------------------------------------
def ensure(db: Engine, name: str, first_seen: datetime) -> datetime:
    """Make digest ``name``'s row if it has none, starting from ``first_seen``; its ``sent_until`` either way."""
    with immediate(db.connect()) as conn, conn.begin():
        conn.execute(insert_ignore(conn.dialect, digest_states).values(name=name, sent_until=first_seen))
        return conn.execute(select(digest_states.c.sent_until).where(digest_states.c.name == name)).scalar_one()


def sent_until(db: Engine, names: Iterable[str]) -> dict[str, datetime]:
    """The ``sent_until`` of the digests of ``names`` that have a row."""
    wanted = list(names)
    if not wanted:
        return {}
    with db.connect() as conn:
        return dict(
            conn.execute(
                select(digest_states.c.name, digest_states.c.sent_until).where(digest_states.c.name.in_(wanted))
            ).all()
        )


def claim(
    db: Engine, name: str, period_end: datetime, me: str, hold_seconds: float, *, now: datetime | None = None
) -> datetime | None:
    """Claim digest ``name``'s period up to ``period_end`` for ``me``: the period's start (the old ``sent_until``) for
    the one caller that got it; None when it is sent already, not due, or held by another unexpired claim."""
    now = now or utcnow()
    with immediate(db.connect()) as conn, conn.begin():
        row = conn.execute(
            select(digest_states.c.sent_until, digest_states.c.claimed_by, digest_states.c.claimed_until).where(
                digest_states.c.name == name
            )
        ).first()
        if row is None or row.sent_until >= period_end:
            return None
        if row.claimed_by is not None and row.claimed_until is not None and row.claimed_until > now:
            return None
        claimed = conn.execute(
            update(digest_states)
            .where(
                digest_states.c.name == name,
                digest_states.c.sent_until == row.sent_until,
                (
                    digest_states.c.claimed_by.is_(None)
                    | digest_states.c.claimed_until.is_(None)
                    | (digest_states.c.claimed_until <= now)
                ),
            )
            .values(claimed_by=me, claimed_until=now + timedelta(seconds=hold_seconds))
        ).rowcount
    return row.sent_until if claimed == 1 else None


def complete(db: Engine, name: str, period_end: datetime, me: str, *, now: datetime | None = None) -> bool:
    """The period up to ``period_end`` is sent (or was empty): advance ``sent_until`` and clear the claim, if the
    claim is still ``me``'s. False when it is not (it expired and another process took it)."""
    with db.begin() as conn:
        done = conn.execute(
            update(digest_states)
            .where(digest_states.c.name == name, digest_states.c.claimed_by == me)
            .values(sent_until=period_end, claimed_by=None, claimed_until=None, sent_at=now or utcnow())
        ).rowcount
    return done == 1


def release(db: Engine, name: str, me: str) -> bool:
    """Give up ``me``'s claim of digest ``name`` (``sent_until`` unchanged): the period is sent by a later try."""
    with db.begin() as conn:
        return (
            conn.execute(
                update(digest_states)
                .where(digest_states.c.name == name, digest_states.c.claimed_by == me)
                .values(claimed_by=None, claimed_until=None)
            ).rowcount
            == 1
        )


# ---- the events --------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class DigestFilter:
    """Which feed events a digest lists: of any of ``topics`` (names; empty: all), found by any of ``engines``
    (empty: all), matching ``query`` (search words as the feed's ``q``; empty: all)."""

    topics: tuple[str, ...] = ()
    engines: tuple[str, ...] = ()
    query: str = ""

    def feed(self) -> FeedFilter:
        """The feed's filter; :class:`~topicstreams.text.search_words.SearchError` for a query without words."""
        return FeedFilter(
            topics=self.topics,
            engines=self.engines,
            search=SearchQuery.parse(self.query) if self.query.strip() else None,
        )


@dataclass(frozen=True)
class DigestEvents:
    items: list[FeedEvent]
    """At most ``max_items`` events, newest first, with their engines."""
    total: int
    """How many events the digest has in all."""


_NEWEST_FIRST = (events.c.first_seen_at.desc(), events.c.topic_id.desc(), events.c.news_id.desc())


class _DigestReader(FeedReader):
    """The feed's reader, reading a digest's events (its filter conditions and its loading of events)."""

    def period(
        self, conn: Connection, feed: FeedFilter, start: datetime, end: datetime, max_items: int
    ) -> DigestEvents:
        conditions = [
            *self.conditions(conn, feed, None, None),
            events.c.first_seen_at > start,
            events.c.first_seen_at <= end,
        ]
        total = conn.execute(select(func.count()).select_from(events).where(*conditions)).scalar_one()
        if not total:
            return DigestEvents([], 0)
        keys = [
            tuple(row)
            for row in conn.execute(
                select(events.c.first_seen_at, events.c.topic_id, events.c.news_id)
                .where(*conditions)
                .order_by(*_NEWEST_FIRST)
                .limit(max_items)
            )
        ]
        return DigestEvents(self.load(conn, keys), int(total))

    def of_keys(
        self, conn: Connection, feed: FeedFilter, keys: Sequence[tuple[int, str]], max_items: int
    ) -> DigestEvents:
        wanted = set(keys)
        news_ids = sorted({news_id for _, news_id in wanted})
        found: list[tuple] = []
        conditions = self.conditions(conn, feed, None, None)
        for index in range(0, len(news_ids), KEYS_PER_QUERY):
            chunk = news_ids[index : index + KEYS_PER_QUERY]
            found += [
                tuple(row)
                for row in conn.execute(
                    select(events.c.first_seen_at, events.c.topic_id, events.c.news_id).where(
                        *conditions, events.c.news_id.in_(chunk)
                    )
                )
                if (row.topic_id, row.news_id) in wanted
            ]
        found.sort(reverse=True)
        return DigestEvents(self.load(conn, found[:max_items]), len(found))


def period_events(db: Engine, digest: DigestFilter, start: datetime, end: datetime, max_items: int) -> DigestEvents:
    """The digest's feed events first seen in ``(start, end]``."""
    reader = _DigestReader(db)
    feed = digest.feed()
    with db.connect() as conn:
        return reader.period(conn, feed, start, end, max_items)


def stored_events(db: Engine, digest: DigestFilter, keys: Iterable[tuple[int, str]], max_items: int) -> DigestEvents:
    """Of the feed events ``keys`` (``(topic_id, news_id)``: those a process stored), the digest's."""
    wanted = list(keys)
    if not wanted:
        return DigestEvents([], 0)
    reader = _DigestReader(db)
    feed = digest.feed()
    with db.connect() as conn:
        return reader.of_keys(conn, feed, wanted, max_items)
