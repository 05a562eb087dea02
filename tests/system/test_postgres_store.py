"""The storage layer on a real PostgreSQL server (driver psycopg 3): migrations, the writer, topics, health, cycles,
the commands; and what only PostgreSQL has: several processes writing one database at the same moment.

The server is the session's (tests/support/postgres_server.py, fixture ``postgres_server``); each test gets a fresh
database (``postgres_url``). Where SQLite's tests already say what a function must do, the same test functions
run here on a PostgreSQL engine, unchanged. Skipped, with the reason, where no PostgreSQL server can run.
"""

from __future__ import annotations

import inspect as pyinspect
import json
import logging
import random
import subprocess
import sys
import textwrap
import threading
from collections import Counter
from datetime import UTC, datetime, timedelta, timezone

import pytest
from sqlalchemy import Engine, func, inspect, select, text
from sqlalchemy.exc import OperationalError

from tests.support.databases import database_fixture
from tests.support.project import REPO
from tests.unit import test_engine_status as sqlite_health
from tests.unit import test_storage as sqlite_storage
from topicstreams.storage import (
    Databases,
    NewsWriter,
    ensure_topics,
    list_topics,
    upgrade,
)
from topicstreams.storage.db import make_database
from topicstreams.storage.migrate import current_revisions, head_revisions
from topicstreams.storage.models import (
    TABLE_NAMES,
    News,
    TopicNews,
    TopicNewsEngine,
    topics_table,
)
from topicstreams.storage.search import SEARCH_TABLE, is_index_table

psycopg = pytest.importorskip("psycopg", reason="psycopg 3 is not installed (pip install 'topicstreams[postgresql]')")

item = sqlite_storage.item  # a news item dict: item(url, topic="climate", engine="google", **fields)


db = database_fixture("pg_url")


def count(engine: Engine, table: str) -> int:
    with engine.connect() as conn:
        return conn.scalar(text(f"SELECT count(*) FROM {table}"))


def counts(engine: Engine) -> dict[str, int]:
    return {table: count(engine, table) for table in ("topics", "news", "topic_news", "topic_news_engines")}


