"""The store writer: a batch of items in one transaction, each row inserted at most once.

An item (any mapping) has ``news_id``, ``url``, ``topic``, ``engine`` and optionally ``title``,
``source``, ``snippet``, ``published_at``. A batch becomes, in one transaction:

* missing topics, inserted inactive (one-off topics; the standing list is managed elsewhere);
* ``news`` rows, one per news id;
* ``topic_news`` rows (feed events), one per topic and news id;
* ``topic_news_engines`` rows, one per topic, news id and engine;
* the search index of the new articles (PostgreSQL; SQLite's triggers index them by themselves);

all with the dialect's ``INSERT ... ON CONFLICT DO NOTHING``, so rows already stored (by an earlier
batch, or by another process at the same time) are kept as they are, ``first_seen_at`` included.
New rows get the write time as ``first_seen_at``.

* SQLite: one executemany per table and engine, in a ``BEGIN IMMEDIATE`` transaction: concurrent
  writers take turns.
* PostgreSQL: writers run at the same time, and an insert that meets a row another transaction
  inserted but has not committed waits for that transaction. Two writers inserting the same keys
  in different orders would each wait for the other (a deadlock, one batch rolled back), so each
  table's rows go in one statement, ``INSERT ... SELECT ... FROM unnest(...) ORDER BY <primary
  key>``, and new topics in name order: every writer takes its row locks in one global order
  (topics, news, topic_news, topic_news_engines; each by key). A transaction the server still
  aborts as a deadlock or serialization failure is written again (``TRANSIENT_ATTEMPTS``).

The counts are exactly the rows this transaction added, whatever other writers do: each
executemany reports how many of its rows it inserted (SQLite), each statement returns the keys it
inserted (PostgreSQL). A new row counts for the engine of the first item of the batch that carried it.

The result also names the feed events the transaction added (``event_keys``: what a crawl announces to its
as-it-happens digests, :data:`topicstreams.crawl.signals.events_stored`): PostgreSQL's statement returns them; on
SQLite, when only some of the batch's events were new, they are the batch's rows carrying this transaction's time (read
in the transaction, which holds the write lock, through the ``first_seen_at`` index).
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, Dialect, Engine, Table, bindparam, func, select
from sqlalchemy.dialects import postgresql
from sqlalchemy.exc import DBAPIError, IntegrityError

from topicstreams.engines.results import REQUIRED_TO_STORE
from topicstreams.storage import search
from topicstreams.storage.db import immediate, insert_ignore, utcnow
from topicstreams.storage.models import (
    news_table,
    topic_news_engines_table,
    topic_news_table,
)
from topicstreams.storage.topics import topic_ids

logger = logging.getLogger(__name__)

TRANSIENT_ATTEMPTS = 3
"""How many times a batch is written when the server rolls it back as a deadlock or serialization failure."""

TRANSIENT_SQLSTATES = {"40P01": "deadlock", "40001": "serialization failure"}
"""PostgreSQL error codes of a transaction that failed only for the transactions beside it: retry it as it was."""


def key_problem(item: Mapping[str, Any]) -> str | None:
    """Why *item* cannot be a row of the store: a field of
    :data:`~topicstreams.engines.results.REQUIRED_TO_STORE` missing, or a topic that is no name; None when it can."""
    missing = [name for name in REQUIRED_TO_STORE if not item.get(name)]
    if missing:
        return f"missing {', '.join(missing)}"
    topic = item["topic"]
    if not isinstance(topic, str) or not topic.strip():
        return "empty topic"
    return None


def item_problem(item: Mapping[str, Any]) -> str | None:
    """Why *item* cannot be stored (:func:`key_problem`, or a ``published_at`` that is not a datetime), or None
    when it can."""
    problem = key_problem(item)
    if problem is not None:
        return problem
    published_at = item.get("published_at")
    if published_at is not None and not isinstance(published_at, datetime):
        return f"published_at is a {type(published_at).__name__}, not a datetime"
    return None


@dataclass
class WriteResult:
    """What one write added, per engine (``Counter`` keyed by engine name)."""

    items: Counter[str] = field(default_factory=Counter)
    """Items of the batch, duplicates included: all are in the store once the write commits."""
    new_news: Counter[str] = field(default_factory=Counter)
    new_events: Counter[str] = field(default_factory=Counter)
    new_attributions: Counter[str] = field(default_factory=Counter)
    event_keys: list[tuple[int, str]] = field(default_factory=list)
    """The feed events added, as ``(topic_id, news_id)``."""
    written_at: datetime | None = None
    """The time the write gave its new rows (``first_seen_at``); the latest one of several writes."""

    def add(self, other: WriteResult) -> None:
        """Count ``other``'s rows in too (several writes' results as one)."""
        for counts, more in (
            (self.items, other.items),
            (self.new_news, other.new_news),
            (self.new_events, other.new_events),
            (self.new_attributions, other.new_attributions),
        ):
            counts.update(more)
        self.event_keys.extend(other.event_keys)
        if other.written_at is not None and (self.written_at is None or other.written_at > self.written_at):
            self.written_at = other.written_at

    def totals(self) -> dict[str, int]:
        return {
            "items": self.items.total(),
            "new_news": self.new_news.total(),
            "new_events": self.new_events.total(),
            "new_attributions": self.new_attributions.total(),
        }


class NewsWriter:
    """Writes batches of items to one database; caches topic ids between batches."""

    def __init__(self, db: Engine) -> None:
        self.db = db
        self._topic_ids: dict[str, int] = {}
        insert_class = _SortedInsertIgnore if db.dialect.name == "postgresql" else _InsertIgnore
        self._news, self._events, self._attributions = (
            insert_class(db.dialect, table, _COLUMNS[table.name]) for table in _TABLES
        )

    def write(self, items: Iterable[Mapping[str, Any]]) -> WriteResult:
        """Store *items* in one transaction; raise (and store nothing of them) on failure."""
        batch = _Batch(items)
        if not batch.items:
            return WriteResult()
        try:
            return self._write_retrying(batch)
        except IntegrityError:
            if not self._topic_ids:
                raise
            # A cached topic id may point to a topic deleted since: forget them, try once more.
            logger.warning("Integrity error with cached topic ids; retrying the batch with fresh ids")
            self._topic_ids.clear()
            return self._write_retrying(batch)

    def _write_retrying(self, batch: _Batch) -> WriteResult:
        """``_write()``, again when the server rolled the transaction back for the sake of another one."""
        for attempt in range(1, TRANSIENT_ATTEMPTS):
            try:
                return self._write(batch)
            except DBAPIError as exc:
                reason = transient_reason(exc)
                if reason is None:
                    raise
                logger.warning(
                    "A batch of %d items was rolled back (%s); writing it again (attempt %d of %d)",
                    batch.items.total(),
                    reason,
                    attempt + 1,
                    TRANSIENT_ATTEMPTS,
                )
        return self._write(batch)  # the last attempt: whatever fails now is the caller's

    def _write(self, batch: _Batch) -> WriteResult:
        with immediate(self.db.connect()) as conn, conn.begin():
            ids = self._resolve_topics(conn, batch.topics)
            news, events, attributions = self._news, self._events, self._attributions
            published_at = news.converter("published_at")
            now = utcnow()
            result = WriteResult(items=Counter(batch.items), written_at=now)

            news_rows: dict[str, list[tuple[Any, ...]]] = {}
            news_now = news.converter("first_seen_at")(now)
            for news_id, item in batch.news.items():
                news_rows.setdefault(item["engine"], []).append(
                    (
                        news_id,
                        item["url"],
                        item.get("title") or "",
                        item.get("source"),
                        item.get("snippet"),
                        published_at(item.get("published_at")),
                        news_now,
                    )
                )
            event_rows: dict[str, list[tuple[Any, ...]]] = {}
            events_now = events.converter("first_seen_at")(now)
            for (topic, news_id), engine in batch.events.items():
                event_rows.setdefault(engine, []).append((ids[topic], news_id, events_now))
            attribution_rows: dict[str, list[tuple[Any, ...]]] = {}
            attributions_now = attributions.converter("first_seen_at")(now)
            for topic, news_id, engine in batch.attributions:
                attribution_rows.setdefault(engine, []).append((ids[topic], news_id, engine, attributions_now))

            # Parents before children: the foreign keys are checked row by row.
            new_news = news.add(conn, news_rows, result.new_news)
            if new_news:
                search.store_documents(
                    conn,
                    (
                        (
                            news_id,
                            batch.news[news_id].get("title"),
                            batch.news[news_id].get("snippet"),
                            batch.news[news_id].get("source"),
                        )
                        for (news_id,) in new_news
                    ),
                )
            added = events.add(conn, event_rows, result.new_events)
            result.event_keys = (
                added if added is not None else _events_added(conn, event_rows, result.new_events.total(), now)
            )
            attributions.add(conn, attribution_rows, result.new_attributions)
        self._topic_ids.update(ids)  # committed: ids of topics inserted by a rolled-back write are never kept
        return result

    def _resolve_topics(self, conn: Connection, names: list[str]) -> dict[str, int]:
        """name → id of the batch's topics: cached ones, the others looked up or inserted on *conn*."""
        unknown = [name for name in names if name not in self._topic_ids]
        found = topic_ids(conn, unknown, active=False) if unknown else {}
        return {name: self._topic_ids[name] if name in self._topic_ids else found[name] for name in names}


