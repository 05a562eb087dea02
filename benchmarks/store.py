"""Benchmark of the store path against the pipelines people usually write.

    python benchmarks/store.py [-n 100000] [--dup 0.2] [--topics 5] [--db URL]
    python benchmarks/store.py --db postgresql+psycopg://user@host:port/db [--writers 1,2,4] [-n 100000]

(a throw-away PostgreSQL server: ``python -m tests.support.postgres_server`` prints the URL of a new database and runs
until Ctrl-C).

Generates N items (a share of them duplicates: the same article found again for its topic, by
the same or another engine) and stores them, each run into a fresh SQLite file in a temp dir:

  (1) the project: StorePipeline driven through a Scrapy crawler, with its batch size;
  (a) the straightforward pipeline: per item, an ORM Session looks up the topic, the article,
      the event and the attribution, adds what is missing and commits (timed on a subset);
  (b) raw sqlite3: executemany INSERT OR IGNORE of all rows into the same tables, one commit;
  (b') raw sqlite3 again, in the project's batches with its pragmas: the cost of the project's
      own code (Scrapy, SQLAlchemy) over the driver, everything else equal.

All runs use the schema of the project's migrations. (1), (b) and (b') run --repeat times, each
on a fresh file, and the best run counts (other load on the machine only ever slows a run down).
--db stores (1) once into that database instead (it should be empty); the baselines always use
temp SQLite files.

With a PostgreSQL --db (driver psycopg 3), the run is a scaling test of the project alone, no
baselines: for each writer count of --writers (default 1, 2, 4), the tables are emptied (TRUNCATE),
then that many processes, released at one moment, each run the StorePipeline over its share of the
N items (every writers-th item), and the time from the release to the last writer's end gives the
items/s. Duplicates (--dup) re-find one of the --recent latest articles, and consecutive items go
to different writers: one article's items sit in several writers' shares at about the same
position, so writers race for the same rows at the same moment. The rows stored must be the
distinct articles, events and attributions of the items, and the new rows the writers counted
must add up to them; the script exits non-zero otherwise.
"""

from __future__ import annotations

import argparse
import asyncio
import atexit
import contextlib
import multiprocessing
import queue
import random
import shutil
import sqlite3
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

from scrapy import Spider
from scrapy.utils.test import get_crawler
from sqlalchemy import create_engine, select, text
from sqlalchemy.engine import make_url
from sqlalchemy.orm import Session

from topicstreams import settings as project_settings
from topicstreams.crawl.runtime import Runtime
from topicstreams.engines.items import NewsItem
from topicstreams.engines.news_urls import news_id
from topicstreams.pipelines.store import StorePipeline
from topicstreams.storage import Databases, upgrade
from topicstreams.storage.db import SQLITE_CACHE_KIB, SQLITE_WAL_AUTOCHECKPOINT_PAGES
from topicstreams.storage.models import News, Topic, TopicNews, TopicNewsEngine

ENGINES = ("google", "bing", "brave")
TABLES = ("topics", "news", "topic_news", "topic_news_engines")


class BenchSpider(Spider):
    name = "bench"


def make_items(n: int, dup: float, topics: int, seed: int = 1, recent: int | None = None) -> list[NewsItem]:
    """*n* items, a share *dup* of them duplicates: an earlier article found again (one of the *recent* latest
    ones if given, else any), by a random engine."""
    rnd = random.Random(seed)
    start = datetime(2025, 1, 1, tzinfo=UTC)
    articles: list[tuple[str, str, str]] = []  # (url, topic, title)
    items = []
    for i in range(n):
        if articles and rnd.random() < dup:
            url, topic, title = rnd.choice(articles if recent is None else articles[-recent:])
        else:
            topic = f"topic {rnd.randrange(topics)}"
            url = f"https://news{rnd.randrange(50)}.example.com/{i // 7}/story-{i}.html"
            title = f"Story {i} about {topic}"
            articles.append((url, topic, title))
        items.append(
            NewsItem(
                url=url,
                title=title,
                source=url.split("/")[2],
                snippet=f"The snippet of {title}, long enough to look like one. " * 2,
                published_at=start + timedelta(minutes=i),
                topic=topic,
                engine=rnd.choice(ENGINES),
                rank=i % 10 + 1,
                fetched_at=start + timedelta(minutes=i, seconds=30),
                news_id=news_id(url),
            )
        )
    return items


