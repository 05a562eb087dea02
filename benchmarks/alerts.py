"""Benchmark of the alerting reads a crawl process runs on a clock, with 1,000 topics, beside the same with 10.

    python benchmarks/alerts.py [--topics 1000] [--days 14] [--pace 100] [--baseline-topics 10] [--runs 20]
                                [--budget 20] [--seed 1] [--cache DIR] [--rebuild]

Why: every crawl process reads the database for alerts on a clock, in its alerting thread or the health
extension's outbox thread, while it crawls: coverage once per engine and health window (and its baseline hourly),
the silence of every active topic every 5 minutes (``TOPICSTREAMS_ALERTS_SILENCE_EVERY``), and the digests' events
once a period and once a minute for as-it-happens batches. Their cost grows with the topics and the history; what
a crawl process needs of them (design bounds, not the tests'):

* **coverage**: ``window_counts`` over the topics the engine scraped in the window, cheap beside the window's row
  it is written with: p95 <= 50 ms; ``baseline_counts`` (hourly) the same;
* **silence**: the whole check (the reads and judging every topic; ``AlertingWork.check_silence``) far under its
  300 s period and short enough that the alerting thread is not busy with it (the digests and the as-it-happens
  batches wait behind it in that one thread): p95 <= 2 s;
* **digests**: a period's events (hour or day, with and without topics and search words) and an as-it-happens batch
  p95 <= 1 s: a digest's read runs once a period (an as-it-happens one once a minute at most) in the alerting
  thread, where only the next batch waits behind it; a second is nothing to a message people read hours later.

The script prints whether each bound holds and exits 0 whatever the figures.

The data, per side (--topics, then --baseline-topics), as a crawl of those topics leaves it after --days days,
ending at a fixed moment (``END``, 2026-11-30 18:00 UTC: the data do not depend on the day the benchmark runs,
and every read is made at that moment, the clock of the code measured being injected):

* ``topics``: every topic active; names from the feed benchmark's word lists;
* ``topic_news`` (feed events): each topic brings --pace (100) new events a day on average (its own pace drawn in
  0.3–1.7 × that), in arrivals at random moments (a Poisson process: a scrape of the topic that found something
  new), 1–4 events an arrival (1.6 on average) stored with one time, as a store batch writes them; 3 % of the events
  an article already found for another topic shortly before. 1,000 topics × 14 days: about 1.4 million events;
* ``topic_news_engines``: each event found by 1–4 engines (2.15 on average): the first, drawn by the engines'
  usual shares, at the event's time, the others a little later (a few minutes on average, at most 45, when their
  own scrape of the topic came round; none after ``END``);
* ``news``: the articles, with headlines, sentence-or-two snippets and publishers from the feed benchmark's word
  lists (the word ``heatwave`` in 1 % of the titles, for the digests' search), ``published_at`` before
  ``first_seen_at`` (3 % unknown), indexed for search by SQLite's triggers as the store's inserts are;
* ``health_windows``: one row per engine (``node-01``) and 10-minute window with its coverage counts, the
  history ``baseline_counts`` adds up;
* ``engine_status``: the four engines running on ``node-01``, fresh at ``END`` (the silence needs engines running).

The database is built fast: ``topicstreams.storage.upgrade(url)`` makes the real schema (indexes, triggers), then
the rows go in by ``executemany``, a day of every table per transaction in time order, ``PRAGMA synchronous = OFF``
for the build only. The file is cached as ``.topicstreams/bench/alerts-t<topics>-d<days>-p<pace>.db`` (--cache to
put it elsewhere; --rebuild to build it again) and reused while it is a complete build of this generator with the
schema ``upgrade`` makes now. 1,000 topics × 14 days take about 4 minutes to build (2.3 GiB), 10 topics seconds;
the measuring about 5 minutes (the silence's reads take seconds each).

The reads are the project's own functions, in this process, on the project's engine for the URL
(``topicstreams.storage.Databases``, as a crawl process reads), each after one untimed call, in rounds (one call
of each read a round) of --runs rounds or until the rounds have taken --budget seconds a read. Their arguments
vary from call to call (drawn from a seeded random):

  coverage window_counts, scraped topics   a random engine's random 10-minute window (``grace`` 60 s, one scrape
                                           interval) over the topics it scraped in it: 300 of them (what an engine
                                           at its 2 s floor asks for in a window; every topic when fewer);
  coverage window_counts, every topic      the same over every topic: more than an engine at its floor can scrape
                                           in a window when the topics are many (shown, not held to the bound);
  coverage baseline_counts                 a random engine's stored windows of the last 14 days (hourly);
  silence new_event_times                  every active topic's new-event moments since ``END`` − 14 days
                                           (``health.baseline_days``);
  silence judge every topic                ``judge_silence`` of every topic on a read's moments (the read itself
                                           not timed: the judging alone);
  silence check                            ``AlertingWork.check_silence(END)``: the running engines, the read, the
                                           topics' states, the judging, the transitions (the untimed first call
                                           reads every topic's moments whole — the ``new_event_times`` line is that
                                           read's cost — and moves the topics silent at ``END``; the timed ones are
                                           the checks after it, which read only what was stored since, here the 5
                                           minutes of overlap; nothing is delivered: no URL and no event chosen);
                                           the ``alert_states`` rows it wrote are deleted after;
  digest hour / day …                      ``period_events`` of a random hour (or day, 08:00 to 08:00) of the last 7
                                           days, max 50 items: every topic; 3 topics (drawn anew each call); the
                                           search word ``heatwave``;
  digest week, q=heatwave                  the latest week with the search word: the costliest period (shown, not
                                           held to the bound: once a week);
  digest as-it-happens batch …             ``stored_events`` of the events first seen in a random minute (what a
                                           process stored in a batch), every topic, and the search word.

Printed: each side's database (path, size, rows per table), then one table: a row per read, the number of calls,
p50 and p95 in ms for each side, the mean size of the result on the big side (events of a period, moments of the
silence read, expected articles of a coverage window, silent topics, alerts sent), and the bound it is held to; then
the memory the silence read holds (tracemalloc's peak while it runs, one call apart from the timed ones) and a line
per bound. The build's and the measuring's times are printed, the latter with the machine's load average (the
figures are wall-clock times: other work on the machine weighs on them).
"""

