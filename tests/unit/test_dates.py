"""Tests of topicstreams.engines.dates.parse_result_time."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest
import time_machine
from hypothesis import given, settings
from hypothesis import strategies as st

from topicstreams.engines.dates import FUTURE_TOLERANCE, parse_result_time

UTC = UTC
FETCHED = datetime(2026, 12, 1, 12, 0, 0, tzinfo=UTC)


def _ago(**kwargs: int) -> datetime:
    return FETCHED - timedelta(**kwargs)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2 hours ago", _ago(hours=2)),
        ("1 hour ago", _ago(hours=1)),
        ("an hour ago", _ago(hours=1)),
        ("2h", _ago(hours=2)),
        ("2 h", _ago(hours=2)),
        ("3 hrs ago", _ago(hours=3)),
        ("30m", _ago(minutes=30)),
        ("23 mins ago", _ago(minutes=23)),
        ("9 minutes ago · ", _ago(minutes=9)),
        ("9 minutes ago —", _ago(minutes=9)),
        ("· 9 minutes ago -", _ago(minutes=9)),
        ("45s", _ago(seconds=45)),
        ("23d", _ago(days=23)),
        ("1 day ago", _ago(days=1)),
        ("3 days ago", _ago(days=3)),
        ("1w", _ago(weeks=1)),
        ("1 week ago", _ago(weeks=1)),
        ("2 weeks ago", _ago(weeks=2)),
        ("1 month ago", datetime(2026, 11, 1, 12, tzinfo=UTC)),
        ("3mo", datetime(2026, 9, 1, 12, tzinfo=UTC)),
        ("1 year ago", datetime(2025, 12, 1, 12, tzinfo=UTC)),
        ("yesterday", _ago(days=1)),
        ("just now", FETCHED),
        ("November 28, 2026", datetime(2026, 11, 28, tzinfo=UTC)),
        ("Nov 28, 2026", datetime(2026, 11, 28, tzinfo=UTC)),
        ("28 Nov 2026", datetime(2026, 11, 28, tzinfo=UTC)),
        ("Nov 28", datetime(2026, 11, 28, tzinfo=UTC)),
        ("Dec 5", datetime(2025, 12, 5, tzinfo=UTC)),  # no year: the past one
        ("Nov 30, 2026 at 3:00 PM EST", datetime(2026, 11, 30, 20, tzinfo=UTC)),
        ("2026-11-30T10:00:00Z", datetime(2026, 11, 30, 10, tzinfo=UTC)),
        ("5 uur geleden", _ago(hours=5)),  # Dutch
        ("gisteren", _ago(days=1)),  # Dutch
        ("vor 3 Stunden", _ago(hours=3)),  # German
        ("il y a 2 heures", _ago(hours=2)),  # French
    ],
)
def test_formats(text: str, expected: datetime) -> None:
    result = parse_result_time(text, FETCHED)
    assert result == expected
    assert result.tzinfo is UTC


@pytest.mark.parametrize(
    ("text", "languages", "expected"),
    [
        ("5 uur geleden", ["nl"], _ago(hours=5)),
        ("28 nov. 2026", ["nl"], datetime(2026, 11, 28, tzinfo=UTC)),
        ("vor 3 Stunden", ["de"], _ago(hours=3)),
        ("vor 3 Stunden", ("en", "de"), _ago(hours=3)),
        ("2h", ["de"], _ago(hours=2)),  # compact forms in any language
        ("2 hours ago", ["en"], _ago(hours=2)),
        ("vor 3 Stunden", ["en"], None),  # explicit languages: no auto-detection
        ("2 hours ago", ["de"], None),
    ],
)
def test_explicit_languages(text: str, languages: list[str], expected: datetime | None) -> None:
    assert parse_result_time(text, FETCHED, languages=languages) == expected


@pytest.mark.parametrize(
    "text",
    [
        None,
        "",
        "   ",
        " · ",
        "blah",
        "Sponsored",
        "CNN",
        "Top stories",
        "LIVE",
        "5",
        "2024",
        "12",
        "May",
        "12:30",
        "10:15 AM",
        "1700000000",
        "Monday",
    ],
)
def test_unknown_is_none(text: str | None) -> None:
    assert parse_result_time(text, FETCHED) is None


@pytest.mark.parametrize("text", ["in 2 hours", "tomorrow", "Dec 2, 2026", "Dec 1, 2026 3:00 PM", "December 24, 2027"])
def test_future_is_none(text: str) -> None:
    assert parse_result_time(text, FETCHED) is None


def test_small_future_tolerance() -> None:
    fetched = datetime(2026, 12, 1, 15, 0, 30, tzinfo=UTC)
    # Same-day date-only results are midnight: fine. A minute ahead: tolerated.
    assert parse_result_time("Dec 1, 2026 3:01 PM", fetched) == datetime(2026, 12, 1, 15, 1, tzinfo=UTC)
    assert timedelta(hours=1) > FUTURE_TOLERANCE
    assert parse_result_time("Dec 1, 2026 4:00 PM", fetched) is None


def test_timestamp() -> None:
    ts = int(_ago(hours=3).timestamp())
    assert parse_result_time(None, FETCHED, timestamp=ts) == _ago(hours=3)
    assert parse_result_time(None, FETCHED, timestamp=str(ts)) == _ago(hours=3)
    assert parse_result_time(None, FETCHED, timestamp=f" {ts} ") == _ago(hours=3)
    # the timestamp wins over the text
    assert parse_result_time("2 hours ago", FETCHED, timestamp=ts) == _ago(hours=3)
    assert parse_result_time(None, FETCHED, timestamp=ts).tzinfo is UTC


@pytest.mark.parametrize(
    "bad",
    [
        "",
        "abc",
        "12.5x",
        "-5",
        0,
        -1,
        True,
        10**20,
        int(FETCHED.timestamp()) + 3600,
        str(int(FETCHED.timestamp()) * 1000),
    ],
)
def test_bad_timestamp_falls_back_to_text(bad: object) -> None:
    assert parse_result_time("2h", FETCHED, timestamp=bad) == _ago(hours=2)  # type: ignore[arg-type]
    assert parse_result_time(None, FETCHED, timestamp=bad) is None  # type: ignore[arg-type]


def test_fetched_at_in_another_zone_or_naive() -> None:
    paris = FETCHED.astimezone(timezone(timedelta(hours=1)))
    assert parse_result_time("2h", paris) == _ago(hours=2)
    assert parse_result_time("2h", paris).tzinfo is UTC
    assert parse_result_time("November 28, 2026", paris) == datetime(2026, 11, 28, tzinfo=UTC)
    assert parse_result_time("2 hours ago", FETCHED.replace(tzinfo=None)) == _ago(hours=2)


def test_independent_of_the_clock() -> None:
    # relative times count from fetched_at, not from now
    with time_machine.travel(datetime(2030, 6, 1, tzinfo=UTC), tick=False):
        assert parse_result_time("2 hours ago", FETCHED) == _ago(hours=2)
        assert parse_result_time("vor 3 Stunden", FETCHED) == _ago(hours=3)
        assert parse_result_time("Nov 28", FETCHED) == datetime(2026, 11, 28, tzinfo=UTC)


@settings(max_examples=200, deadline=None)
@given(
    st.integers(0, 5000),
    st.sampled_from(["s", "m", "h", "d", "w"]),
    st.sampled_from(["", " ", " · "]),
    st.datetimes(datetime(2000, 1, 1), datetime(2100, 1, 1), timezones=st.just(UTC)),
)
def test_compact_property(n: int, unit: str, tail: str, fetched: datetime) -> None:
    result = parse_result_time(f"{n}{unit}{tail}", fetched)
    seconds = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}[unit]
    assert result == fetched - timedelta(seconds=n * seconds)
    assert result.tzinfo is UTC