def timed(run: Callable[[], None]) -> float:
    started = time.perf_counter()
    run()
    return time.perf_counter() - started


def sqlite_text(value: datetime) -> str:
    return value.astimezone(UTC).isoformat(" ", "microseconds")[:26]


def count_rows(path: Path) -> dict[str, int]:
    with sqlite3.connect(path) as conn:
        return {table: conn.execute(f"select count(*) from {table}").fetchone()[0] for table in TABLES}


def store_settings(url: str, batch_size: int) -> dict:
    """The store pipeline's settings for a crawler made without the project's (get_crawler): its defaults, a
    journal folder of its own (never used while the database is there)."""
    defaults = {
        name: getattr(project_settings, name)
        for name in dir(project_settings)
        if name.startswith("TOPICSTREAMS_STORE_")
    }
    return {
        **defaults,
        "TOPICSTREAMS_DATABASE_URL": url,
        "LOG_LEVEL": "WARNING",
        "TOPICSTREAMS_STORE_BATCH_SIZE": batch_size,
        "TOPICSTREAMS_JOURNAL_DIR": journal_dir(),
    }


def journal_dir() -> str:
    """A journal folder for one run, removed at exit."""
    path = tempfile.mkdtemp(prefix="topicstreams-bench-journal-")
    atexit.register(shutil.rmtree, path, True)
    return path


def run_project(url: str, items: list[NewsItem], batch_size: int) -> float:
    crawler = get_crawler(BenchSpider, store_settings(url, batch_size))
    upgrade(url)  # the schema exists before the clock starts, as after a node's first start
    pipeline = StorePipeline.from_crawler(crawler)

    async def crawl() -> None:
        pipeline.open_spider()
        for item in items:
            pipeline.process_item(item)
        await pipeline.close_spider()

    elapsed = timed(lambda: asyncio.run(crawl()))
    Runtime.of(crawler).close()  # its database handles: no connection stays open
    stats = crawler.stats.get_stats()
    stored = sum(v for k, v in stats.items() if k.endswith("/items_stored"))
    if stored != len(items):
        sys.exit(f"the project stored {stored} of {len(items)} items: {stats}")
    return elapsed


def run_orm(url: str, items: list[NewsItem]) -> float:
    upgrade(url)
    engine = create_engine(url)  # as people write it: no pragmas, a commit per item

    def store() -> None:
        with Session(engine) as session:
            for item in items:
                topic = session.scalars(select(Topic).where(Topic.name == item["topic"])).first()
                if topic is None:
                    topic = Topic(name=item["topic"], active=False)
                    session.add(topic)
                    session.flush()
                now = datetime.now(UTC)
                if session.get(News, item["news_id"]) is None:
                    session.add(
                        News(
                            id=item["news_id"],
                            url=item["url"],
                            title=item["title"],
                            source=item["source"],
                            snippet=item["snippet"],
                            published_at=item["published_at"],
                            first_seen_at=now,
                        )
                    )
                    session.flush()
                if session.get(TopicNews, (topic.id, item["news_id"])) is None:
                    session.add(TopicNews(topic_id=topic.id, news_id=item["news_id"], first_seen_at=now))
                    session.flush()
                if session.get(TopicNewsEngine, (topic.id, item["news_id"], item["engine"])) is None:
                    session.add(
                        TopicNewsEngine(
                            topic_id=topic.id, news_id=item["news_id"], engine=item["engine"], first_seen_at=now
                        )
                    )
                session.commit()

    elapsed = timed(store)
    engine.dispose()
    return elapsed


