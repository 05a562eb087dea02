"""Result times ("2 hours ago", "2h", "November 28, 2026", data-ts) to UTC datetimes.

Fast paths first, dateparser last:

1. a Unix ``timestamp`` (e.g. Google's ``data-ts``), when given and sane;
2. compact forms ("2h", "30m", "23d", "1w", "3mo", "1y") and plain English
   "<n> <unit>(s) ago" ("2 hours ago", "an hour ago", "3 mins ago"): a regex, ~10 µs;
3. dateparser with the given ``languages`` (default English), then — only when no
   ``languages`` were given and English failed — dateparser's language auto-detection, which is
   much slower (~1-10 ms a call, over a second for its first call in a process).

Unknown formats give None, and so does a time later than ``fetched_at`` plus
``FUTURE_TOLERANCE``. dateparser is held to dates that name at least a day and a month
(``REQUIRE_PARTS``), so that "5", "2024", "May" or "12:30" are not read as dates.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

import dateparser
from dateutil.relativedelta import relativedelta

UTC = UTC
# How far after fetched_at a parsed time may be (clock skew, "just now"); later is rejected.
FUTURE_TOLERANCE = timedelta(minutes=5)
# Languages tried first when the caller gives none.
DEFAULT_LANGUAGES: tuple[str, ...] = ("en",)
# Timestamps at or before this are placeholders, not publication times.
MIN_TIMESTAMP = 0

# Settings for dateparser, built once; RELATIVE_BASE is added per call.
_DATEPARSER_SETTINGS: dict[str, Any] = {
    "RETURN_AS_TIMEZONE_AWARE": True,
    "TIMEZONE": "UTC",  # a time without a zone is UTC (not the machine's local zone)
    "TO_TIMEZONE": "UTC",
    "PREFER_DATES_FROM": "past",
    "REQUIRE_PARTS": ["day", "month"],
    # No "timestamp" (timestamps come through the timestamp argument) nor "no-spaces-time"
    # (reads any run of digits as a date).
    "PARSERS": ["relative-time", "absolute-time"],
}

# Separators around the time text: "9 minutes ago · ", "— 2h", "CNN | " leftovers.
_SEPARATORS = " \t\r\n\u00a0\u202f·•|—–-,:;"

_UNITS: dict[str, str] = {
    **dict.fromkeys(["s", "sec", "secs", "second", "seconds"], "seconds"),
    **dict.fromkeys(["m", "min", "mins", "minute", "minutes"], "minutes"),
    **dict.fromkeys(["h", "hr", "hrs", "hour", "hours"], "hours"),
    **dict.fromkeys(["d", "day", "days"], "days"),
    **dict.fromkeys(["w", "wk", "wks", "week", "weeks"], "weeks"),
    **dict.fromkeys(["mo", "mos", "month", "months"], "months"),
    **dict.fromkeys(["y", "yr", "yrs", "year", "years"], "years"),
}
# "2h", "30m", "23d", "1w", "2 hrs", "3mo" (language-neutral enough to try always).
_COMPACT_RE = re.compile(r"(\d{1,4})\s*(s|secs?|m|mins?|h|hrs?|d|w|wks?|mo|mos|y|yrs?)\.?", re.IGNORECASE)
# "2 hours ago", "an hour ago", "1 min ago" (English only).
_ENGLISH_AGO_RE = re.compile(
    r"(\d{1,4}|an?|one)\s+"
    r"(secs?|seconds?|mins?|minutes?|hrs?|hours?|days?|wks?|weeks?|mos?|months?|yrs?|years?)"
    r"\s+ago",
    re.IGNORECASE,
)


def parse_result_time(
    text: str | None,
    fetched_at: datetime,
    *,
    timestamp: str | int | None = None,
    languages: Sequence[str] | None = None,
) -> datetime | None:
    """When a search result was published, as a timezone-aware UTC datetime, or None.

    ``fetched_at``: when the results page was fetched; relative times count back from it
    (a naive datetime is taken as UTC). ``timestamp``: Unix seconds (``data-ts``), used when
    valid (an integer, after the epoch, not in the future); otherwise ``text`` is parsed.
    ``languages``: dateparser language codes to read ``text`` in; by default English, then
    auto-detection.
    """
    base = fetched_at.replace(tzinfo=UTC) if fetched_at.tzinfo is None else fetched_at
    base = base.astimezone(UTC)
    latest = base + FUTURE_TOLERANCE

    if timestamp is not None:
        result = _from_timestamp(timestamp, latest)
        if result is not None:
            return result

    if not isinstance(text, str):
        return None
    text = " ".join(text.split()).strip(_SEPARATORS)
    if not text:
        return None

    result = _parse_relative(text, base, languages)
    if result is None:
        result = _parse_with_dateparser(text, base, languages)
    if result is None or result > latest:
        return None
    return result


def _from_timestamp(timestamp: str | int, latest: datetime) -> datetime | None:
    if isinstance(timestamp, bool):
        return None
    try:
        seconds = int(timestamp.strip()) if isinstance(timestamp, str) else int(timestamp)
        if seconds <= MIN_TIMESTAMP:
            return None
        result = datetime.fromtimestamp(seconds, UTC)
    except (TypeError, ValueError, OverflowError, OSError):
        return None
    return result if result <= latest else None


def _parse_relative(text: str, base: datetime, languages: Sequence[str] | None) -> datetime | None:
    match = _COMPACT_RE.fullmatch(text)
    if match is None and (languages is None or "en" in languages):
        match = _ENGLISH_AGO_RE.fullmatch(text)
    if match is None:
        return None
    amount, unit = match.groups()
    count = int(amount) if amount.isdigit() else 1
    key = _UNITS[unit.lower()]
    if key == "months":
        return base - relativedelta(months=count)
    if key == "years":
        return base - relativedelta(years=count)
    return base - timedelta(**{key: count})


def _parse_with_dateparser(text: str, base: datetime, languages: Sequence[str] | None) -> datetime | None:
    settings = {**_DATEPARSER_SETTINGS, "RELATIVE_BASE": base.replace(tzinfo=None)}
    if languages is not None:
        passes: list[list[str] | None] = [list(languages)]
    else:
        passes = [list(DEFAULT_LANGUAGES), None]
    for langs in passes:
        result = dateparser.parse(text, languages=langs, settings=settings)
        if result is not None:
            if result.tzinfo is None:  # not expected with these settings
                result = result.replace(tzinfo=UTC)
            return result.astimezone(UTC)
    return None
