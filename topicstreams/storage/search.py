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

import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from sqlalchemy import ColumnElement, Connection, column, func, literal_column, select, table, text

SEARCH_TABLE = "news_search"
"""The search index (on SQLite, FTS5 also makes shadow tables whose names start with it)."""

KEYS_TABLE = "news_search_keys"
"""SQLite: which article each row of the FTS5 table is."""

TEXT_CONFIG = "simple"
"""PostgreSQL text search configuration: lower-casing only (no stemming, no stop words)."""

FTS5_TOKENIZER = "unicode61 remove_diacritics 2"
"""SQLite FTS5 tokenizer: Unicode letters and digits, case-folded, diacritics removed."""

MAX_QUERY_WORDS = 32
"""More words than this in one search are refused (each costs the index a lookup)."""

_WORD = re.compile(r"[^\W_]+")
_PHRASE = re.compile(r'"([^"]*)"')

_search = table(SEARCH_TABLE, column("news_id"), column("document"))


def is_index_table(name: str | None) -> bool:
    """Whether *name* is the search index or one of its parts (FTS5's shadow tables): tables the models do not
    describe, which Alembic's autogenerate must leave alone."""
    return bool(name) and (name == SEARCH_TABLE or name.startswith(f"{SEARCH_TABLE}_"))


def include_name(name: str | None, type_: str, _parent_names: object) -> bool:
    """Alembic's ``include_name`` hook: everything but the search index."""
    return not (type_ == "table" and is_index_table(name))


class SearchError(ValueError):
    """A search text the index cannot use; the message says why, for the person who typed it."""


def fold(value: str) -> str:
    """*value* without accents, lower-cased (``Émile Zola`` → ``emile zola``)."""
    decomposed = unicodedata.normalize("NFKD", value)
    return "".join(char for char in decomposed if not unicodedata.combining(char)).lower()


def words(value: str | None) -> list[str]:
    """The words of *value*, folded."""
    return _WORD.findall(fold(value)) if value else []


def document(*fields: str | None) -> str:
    """The searchable text of an article: the words of its fields, folded, separated by spaces."""
    return " ".join(word for value in fields for word in words(value))


@dataclass(frozen=True)
class SearchQuery:
    """A parsed search: words that must all be there, and phrases that must appear as such."""

    words: tuple[str, ...]
    phrases: tuple[tuple[str, ...], ...]

    @classmethod
    def parse(cls, text_: str) -> SearchQuery:
        """Parse what a person typed; :class:`SearchError` when nothing in it can be searched for."""
        phrases: list[tuple[str, ...]] = []
        loose: list[str] = []
        position = 0
        for match in _PHRASE.finditer(text_):
            loose.extend(words(text_[position:match.start()]))
            phrase = tuple(words(match[1]))
            if len(phrase) == 1:
                loose.append(phrase[0])
            elif phrase:
                phrases.append(phrase)
            position = match.end()
        loose.extend(words(text_[position:]))  # a lone quote is left here, and is no word
        unique = tuple(dict.fromkeys(loose))
        count = len(unique) + sum(len(phrase) for phrase in phrases)
        if not count:
            raise SearchError("nothing to search for: no letters or digits")
        if count > MAX_QUERY_WORDS:
            raise SearchError(f"too many words: {count}, at most {MAX_QUERY_WORDS}")
        return cls(unique, tuple(dict.fromkeys(phrases)))

    def fts5(self) -> str:
        """The FTS5 MATCH expression: every word and phrase a quoted string (they hold letters and digits only)."""
        return " ".join([f'"{word}"' for word in self.words] + [f'"{" ".join(phrase)}"' for phrase in self.phrases])

    def tsquery(self) -> ColumnElement:
        """The PostgreSQL ``tsquery``: ``plainto_tsquery`` of the words AND ``phraseto_tsquery`` of each phrase,
        their text sent as bound parameters."""
        parts = []
        if self.words:
            parts.append(func.plainto_tsquery(literal_column(f"'{TEXT_CONFIG}'"), " ".join(self.words)))
        parts += [func.phraseto_tsquery(literal_column(f"'{TEXT_CONFIG}'"), " ".join(phrase))
                  for phrase in self.phrases]
        query = parts[0]
        for part in parts[1:]:
            query = query.op("&&")(part)
        return query


SQLITE_FEW_MATCHES = 4000
"""SQLite: up to this many matching articles, a search looks their events up and sorts them; beyond, it walks the
feed's order and keeps the events whose article matches (measured by benchmarks/feed.py: each plan wins on its side)."""

_keys = table(KEYS_TABLE, column("id"), column("news_id"))
_fts = table(SEARCH_TABLE, column("rowid"))


def matching(conn: Connection, news_id: ColumnElement, query: SearchQuery) -> ColumnElement:
    """The condition "the article *news_id* matches *query*", for a statement run on *conn*."""
    dialect = conn.dialect.name
    if dialect == "postgresql":
        return news_id.in_(select(_search.c.news_id).where(_search.c.document.op("@@")(query.tsquery())))
    if dialect != "sqlite":
        raise NotImplementedError(f"no search on {dialect!r}: use SQLite or PostgreSQL")
    # FTS5 rowids only (reading another column of a match costs a lookup in FTS5's content table each).
    rowids = select(_fts.c.rowid).where(text(f"{SEARCH_TABLE} MATCH :search_match")
                                        .bindparams(search_match=query.fts5()))
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
        text(f"INSERT INTO {SEARCH_TABLE} (news_id, document) "
             f"SELECT id, to_tsvector('{TEXT_CONFIG}', doc) FROM unnest(CAST(:ids AS varchar[]), CAST(:docs AS text[]))"
             " AS batch(id, doc) ORDER BY id ON CONFLICT DO NOTHING"),
        {"ids": list(ids), "docs": list(documents)},
    )


def index_all(conn: Connection, batch_size: int = 5000) -> None:
    """PostgreSQL: index every article not indexed yet (the migration that creates the index)."""
    last = ""
    while True:
        chunk: Sequence = conn.execute(
            text(f"SELECT id, title, snippet, source FROM news WHERE id > :last AND id NOT IN "
                 f"(SELECT news_id FROM {SEARCH_TABLE}) ORDER BY id LIMIT :size"),
            {"last": last, "size": batch_size}).all()
        if not chunk:
            return
        store_documents(conn, [tuple(row) for row in chunk])
        last = chunk[-1][0]