from __future__ import annotations

import argparse
import gc
import heapq
import math
import os
import random
import signal
import sqlite3
import sys
import time
import tracemalloc
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
if __package__ in (None, ""):  # run as a script: make the project (and benchmarks.feed) importable from a checkout
    sys.path.insert(0, str(REPO))

from benchmarks.feed import (
    FIRST_ENGINE_WEIGHTS,
    SEARCH_WORD,
    SECTIONS,
    Headlines,
    finish_partial,
    in_rounds,
    p50,
    p95,
    slug,
    source_names,
    start_partial,
    topic_names,
)
from benchmarks.monitor import current_schema, insert_sql, schema_of, text_of
from topicstreams import ENGINES
from topicstreams import settings as project_settings
from topicstreams.alerts.delivery import Notifier
from topicstreams.alerts.topic_silence import judge_silence
from topicstreams.config.loading import merge
from topicstreams.config.packaged import load_defaults
from topicstreams.config.sections import AlertingSection, build_section
from topicstreams.engines.news_urls import news_id
from topicstreams.extensions.digest_watch import AlertingWork
from topicstreams.storage import Databases
from topicstreams.storage.coverage_counts import baseline_counts, window_counts
from topicstreams.storage.digest_events import DigestFilter, period_events, stored_events
from topicstreams.storage.event_times import new_event_times
from topicstreams.storage.migrate import head_revisions

DATA_VERSION = 1
"""The generator's version: a cached database built by another version is built again (SQLite user_version)."""

