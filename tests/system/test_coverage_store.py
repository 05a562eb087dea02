"""The coverage signal's reads on SQLite and PostgreSQL: a window's expected and found articles from real
``topic_news_engines`` rows of three engines (the grace lag, the topics filter, each event counted once, by topic and
article), the baseline's sums from ``health_windows`` (the latest day left out), and the window's query plan on
SQLite (the ``(engine, first_seen_at)`` index, never a scan of the table)."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import insert

from topicstreams.storage.coverage_counts import baseline_counts, window_counts, window_query
from topicstreams.storage.engine_status import save_window
from topicstreams.storage.models import news_table, topic_news_engines_table, topic_news_table, topics_table

START = datetime(2026, 11, 29, 12, 0, 0, tzinfo=UTC)
END = START + timedelta(minutes=10)
GRACE = 60.0
"""The window [12:00, 12:10) with a grace of a minute: what the others first found in [11:59, 12:09) is expected."""


def at(clock: str) -> datetime:
    """``"HH:MM"`` or ``"HH:MM:SS"`` on the test's day."""
    parts = [int(part) for part in clock.split(":")]
    return START.replace(hour=parts[0], minute=parts[1], second=parts[2] if len(parts) > 2 else 0)


EVENTS: list[tuple[str, str, dict[str, str]]] = [
    # (topic, article, engine -> when it first found the event)
    ("t1", "n1", {"bing": "11:59", "google": "12:00:30"}),  # at the lagged window's start: expected, found
    ("t1", "n2", {"bing": "12:05", "yahoo": "12:06"}),  # two other engines: one event; google missed it
    ("t1", "n3", {"yahoo": "12:08:59", "google": "12:09:30"}),  # google found it within the grace: found
    ("t1", "n4", {"bing": "12:09"}),  # the lagged window's end: the next window's
    ("t1", "n5", {"bing": "11:58:59"}),  # before the lagged window: the previous window's
    ("t1", "n6", {"bing": "11:50", "yahoo": "12:03"}),  # first found by another engine before: not this window's
    ("t1", "n7", {"google": "11:00", "bing": "12:01"}),  # google found it first, long before: found
    ("t2", "n8", {"bing": "12:02", "google": "12:10"}),  # google found it at the window's end: too late
    ("t3", "n9", {"bing": "12:02"}),  # a topic google did not scrape in the window
    ("t2", "n10", {"google": "12:04"}),  # no other engine found it: nothing to expect
    ("t2", "n1", {"bing": "12:02"}),  # n1 again, for another topic: another event, which google did not find
]
SCRAPED = ["t1", "t2"]


@pytest.fixture
def db(feed_url, databases):
    db = databases.of(feed_url)
    seed(db, EVENTS)
    yield db
    databases.dispose()


def seed(db, events) -> None:
    names = sorted({topic for topic, _, _ in events})
    ids = {name: index + 1 for index, name in enumerate(names)}
    articles = sorted({news for _, news, _ in events})
    with db.begin() as conn:
        conn.execute(insert(topics_table), [{"id": ids[name], "name": name} for name in names])
        conn.execute(
            insert(news_table),
            [
                {"id": news, "url": f"https://news.example/{news}", "title": news, "first_seen_at": START}
                for news in articles
            ],
        )
        conn.execute(
            insert(topic_news_table),
            [
                {"topic_id": ids[topic], "news_id": news, "first_seen_at": min(at(when) for when in found.values())}
                for topic, news, found in events
            ],
        )
        conn.execute(
            insert(topic_news_engines_table),
            [
                {"topic_id": ids[topic], "news_id": news, "engine": engine, "first_seen_at": at(when)}
                for topic, news, found in events
                for engine, when in found.items()
            ],
        )


def test_a_window_counts_what_the_others_first_found_in_it_lagged_by_the_grace(db):
    # expected: t1/n1, t1/n2, t1/n3, t1/n7, t2/n8, t2/n1; found: t1/n1, t1/n3, t1/n7
    assert window_counts(db, "google", SCRAPED, START, END, GRACE) == (6, 3)
    # Without a grace: t1/n1 (11:59) is the previous window's, t1/n4 (12:09) this one's, and t1/n3 is found as long
    # as google found it before the window's end.
    assert window_counts(db, "google", SCRAPED, START, END, 0) == (6, 2)


def test_each_engine_is_judged_against_the_others(db):
    # bing against google and yahoo: t1/n1, t1/n2, t1/n3, t1/n6 (yahoo first, at 12:03), t2/n10; bing found n1, n2, n6
    assert window_counts(db, "bing", SCRAPED, START, END, GRACE) == (5, 3)
    # yahoo against google and bing: t1/n1, t1/n2 (found by yahoo a minute after bing), t2/n8, t2/n10, t2/n1; not
    # t1/n3 (google at 12:09:30, the next window's) nor t1/n7 (google at 11:00, long before)
    assert window_counts(db, "yahoo", SCRAPED, START, END, GRACE) == (5, 1)


