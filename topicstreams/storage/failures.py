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