def _events_added(
    conn: Connection, rows_by_engine: dict[str, list[tuple[Any, ...]]], added: int, now: datetime
) -> list[tuple[int, str]]:
    """SQLite: the keys of the ``added`` feed events of ``rows_by_engine`` (``(topic_id, news_id, first_seen_at)``
    rows) that this transaction inserted at ``now``. All or none: the rows themselves; some: the batch's rows that
    carry ``now``, in this transaction (which holds the write lock)."""
    if not added:
        return []
    keys = [(row[0], row[1]) for rows in rows_by_engine.values() for row in rows]
    if added >= len(keys):
        return keys
    wanted = set(keys)
    found = conn.execute(
        select(topic_news_table.c.topic_id, topic_news_table.c.news_id).where(topic_news_table.c.first_seen_at == now)
    )
    return [(topic_id, news_id) for topic_id, news_id in found if (topic_id, news_id) in wanted]


_TABLES = (news_table, topic_news_table, topic_news_engines_table)
_COLUMNS = {
    "news": ("id", "url", "title", "source", "snippet", "published_at", "first_seen_at"),
    "topic_news": ("topic_id", "news_id", "first_seen_at"),
    "topic_news_engines": ("topic_id", "news_id", "engine", "first_seen_at"),
}


def _same(value: Any) -> Any:
    return value


