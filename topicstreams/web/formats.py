"""What every rendering of the feed (page, API, feeds) writes the same way: times, article links, filters in a URL,
scraped text as the page and the feeds show it."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from urllib.parse import quote_plus, urlencode, urlsplit

from topicstreams.text.scraped_text import without_bidi_controls

_HTTP_URL = re.compile("https?://[^\x00-\x20\x7f\ud800-\udfff\ufffe\uffff]+", re.IGNORECASE)


def iso(moment: datetime | None, timespec: str = "milliseconds") -> str | None:
    """ISO 8601 in UTC with ``Z`` (None stays None). Milliseconds for people and clients; the page's own
    bookkeeping asks for microseconds, the precision of the feed's order."""
    if moment is None:
        return None
    return moment.astimezone(UTC).isoformat(timespec=timespec).replace("+00:00", "Z")


def shown_text(value: str | None) -> str | None:
    """A scraped title, source or snippet as the page and the feeds show it: without the bidirectional controls
    (:data:`~topicstreams.text.scraped_text.BIDI_CONTROLS`) that would make it read other than it is. The crawl
    stores none (its normalize pipeline drops them); rows an older version stored may hold some. None stays None."""
    return None if value is None else without_bidi_controls(value)


def article_link(url: str | None) -> str | None:
    """*url* when a link may point to it: an absolute http(s) URL with a host and no white space or control
    character (which a browser drops before it reads the scheme: ``java\\tscript:``) nor one XML cannot hold,
    else None."""
    if not isinstance(url, str) or not _HTTP_URL.fullmatch(url):
        return None
    try:
        parts = urlsplit(url)
    except ValueError:
        return None
    return url if parts.scheme.lower() in ("http", "https") and parts.hostname else None


def filter_query(
    topics: Iterable[str] = (),
    engines: Iterable[str] = (),
    q: str = "",
    quote_via: Callable[..., str] = quote_plus,
    **extra: str,
) -> str:
    """The query string of a view: its filters (``topic`` and ``engine`` repeated, ``q``), then *extra* (empty
    values left out)."""
    pairs = [("topic", name) for name in topics] + [("engine", name) for name in engines]
    if q:
        pairs.append(("q", q))
    pairs += [(key, value) for key, value in extra.items() if value]
    return urlencode(pairs, quote_via=quote_via)


def relative(moment: datetime, now: datetime) -> str:
    """``3 hours ago`` (``in 5 minutes`` for a time ahead of *now*); ``/static/feed.js`` keeps the same steps."""
    seconds = (now - moment).total_seconds()
    ahead = seconds < 0
    seconds = abs(seconds)
    if seconds < 60:
        return "just now"
    for unit, size in (("year", 365 * 86400), ("month", 30 * 86400), ("day", 86400), ("hour", 3600), ("minute", 60)):
        if seconds >= size:
            count = int(seconds // size)
            text = f"{count} {unit}{'' if count == 1 else 's'}"
            return f"in {text}" if ahead else f"{text} ago"
    return "just now"  # pragma: no cover - the minute step catches the rest


@dataclass(frozen=True)
class Moment:
    """A time as the page shows it: relative, with the absolute UTC time on hover."""

    iso: str
    utc: str
    relative: str

    @property
    def clock(self) -> str:
        """The time of day, ``14:52 UTC``."""
        return self.utc.split(" ", 1)[-1]

    @classmethod
    def of(cls, moment: datetime, now: datetime) -> Moment:
        utc = moment.astimezone(UTC)
        return cls(iso(utc, "microseconds"), utc.strftime("%Y-%m-%d %H:%M UTC"), relative(utc, now))
