"""How every report writes a moment: ISO 8601 in UTC to the second."""

from __future__ import annotations

from datetime import UTC, datetime


def utc_text(moment: datetime | None) -> str | None:
    """``moment`` as ISO 8601 in UTC to the second, ``2026-11-29T21:05:03Z`` (a naive one is taken as UTC)."""
    if moment is None:
        return None
    moment = moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")
