"""What every place that meets a damaged database file says: the one message of :func:`damage_message`.

A damaged SQLite file (:func:`~topicstreams.storage.failures.damaged_file`) is no outage to wait out and no old
schema to upgrade: a person must restore the file or recover what it still holds. The crawl (at start, and its
store and health writes once it runs), ``scrapy serve`` (its 503 and its log), ``scrapy health`` and ``scrapy db``
all tell it in the same words: which file, what SQLite said, what not to do (delete it, write to it, upgrade it)
and what to do (a backup, or SQLite's ``.recover`` into a new file that ``database.url`` then names).
"""

from __future__ import annotations

import shlex
from pathlib import Path

from sqlalchemy.exc import SQLAlchemyError

from topicstreams.config.secrets import mask_url
from topicstreams.storage.db import sqlite_path
from topicstreams.storage.failures import damaged_file


def recovered_path(path: Path) -> Path:
    """Where the ``.recover`` command of the message writes: beside the damaged file (``news.db`` →
    ``news.recovered.db``)."""
    return path.with_name(f"{path.stem}.recovered{path.suffix or '.db'}")


def damage_message(url: str, said: str) -> str:
    """The message for the damaged database file of *url*, SQLite having said *said* (one line)."""
    path = sqlite_path(url)
    where = str(path) if path is not None else mask_url(url)
    said = " ".join(said.split())[:300] or "damaged"
    message = (
        f"the database file {where} is damaged ({said}). Do not delete it, do not write to it: stop the crawls "
        f"that use it, and do not run `scrapy db upgrade` on it. Restore it from a backup"
    )
    if path is None:
        return message
    recovered = recovered_path(path)
    return (
        f"{message}, or recover what SQLite can still read into a new file and point database.url at it: "
        f"`sqlite3 {shlex.quote(str(path))} .recover | sqlite3 {shlex.quote(str(recovered))}` (with an sqlite3 "
        f"that has .recover, as sqlite.org builds it: some distributions' fail with 'SQL logic error')"
    )


def damage_of(url: str, exc: BaseException) -> str | None:
    """:func:`damage_message` when *exc* says the database file of *url* is damaged, else None."""
    said = damaged_file(exc)
    return None if said is None else damage_message(url, said)


class DatabaseDamaged(SQLAlchemyError):
    """The database file is damaged: raised where a component cannot go on, its text the whole message. A database
    error (SQLAlchemy's kind), so every place that catches those catches it too."""

    def __init__(self, url: str, damage: str) -> None:
        self.url = url
        self.damage = damage
        """What SQLite said (:func:`~topicstreams.storage.failures.damaged_file` reads it back)."""
        super().__init__(damage_message(url, damage))
