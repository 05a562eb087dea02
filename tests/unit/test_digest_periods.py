"""News digests' periods in UTC and their rendering (topicstreams.alerts.digest_periods), on an injected clock."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta, timezone

import pytest

from topicstreams.alerts.digest_periods import last_boundary, next_boundary, period_label, render_batch, render_digest
from topicstreams.alerts.events import DIGEST
from topicstreams.alerts.inert_text import ZWSP


def utc(*args: int) -> datetime:
    return datetime(*args, tzinfo=UTC)


@pytest.mark.parametrize(
    ("now", "boundary"),
    [
        (utc(2026, 12, 2, 14, 0), utc(2026, 12, 2, 14, 0)),  # at the top of the hour: that hour's end
        (utc(2026, 12, 2, 14, 0, 0, 1), utc(2026, 12, 2, 14, 0)),
        (utc(2026, 12, 2, 14, 59, 59), utc(2026, 12, 2, 14, 0)),
        (utc(2027, 1, 1, 0, 30), utc(2027, 1, 1, 0, 0)),
    ],
)
def test_hourly_periods_end_at_the_top_of_each_hour(now, boundary):
    assert last_boundary("hour", None, now) == boundary
    assert next_boundary("hour", None, now) == boundary + timedelta(hours=1)


def test_daily_periods_end_at_their_time_of_day():
    assert last_boundary("day", "08:00", utc(2026, 12, 2, 8, 0)) == utc(2026, 12, 2, 8, 0)
    assert last_boundary("day", "08:00", utc(2026, 12, 2, 7, 59)) == utc(2026, 12, 1, 8, 0)
    assert last_boundary("day", "08:00", utc(2026, 12, 2, 23, 0)) == utc(2026, 12, 2, 8, 0)
    assert last_boundary("day", "23:45", utc(2027, 1, 1, 0, 10)) == utc(2026, 12, 31, 23, 45)
    assert next_boundary("day", "23:45", utc(2027, 1, 1, 0, 10)) == utc(2027, 1, 1, 23, 45)


def test_the_clock_may_be_in_any_time_zone_the_periods_are_utc():
    paris = timezone(timedelta(hours=1))
    assert last_boundary("day", "08:00", datetime(2026, 12, 2, 8, 30, tzinfo=paris)) == utc(2026, 12, 1, 8, 0)
    with pytest.raises(ValueError):
        last_boundary("day", "08:00", datetime(2026, 12, 2, 8, 30))


def test_weekly_periods_end_on_their_weekday_and_time():
    # 2026-12-07 is a Monday.
    assert last_boundary("week", "mon 08:00", utc(2026, 12, 7, 8, 0)) == utc(2026, 12, 7, 8, 0)
    assert last_boundary("week", "mon 08:00", utc(2026, 12, 7, 7, 59)) == utc(2026, 11, 30, 8, 0)
    assert last_boundary("week", "mon 08:00", utc(2026, 12, 6, 23, 0)) == utc(2026, 11, 30, 8, 0)
    assert last_boundary("week", "sun 22:30", utc(2026, 12, 7, 8, 0)) == utc(2026, 12, 6, 22, 30)
    assert last_boundary("week", "wed 00:00", utc(2026, 12, 2, 0, 0)) == utc(2026, 12, 2, 0, 0)
    assert last_boundary("week", "thu 12:00", utc(2026, 12, 2, 0, 0)) == utc(2026, 11, 26, 12, 0)
    assert next_boundary("week", "thu 12:00", utc(2026, 12, 2, 0, 0)) == utc(2026, 12, 3, 12, 0)
    assert last_boundary("week", "sat 09:15", utc(2027, 1, 1, 9, 0)) == utc(2026, 12, 26, 9, 15)  # across the year


def test_as_it_happens_has_no_periods():
    with pytest.raises(ValueError, match="no periods"):
        last_boundary("as_it_happens", None, utc(2026, 12, 2, 12, 0))


def test_period_labels():
    end = utc(2026, 12, 2, 14, 0)
    assert period_label("hour", end - timedelta(hours=1), end) == "hour to 14:00 UTC"
    assert period_label("hour", end - timedelta(minutes=20), end) == "hour to 14:00 UTC"  # a new digest's first
    assert period_label("hour", end - timedelta(hours=3), end) == "11:00 to 14:00 UTC"  # a gap, one message
    assert period_label("hour", end - timedelta(hours=20), end) == "1 Dec 18:00 to 2 Dec 14:00 UTC"
    assert period_label("day", end - timedelta(days=1), end) == "day to Wed 2 Dec 14:00 UTC"
    assert period_label("week", end - timedelta(days=7), end) == "week to Wed 2 Dec 14:00 UTC"
    assert period_label("as_it_happens", end - timedelta(seconds=50), end) == "as it happens, to 14:00 UTC"


@dataclass
class Seen:
    engine: str


@dataclass
class Item:
    title: str
    url: str
    topic: str = "climate"
    source: str | None = "Example News"
    engines: list[Seen] = field(default_factory=lambda: [Seen("google")])


DIGEST_CONFIG = {
    "name": "morning",
    "every": "hour",
    "at": None,
    "topics": [],
    "engines": [],
    "query": "",
    "urls": [],
    "max_items": 2,
}


def test_a_digest_message_lists_title_source_link_topic_and_every_engine():
    end = utc(2026, 12, 2, 14, 0)
    items = [
        Item(
            "Floods in <b>Valencia</b> @everyone",
            "https://news.example/1?a=1&b=2",
            engines=[Seen("bing"), Seen("google")],
        ),
        Item("Heat & <script>alert(1)</script>", "javascript:alert(1)", source="<i>Evil</i> <!channel>"),
    ]
    alert = render_digest(DIGEST_CONFIG, items, 12, end - timedelta(hours=1), end, end + timedelta(seconds=30))
    assert alert.event == DIGEST and alert.urls is None and alert.at == end + timedelta(seconds=30)
    assert alert.title == 'topicstreams digest "morning": 12 new articles (hour to 14:00 UTC)'
    assert alert.details["count"] == 12 and alert.details["shown"] == 2 and alert.details["digest"] == "morning"

    text = alert.text
    assert f"Floods in <b>Valencia</b> @{ZWSP}everyone — Example News" in text
    assert "https://news.example/1?a=1&b=2" in text and "found by: bing, google" in text
    assert "topic: climate" in text
    assert "javascript:" not in text  # no link for a URL that is not http(s)
    assert f"<{ZWSP}!channel>" in text and "<!channel>" not in text
    assert text.rstrip().endswith("… and 10 more")

    page = alert.html
    assert '<a href="https://news.example/1?a=1&amp;b=2">Floods in &lt;b&gt;Valencia&lt;/b&gt;' in page
    assert "<script>" not in page and "&lt;script&gt;" in page
    assert "javascript:" not in page and "<i>" not in page and "&lt;i&gt;Evil&lt;/i&gt;" in page
    assert page.count("<a ") == 1
    assert "… and 10 more" in page


def test_a_link_that_could_break_out_of_its_attribute_is_no_link():
    end = utc(2026, 12, 2, 14, 0)
    alert = render_digest(
        DIGEST_CONFIG,
        [Item("Quoted", 'https://news.example/"><script>x</script>')],
        1,
        end - timedelta(hours=1),
        end,
        end,
    )
    assert "<a " not in alert.html and "<script>" not in alert.html and "news.example" not in alert.text
    assert "Quoted" in alert.text and "Quoted" in alert.html


def test_a_digest_with_its_own_urls_and_a_single_article():
    end = utc(2026, 12, 2, 8, 0)
    digest = {**DIGEST_CONFIG, "every": "day", "urls": ["json://127.0.0.1:9/x"], "name": "daily @here"}
    alert = render_digest(digest, [Item("One", "http://a.example/")], 1, end - timedelta(days=1), end, end)
    assert alert.urls == ("json://127.0.0.1:9/x",)
    assert alert.title == f'topicstreams digest "daily @{ZWSP}here": 1 new article (day to Wed 2 Dec 08:00 UTC)'
    assert "more" not in alert.text


def test_an_as_it_happens_batch_renders_like_a_digest():
    end = utc(2026, 12, 2, 14, 3)
    alert = render_batch(
        {**DIGEST_CONFIG, "every": "as_it_happens", "max_items": 50},
        [Item("A", "https://a.example/"), Item("B", "https://b.example/")],
        2,
        end - timedelta(seconds=40),
        end,
        end,
    )
    assert alert.title == 'topicstreams digest "morning": 2 new articles (as it happens, to 14:03 UTC)'
    assert alert.text.index("A") < alert.text.index("B")