def test_old_articles_a_stale_engine_finds_are_expected_of_no_one(db):
    """A stale engine finds yesterday's articles no other engine shows: they count against nobody's coverage, while
    an article of unknown date, or a recent one, still does."""
    from sqlalchemy import update

    with db.begin() as conn:
        conn.execute(
            update(news_table).where(news_table.c.id == "n2").values(published_at=START - timedelta(days=1))
        )  # yesterday's: bing and yahoo found it, google need not
        conn.execute(
            update(news_table).where(news_table.c.id == "n8").values(published_at=START - timedelta(hours=2))
        )  # two hours old: still news
    assert window_counts(db, "google", SCRAPED, START, END, GRACE) == (5, 3)


def test_only_the_topics_the_engine_scraped_count(db):
    assert window_counts(db, "google", ["t1"], START, END, GRACE) == (4, 3)
    assert window_counts(db, "google", ["t3"], START, END, GRACE) == (1, 0)
    assert window_counts(db, "google", ["t1", "t2", "t3"], START, END, GRACE) == (7, 3)
    assert window_counts(db, "google", ["no such topic", "t2"], START, END, GRACE) == (2, 0)
    assert window_counts(db, "google", [], START, END, GRACE) == (0, 0)


def test_consecutive_windows_add_up_to_the_window_spanning_them(db):
    windows = [
        (START - timedelta(minutes=10 * step), START - timedelta(minutes=10 * (step - 1))) for step in (2, 1, 0, -1)
    ]
    parts = [window_counts(db, "google", ["t1", "t2", "t3"], start, end, GRACE) for start, end in windows]
    # Every event another engine found, once, in one window: t1/n5 and t1/n6 in the one before, t1/n4 in the one after.
    assert [expected for expected, _ in parts] == [0, 2, 7, 1]
    whole = window_counts(db, "google", ["t1", "t2", "t3"], windows[0][0], windows[-1][1], GRACE)
    assert whole[0] == 10
    # Found counts up to each window's end: t2/n8, found by google at 12:10, is found in the spanning window only.
    assert [found for _, found in parts] == [0, 0, 3, 0] and whole[1] == 4


def test_the_window_reads_the_engine_and_time_index(db):
    query = window_query("google", SCRAPED, START, END, GRACE)
    compiled = str(query.compile(db, compile_kwargs={"literal_binds": True}))
    with db.connect() as conn:
        if db.dialect.name == "postgresql":
            # A few rows are read faster whole: forbid that, to see whether the index can serve the window at all
            # (with ``engine <> 'google'`` it could not).
            conn.exec_driver_sql("SET LOCAL enable_seqscan = off")
            plan = "\n".join(row[0] for row in conn.exec_driver_sql(f"EXPLAIN {compiled}"))
            assert re.search(
                r"Index (Only )?Scan using ix_topic_news_engines_engine_first_seen_at "
                r"on topic_news_engines seen",
                plan,
            ), plan
            assert "Seq Scan on topic_news_engines" not in plan, plan
            return
        steps = [row[3] for row in conn.exec_driver_sql(f"EXPLAIN QUERY PLAN {compiled}")]
    assert any(
        step.startswith(
            "SEARCH seen USING INDEX ix_topic_news_engines_engine_first_seen_at (engine=? AND "
            "first_seen_at>? AND first_seen_at<?)"
        )
        for step in steps
    ), steps
    # Each candidate is checked by primary key; nothing scans topic_news_engines whole.
    assert not any(step.startswith(("SCAN seen", "SCAN earlier", "SCAN mine")) for step in steps), steps
    assert sum("sqlite_autoindex_topic_news_engines_1" in step for step in steps) == 2, steps


def test_the_baseline_sums_the_stored_windows_and_leaves_the_latest_day_out(db):
    now = datetime(2026, 12, 20, 12, 0, 0, tzinfo=UTC)

    def window(end: datetime, expected: int | None, found: int | None, engine: str = "google", node: str = "n1"):
        save_window(
            db,
            engine,
            node,
            end - timedelta(minutes=10),
            end,
            {"requests": 60, "coverage_expected": expected, "coverage_found": found},
        )

    window(now - timedelta(days=14), 100, 90)  # the period's first moment: in
    window(now - timedelta(days=14, seconds=1), 1000, 0)  # before the period
    window(now - timedelta(days=5), 40, 30)
    window(now - timedelta(days=1, seconds=1), 20, 19)  # the period's last moment: in
    window(now - timedelta(days=1), 500, 0)  # the latest day: out
    window(now - timedelta(minutes=5), 500, 0)  # the latest day: out
    window(now - timedelta(days=3), None, None)  # stored before coverage was counted: out
    window(now - timedelta(days=3), 300, 0, engine="bing")  # another engine
    window(now - timedelta(days=3), 300, 0, node="n2")  # another node
    assert baseline_counts(db, "google", "n1", 14, now) == (160, 139)
    assert baseline_counts(db, "google", "n1", 2, now) == (20, 19)
    assert baseline_counts(db, "bing", "n1", 14, now) == (300, 0)
    assert baseline_counts(db, "yahoo", "n1", 14, now) == (0, 0)
    assert baseline_counts(db, "google", "n1", 1, now) == (0, 0)  # the latest day only: no baseline
