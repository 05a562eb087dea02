"""The query parameters every view of the feed takes, checked into a FeedFilter and cursors.

The page, the API and the feeds share them: ``topic`` and ``engine`` (repeatable), ``q``, ``since``, ``before``,
``after``. A bad value raises :class:`BadParameter` naming the parameter; the app answers it with status 400.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime

from topicstreams import ENGINES
from topicstreams.storage.feed_reads import Cursor, CursorError, FeedFilter
from topicstreams.text.search_words import SearchError, SearchQuery

MAX_QUERY_LENGTH = 500
"""The longest search text accepted, in characters."""

MAX_TOPICS = 200
"""The most ``topic`` values one request may carry."""


class BadParameter(ValueError):
    """A query parameter with a value the feed cannot use: ``parameter`` names it, the message says why."""

    def __init__(self, parameter: str, message: str) -> None:
        super().__init__(message)
        self.parameter = parameter
        self.message = message

    def detail(self) -> list[dict]:
        """The body's ``detail``, in the shape FastAPI gives its own validation errors."""
        return [{"loc": ["query", self.parameter], "msg": self.message, "type": "value_error"}]


def clean_values(values: Iterable[str] | None) -> tuple[str, ...]:
    """Repeated values trimmed, empty ones dropped (an empty form field means no filter), repeats removed."""
    return tuple(dict.fromkeys(value.strip() for value in values or () if value and value.strip()))


def feed_filter(
    topic: Iterable[str] | None = None,
    engine: Iterable[str] | None = None,
    q: str | None = None,
    since: str | None = None,
) -> FeedFilter:
    """The filters of a request; :class:`BadParameter` on an unknown engine, a bad search or time."""
    topics = clean_values(topic)
    if any("\x00" in name for name in topics):
        raise BadParameter("topic", "a topic name holds no NUL character")
    if len(topics) > MAX_TOPICS:
        raise BadParameter("topic", f"at most {MAX_TOPICS} topics at once, not {len(topics)}")
    engines = tuple(name.lower() for name in clean_values(engine))
    unknown = [name for name in engines if name not in ENGINES]
    if unknown:
        raise BadParameter("engine", f"unknown engine {unknown[0]!r}: expected some of {', '.join(ENGINES)}")
    return FeedFilter(
        topics=topics, engines=tuple(dict.fromkeys(engines)), search=search_query(q), since=parse_time("since", since)
    )


def search_query(q: str | None) -> SearchQuery | None:
    """The parsed search, None for an empty one."""
    if q is None or not q.strip():
        return None
    if len(q) > MAX_QUERY_LENGTH:
        raise BadParameter("q", f"the search is {len(q)} characters long, at most {MAX_QUERY_LENGTH}")
    try:
        return SearchQuery.parse(q)
    except SearchError as exc:
        raise BadParameter("q", str(exc)) from None


def parse_time(parameter: str, value: str | None) -> datetime | None:
    """An ISO 8601 time (``2026-12-01T10:00:00Z``; without an offset it is UTC), None when absent or empty."""
    if value is None or not value.strip():
        return None
    try:
        moment = datetime.fromisoformat(value.strip())
    except ValueError:
        raise BadParameter(parameter, f"not an ISO 8601 time: {value[:40]!r} (e.g. 2026-12-01T10:00:00Z)") from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    try:
        return moment.astimezone(UTC)
    except (OverflowError, ValueError):
        raise BadParameter(parameter, f"a time out of range: {value[:40]!r}") from None


def parse_cursor(parameter: str, value: str | None) -> Cursor | None:
    """A cursor from ``before`` or ``after``; None when absent or empty."""
    if value is None or not value.strip():
        return None
    try:
        return Cursor.decode(value.strip())
    except CursorError as exc:
        raise BadParameter(parameter, f"{exc}: pass the 'next' or 'cursor' value of an earlier answer") from None


def cursors(before: str | None, after: str | None) -> tuple[Cursor | None, Cursor | None]:
    """``before`` and ``after``, which exclude each other."""
    older, newer = parse_cursor("before", before), parse_cursor("after", after)
    if older is not None and newer is not None:
        raise BadParameter("after", "before and after exclude each other: page back with before, poll with after")
    return older, newer