END = datetime(2026, 11, 30, 18, 0, tzinfo=UTC)
"""The data's end, and the moment every read is made at."""
NODE = "node-01"
WINDOW = 600
"""``health.window``: seconds of a stored health window."""
GRACE = 60.0
"""``scraper.scrape_interval``: the coverage's grace."""
BASELINE_DAYS = 14.0
"""``health.baseline_days``: the silence's and the coverage baseline's period."""
TOPICS_PER_WINDOW = 300
"""Topics an engine scrapes in a window at its 2 s floor (600 s / 2 s)."""
BATCH_WEIGHTS = {1: 0.6, 2: 0.25, 3: 0.1, 4: 0.05}
"""New events an arrival brings: 1.6 on average."""
MEAN_BATCH = sum(size * weight for size, weight in BATCH_WEIGHTS.items())
EXTRA_ENGINE_WEIGHTS = {0: 0.35, 1: 0.3, 2: 0.2, 3: 0.15}
"""Engines finding an event besides the first: 1.15 on average."""
LATER_MEAN, LATER_MAX = 360.0, 2700.0
"""Seconds after the first engine another one finds the event: exponential with this mean, at most the max."""
SHARED_SHARE = 0.03
SEARCH_SHARE = 0.01
DIGEST_TOPICS = 3
DIGEST_HOUR = 8
"""A daily digest's ``at`` (08:00 UTC, the default)."""
RECENT_DAYS = 7
"""The digests' periods are drawn from the last days."""
MAX_ITEMS = 50

SILENCE_READ = "silence new_event_times"
EVERY_TOPIC = "coverage window_counts, every topic (shown)"
"""The coverage of a window over every topic: more than an engine at its pacing floor can scrape in a window when
the topics are many (300 at 2 s, 150 at brave's 4 s). Shown beside the bound, not held to it."""
WEEK = f"digest week, q={SEARCH_WORD} (shown)"
"""A weekly digest with search words: its read grows with the period's events; once a week. Shown, not held."""

TARGET_COVERAGE_MS = 50.0
TARGET_SILENCE_MS = 2000.0
TARGET_DIGEST_MS = 1000.0


# ---- the data -------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Params:
    topics: int
    days: int
    pace: int
    seed: int = 1

    @property
    def key(self) -> str:
        seed = "" if self.seed == 1 else f"-s{self.seed}"
        return f"alerts-t{self.topics}-d{self.days}-p{self.pace}{seed}"

    @property
    def start(self) -> float:
        return END.timestamp() - self.days * 86400


@dataclass
class Day:
    """The rows of one build transaction, in time order (times as SQLite's text)."""

    news: list[tuple] = field(default_factory=list)
    """(id, url, title, source, snippet, published_at, first_seen_at)"""
    events: list[tuple] = field(default_factory=list)
    """(topic_id, news_id, first_seen_at)"""
    attributions: list[tuple] = field(default_factory=list)
    """(topic_id, news_id, engine, first_seen_at)"""
    windows: list[tuple] = field(default_factory=list)


def names_of(params: Params) -> list[str]:
    """The topics' names; topic id = index + 1."""
    names = topic_names(params.topics, random.Random(params.seed))
    if len(names) < params.topics:
        raise SystemExit(f"at most {len(names)} topics")
    return names


def cumulative(weights: dict) -> tuple[list, list[float]]:
    total, sums = 0.0, []
    for weight in weights.values():
        total += weight
        sums.append(total)
    return list(weights), sums


WINDOW_COLUMNS = (
    "engine",
    "node",
    "window_start",
    "window_end",
    "requests",
    "ok",
    "items",
    "valid_items",
    "result_pages",
    "yielding_pages",
    "score",
    "coverage_expected",
    "coverage_found",
)