class _InsertIgnore:
    """``INSERT ... ON CONFLICT DO NOTHING`` of rows (tuples in ``columns`` order) into a table (SQLite).

    Where the driver reports a reliable executemany rowcount (sqlite3), rows ignored
    on conflict count 0, so the rowcount is the number of rows inserted. The statement is then
    compiled once and run as a driver-level executemany of the tuples, the values converted for
    the database by ``converter()`` (the column types' own bind processors): SQLAlchemy's
    per-row parameter handling took a third of the write time. With a driver that does not, the insert
    goes through SQLAlchemy with ``RETURNING`` the keys of the rows it inserted.
    """

    def __init__(self, dialect: Dialect, table: Table, columns: tuple[str, ...]) -> None:
        self.dialect = dialect
        self.table = table
        self.columns = columns
        self.statement = insert_ignore(dialect, table)
        self.direct = bool(dialect.supports_sane_multi_rowcount)
        self.positional = bool(dialect.positional)
        self.sql = ""
        self._converters: dict[str, Any] = {}
        if self.direct:
            compiled = self.statement.values({name: bindparam(name) for name in columns}).compile(dialect=dialect)
            if self.positional and tuple(compiled.positiontup or ()) != columns:
                raise RuntimeError(f"unexpected parameter order {compiled.positiontup} for {columns}")
            self.sql = str(compiled)
            for name in columns:
                processor = table.c[name].type.dialect_impl(dialect).bind_processor(dialect)
                if processor is not None:
                    self._converters[name] = processor

    def converter(self, column: str) -> Any:
        """The function turning a Python value of *column* into what ``run()`` expects."""
        return self._converters.get(column, _same)

    def add(self, conn: Connection, rows_by_engine: dict[str, list[tuple[Any, ...]]], counts: Counter[str]) -> None:
        """Insert-or-ignore the rows of each engine (one executemany each); count the rows inserted per engine.

        Returns None: which rows were inserted is not known here (only how many).
        """
        for engine, rows in rows_by_engine.items():
            if inserted := self.run(conn, rows):
                counts[engine] += inserted

    def run(self, conn: Connection, rows: list[tuple[Any, ...]]) -> int:
        """Insert-or-ignore *rows* as one executemany; return how many were actually inserted."""
        if not rows:
            return 0
        if not self.direct:
            returning = self.statement.returning(*self.table.primary_key.columns)
            return len(conn.execute(returning, [dict(zip(self.columns, row, strict=True)) for row in rows]).all())
        params: Any = rows if self.positional else [dict(zip(self.columns, row, strict=True)) for row in rows]
        return conn.exec_driver_sql(self.sql, params).rowcount


