"""Opaque keyset cursors: a row's place in an order, as URL-safe base64 of a small JSON array (pure).

The feed (:class:`topicstreams.storage.feed_reads.Cursor`) and the stored logs
(:class:`topicstreams.storage.log_reads.LogCursor`) hand their clients such cursors; each checks what the array holds
itself. A key's time is written in UTC to the microsecond, the precision of the orders they page.
"""

from __future__ import annotations

import base64
import binascii
import json
from datetime import UTC, datetime
from typing import Any


def encode_key(moment: datetime, *rest: Any) -> str:
    """``[moment in UTC, *rest]`` as an opaque cursor."""
    raw = json.dumps([moment.astimezone(UTC).isoformat(timespec="microseconds"), *rest], separators=(",", ":"))
    return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")


def decode_key(value: str, length: int) -> tuple[Any, ...]:
    """The ``length`` items of a cursor, its first one read back as a time (aware or not, as it was written); a
    ValueError for anything that is not such a cursor."""
    try:
        raw = base64.urlsafe_b64decode(value + "=" * (-len(value) % 4))
        items = json.loads(raw)
        if not isinstance(items, list) or len(items) != length:
            raise ValueError("not a cursor")
        return (datetime.fromisoformat(items[0]), *items[1:])
    except (binascii.Error, ValueError, TypeError, UnicodeDecodeError):
        raise ValueError("not a cursor") from None