def window_rows(params: Params, first: float, last: float, rnd: random.Random) -> list[tuple]:
    """The ``health_windows`` rows of the windows ending in (first, last]: requests at the engine's pace, coverage
    counts of what the others found for the topics it scraped."""
    share = min(1.0, TOPICS_PER_WINDOW / params.topics)
    expected_mean = params.topics * params.pace * WINDOW / 86400 * share * 0.6
    rows = []
    moment = (int(first) // WINDOW + 1) * WINDOW
    while moment <= last:
        began, ended = text_of(moment - WINDOW), text_of(moment)
        for engine in ENGINES:
            requests = rnd.randint(240, 300)
            ok = requests - rnd.randint(0, 4)
            expected = max(0, round(rnd.gauss(expected_mean, max(1.0, math.sqrt(expected_mean)))))
            found = round(expected * rnd.uniform(0.7, 0.85))
            rows.append(
                (
                    engine,
                    NODE,
                    began,
                    ended,
                    requests,
                    ok,
                    ok * 9,
                    ok * 9 - rnd.randint(0, 3),
                    ok,
                    ok,
                    rnd.randint(88, 99),
                    expected,
                    found,
                )
            )
        moment += WINDOW
    return rows


def generate(params: Params) -> Iterator[Day]:
    """The rows, a UTC day (or what of it the data span) at a time, oldest first."""
    rnd = random.Random(params.seed)
    words = Headlines(rnd)
    names = names_of(params)
    sources = source_names(200, rnd)
    sizes, size_sums = cumulative(BATCH_WEIGHTS)
    firsts, first_sums = cumulative(FIRST_ENGINE_WEIGHTS)
    extras, extra_sums = cumulative(EXTRA_ENGINE_WEIGHTS)
    start, end = params.start, END.timestamp()
    # each topic's arrivals: a Poisson process at its own pace; the next one of every topic in a heap
    rates = [params.pace * rnd.uniform(0.3, 1.7) / MEAN_BATCH / 86400 for _ in names]
    upcoming = [(start + rnd.expovariate(rate), index) for index, rate in enumerate(rates)]
    heapq.heapify(upcoming)
    recent: deque[str] = deque()  # recent articles: those found again for another topic are among them
    topics_of: dict[str, set[int]] = {}
    serial = 0
    first = start
    while first < end:
        last = min(end, (first // 86400 + 1) * 86400)
        day = Day(windows=window_rows(params, first, last, rnd))
        while upcoming[0][0] < last:
            moment, index = heapq.heappop(upcoming)
            heapq.heappush(upcoming, (moment + rnd.expovariate(rates[index]), index))
            topic_id, topic = index + 1, names[index]
            when = text_of(moment)
            for _ in range(rnd.choices(sizes, cum_weights=size_sums)[0]):
                article = None
                if recent and rnd.random() < SHARED_SHARE:
                    candidate = rnd.choice(recent)
                    if topic_id not in topics_of[candidate]:
                        article = candidate
                if article is None:
                    serial += 1
                    title = words.title(topic, rnd.random() < SEARCH_SHARE)
                    source, domain = rnd.choice(sources)
                    url = f"https://www.{domain}/{rnd.choice(SECTIONS)}/{slug(title)}-{serial}"
                    article = news_id(url)
                    published = (
                        None if rnd.random() < 0.03 else text_of(moment - min(rnd.lognormvariate(8.5, 1.2), 7 * 86400))
                    )
                    day.news.append((article, url, title, source, words.snippet(topic), published, when))
                    topics_of[article] = set()
                    recent.append(article)
                    if len(recent) > 2000:
                        del topics_of[recent.popleft()]
                topics_of[article].add(topic_id)
                day.events.append((topic_id, article, when))
                engine = rnd.choices(firsts, cum_weights=first_sums)[0]
                day.attributions.append((topic_id, article, engine, when))
                more = rnd.choices(extras, cum_weights=extra_sums)[0]
                for other in rnd.sample([each for each in ENGINES if each != engine], more):
                    seen = moment + min(LATER_MAX, 5 + rnd.expovariate(1 / LATER_MEAN))
                    if seen < end:
                        day.attributions.append((topic_id, article, other, text_of(seen)))
        yield day
        first = last


def status_rows() -> list[tuple]:
    """``engine_status``: every engine running on NODE, written just before END."""
    updated = text_of(END.timestamp() - 5)
    return [(engine, NODE, 95, "ok", "running", updated) for engine in ENGINES]


def build(path: Path, params: Params) -> dict[str, int]:
    """Build the database of *params* at *path* (through a temporary file, renamed when complete); the rows of each
    table."""
    partial = start_partial(path)
    conn = sqlite3.connect(partial, isolation_level=None)
    conn.execute("PRAGMA synchronous = OFF")
    conn.execute("PRAGMA cache_size = -1000000")  # 1 GB for the build: the indexes stay in memory
    created = text_of(params.start - 86400)
    conn.execute("BEGIN")
    conn.executemany(
        "INSERT INTO topics (id, name, active, created_at) VALUES (?, ?, 1, ?)",
        [(index + 1, name, created) for index, name in enumerate(names_of(params))],
    )
    conn.executemany(
        insert_sql("engine_status", ("engine", "node", "score", "band", "state", "updated_at")), status_rows()
    )
    conn.execute("COMMIT")
    days = math.ceil(params.days)
    for number, day in enumerate(generate(params), start=1):
        conn.execute("BEGIN")
        conn.executemany(
            insert_sql("news", ("id", "url", "title", "source", "snippet", "published_at", "first_seen_at")), day.news
        )  # the triggers index each for search
        conn.executemany(insert_sql("topic_news", ("topic_id", "news_id", "first_seen_at")), day.events)
        conn.executemany(
            insert_sql("topic_news_engines", ("topic_id", "news_id", "engine", "first_seen_at")), day.attributions
        )
        conn.executemany(insert_sql("health_windows", WINDOW_COLUMNS), day.windows)
        conn.execute("COMMIT")
        if sys.stderr.isatty():
            print(f"\r  building: day {number} of {days}", end="", file=sys.stderr, flush=True)
    if sys.stderr.isatty():
        print(file=sys.stderr, flush=True)
    finish_partial(conn, partial, path, DATA_VERSION)
    return row_counts(path)


def usable(path: Path) -> bool:
    """Whether the cached file at *path* is a complete build of this generator with the schema ``upgrade`` makes
    now."""
    if not path.exists():
        return False
    try:
        with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as conn:
            version = conn.execute("PRAGMA user_version").fetchone()[0]
            revisions = {row[0] for row in conn.execute("SELECT version_num FROM alembic_version")}
            schema = schema_of(conn)
        conn.close()
    except sqlite3.Error:
        return False
    return version == DATA_VERSION and revisions == head_revisions() and schema == current_schema()


def prepare(params: Params, folder: Path, rebuild: bool, label: str) -> Path:
    """The database file of *params*: built, or reused."""
    path = folder / f"{params.key}.db"
    if not rebuild and usable(path):
        print(f"database ({label}): {path} (cached, reused; --rebuild to build it again)")
        return path
    print(f"database ({label}): {path}: building (SQLite, executemany, a day a transaction)", flush=True)
    started = time.perf_counter()
    build(path, params)
    print(f"built in {time.perf_counter() - started:.0f} s")
    return path


TABLES = ("topics", "news", "topic_news", "topic_news_engines", "health_windows")


def row_counts(path: Path) -> dict[str, int]:
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as conn:
        counts = {table: conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0] for table in TABLES}
    conn.close()
    return counts


def size_mib(path: Path) -> float:
    return sum(each.stat().st_size for each in (path, Path(f"{path}-wal")) if each.exists()) / 2**20


# ---- the reads ------------------------------------------------------------------------------------------------


@dataclass
class Read:
    """One read timed on one side: what a call does (its result's size), what the calls took."""

    name: str
    call: Callable[[], int | tuple[int, float]]
    """A call: its result's size, or the size and the ms of the part of it that is timed."""
    target_ms: float | None
    ms: list[float] = field(default_factory=list)
    sizes: list[int] = field(default_factory=list)


def minute_keys(path: Path, rnd: random.Random, days: int) -> list[list[tuple[int, str]]]:
    """Feed events first seen in random minutes of the last days (an as-it-happens batch each), 50 batches."""
    span = min(days, RECENT_DAYS) * 86400
    batches = []
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as conn:
        for _ in range(50):
            start = END.timestamp() - rnd.uniform(60, span)
            batches.append(
                [
                    (topic, news)
                    for topic, news in conn.execute(
                        "SELECT topic_id, news_id FROM topic_news WHERE first_seen_at > ? AND first_seen_at <= ?",
                        (text_of(start), text_of(start + 60)),
                    )
                ]
            )
    conn.close()
    return batches


def reads(
    databases: Databases, path: Path, params: Params, names: list[str], seed: int
) -> tuple[list[Read], AlertingWork]:
    """The reads of one side on a handle of ``databases``, each drawing its arguments from its own seeded random."""
    url = f"sqlite:///{path}"
    db = databases.of(url)
    end = END.timestamp()
    days = params.days
    scraped = min(len(names), TOPICS_PER_WINDOW)

    def draw(name: str) -> random.Random:
        return random.Random(f"{seed}/{name}")

    def coverage(topics_of: Callable[[random.Random], list[str]], rnd: random.Random) -> Callable[[], int]:
        first = params.start + min(86400, params.days * 86400 / 2)  # a window with history before it

        def call() -> int:
            start = (int(rnd.uniform(first, end - WINDOW)) // WINDOW) * WINDOW
            engine = rnd.choice(ENGINES)
            expected, _found = window_counts(
                db,
                engine,
                topics_of(rnd),
                datetime.fromtimestamp(start, UTC),
                datetime.fromtimestamp(start + WINDOW, UTC),
                GRACE,
            )
            return expected

        return call

    def baseline(rnd: random.Random) -> Callable[[], int]:
        def call() -> int:
            expected, _found = baseline_counts(db, rnd.choice(ENGINES), NODE, BASELINE_DAYS, END)
            return expected

        return call

    since = END - timedelta(days=BASELINE_DAYS)

    def silence_read() -> int:
        return sum(len(moments) for moments in new_event_times(db, since).values())

    def judge() -> tuple[int, float]:
        # on a read of its own, not timed (nothing of it kept between calls: the big side's ~900,000 moments kept
        # alive would make the garbage collector's passes, and so every other read, slower than in a crawl process)
        times = new_event_times(db, since)
        started = time.perf_counter()
        silent = 0
        for topic, moments in times.items():
            verdict = judge_silence(
                topic,
                moments,
                END,
                baseline_days=BASELINE_DAYS,
                factor=6,
                min_events=10,
                running=True,
                running_since=END - timedelta(days=1),
            )
            silent += verdict.silent
        return silent, (time.perf_counter() - started) * 1000

    # nothing delivered, nothing recorded: the check's own work alone
    alerting = build_section(AlertingSection, merge(load_defaults()["alerting"], {"events": []}), "alerting")
    work = AlertingWork(
        url,
        alerting,
        NODE,
        baseline_days=BASELINE_DAYS,
        silence_every=project_settings.TOPICSTREAMS_ALERTS_SILENCE_EVERY,
        notifier=Notifier(url, alerting.delivery(), NODE, record=False, database=databases.of),
        clock=lambda: end,
    )

    def check() -> int:
        work.running_since = END - timedelta(days=1)  # the process has seen the engines running for a day
        return work.check_silence(END)

    def digest(period: str, wanted: Callable[[random.Random], DigestFilter], rnd: random.Random) -> Callable[[], int]:
        recent = min(days, RECENT_DAYS)

        def call() -> int:
            if period == "hour":
                until = int(end - rnd.uniform(0, recent * 86400 - 3600)) // 3600 * 3600
                start = until - 3600
            else:
                last_at = (int(end) // 86400) * 86400 + DIGEST_HOUR * 3600
                last_at -= 86400 if last_at > end else 0
                back = rnd.randrange(recent - 1) if period == "day" and recent > 1 else 0
                until = last_at - back * 86400
                start = until - (86400 if period == "day" else 7 * 86400)
            page = period_events(
                db, wanted(rnd), datetime.fromtimestamp(start, UTC), datetime.fromtimestamp(until, UTC), MAX_ITEMS
            )
            return page.total

        return call

    def batch(wanted: DigestFilter, rnd: random.Random) -> Callable[[], int]:
        batches = minute_keys(path, rnd, days)

        def call() -> int:
            return stored_events(db, wanted, rnd.choice(batches), MAX_ITEMS).total

        return call

    every = DigestFilter()
    searched = DigestFilter(query=SEARCH_WORD)

    def some_topics(rnd: random.Random) -> DigestFilter:
        return DigestFilter(topics=tuple(rnd.sample(names, min(DIGEST_TOPICS, len(names)))))

    made = [
        Read(
            "coverage window_counts, scraped topics",
            coverage(lambda rnd: rnd.sample(names, scraped), draw("scraped")),
            TARGET_COVERAGE_MS,
        ),
        Read(EVERY_TOPIC, coverage(lambda rnd: names, draw("every")), None),
        Read("coverage baseline_counts", baseline(draw("baseline")), TARGET_COVERAGE_MS),
        Read(SILENCE_READ, silence_read, None),
        Read("silence judge every topic", judge, None),
        Read("silence check", check, TARGET_SILENCE_MS),
        Read("digest hour, every topic", digest("hour", lambda rnd: every, draw("h")), TARGET_DIGEST_MS),
        Read(f"digest hour, {DIGEST_TOPICS} topics", digest("hour", some_topics, draw("ht")), TARGET_DIGEST_MS),
        Read(f"digest hour, q={SEARCH_WORD}", digest("hour", lambda rnd: searched, draw("hq")), TARGET_DIGEST_MS),
        Read("digest day, every topic", digest("day", lambda rnd: every, draw("d")), TARGET_DIGEST_MS),
        Read(f"digest day, {DIGEST_TOPICS} topics", digest("day", some_topics, draw("dt")), TARGET_DIGEST_MS),
        Read(f"digest day, q={SEARCH_WORD}", digest("day", lambda rnd: searched, draw("dq")), TARGET_DIGEST_MS),
        Read(WEEK, digest("week", lambda rnd: searched, draw("wq")), None),
        Read("digest as-it-happens batch", batch(every, draw("b")), TARGET_DIGEST_MS),
        Read(f"digest as-it-happens batch, q={SEARCH_WORD}", batch(searched, draw("bq")), TARGET_DIGEST_MS),
    ]
    return made, work


@dataclass
class Side:
    label: str
    params: Params
    path: Path
    reads: list[Read] = field(default_factory=list)
    silence_peak_mib: float = 0.0
    kept_mib: float = 0.0
    silence_moments: int = 0
    silent_topics: int = 0


def measure(side: Side, runs: int, budget: float) -> None:
    """Time every read of *side*: one untimed call each, then in rounds."""
    names = names_of(side.params)
    databases = Databases()
    made, work = reads(databases, side.path, side.params, names, side.params.seed)
    side.reads = made
    try:
        for read in made:  # warm-up: the process has made each read before (and the first check moved the states)
            read.call()
        tracemalloc.start()
        moments = next(read for read in made if read.name == SILENCE_READ).call()
        side.silence_moments = moments[0] if isinstance(moments, tuple) else moments
        side.silence_peak_mib = tracemalloc.get_traced_memory()[1] / 2**20
        tracemalloc.stop()
        side.kept_mib = (
            sum(
                array.itemsize * len(array)
                for kept in (work.moments.times, work.moments.counts)
                for array in kept.values()
            )
            / 2**20
        )

        def step(read: Read, _index: int) -> None:
            gc.collect()  # what the read before left (the whole silence read: 875k objects) is not this one's cost
            started = time.perf_counter()
            result = read.call()
            took = (time.perf_counter() - started) * 1000
            size, took = result if isinstance(result, tuple) else (result, took)
            read.ms.append(took)
            read.sizes.append(size)

        in_rounds(made, lambda _read: runs, budget, step)
    finally:
        work.notifier.close()
        work.runtime.close()
        databases.dispose()
        side.silent_topics = forget_silence(side.path)


def forget_silence(path: Path) -> int:
    """Delete the silence states the checks wrote (the cached file stays as built); how many topics were silent."""
    with sqlite3.connect(path, isolation_level=None) as conn:
        (silent,) = conn.execute(
            "SELECT count(*) FROM alert_states WHERE key LIKE 'silence:%' AND state = 'silent'"
        ).fetchone()
        conn.execute("DELETE FROM alert_states WHERE key LIKE 'silence:%'")
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    return silent


# ---- the run --------------------------------------------------------------------------------------------------


def bound(read: Read) -> str:
    return "-" if read.target_ms is None else f"<= {read.target_ms:,.0f}"


def verdict(read: Read) -> str:
    return "-" if read.target_ms is None else "met" if p95(read.ms) <= read.target_ms else "NOT MET"


def mean(values: list[int]) -> float:
    return sum(values) / len(values) if values else 0.0


def report(sides: list[Side], runs: int, budget: float) -> None:
    print()
    print(f"{'table':<20}" + "".join(f"{side.label:>16}" for side in sides))
    counts = [row_counts(side.path) for side in sides]
    for table in TABLES:
        print(f"{table:<20}" + "".join(f"{each[table]:>16,}" for each in counts))
    print(f"{'size MiB':<20}" + "".join(f"{size_mib(side.path):>16,.0f}" for side in sides))
    big, small = sides[0], sides[-1]
    print()
    print(
        f"SQLite, ms, in this process on the project's engine (Databases), at {END:%Y-%m-%d %H:%M} UTC; "
        f"size: the mean result with {big.label} (events, moments, expected articles, silent topics, alerts)"
    )
    print(
        f"{'read':<42} {'n':>4} {big.label + ' p50':>16} {big.label + ' p95':>16} {small.label + ' p50':>14} "
        f"{small.label + ' p95':>14} {'size':>9}  {'bound p95':>9}  verdict"
    )
    for mine, theirs in zip(big.reads, small.reads, strict=True):
        print(
            f"{mine.name:<42} {len(mine.ms):>4} {p50(mine.ms):>16.1f} {p95(mine.ms):>16.1f} {p50(theirs.ms):>14.1f} "
            f"{p95(theirs.ms):>14.1f} {mean(mine.sizes):>9,.0f}  {bound(mine):>9}  {verdict(mine)}"
        )
    if any(len(read.ms) < runs for side in sides for read in side.reads):
        print(
            f"(fewer than {runs} calls: the rounds, one call of each read a round, took over --budget {budget:g} s "
            f"a read)"
        )
    print()
    for side in sides:
        print(
            f"silence read memory ({side.label}): tracemalloc peak {side.silence_peak_mib:,.1f} MiB for "
            f"{side.silence_moments:,} moments read whole; kept between checks: {side.kept_mib:,.1f} MiB; "
            f"topics silent at the end: {side.silent_topics}"
        )
    print()
    for title, names in (("coverage", "coverage"), ("silence", "silence check"), ("digests", "digest")):
        held = [read for read in big.reads if read.name.startswith(names) and read.target_ms is not None]
        worst = max(held, key=lambda read: p95(read.ms) / read.target_ms)  # type: ignore[operator]
        ok = all(p95(read.ms) <= read.target_ms for read in held)  # type: ignore[operator]
        print(
            f"bound: {title} p95 <= {worst.target_ms:,.0f} ms with {big.label}: {'PASS' if ok else 'FAIL'} "
            f"(worst: {worst.name}, {p95(worst.ms):.1f} ms)"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--topics", type=int, default=1000, help="active topics of the big side (default 1000)")
    parser.add_argument("--days", type=int, default=14, help="days of feed events and windows (default 14)")
    parser.add_argument("--pace", type=int, default=100, help="new events a topic brings a day (default 100)")
    parser.add_argument("--baseline-topics", type=int, default=10, help="topics of the small side (default 10)")
    parser.add_argument("--seed", type=int, default=1, help="the data's random seed (default 1)")
    parser.add_argument("--runs", type=int, default=20, help="calls timed per read and side (default 20)")
    parser.add_argument(
        "--budget",
        type=float,
        default=20.0,
        help="seconds at most for each read's series (fewer calls when slower; default 20)",
    )
    parser.add_argument("--cache", help="folder of the cached SQLite files (default .topicstreams/bench)")
    parser.add_argument("--rebuild", action="store_true", help="build the databases even if cached ones fit")
    args = parser.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit("terminated"))
    if min(args.topics, args.days, args.pace, args.baseline_topics, args.runs) < 1:
        parser.error("--topics, --days, --pace, --baseline-topics and --runs take positive numbers")

    folder = Path(args.cache) if args.cache else REPO / ".topicstreams" / "bench"
    sides = []
    started = time.perf_counter()
    for topics in (args.topics, args.baseline_topics):
        label = f"{topics} topic{'s' if topics > 1 else ''}"
        params = Params(topics, args.days, args.pace, args.seed)
        sides.append(Side(label, params, prepare(params, folder, args.rebuild, label)))
    print(f"databases ready in {time.perf_counter() - started:.0f} s")
    started = time.perf_counter()
    for side in sides:
        print(f"measuring {side.label} ...", flush=True)
        measure(side, args.runs, args.budget)
    print(
        f"measured in {time.perf_counter() - started:.0f} s (load average over the last 5 minutes: "
        f"{os.getloadavg()[1]:.1f} on {os.cpu_count()} CPUs)"
    )
    report(sides, args.runs, args.budget)


if __name__ == "__main__":
    main()