def run_together(script: str, argvs: list[list[str]], timeout: float = 120) -> list[tuple[dict, str]]:
    """Run *script* in one new Python process per argument list, all released at the same moment.

    Each process prepares (imports, builds its input), prints ``ready`` and waits for a line on its standard
    input; once every one is ready, all are told to go. Returns each one's result (the JSON object it printed
    last) and standard error; fails the test if one exits non-zero."""
    preamble = "import json, sys\ndef wait_for_go():\n    print('ready', flush=True)\n    sys.stdin.readline()\n"
    processes = [
        subprocess.Popen(
            [sys.executable, "-c", preamble + textwrap.dedent(script), *argv],
            cwd=REPO,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for argv in argvs
    ]
    try:
        for process in processes:
            ready = process.stdout.readline()
            assert ready == "ready\n", f"a process did not get ready: {ready!r} {process.stderr.read()[-3000:]}"
        for process in processes:
            process.stdin.write("go\n")
            process.stdin.flush()
        outputs = [process.communicate(timeout=timeout) for process in processes]
    finally:
        for process in processes:
            if process.poll() is None:
                process.kill()
                process.wait()
    failed = [
        (process.returncode, error_lines(err))
        for process, (_, err) in zip(processes, outputs, strict=True)
        if process.returncode != 0
    ]
    assert not failed, failed
    return [(json.loads(out.strip().splitlines()[-1]), err) for out, err in outputs]


def error_lines(stderr: str) -> list[str]:
    """The lines of a traceback that name exceptions, shortened (SQLAlchemy's messages carry every parameter)."""
    lines = [line for line in stderr.splitlines() if line and not line.startswith((" ", "Traceback", "The above"))]
    return [line[:300] for line in lines[-12:]]


# -- schema and migrations ------------------------------------------------------------------------------------


def test_upgrade_brings_a_fresh_database_to_head(postgres_url: str, databases) -> None:
    assert current_revisions(postgres_url) == set()
    upgrade(postgres_url)
    assert current_revisions(postgres_url) == head_revisions()
    assert set(TABLE_NAMES) | {"alembic_version", SEARCH_TABLE} == set(
        inspect(databases.of(postgres_url)).get_table_names()
    )


def has_server_default(column: dict) -> bool:
    """Whether the column has a default of its own (PostgreSQL's sequences of autoincrement keys left out:
    SQLite's keys count by themselves)."""
    return column["default"] is not None and not str(column["default"]).startswith("nextval(")


def schema(engine: Engine) -> dict[str, dict]:
    """Per table: its columns (name, nullable, has a server default), primary key, indexes, unique constraints and
    foreign keys, without types (they differ by nature) nor the indexes PostgreSQL makes for constraints."""
    inspector = inspect(engine)
    tables = {}
    for table in inspector.get_table_names():
        tables[table] = {
            "columns": [(c["name"], c["nullable"], has_server_default(c)) for c in inspector.get_columns(table)],
            "primary key": inspector.get_pk_constraint(table)["constrained_columns"],
            "indexes": sorted(
                (i["name"], tuple(i["column_names"]), bool(i["unique"]))
                for i in inspector.get_indexes(table)
                if not i.get("duplicates_constraint")
            ),
            "unique": sorted((u["name"], tuple(u["column_names"])) for u in inspector.get_unique_constraints(table)),
            "foreign keys": sorted(
                (
                    tuple(fk["constrained_columns"]),
                    fk["referred_table"],
                    tuple(fk["referred_columns"]),
                    fk["options"].get("ondelete"),
                )
                for fk in inspector.get_foreign_keys(table)
            ),
        }
    return tables


def test_the_schema_is_sqlites(pg_url: str, tmp_path, databases) -> None:
    sqlite_url = f"sqlite:///{tmp_path / 'twin.db'}"
    upgrade(sqlite_url)
    on_sqlite, on_postgresql = schema(databases.of(sqlite_url)), schema(databases.of(pg_url))
    # The search index differs by nature (an FTS5 table and its shadow tables; a tsvector table): see test_search.py.
    on_sqlite = {name: table for name, table in on_sqlite.items() if not is_index_table(name)}
    assert on_postgresql.pop(SEARCH_TABLE)["indexes"] == [("ix_news_search_document", ("document",), False)]
    assert on_postgresql.keys() == on_sqlite.keys() == set(TABLE_NAMES) | {"alembic_version"}
    for table in TABLE_NAMES:
        assert on_postgresql[table] == on_sqlite[table], table
    assert on_postgresql["topic_news_engines"]["foreign keys"] == [
        (("topic_id", "news_id"), "topic_news", ("topic_id", "news_id"), "CASCADE")
    ]


def test_four_processes_upgrading_one_fresh_database_at_once_take_turns(postgres_url: str, databases) -> None:
    """All four pass the first look (nothing migrated yet) together, then queue on the advisory lock:
    one migrates, the others find the work done."""
    script = """
        import logging
        from topicstreams.storage.migrate import upgrade
        logging.basicConfig(level=logging.INFO, format="%(name)s: %(message)s")
        wait_for_go()
        upgrade(sys.argv[1])
        print(json.dumps({"done": True}))
    """
    results = run_together(script, [[postgres_url]] * 4)
    assert [result for result, _ in results] == [{"done": True}] * 4
    migrated = [err for _, err in results if "Running upgrade  -> 0001" in err]
    assert len(migrated) == 1, [err[-1500:] for _, err in results]
    assert current_revisions(postgres_url) == head_revisions()
    with databases.of(postgres_url).connect() as conn:
        assert conn.execute(text("SELECT version_num FROM alembic_version")).all() == [
            (revision,) for revision in head_revisions()
        ]
        # the lock is a transaction's: nobody holds it any more
        assert conn.scalar(text("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory'")) == 0


SQLITE_STORAGE_TESTS = [
    sqlite_storage.test_migrations_match_the_models,
    sqlite_storage.test_add_topics_inserts_active_and_reactivates,
    sqlite_storage.test_seed_topics_never_reactivates,
    sqlite_storage.test_ensure_topics_inserts_inactive_and_returns_ids,
    sqlite_storage.test_set_active_reports_unknown_names,
]


@pytest.mark.parametrize("sqlite_test", SQLITE_STORAGE_TESTS, ids=lambda test: test.__name__)
def test_storage_as_on_sqlite(sqlite_test, pg_url: str, databases: Databases) -> None:
    """SQLite's test of the migrations against the models, and of the topics functions, on PostgreSQL."""
    sqlite_test(pg_url, databases)


def test_upgrade_is_idempotent(pg_url: str, databases: Databases) -> None:
    sqlite_storage.test_upgrade_is_idempotent(pg_url, None, databases)


@pytest.mark.parametrize(
    "function",
    [sqlite_storage.add_topics, sqlite_storage.seed_topics, sqlite_storage.ensure_topics],
    ids=lambda function: function.__name__,
)
def test_empty_topic_names_are_refused(pg_url: str, function, databases: Databases) -> None:
    sqlite_storage.test_empty_topic_names_are_refused(pg_url, function, databases)


# -- the writer -----------------------------------------------------------------------------------------------


def test_a_batch_with_duplicates_stores_each_row_once_and_counts_what_it_added(db: Engine) -> None:
    batch = [
        item("https://a.example/1"),
        item("https://a.example/1"),
        item("https://a.example/1", engine="bing"),
        item("https://a.example/1", topic="energy"),
        item("https://a.example/2", topic=" energy "),
    ]
    result = NewsWriter(db).write(batch)
    assert result.totals() == {"items": 5, "new_news": 2, "new_events": 3, "new_attributions": 4}
    assert result.new_news == {"google": 2} and result.new_attributions == {"google": 3, "bing": 1}
    assert counts(db) == {"topics": 2, "news": 2, "topic_news": 3, "topic_news_engines": 4}
    assert [(t.name, t.active) for t in list_topics(db)] == [("climate", False), ("energy", False)]

    again = NewsWriter(db).write(batch)  # another writer, no cached topic ids
    assert again.totals() == {"items": 5, "new_news": 0, "new_events": 0, "new_attributions": 0}
    assert counts(db) == {"topics": 2, "news": 2, "topic_news": 3, "topic_news_engines": 4}


def test_the_first_write_is_kept_and_times_come_back_aware_utc(db: Engine, pg_url: str, databases) -> None:
    paris = timezone(timedelta(hours=1))
    before = datetime.now(UTC)
    NewsWriter(db).write(
        [item("https://a.example/1", title="first", published_at=datetime(2025, 3, 1, 13, 0, tzinfo=paris))]
    )
    with db.begin() as conn:  # the session's time zone must not matter
        conn.execute(text(f"ALTER DATABASE {pg_url.rsplit('/', 1)[1]} SET timezone TO 'America/New_York'"))
    databases.dispose()
    db = databases.of(pg_url)
    with db.connect() as conn:
        assert conn.scalar(text("SHOW timezone")) == "America/New_York"
        published_at, first_seen_at, title = conn.execute(
            select(News.published_at, News.first_seen_at, News.title)
        ).one()
        assert conn.scalar(text("SELECT published_at AT TIME ZONE 'UTC' FROM news")) == datetime(2025, 3, 1, 12)
    assert published_at == datetime(2025, 3, 1, 12, 0, tzinfo=UTC) and published_at.tzinfo is UTC
    assert first_seen_at.tzinfo is UTC and before - timedelta(seconds=5) <= first_seen_at <= datetime.now(UTC)

    result = NewsWriter(db).write(
        [item("https://a.example/1", title="second"), item("https://a.example/1", engine="bing")]
    )
    assert result.totals() == {"items": 2, "new_news": 0, "new_events": 0, "new_attributions": 1}
    with db.connect() as conn:
        assert conn.execute(select(News.first_seen_at, News.title)).one() == (first_seen_at, "first")
        assert conn.scalar(select(TopicNews.first_seen_at)) == first_seen_at
        seen = dict(conn.execute(select(TopicNewsEngine.engine, TopicNewsEngine.first_seen_at)).all())
    assert seen["google"] == first_seen_at < seen["bing"] and seen["bing"].tzinfo is UTC


def test_a_batch_with_an_unstorable_item_stores_nothing(db: Engine) -> None:
    with pytest.raises(ValueError, match="missing news_id"):
        NewsWriter(db).write([item("https://a.example/1"), item("https://a.example/2", news_id=None)])
    assert counts(db) == {"topics": 0, "news": 0, "topic_news": 0, "topic_news_engines": 0}


def test_the_writer_recovers_from_a_deleted_cached_topic(db: Engine) -> None:
    writer = NewsWriter(db)
    writer.write([item("https://a.example/1")])
    with db.begin() as conn:
        conn.execute(topics_table.delete())  # cascades to the events and attributions
    result = writer.write([item("https://a.example/2")])
    assert result.new_events == {"google": 1} and result.new_news == {"google": 1}
    assert [t.name for t in list_topics(db)] == ["climate"]
    assert counts(db) == {"topics": 1, "news": 2, "topic_news": 1, "topic_news_engines": 1}


def test_a_write_after_the_server_dropped_its_connections_goes_through(
    db: Engine, postgres_server, postgres_database: str
) -> None:
    """A server restart or an idle timeout closes the pooled connections: the next batch must not die with one."""
    writer = NewsWriter(db)
    writer.write([item("https://a.example/1")])
    with postgres_server.janitor(postgres_database).cursor() as cursor:
        cursor.execute(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE datname = %s", (postgres_database,)
        )
        assert cursor.fetchone()[0] >= 1
    assert writer.write([item("https://a.example/2")]).new_news == {"google": 1}
    assert counts(db)["news"] == 2


def flaky_news_insert(writer: NewsWriter, error: Exception) -> list[int]:
    """Make the writer's news insert raise *error* on its first call (after the batch's topics were inserted in
    the same transaction); returns the list of calls, growing."""
    real_add, calls = writer._news.add, []

    def add(conn, rows_by_engine, counts):
        calls.append(len(calls) + 1)
        if len(calls) == 1:
            raise error
        real_add(conn, rows_by_engine, counts)

    writer._news.add = add
    return calls


def test_a_batch_rolled_back_as_a_deadlock_is_written_again(db: Engine, caplog: pytest.LogCaptureFixture) -> None:
    """The server chose this transaction to break a deadlock: the batch is written again, whole, with its new
    topic inserted again (its id from the rolled-back transaction is not kept)."""
    writer = NewsWriter(db)
    calls = flaky_news_insert(
        writer, OperationalError("INSERT INTO news ...", {}, psycopg.errors.DeadlockDetected("deadlock detected"))
    )
    with caplog.at_level(logging.WARNING, logger="topicstreams.storage"):
        result = writer.write([item("https://a.example/1", topic="fresh"), item("https://a.example/2")])
    assert result.totals() == {"items": 2, "new_news": 2, "new_events": 2, "new_attributions": 2}
    assert calls == [1, 2]
    assert caplog.messages == ["A batch of 2 items was rolled back (deadlock); writing it again (attempt 2 of 3)"]
    assert counts(db) == {"topics": 2, "news": 2, "topic_news": 2, "topic_news_engines": 2}
    assert writer.write([item("https://a.example/3", topic="fresh")]).new_events == {"google": 1}


def test_other_database_errors_are_not_retried(db: Engine) -> None:
    writer = NewsWriter(db)
    calls = flaky_news_insert(
        writer, OperationalError("INSERT INTO news ...", {}, psycopg.errors.DiskFull("could not extend file"))
    )
    with pytest.raises(OperationalError, match="could not extend file"):
        writer.write([item("https://a.example/1")])
    assert calls == [1]
    assert counts(db) == {"topics": 0, "news": 0, "topic_news": 0, "topic_news_engines": 0}


def test_writers_inserting_the_same_new_topics_in_different_orders_never_deadlock(pg_url: str, databases) -> None:
    """Four connections, each round at the same moment, insert the same 30 new topic names each in its own order
    (as writers do with a batch's new topics): each gets every id, the same ones, and nobody deadlocks."""
    writers, rounds = 4, 25
    barrier = threading.Barrier(writers)
    seen: list[dict[str, int]] = []
    errors: list[BaseException] = []

    def insert(worker: int) -> None:
        engine = make_database(pg_url)  # connections of its own
        rnd = random.Random(worker)
        try:
            for round_ in range(rounds):
                names = [f"round {round_} topic {n}" for n in range(30)]
                rnd.shuffle(names)
                barrier.wait(timeout=60)
                seen.append(ensure_topics(engine, names))
        except BaseException as exc:
            errors.append(exc)
            barrier.abort()
        finally:
            engine.dispose()

    threads = [threading.Thread(target=insert, args=(worker,)) for worker in range(writers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not errors, [type(getattr(e, "orig", e)).__name__ for e in errors]
    assert len(seen) == writers * rounds
    stored = {t.name: t.id for t in list_topics(databases.of(pg_url))}
    assert len(stored) == rounds * 30
    assert all(ids == {name: stored[name] for name in ids} for ids in seen)


RACE_ENGINES = ("google", "bing", "brave")


def race_items(worker: int, articles: int = 240) -> list[dict]:
    """The items of one racing writer: every article (so all writers race for every news row), each under one
    or two of six new topics (racing to insert the same topic names), found by two of three engines that depend
    on the worker (so attributions overlap partly); a share repeated; shuffled by the worker's own seed."""
    items = []
    for n in range(articles):
        url = f"https://race.example/{n}"
        for topic in {f"topic {n % 6}", f"topic {(n * 7) % 6}"}:
            for engine in (RACE_ENGINES[(n + worker) % 3], RACE_ENGINES[(n + worker + 1) % 3]):
                items.append(item(url, topic=topic, engine=engine, title=f"story {n}"))
    rnd = random.Random(worker)
    items += rnd.sample(items, len(items) // 5)
    rnd.shuffle(items)
    return items


RACE_SCRIPT = """
    import logging
    from datetime import datetime
    from topicstreams.storage import NewsWriter, make_database
    from tests.system.test_postgres_store import race_items

    url, worker, batch_size = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])

    class Keep(logging.Handler):
        def __init__(self):
            super().__init__(logging.WARNING)
            self.messages = []

        def emit(self, record):
            self.messages.append(record.getMessage())

    kept = Keep()
    logging.getLogger("topicstreams").addHandler(kept)
    items = race_items(worker)
    db = make_database(url)
    writer = NewsWriter(db)
    with db.connect():
        pass  # connected before the start
    wait_for_go()
    totals = {}
    for start in range(0, len(items), batch_size):
        for name, value in writer.write(items[start:start + batch_size]).totals().items():
            totals[name] = totals.get(name, 0) + value
    print(json.dumps({"totals": totals, "warnings": kept.messages}))
"""


def test_concurrent_writers_in_several_processes_store_each_row_once(db: Engine, pg_url: str) -> None:
    """Four processes write overlapping items (same articles, topics and engines, in different orders, batch
    after batch) at the same moment: no error, no deadlock, each row once, and the rows each process says it
    added sum to the rows stored."""
    writers = 4
    results = run_together(RACE_SCRIPT, [[pg_url, str(worker), "60"] for worker in range(writers)])
    everything = [i for worker in range(writers) for i in race_items(worker)]
    expected = {
        "topics": len({i["topic"] for i in everything}),
        "news": len({i["news_id"] for i in everything}),
        "topic_news": len({(i["topic"], i["news_id"]) for i in everything}),
        "topic_news_engines": len({(i["topic"], i["news_id"], i["engine"]) for i in everything}),
    }
    assert counts(db) == expected
    assert [result["warnings"] for result, _ in results] == [[]] * writers  # no batch rolled back and retried
    added = sum((Counter(result["totals"]) for result, _ in results), Counter())
    assert added == {
        "items": len(everything),
        "new_news": expected["news"],
        "new_events": expected["topic_news"],
        "new_attributions": expected["topic_news_engines"],
    }


# -- health and cycles: SQLite's tests, on PostgreSQL -----------------------------------------------------------


SQLITE_HEALTH_TESTS = [
    function
    for name, function in vars(sqlite_health).items()
    if name.startswith("test_") and list(pyinspect.signature(function).parameters) == ["db"]
]


def test_the_sqlite_health_tests_are_all_taken() -> None:
    assert len(SQLITE_HEALTH_TESTS) >= 20, [test.__name__ for test in SQLITE_HEALTH_TESTS]


@pytest.mark.parametrize("sqlite_test", SQLITE_HEALTH_TESTS, ids=lambda test: test.__name__)
def test_health_as_on_sqlite(sqlite_test, db: Engine) -> None:
    """engine_status (its upsert), alerts, health_windows and the baseline: each SQLite test, on PostgreSQL."""
    sqlite_test(db)


def test_engine_status_upsert_by_two_nodes_keeps_one_row_each(db: Engine) -> None:
    from topicstreams.storage import engine_status

    for node in ("n1", "n2", "n1"):
        engine_status.save_status(db, "google", node, state="running", reasons=["latency"], window_counts={"ok": 3})
    assert [(row.node, row.reasons, row.window_counts) for row in engine_status.read_statuses(db)] == [
        ("n1", ["latency"], {"ok": 3}),
        ("n2", ["latency"], {"ok": 3}),
    ]
    with db.connect() as conn:  # JSON, not text
        assert conn.scalar(text("SELECT json_typeof(reasons) FROM engine_status LIMIT 1")) == "array"


@pytest.mark.parametrize(
    "name",
    [
        "test_save_cycle_keeps_every_column_and_defaults_the_counts_to_zero",
        "test_purge_deletes_what_ended_before_the_cutoff_from_both_tables_once",
    ],
)
def test_cycles_as_on_sqlite(
    name: str, db: Engine, tmp_path, monkeypatch: pytest.MonkeyPatch, databases: Databases
) -> None:
    """scraper_cycles save and purge: SQLite's tests, their database made a PostgreSQL one."""
    from tests.unit import test_cycles as sqlite_cycles

    monkeypatch.setattr(sqlite_cycles, "database", lambda _databases, folder: db)
    getattr(sqlite_cycles, name)(tmp_path, databases)
    assert count(db, "scraper_cycles") > 0


# -- the commands ---------------------------------------------------------------------------------------------


def test_db_upgrade_and_topics_commands(scrapy_cmd, postgres_url: str, databases) -> None:
    env = {"TOPICSTREAMS_DB_URL": postgres_url}
    upgraded = scrapy_cmd("db", "upgrade", env=env, check=True)
    assert upgraded.stdout.strip() == f"database up to date: {postgres_url}"
    assert current_revisions(postgres_url) == head_revisions()

    added = scrapy_cmd("topics", "add", "a", "b", env=env, check=True)
    assert added.stdout.splitlines() == ["added: a", "added: b"]
    assert scrapy_cmd("topics", "deactivate", "b", env=env, check=True).stdout.strip() == "deactivated: b"
    listed = scrapy_cmd("topics", "list", env=env, check=True).stdout.splitlines()
    assert [line.split()[:2] for line in listed] == [["a", "active"], ["b", "inactive"]]
    with databases.of(postgres_url).connect() as conn:
        rows = conn.execute(
            select(topics_table.c.name, topics_table.c.active, func.now() - topics_table.c.created_at).order_by(
                topics_table.c.name
            )
        ).all()
    assert [(name, active) for name, active, _ in rows] == [("a", True), ("b", False)]
    assert all(timedelta(0) <= age < timedelta(minutes=5) for _, _, age in rows)


# -- the server fixture's refusals ----------------------------------------------------------------------------


def test_no_server_binaries_is_a_skip_reason_naming_the_package(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.support import postgres_server

    monkeypatch.setenv(postgres_server.BINDIR_ENV, str(tmp_path))
    with pytest.raises(postgres_server.PostgresUnavailable, match=r"Debian package postgresql\): .*no initdb"):
        postgres_server.PostgresServer().check_available()


def test_root_without_a_postgres_user_is_a_skip_reason(monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.support import postgres_server

    def no_such_user(name: str):
        raise KeyError(name)

    monkeypatch.setattr(postgres_server.os, "geteuid", lambda: 0)
    monkeypatch.setattr(postgres_server.pwd, "getpwnam", no_such_user)
    server = postgres_server.PostgresServer(bindir=postgres_server.Path("/usr/lib/postgresql/15/bin"))
    with pytest.raises(postgres_server.PostgresUnavailable, match="no 'postgres' system user"):
        server.check_available()


def test_an_item_postgresql_refuses_for_good_is_set_aside_and_the_rest_of_its_batch_is_written(db: Engine) -> None:
    from topicstreams.storage.batch_writes import write_or_set_aside

    refused = item("https://a.example/nul", title="a NUL \x00 in a title")  # text columns cannot hold it
    written = write_or_set_aside(NewsWriter(db), [item("https://a.example/1"), refused, item("https://a.example/2")])
    [(item_set_aside, reason)] = written.rejected
    assert item_set_aside["url"] == "https://a.example/nul" and "NUL" in reason
    assert written.result.new_news == {"google": 2} and count(db, "news") == 2
