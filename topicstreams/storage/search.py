"""Full-text search over the news: the index table, what goes into it, and what a search means.

One syntax, the same results on SQLite and PostgreSQL, no stemming:

* words are ANDed; a ``"quoted phrase"`` is a phrase (its words next to each other, in order);
* matching is case- and accent-insensitive (``Cafe`` finds ``café``), over title, snippet and source;
* everything else is an ordinary word: ``OR``, ``AND``, ``NOT``, ``NEAR(``, ``-x``, ``x*``, ``:``, a lone ``"``.
  Punctuation only separates words; user text never reaches a query syntax (FTS5's or ``tsquery``'s) raw.

A word is a run of letters and digits (Unicode), accents removed and lower-cased: what SQLite's ``unicode61``
tokenizer (with ``remove_diacritics 2``) makes of a text, and what this module makes of it for PostgreSQL.

The index is the table ``news_search`` (migration 0004):

* SQLite: an FTS5 table (``title``, ``snippet``, ``source``) and ``news_search_keys`` (its rowid → the news id),
  kept in step with ``news`` by triggers, so every writer of ``news`` keeps it right;
* PostgreSQL: ``news_search (news_id, document tsvector)`` with a GIN index; ``document`` is
  ``to_tsvector('simple', …)`` of the article's words as :func:`document` folds them, written by the store in the
  transaction that inserts the article (``simple``: no stemming, no stop words).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from sqlalchemy import ColumnElement, Connection, column, func, literal_column, select, table, text

from topicstreams.text.search_words import SearchQuery, document

SEARCH_TABLE = "news_search"
"""The search index (on SQLite, FTS5 also makes shadow tables whose names start with it)."""

KEYS_TABLE = "news_search_keys"
"""SQLite: which article each row of the FTS5 table is."""

TEXT_CONFIG = "simple"
"""PostgreSQL text search configuration: lower-casing only (no stemming, no stop words)."""

FTS5_TOKENIZER = "unicode61 remove_diacritics 2"
"""SQLite FTS5 tokenizer: Unicode letters and digits, case-folded, diacritics removed."""

_search = table(SEARCH_TABLE, column("news_id"), column("document"))


def is_index_table(name: str | None) -> bool:
    """Whether *name* is the search index or one of its parts (FTS5's shadow tables): tables the models do not
    describe, which Alembic's autogenerate must leave alone."""
    return bool(name) and (name == SEARCH_TABLE or name.startswith(f"{SEARCH_TABLE}_"))


def include_name(name: str | None, type_: str, _parent_names: object) -> bool:
    """Alembic's ``include_name`` hook: everything but the search index."""
    return not (type_ == "table" and is_index_table(name))


def fts5_expression(query: SearchQuery) -> str:
    """The FTS5 MATCH expression: every word and phrase a quoted string (they hold letters and digits only)."""
    return " ".join([f'"{word}"' for word in query.words] + [f'"{" ".join(phrase)}"' for phrase in query.phrases])


def tsquery_expression(query: SearchQuery) -> ColumnElement:
    """The PostgreSQL ``tsquery``: ``plainto_tsquery`` of the words AND ``phraseto_tsquery`` of each phrase,
    their text sent as bound parameters."""
    parts = []
    if query.words:
        parts.append(func.plainto_tsquery(literal_column(f"'{TEXT_CONFIG}'"), " ".join(query.words)))
    parts += [func.phraseto_tsquery(literal_column(f"'{TEXT_CONFIG}'"), " ".join(phrase)) for phrase in query.phrases]
    expression = parts[0]
    for part in parts[1:]:
        expression = expression.op("&&")(part)
    return expression


SQLITE_FEW_MATCHES = 4000
"""SQLite: up to this many matching articles, a search looks their events up and sorts them; beyond, it walks the
feed's order and keeps the events whose article matches (measured by benchmarks/feed.py: each plan wins on its side)."""

_keys = table(KEYS_TABLE, column("id"), column("news_id"))
_fts = table(SEARCH_TABLE, column("rowid"))


def matching(conn: Connection, news_id: ColumnElement, query: SearchQuery) -> ColumnElement:
    """The condition "the article *news_id* matches *query*", for a statement run on *conn*."""
    dialect = conn.dialect.name
    if dialect == "postgresql":
        return news_id.in_(select(_search.c.news_id).where(_search.c.document.op("@@")(tsquery_expression(query))))
    if dialect != "sqlite":
        raise NotImplementedError(f"no search on {dialect!r}: use SQLite or PostgreSQL")
    # FTS5 rowids only (reading another column of a match costs a lookup in FTS5's content table each).
    rowids = select(_fts.c.rowid).where(
        text(f"{SEARCH_TABLE} MATCH :search_match").bindparams(search_match=fts5_expression(query))
    )
    few = conn.scalar(select(func.count()).select_from(rowids.limit(SQLITE_FEW_MATCHES + 1).subquery()))
    if few <= SQLITE_FEW_MATCHES:
        return news_id.in_(select(_keys.c.news_id).where(_keys.c.id.in_(rowids)))
    return select(_keys.c.id).where(_keys.c.news_id == news_id).scalar_subquery().in_(rowids)


def store_documents(conn: Connection, articles: Iterable[tuple[str, str | None, str | None, str | None]]) -> None:
    """PostgreSQL: index new articles ``(news_id, title, snippet, source)``, in news id order (like the store's
    other inserts), in the caller's transaction. SQLite's triggers do this by themselves."""
    rows = sorted((news_id, document(title, snippet, source)) for news_id, title, snippet, source in articles)
    if not rows:
        return
    ids, documents = zip(*rows, strict=True)
    conn.execute(
        text(
            f"INSERT INTO {SEARCH_TABLE} (news_id, document) "
            f"SELECT id, to_tsvector('{TEXT_CONFIG}', doc) FROM unnest(CAST(:ids AS varchar[]), CAST(:docs AS text[]))"
            " AS batch(id, doc) ORDER BY id ON CONFLICT DO NOTHING"
        ),
        {"ids": list(ids), "docs": list(documents)},
    )


def index_all(conn: Connection, batch_size: int = 5000) -> None:
    """PostgreSQL: index every article not indexed yet (the migration that creates the index)."""
    last = ""
    while True:
        chunk: Sequence = conn.execute(
            text(
                f"SELECT id, title, snippet, source FROM news WHERE id > :last AND id NOT IN "
                f"(SELECT news_id FROM {SEARCH_TABLE}) ORDER BY id LIMIT :size"
            ),
            {"last": last, "size": batch_size},
        ).all()
        if not chunk:
            return
        store_documents(conn, [tuple(row) for row in chunk])
        last = chunk[-1][0]
