"""The storage layer on real SQLite files: schema and migrations, topics, the batched writer."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import textwrap
import threading
import zipfile
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import select

from topicstreams.storage import (
    NewsWriter,
    active_topics,
    add_topics,
    ensure_topics,
    list_topics,
    seed_topics,
    set_active,
    upgrade,
)
from topicstreams.storage.db import make_database
from topicstreams.storage.migrate import current_revisions, head_revisions
from topicstreams.storage.models import Base, News, TopicNews, TopicNewsEngine
from topicstreams.storage.search import include_name

REPO = Path(__file__).resolve().parents[2]
TABLES = {"topics", "news", "topic_news", "topic_news_engines", "scraper_cycles"}


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "store.db"


@pytest.fixture
def url(db_path: Path) -> str:
    url = f"sqlite:///{db_path}"
    upgrade(url)
    return url


def tables(path: Path) -> set[str]:
    with sqlite3.connect(path) as conn:
        return {row[0] for row in conn.execute("select name from sqlite_master where type = 'table'")}


def rows(path: Path, sql: str) -> list[tuple]:
    with sqlite3.connect(path) as conn:
        return conn.execute(sql).fetchall()


def item(url: str, topic: str = "climate", engine: str = "google", **extra) -> dict:
    from topicstreams.engines.news_urls import news_id

    return {
        "news_id": news_id(url),
        "url": url,
        "title": f"Title of {url}",
        "source": "Example",
        "snippet": "A snippet.",
        "published_at": datetime(2025, 3, 1, 12, 0, tzinfo=UTC),
        "topic": topic,
        "engine": engine,
        "fetched_at": datetime(2025, 3, 1, 12, 5, tzinfo=UTC),
        **extra,
    }


# -- schema and migrations ---------------------------------------------------------------------


def test_upgrade_creates_the_five_tables_in_a_new_folder(tmp_path: Path) -> None:
    path = tmp_path / "new" / "folder" / "store.db"
    upgrade(f"sqlite:///{path}")
    assert TABLES | {"alembic_version"} <= tables(path)
    assert rows(path, "select version_num from alembic_version") == [(rev,) for rev in head_revisions()]


def test_migrations_match_the_models(url: str, databases) -> None:
    with databases.of(url).connect() as conn:
        context = MigrationContext.configure(conn, opts={"compare_type": True, "include_name": include_name})
        differences = compare_metadata(context, Base.metadata)
    assert differences == []


def test_upgrade_is_idempotent(url: str, db_path: Path, databases) -> None:
    ensure_topics(databases.of(url), ["kept"])
    upgrade(url)
    upgrade(url)
    assert current_revisions(url) == head_revisions()
    assert [t.name for t in list_topics(databases.of(url))] == ["kept"]


def test_sqlite_connections_get_the_pragmas(url: str, databases) -> None:
    with databases.of(url).connect() as conn:
        pragma = {
            name: conn.exec_driver_sql(f"pragma {name}").scalar()
            for name in ("journal_mode", "foreign_keys", "busy_timeout", "synchronous")
        }
    assert pragma == {"journal_mode": "wal", "foreign_keys": 1, "busy_timeout": 30_000, "synchronous": 1}


def test_an_sqlite_urls_own_timeout_sets_its_busy_timeout(db_path: Path, databases) -> None:
    with databases.of(f"sqlite:///{db_path}?timeout=2.5").connect() as conn:
        assert conn.exec_driver_sql("pragma busy_timeout").scalar() == 2_500


def test_engine_is_cached_per_url(url: str, tmp_path: Path, databases) -> None:
    assert databases.of(url) is databases.of(url)
    assert databases.of(url) is not databases.of(f"sqlite:///{tmp_path / 'other.db'}")


def test_plain_sql_insert_into_topics_gets_defaults(url: str, db_path: Path, databases) -> None:
    with sqlite3.connect(db_path) as conn:
        conn.execute("insert into topics (name) values ('x')")
    [(active, created_at)] = rows(db_path, "select active, created_at from topics where name = 'x'")
    assert active == 1 and created_at
    [topic] = list_topics(databases.of(url))
    assert topic.active is True
    assert topic.created_at.tzinfo is not None
    assert abs(datetime.now(UTC) - topic.created_at) < timedelta(minutes=1)


def test_datetimes_are_stored_in_utc_and_read_back_aware(url: str, db_path: Path, databases) -> None:
    paris = timezone(timedelta(hours=1))
    published_at = datetime(2025, 3, 1, 13, 0, tzinfo=paris)
    NewsWriter(databases.of(url)).write([item("https://a.example/1", published_at=published_at)])
    assert rows(db_path, "select published_at from news") == [("2025-03-01 12:00:00.000000",)]
    with databases.of(url).connect() as conn:
        published_at, first_seen_at = conn.execute(select(News.published_at, News.first_seen_at)).one()
    assert published_at == datetime(2025, 3, 1, 12, 0, tzinfo=UTC) and published_at.tzinfo == UTC
    assert first_seen_at.tzinfo == UTC and abs(datetime.now(UTC) - first_seen_at) < timedelta(minutes=1)


def test_upgrade_from_a_zipped_egg(tmp_path: Path) -> None:
    """Scrapyd runs the project from a zip: the migration scripts must be found all the same."""
    egg = tmp_path / "topicstreams.egg"
    with zipfile.ZipFile(egg, "w") as archive:
        for path in (REPO / "topicstreams").rglob("*"):
            if path.is_file() and "__pycache__" not in path.parts:
                archive.write(path, path.relative_to(REPO).as_posix())
    db = tmp_path / "data" / "egg.db"
    script = textwrap.dedent(
        f"""
        import sys
        sys.path = [p for p in sys.path if p not in ("", {str(REPO)!r})]
        sys.path.insert(0, {str(egg)!r})
        sys.meta_path = [f for f in sys.meta_path if "editable" not in repr(f).lower()]
        import topicstreams, importlib.resources, pathlib
        assert topicstreams.__file__.startswith({str(egg)!r}), topicstreams.__file__
        assert not isinstance(importlib.resources.files("topicstreams.storage.migrations"), pathlib.Path)
        from topicstreams.storage.migrate import upgrade, script_location
        upgrade({f"sqlite:///{db}"!r})
        upgrade({f"sqlite:///{db}"!r})
        assert not script_location().startswith({str(egg)!r})
        print("upgraded")
        """
    )
    result = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert "upgraded" in result.stdout
    assert tables(db) >= TABLES


def test_two_processes_upgrade_one_fresh_database_at_once(tmp_path: Path) -> None:
    db = tmp_path / "race.db"
    script = f"from topicstreams.storage import upgrade; upgrade({f'sqlite:///{db}'!r})"
    processes = [subprocess.Popen([sys.executable, "-c", script], stderr=subprocess.PIPE, text=True) for _ in range(2)]
    errors = [process.communicate(timeout=120)[1] for process in processes]
    assert [process.returncode for process in processes] == [0, 0], errors
    assert tables(db) >= TABLES
    assert len(rows(db, "select version_num from alembic_version")) == 1


# -- topics ------------------------------------------------------------------------------------


def test_add_topics_inserts_active_and_reactivates(url: str, databases) -> None:
    engine = databases.of(url)
    assert add_topics(engine, [" climate ", "ai", "climate"]) == ["climate", "ai"]
    assert add_topics(engine, ["ai"]) == []
    assert set_active(engine, ["ai"], False) == []
    assert add_topics(engine, ["ai", "space"]) == ["ai", "space"]
    assert [(t.name, t.active) for t in list_topics(engine)] == [("ai", True), ("climate", True), ("space", True)]


def test_seed_topics_never_reactivates(url: str, databases) -> None:
    engine = databases.of(url)
    assert seed_topics(engine, ["climate", "ai"]) == ["climate", "ai"]
    set_active(engine, ["ai"], False)
    assert seed_topics(engine, ["climate", "ai", "space"]) == ["space"]
    assert [name for _, name in active_topics(engine)] == ["climate", "space"]


def test_ensure_topics_inserts_inactive_and_returns_ids(url: str, databases) -> None:
    engine = databases.of(url)
    add_topics(engine, ["climate"])
    ids = ensure_topics(engine, ["climate", " one-off "])
    assert set(ids) == {"climate", "one-off"}
    assert {t.name: (t.id, t.active) for t in list_topics(engine)} == {
        "climate": (ids["climate"], True),
        "one-off": (ids["one-off"], False),
    }
    assert ensure_topics(engine, ["one-off"]) == {"one-off": ids["one-off"]}
    assert ensure_topics(engine, ["active one"], active=True)
    assert "active one" in [name for _, name in active_topics(engine)]


def test_set_active_reports_unknown_names(url: str, databases) -> None:
    engine = databases.of(url)
    add_topics(engine, ["climate", "ai"])
    assert set_active(engine, ["ai", "nope"], False) == ["nope"]
    assert active_topics(engine) == [(list_topics(engine)[1].id, "climate")]
    assert set_active(engine, ["ai"], True) == []
    assert [name for _, name in active_topics(engine)] == ["ai", "climate"]


@pytest.mark.parametrize("function", [add_topics, seed_topics, ensure_topics])
def test_empty_topic_names_are_refused(url: str, function, databases) -> None:
    with pytest.raises(ValueError, match="empty"):
        function(databases.of(url), ["ok", "  "])
    assert list_topics(databases.of(url)) == []


# -- writer ------------------------------------------------------------------------------------


def stored(db_path: Path) -> tuple[int, list[tuple], list[tuple]]:
    news = rows(db_path, "select count(*) from news")[0][0]
    events = rows(db_path, "select t.name, e.news_id from topic_news e join topics t on t.id = e.topic_id")
    engines = rows(db_path, "select engine from topic_news_engines order by engine")
    return news, events, engines


def test_same_article_twice_in_a_batch(url: str, db_path: Path, databases) -> None:
    result = NewsWriter(databases.of(url)).write([item("https://a.example/1"), item("https://a.example/1")])
    assert result.totals() == {"items": 2, "new_news": 1, "new_events": 1, "new_attributions": 1}
    news, events, engines = stored(db_path)
    assert (news, len(events), engines) == (1, 1, [("google",)])


def test_same_article_in_two_batches_keeps_the_first_write(url: str, db_path: Path, databases) -> None:
    writer = NewsWriter(databases.of(url))
    writer.write([item("https://a.example/1", title="first")])
    first = rows(db_path, "select first_seen_at from news union all select first_seen_at from topic_news")
    result = NewsWriter(databases.of(url)).write([item("https://a.example/1", title="second")])
    assert result.totals() == {"items": 1, "new_news": 0, "new_events": 0, "new_attributions": 0}
    assert rows(db_path, "select first_seen_at from news union all select first_seen_at from topic_news") == first
    assert rows(db_path, "select title from news") == [("first",)]


def test_same_article_by_two_engines(url: str, db_path: Path, databases) -> None:
    writer = NewsWriter(databases.of(url))
    first = writer.write([item("https://a.example/1", engine="google")])
    second = writer.write([item("https://a.example/1", engine="bing"), item("https://a.example/1", engine="google")])
    assert first.new_events == {"google": 1} and first.new_attributions == {"google": 1}
    assert second.new_events == {} and second.new_attributions == {"bing": 1}
    assert second.items == {"bing": 1, "google": 1}
    news, events, engines = stored(db_path)
    assert (news, len(events), engines) == (1, 1, [("bing",), ("google",)])
    with databases.of(url).connect() as conn:
        seen = dict(conn.execute(select(TopicNewsEngine.engine, TopicNewsEngine.first_seen_at)).all())
    assert seen["google"] < seen["bing"]


def test_one_article_in_two_topics_is_one_news_row_and_two_events(url: str, db_path: Path, databases) -> None:
    result = NewsWriter(databases.of(url)).write(
        [item("https://a.example/1", topic="climate"), item("https://a.example/1", topic="energy")]
    )
    assert result.totals() == {"items": 2, "new_news": 1, "new_events": 2, "new_attributions": 2}
    news, events, _ = stored(db_path)
    assert news == 1 and sorted(name for name, _ in events) == ["climate", "energy"]


def test_writer_inserts_unknown_topics_inactive(url: str, databases) -> None:
    engine = databases.of(url)
    add_topics(engine, ["climate"])
    NewsWriter(engine).write([item("https://a.example/1", topic="climate"), item("https://a.example/2", topic=" new ")])
    assert [(t.name, t.active) for t in list_topics(engine)] == [("climate", True), ("new", False)]


def test_writer_refuses_a_batch_with_an_unstorable_item(url: str, db_path: Path, databases) -> None:
    with pytest.raises(ValueError, match="missing news_id"):
        NewsWriter(databases.of(url)).write([item("https://a.example/1"), item("https://a.example/2", news_id=None)])
    assert stored(db_path)[0] == 0


def test_writer_recovers_from_a_deleted_cached_topic(url: str, db_path: Path, databases) -> None:
    writer = NewsWriter(databases.of(url))
    writer.write([item("https://a.example/1")])
    with sqlite3.connect(db_path) as conn:
        conn.execute("pragma foreign_keys = on")
        conn.execute("delete from topics")
    result = writer.write([item("https://a.example/2")])
    assert result.new_events == {"google": 1}
    assert [t.name for t in list_topics(databases.of(url))] == ["climate"]


def test_concurrent_writers_never_duplicate(url: str, db_path: Path, databases) -> None:
    batches = [[item(f"https://a.example/{i}", engine=engine) for i in range(300)] for engine in ("google", "bing")]
    results = []

    def write(batch: list[dict]) -> None:
        writer = NewsWriter(make_database(url))  # an engine, and so connections, of its own
        for start in range(0, len(batch), 50):
            results.append(writer.write(batch[start : start + 50]))

    threads = [threading.Thread(target=write, args=(batch,)) for batch in batches * 2]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    news, events, engines = stored(db_path)
    assert (news, len(events), len(engines)) == (300, 300, 600)
    assert sum(r.new_news.total() for r in results) == 300
    assert sum(r.new_events.total() for r in results) == 300
    assert sum(r.new_attributions.total() for r in results) == 600
    assert len(rows(db_path, "select * from topic_news_engines group by topic_id, news_id, engine")) == 600
    with databases.of(url).connect() as conn:
        assert conn.scalar(select(TopicNews.news_id).limit(1))
