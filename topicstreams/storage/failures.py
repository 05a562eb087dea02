"""What a failed database write means: will it pass if tried again later, or never?

Two kinds, and the writers of :mod:`topicstreams.storage` act on them differently:

* **it can pass** (:func:`can_pass`): the server refused or lost the connection, is shutting down or starting,
  a lock was held too long (SQLite's ``database is locked``), the transaction was rolled back as a deadlock or
  a serialization failure, the disk or the file cannot be written right now. The data is fine: keep it, try
  again later.
* **it never passes** (:func:`never_passes`): the data itself breaks a constraint or a column cannot hold a
  value (``IntegrityError``, ``DataError``, a value the driver cannot even send). Trying again would fail the
  same way: set that data aside, write the rest.

Anything not known to be the data's fault counts as "can pass": keeping data that later turns out unstorable
costs disk space; dropping data that was fine loses it.

A third kind is neither the data's fault nor a passing outage: **the database file is damaged**
(:func:`damaged_file`: SQLite's ``file is not a database``, ``database disk image is malformed``). The data is fine
(keep it, as for "can pass"), but waiting will not mend the file: a person must restore or recover it, and every
place that meets it says so (:mod:`topicstreams.storage.damage_notice`).
"""

from __future__ import annotations

from sqlalchemy.exc import DataError, DBAPIError, IntegrityError, StatementError

DATA_SQLSTATE_CLASSES = ("22", "23")
"""PostgreSQL error classes that are the data's fault: 22 data exception (a value too long, an invalid byte
sequence, a number out of range), 23 integrity constraint violation."""


def never_passes(exc: BaseException) -> bool:
    """Whether writing the same data again must fail the same way (see the module docstring)."""
    if isinstance(exc, IntegrityError | DataError):
        return True
    if isinstance(exc, DBAPIError):
        code = sqlstate(exc)
        return code is not None and code[:2] in DATA_SQLSTATE_CLASSES
    if isinstance(exc, StatementError):
        # Raised before the statement reached the server: a value the driver could not bind (a string that
        # cannot be encoded, an object of the wrong type).
        return isinstance(exc.orig, ValueError | TypeError | UnicodeError)
    return isinstance(exc, ValueError | TypeError | UnicodeError)


def can_pass(exc: BaseException) -> bool:
    """Whether the write may succeed when tried again later (see the module docstring)."""
    return not never_passes(exc)


SQLITE_DAMAGE_CODES = frozenset({11, 26})
"""SQLite's primary result codes of a damaged file: 11 ``SQLITE_CORRUPT`` (``database disk image is malformed``: a
truncated file, a page that makes no sense), 26 ``SQLITE_NOTADB`` (``file is not a database``: a garbage header)."""

SQLITE_DAMAGE_WORDS = ("file is not a database", "database disk image is malformed", "malformed database schema")
"""What SQLite says of a damaged file (for a driver that gives no result code)."""


def damaged_file(exc: BaseException) -> str | None:
    """What SQLite said when *exc* (or what it wraps) says the database file is damaged, else None.

    A connection refused, a lock held too long, a missing file or table is no damage: those pass, or are another
    problem (see the module docstring)."""
    seen: set[int] = set()
    cause: BaseException | None = exc
    while cause is not None and id(cause) not in seen:
        seen.add(id(cause))
        said = getattr(cause, "damage", None)  # an error that already names the damage (DatabaseDamaged)
        if isinstance(said, str):
            return said
        text = (str(cause).splitlines() or [""])[0].strip()
        code = getattr(cause, "sqlite_errorcode", None)
        if isinstance(code, int) and (code & 0xFF) in SQLITE_DAMAGE_CODES:
            return text or str(getattr(cause, "sqlite_errorname", "damaged"))
        if type(cause).__module__ == "sqlite3" and any(words in text.lower() for words in SQLITE_DAMAGE_WORDS):
            return text
        orig = getattr(cause, "orig", None)
        cause = orig if isinstance(orig, BaseException) else (cause.__cause__ or cause.__context__)
    return None


def sqlstate(exc: DBAPIError) -> str | None:
    """The SQLSTATE code of a server error (PostgreSQL), or None."""
    code = getattr(exc.orig, "sqlstate", None) or getattr(exc.orig, "pgcode", None)
    return code if isinstance(code, str) else None


def describe(exc: BaseException) -> str:
    """One line saying what went wrong, for a log line: the driver's own message, without SQL or parameters."""
    orig = getattr(exc, "orig", None)
    cause = orig if isinstance(orig, BaseException) else exc
    text = " ".join(str(cause).split()) or "no message"
    if len(text) > 300:
        text = text[:297] + "..."
    return f"{type(cause).__name__}: {text}"