class _SortedInsertIgnore:
    """PostgreSQL: all the rows of a table in one ``INSERT ... SELECT ... FROM unnest(<one array per column>)
    ORDER BY <primary key> ON CONFLICT DO NOTHING RETURNING <primary key>``.

    The rows are inserted in key order whatever the engines and the order of the items, so that concurrent
    writers take their row locks in the same order and never deadlock (see the module's docstring); the keys
    returned are the rows this statement inserted, each counted for its engine. One statement per table and
    batch, its values converted by SQLAlchemy (the ARRAY types of the columns).
    """

    def __init__(self, dialect: Dialect, table: Table, columns: tuple[str, ...]) -> None:
        self.table = table
        self.columns = columns
        key = [column.name for column in table.primary_key.columns]
        self.key_positions = [columns.index(name) for name in key]
        arrays = (bindparam(name, type_=postgresql.ARRAY(table.c[name].type)) for name in columns)
        source = func.unnest(*arrays).table_valued(*columns).render_derived(name="batch")
        rows = select(*(source.c[name] for name in columns)).order_by(*(source.c[name] for name in key))
        self.statement = (
            insert_ignore(dialect, table).from_select(list(columns), rows).returning(*(table.c[name] for name in key))
        )

    def converter(self, column: str) -> Any:
        """Values go as they are: the statement's ARRAY types convert them."""
        return _same

    def add(
        self, conn: Connection, rows_by_engine: dict[str, list[tuple[Any, ...]]], counts: Counter[str]
    ) -> list[tuple[Any, ...]]:
        """Insert-or-ignore every row in key order; count the rows inserted for the engine that carried each.

        Returns the keys of the rows inserted.
        """
        engine_of = {
            tuple(row[i] for i in self.key_positions): engine for engine, rows in rows_by_engine.items() for row in rows
        }
        if not engine_of:
            return []
        values = zip(*(row for rows in rows_by_engine.values() for row in rows), strict=True)
        params = {name: list(column) for name, column in zip(self.columns, values, strict=True)}
        inserted = [tuple(key) for key in conn.execute(self.statement, params)]
        for key in inserted:
            counts[engine_of[key]] += 1
        return inserted


class _Batch:
    """The items of a write, deduplicated per table (first item wins)."""

    __slots__ = ("attributions", "events", "items", "news", "topics")

    def __init__(self, items: Iterable[Mapping[str, Any]]) -> None:
        self.items: Counter[str] = Counter()
        self.news: dict[str, Mapping[str, Any]] = {}
        self.events: dict[tuple[str, str], str] = {}
        self.attributions: dict[tuple[str, str, str], None] = {}
        topics: dict[str, None] = {}
        for item in items:
            problem = key_problem(item)
            if problem is not None:
                raise ValueError(f"cannot store item {dict(item)!r}: {problem}")
            news_id, engine, topic = item["news_id"], item["engine"], item["topic"].strip()
            self.items[engine] += 1
            topics[topic] = None
            self.news.setdefault(news_id, item)
            self.events.setdefault((topic, news_id), engine)
            self.attributions[topic, news_id, engine] = None
        self.topics = list(topics)


def transient_reason(exc: DBAPIError) -> str | None:
    """What made the server roll back the transaction of *exc* for another transaction's sake (deadlock,
    serialization failure), or None when retrying it would fail the same way."""
    code = getattr(exc.orig, "sqlstate", None) or getattr(exc.orig, "pgcode", None)
    return TRANSIENT_SQLSTATES.get(code) if isinstance(code, str) else None