def run_raw(path: Path, items: list[NewsItem], batch_size: int | None = None) -> float:
    upgrade(f"sqlite:///{path}")
    conn = sqlite3.connect(path)
    if batch_size:  # the project's pragmas, to compare like with like
        conn.execute("pragma synchronous = NORMAL")
        conn.execute(f"pragma wal_autocheckpoint = {SQLITE_WAL_AUTOCHECKPOINT_PAGES}")
        conn.execute(f"pragma cache_size = -{SQLITE_CACHE_KIB}")

    def store(chunk: list[NewsItem]) -> None:
        now = sqlite_text(datetime.now(UTC))
        conn.executemany(
            "insert or ignore into topics (name, active) values (?, 0)", [(t,) for t in {i["topic"] for i in chunk}]
        )
        ids = dict(conn.execute("select name, id from topics"))
        conn.executemany(
            "insert or ignore into news (id, url, title, source, snippet, published_at, first_seen_at)"
            " values (?, ?, ?, ?, ?, ?, ?)",
            [
                (i["news_id"], i["url"], i["title"], i["source"], i["snippet"], sqlite_text(i["published_at"]), now)
                for i in chunk
            ],
        )
        conn.executemany(
            "insert or ignore into topic_news (topic_id, news_id, first_seen_at) values (?, ?, ?)",
            [(ids[i["topic"]], i["news_id"], now) for i in chunk],
        )
        conn.executemany(
            "insert or ignore into topic_news_engines (topic_id, news_id, engine, first_seen_at) values (?, ?, ?, ?)",
            [(ids[i["topic"]], i["news_id"], i["engine"], now) for i in chunk],
        )
        conn.commit()

    size = batch_size or len(items)
    elapsed = timed(lambda: [store(items[s : s + size]) for s in range(0, len(items), size)])
    conn.close()
    return elapsed


def best_of(repeat: int, folder: Path, name: str, run: Callable[[Path], float]) -> float:
    """The shortest of *repeat* runs, each on a fresh database: other load on the machine only adds."""
    return min(run(folder / f"{name}-{attempt}.db") for attempt in range(repeat))


# -- PostgreSQL: concurrent writer processes ----------------------------------------------------------------


def is_postgresql(url: str | None) -> bool:
    return bool(url) and make_url(url).get_backend_name() == "postgresql"


def writer_counts(value: str) -> list[int]:
    """``--writers 1,2,4`` → [1, 2, 4]."""
    try:
        counts = [int(part) for part in value.split(",") if part.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected writer counts like 1,2,4, not {value!r}") from None
    if not counts or min(counts) < 1:
        raise argparse.ArgumentTypeError(f"expected writer counts of at least 1, like 1,2,4, not {value!r}")
    return counts


def expected_rows(items: list[NewsItem]) -> dict[str, int]:
    """The rows the items must leave: their distinct articles, events (topic, article) and attributions."""
    return {
        "news": len({i["news_id"] for i in items}),
        "topic_news": len({(i["topic"], i["news_id"]) for i in items}),
        "topic_news_engines": len({(i["topic"], i["news_id"], i["engine"]) for i in items}),
    }


def empty_tables(url: str) -> None:
    """Every run starts from empty tables (the schema stays, at the newest migration)."""
    with Databases() as databases, databases.of(url).begin() as conn:
        conn.execute(text(f"TRUNCATE {', '.join(TABLES)} RESTART IDENTITY CASCADE"))


def count_rows_at(url: str) -> dict[str, int]:
    with Databases() as databases, databases.of(url).connect() as conn:
        return {table: conn.scalar(text(f"SELECT count(*) FROM {table}")) for table in TABLES}


def share_of(items: list[NewsItem], writers: int, index: int) -> list[NewsItem]:
    """Writer *index*'s items: every *writers*-th one, so all writers move through the items side by side."""
    return items[index::writers]


def writer_process(
    url: str,
    item_args: tuple,
    writers: int,
    index: int,
    batch_size: int,
    start: multiprocessing.synchronize.Barrier,
    results: multiprocessing.Queue,
) -> None:
    """One writer: the StorePipeline over its share, started with the others at the barrier; puts its counts."""
    try:
        items = share_of(make_items(*item_args), writers, index)
        crawler = get_crawler(BenchSpider, store_settings(url, batch_size))
        pipeline = StorePipeline.from_crawler(crawler)

        async def crawl() -> None:
            pipeline.open_spider()  # connected and at the newest migration before the start
            start.wait()
            for item in items:
                pipeline.process_item(item)
            await pipeline.close_spider()

        asyncio.run(crawl())
        stats = crawler.stats.get_stats()
        totals = {
            name: sum(v for k, v in stats.items() if k.endswith(f"/{name}"))
            for name in ("items_stored", "new_news", "new_events")
        }
        results.put((index, len(items), totals, None))
    except BaseException as exc:  # the parent must hear of it, or it would wait for ever
        start.abort()
        results.put((index, 0, {}, f"{type(exc).__name__}: {exc}"))
        raise


def collect(results: multiprocessing.Queue, processes: list[multiprocessing.Process]) -> list[tuple]:
    """One report per writer process, as each ends; exits if one died without a word (killed, out of memory)."""
    reports: list[tuple] = []
    while len(reports) < len(processes):
        try:
            reports.append(results.get(timeout=1))
        except queue.Empty:
            reported = {index for index, *_ in reports}
            dead = [
                index
                for index, process in enumerate(processes)
                if index not in reported and process.exitcode not in (None, 0)
            ]
            if dead:
                sys.exit(f"writer {dead[0]} died (exit code {processes[dead[0]].exitcode}) without a report")
    return reports


def run_writers(url: str, item_args: tuple, expected_items: int, writers: int, batch_size: int) -> float:
    """Run *writers* writer processes from one start; the seconds from the start to the last one's end."""
    context = multiprocessing.get_context("spawn")
    start = context.Barrier(writers + 1)
    results = context.Queue()
    processes = [
        context.Process(target=writer_process, args=(url, item_args, writers, index, batch_size, start, results))
        for index in range(writers)
    ]
    for process in processes:
        process.start()
    with contextlib.suppress(threading.BrokenBarrierError):  # a writer failed before the start: its report says why
        start.wait(timeout=600)
    started = time.perf_counter()
    reports = collect(results, processes)
    elapsed = time.perf_counter() - started
    for process in processes:
        process.join(timeout=60)
    errors = [f"writer {index}: {error}" for index, _, _, error in reports if error]
    if errors:
        sys.exit("; ".join(errors))
    stored = sum(totals["items_stored"] for _, _, totals, _ in reports)
    if stored != expected_items:
        sys.exit(f"{writers} writers stored {stored} of {expected_items} items")
    rows = count_rows_at(url)
    new_news = sum(totals["new_news"] for _, _, totals, _ in reports)
    new_events = sum(totals["new_events"] for _, _, totals, _ in reports)
    if (new_news, new_events) != (rows["news"], rows["topic_news"]):
        sys.exit(
            f"{writers} writers counted {new_news} new news and {new_events} new events; the tables hold"
            f" {rows['news']} and {rows['topic_news']}"
        )
    return elapsed


def main_postgresql(args: argparse.Namespace, batch_size: int) -> None:
    """The PostgreSQL scaling run: items/s of 1, 2, 4… concurrent writer processes (see the module's docstring)."""
    item_args = (args.n, args.dup, args.topics, 1, args.recent)
    items = make_items(*item_args)
    expected = expected_rows(items)
    writers_list = args.writers or [1, 2, 4]
    url = args.db
    print(
        f"{args.n} items, {expected['news']} articles, {args.topics} topics, engines {', '.join(ENGINES)};"
        f" duplicates re-find one of the {args.recent} latest articles; project batch size {batch_size};"
        f" {make_url(url).render_as_string(hide_password=True)}"
    )
    upgrade(url)
    for writers in writers_list:
        empty_tables(url)  # its connection closed: the writers are other processes, none of ours stays open
        seconds = run_writers(url, item_args, len(items), writers, batch_size)
        rows = count_rows_at(url)
        stored = {table: rows[table] for table in expected}
        line = (
            f"writers {writers}: {len(items):,} items in {seconds:.2f} s = {len(items) / seconds:,.0f} items/s"
            f" (rows: {', '.join(f'{table} {count:,}' for table, count in stored.items())})"
        )
        print(line, flush=True)
        if stored != expected:
            sys.exit(f"rows differ from the distinct articles, events and attributions of the items: {expected}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-n", type=int, default=100_000, help="items to store (default 100000)")
    parser.add_argument("--dup", type=float, default=0.2, help="share of duplicate items (default 0.2)")
    parser.add_argument("--topics", type=int, default=5, help="number of topics (default 5)")
    parser.add_argument("--db", help="database URL for the project run (default: a temp SQLite file)")
    parser.add_argument("--orm-items", type=int, default=10_000, help="items timed for (a) (default 10000)")
    parser.add_argument("--batch-size", type=int, help="override TOPICSTREAMS_STORE_BATCH_SIZE")
    parser.add_argument("--repeat", type=int, default=3, help="runs of (1), (b), (b'); the best counts (default 3)")
    parser.add_argument(
        "--writers",
        type=writer_counts,
        help="PostgreSQL --db only: concurrent writer processes to measure (default 1,2,4)",
    )
    parser.add_argument(
        "--recent",
        type=int,
        default=1000,
        help="PostgreSQL --db only: duplicates re-find one of this many latest articles (default 1000)",
    )
    args = parser.parse_args()

    batch_size = args.batch_size or project_settings.TOPICSTREAMS_STORE_BATCH_SIZE
    if is_postgresql(args.db):
        main_postgresql(args, batch_size)
        return
    if args.writers:
        parser.error("--writers needs a PostgreSQL --db (postgresql+psycopg://…)")
    items = make_items(args.n, args.dup, args.topics)
    orm_items = items[: min(args.orm_items, args.n)]
    print(
        f"{args.n} items, {len({i['news_id'] for i in items})} articles, {args.topics} topics,"
        f" engines {', '.join(ENGINES)}; project batch size {batch_size}; best of {args.repeat} runs"
    )

    with tempfile.TemporaryDirectory(prefix="topicstreams-bench-") as tmp:
        folder = Path(tmp)
        if args.db:
            project = run_project(args.db, items, batch_size)
        else:
            project = best_of(
                args.repeat, folder, "project", lambda p: run_project(f"sqlite:///{p}", items, batch_size)
            )
        results = {
            "project": (project, len(items)),
            "orm": (run_orm(f"sqlite:///{folder / 'orm.db'}", orm_items), len(orm_items)),
            "raw": (best_of(args.repeat, folder, "raw", lambda p: run_raw(p, items)), len(items)),
            "raw_batched": (
                best_of(args.repeat, folder, "raw-batched", lambda p: run_raw(p, items, batch_size)),
                len(items),
            ),
        }
        if not args.db:
            project_rows, raw_rows = count_rows(folder / "project-0.db"), count_rows(folder / "raw-0.db")
            if project_rows != raw_rows:
                sys.exit(f"row counts differ: project {project_rows}, raw {raw_rows}")
            print("rows:", ", ".join(f"{table} {count}" for table, count in project_rows.items()))

    rate = {name: count / seconds for name, (seconds, count) in results.items()}
    labels = {
        "project": "(1) project StorePipeline",
        "orm": f"(a) ORM session, commit per item [first {len(orm_items)} items]",
        "raw": "(b) raw sqlite3 executemany, one commit",
        "raw_batched": f"(b') raw sqlite3 executemany, batches of {batch_size}",
    }
    for name, (seconds, count) in results.items():
        print(f"{labels[name]:<62} {rate[name]:>10,.0f} items/s  ({count} items in {seconds:.2f} s)")
    print(f"project / (a)  = {rate['project'] / rate['orm']:.1f}x faster   (target >= 10x)")
    print(f"(b) / project  = {rate['raw'] / rate['project']:.2f}x           (target <= 3x)")
    print(f"(b') / project = {rate['raw_batched'] / rate['project']:.2f}x")


if __name__ == "__main__":
    main()
