"""Benchmark of the watching side: ``/monitor``, ``/api/health``, ``/metrics``, ``/logs`` and ``/api/logs`` with
20 nodes × 4 engines, beside the same data with 1 node.

    python benchmarks/monitor.py [--nodes 20] [--days 30] [--cycle-interval 60] [--logs 1000000] [--news 100000]
                                 [--requests 100] [--budget 20] [--page 20] [--cache DIR] [--rebuild]

Why: the monitor, the health API and the metrics read every node's rows at each request (Prometheus scrapes
``/metrics`` every 15 s, the monitor reloads itself every 15 s), and the logs page reads a table that a fleet fills
by the million. Their cost must not grow with the fleet or the history: the target is p95 ≤ 150 ms on SQLite for
every path measured here, with 20 nodes, shown beside 1 node so that what the nodes cost is plain.

The data, per side (--nodes, then 1), as a fleet that has crawled for a while leaves it, ending now:

* ``engine_status``: one row per node (``node-01`` …) × engine (google, bing, yahoo, brave), fresh (written just
  before measuring, and again every 10 s while measuring, as the crawls' heartbeat does), in a mix of states:
  brave cooling on one node in four (``node-01`` among them), google and bing cooling at once on ``node-07`` (its
  exit IP suspected saturated), yahoo paused on ``node-13`` and google on ``node-19``, bing degraded on one node in
  five and yahoo on ``node-01``, a parser in trouble on ``node-09``, a canary mismatch on ``node-03``; reasons,
  p50/p95, the window's counts, cost drift and the last canary check on every row;
* ``engine_totals``: one row per node × engine, the sums of its cycle rows;
* ``health_windows``: --days days of 10-minute windows per node × engine (345,600 rows for 20 nodes × 30 days),
  scores, counts and latencies; a degraded or paused engine's last 6 hours are bad;
* ``scraper_cycles``: --days days of one row per --cycle-interval seconds per node × engine (the shipped
  ``scraper.scrape_interval`` 60 and ``scraper.retention_days`` 30: 3,456,000 rows for 20 nodes);
* ``health_daily``: 365 days per node × engine;
* ``scraper_logs``: --logs rows (the same number on both sides) over --days days, spread over the nodes, 8 % of them
  without an engine; 75 % WARNING (blocks, cooldowns, retries, degraded health, saturation…), 15 % the per-window
  INFO line (``[google] swept 50 topics, 312 entries, 47 new events``), 9 % ERROR, 1 % CRITICAL;
* ``news``: --news articles (the same on both sides; ``/metrics`` counts them), headlines from the feed
  benchmark's word lists, indexed for search by SQLite's triggers as the store's inserts are.

The database is built fast: ``topicstreams.storage.upgrade(url)`` makes the real schema (indexes, triggers), then
the rows go in by ``executemany``, a day of every table per transaction in time order (ids follow time, as a live
fleet's do), ``PRAGMA synchronous = OFF`` for the build only. The file is cached as
``.topicstreams/bench/monitor-n<nodes>-d<days>-c<interval>-l<logs>-w<news>.db`` (--cache to put it elsewhere;
--rebuild to build it again) and reused while its schema is the one ``upgrade`` makes now and its data are younger
than --days. A reused file is first brought up to now: the windows, cycles, days and logs since it was last used
are added as the crawls would have written them, and as many of the oldest dropped, so the row counts stay those
asked for.
20 nodes × 30 days take about 1.5 minutes to build (1.3 GiB), 1 node about 30 s (0.5 GiB).

The app is the real one (``create_app(WebSettings(url))`` served by uvicorn in a subprocess on a free loopback port,
as ``scrapy serve`` runs it; :class:`benchmarks.feed.Served`), asked with httpx from this process, one request at a
time. Paths (--requests each, after 5 untimed ones of each; in rounds, one request of each path a round, for at
most --budget seconds a path):

  GET /monitor                         the whole page (every node's rows, every engine's five charts);
  GET /api/health                      the health report of every node, with the route verdicts;
  GET /metrics                         the Prometheus exposition;
  GET /logs                            the first page of the logs page;
  GET /logs?engine=google&level=ERROR  the same, filtered by an engine (its index) and a minimum level (checked);
  GET /api/logs                        the first page of the logs API;
  GET /api/logs page N by cursor       page --page (20), its cursor reached by following ``next`` from page 1.

Printed: each side's database (path, size, rows per table), then one table: a row per path, p50 and p95 in ms for
each side, the 20-node answer's size, and whether the target (20 nodes, p95 ≤ 150 ms) is met. The script exits 0
whatever the figures; non-zero when the app fails (a status other than 200, or no answer).
"""

from __future__ import annotations

import argparse
import json
import math
import random
import signal
import sqlite3
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
if __package__ in (None, ""):  # run as a script: make the project (and benchmarks.feed) importable from a checkout
    sys.path.insert(0, str(REPO))

import httpx

from benchmarks.feed import (
    Headlines,
    Served,
    finish_partial,
    in_rounds,
    p50,
    p95,
    slug,
    source_names,
    start_partial,
    topic_names,
)
from topicstreams import ENGINES
from topicstreams.engines.news_urls import news_id
from topicstreams.storage import upgrade
from topicstreams.storage.migrate import head_revisions

DATA_VERSION = 1
"""The generator's version: a cached database built by another version is built again (SQLite user_version)."""

WINDOW = 600
"""``health.window``: the length of a stored health window, in seconds."""
HISTORY_DAYS = 365
"""Days of ``health_daily`` per node and engine (the monitor's 12 months)."""
BAD_HOURS = 6
"""How long a degraded or paused engine has been doing badly."""
TARGET_P95_MS = 150.0

COLD = "GET /monitor, nothing kept (shown)"
"""The monitor's page from an app that keeps no closed hour or day (``chart_keep_seconds`` 0): what the first
request costs after they expire. Shown beside the target, not held to it."""
TARGET_NODES = 20
HEARTBEAT_SECONDS = 10.0
"""How often the status rows are written again while measuring (a crawl writes its row at least every 15 s)."""
LOG_LEVELS = (("WARNING", 0.75), ("INFO", 0.15), ("ERROR", 0.09), ("CRITICAL", 0.01))
NO_ENGINE_SHARE = 0.08
FLOOR_SECONDS = {"google": 2.0, "bing": 2.0, "yahoo": 2.0, "brave": 4.0}
"""The shipped pacing floors: what a minute of crawling can ask of each engine."""
LATENCY_MS = {"google": 1400.0, "bing": 1100.0, "yahoo": 1600.0, "brave": 900.0}
"""Each engine's typical median page time."""
PATHS: tuple[tuple[str, str, dict[str, str]], ...] = (
    ("GET /monitor", "/monitor", {}),
    ("GET /api/health", "/api/health", {}),
    ("GET /metrics", "/metrics", {}),
    ("GET /logs", "/logs", {}),
    ("GET /logs?engine=google&level=ERROR", "/logs", {"engine": "google", "level": "ERROR"}),
    ("GET /api/logs", "/api/logs", {}),
)
"""The paths timed (name, path, query); the deep page of /api/logs is added with its cursor."""


# ---- the parameters and the fleet ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Params:
    nodes: int
    days: int
    interval: int
    logs: int
    news: int
    seed: int = 1

    @property
    def key(self) -> str:
        seed = "" if self.seed == 1 else f"-s{self.seed}"
        return f"monitor-n{self.nodes}-d{self.days}-c{self.interval}-l{self.logs}-w{self.news}{seed}"

    @property
    def span(self) -> int:
        return self.days * 86400

    def node_names(self) -> list[str]:
        return [f"node-{index:02d}" for index in range(1, self.nodes + 1)]


@dataclass(frozen=True)
class Profile:
    """How one engine fares on one node: its state now, its score, its latency, its trouble."""

    node: str
    index: int
    engine: str
    state: str
    score: int
    reasons: tuple[str, ...]
    latency: float
    """Median page time, ms."""
    requests: float
    """Requests in a minute."""
    parser_score: int = 98
    parser_reasons: tuple[str, ...] = ()
    canary_problem: str | None = None

    @property
    def band(self) -> str:
        return "ok" if self.score >= 80 else "degraded" if self.score >= 50 else "critical"

    @property
    def troubled(self) -> bool:
        """Doing badly lately (degraded or paused): its last windows show it."""
        return self.score < 80


def profile(node: str, index: int, engine: str) -> Profile:
    """The fixed fate of *engine* on the *index*-th node (see the module docstring for the mix)."""
    rnd = random.Random(f"{node}/{engine}")
    latency = LATENCY_MS[engine] * rnd.uniform(0.8, 1.3)
    requests = 60 / FLOOR_SECONDS[engine] * rnd.uniform(0.8, 0.95)
    state, score, reasons = "running", rnd.randint(86, 99), ()
    extra: dict = {}
    if engine == "brave" and index % 4 == 1:
        state, score, reasons = "cooling", rnd.randint(80, 88), ("hard_block",)
    if index == 7 and engine in ("google", "bing"):
        state, score, reasons = "cooling", rnd.randint(81, 86), ("hard_block", "challenge")
    if (engine == "yahoo" and index == 13) or (engine == "google" and index == 19):
        state, score, reasons = "paused", rnd.randint(28, 45), ("hard_block", "challenge", "latency")
    if (engine == "bing" and index % 5 == 4) or (engine == "yahoo" and index == 1):
        score, reasons = rnd.randint(55, 76), ("latency", "soft_block")
        latency *= 1.8
    if engine == "google" and index == 9:
        extra.update(parser_score=64, parser_reasons=("pages without items", "missing source"))
    if engine == "brave" and index == 3:
        extra.update(canary_problem="no result from expected domain example.org")
    return Profile(node, index, engine, state, score, reasons, latency, requests, **extra)


def fleet(params: Params) -> list[Profile]:
    """Every node × engine, node by node."""
    return [
        profile(node, index, engine) for index, node in enumerate(params.node_names(), start=1) for engine in ENGINES
    ]


# ---- times -----------------------------------------------------------------------------------------------------


def text_of(seconds: float) -> str:
    """The text the project's UTCDateTime writes on SQLite, for a Unix time."""
    return datetime.fromtimestamp(seconds, UTC).isoformat(" ", "microseconds")[:26]


def data_end(now: float) -> int:
    """Where the data ends for a run at *now*: the last health window's end (a multiple of the window)."""
    return int(now // WINDOW * WINDOW)


def grid(start: int, end: int, step: int) -> range:
    """The multiples of *step* in (start, end]."""
    return range((start // step + 1) * step, end // step * step + 1, step)


# ---- the rows --------------------------------------------------------------------------------------------------


CYCLE_COLUMNS = (
    "engine",
    "node",
    "window_start",
    "window_end",
    "topics_count",
    "entries",
    "new_events",
    "requests",
    "ok",
    "hard_blocks",
    "challenges",
    "soft_blocks",
    "errors",
    "cooldowns",
)
WINDOW_COLUMNS = (
    "engine",
    "node",
    "window_start",
    "window_end",
    "requests",
    "ok",
    "hard_blocks",
    "challenges",
    "soft_blocks",
    "errors",
    "items",
    "valid_items",
    "parse_errors",
    "bytes",
    "browser_seconds",
    "p50_latency_ms",
    "p95_latency_ms",
    "result_pages",
    "yielding_pages",
    "missing_fields",
    "consent_walls",
    "score",
)
DAILY_COLUMNS = (
    "engine",
    "node",
    "day",
    "windows",
    "score_mean",
    "score_min",
    "requests",
    "ok",
    "hard_blocks",
    "challenges",
    "soft_blocks",
    "errors",
    "items",
    "valid_items",
    "result_pages",
    "yielding_pages",
    "p95_ms",
    "parser_score",
)
LOG_COLUMNS = ("at", "node", "engine", "level", "logger", "message")
TOTALS = (
    "requests",
    "ok",
    "hard_blocks",
    "challenges",
    "soft_blocks",
    "errors",
    "cooldowns",
    "topics_count",
    "entries",
    "new_events",
)
VARIANTS = 256  # a power of two
"""Rows of counts drawn per engine and node, each row of the tables taking one of them at random: the counts vary
from row to row as a crawl's do, at a fraction of the cost of drawing each."""


def insert_sql(table: str, columns: tuple[str, ...], verb: str = "INSERT") -> str:
    return f"{verb} INTO {table} ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})"


def blocks(rnd: random.Random, requests: int, bad: bool) -> tuple[int, int, int, int]:
    """Hard blocks, challenges, soft blocks and errors among *requests*."""
    scale = 6.0 if bad else 1.0
    return tuple(
        sum(rnd.random() < share * scale for _ in range(requests))  # type: ignore[return-value]
        for share in (0.004, 0.002, 0.006, 0.002)
    )


def cycle_variants(one: Profile, interval: int, rnd: random.Random, bad: bool) -> list[tuple]:
    """Count tuples of one cycle row (``topics_count`` … ``cooldowns``)."""
    variants = []
    for _ in range(VARIANTS):
        requests = max(1, round(rnd.gauss(one.requests * interval / 60, 1.5)))
        hard, challenges, soft, errors = blocks(rnd, requests, bad)
        ok = max(0, requests - hard - challenges - soft - errors)
        entries = sum(rnd.randint(4, 12) for _ in range(ok))
        variants.append(
            (
                ok,
                entries,
                round(entries * rnd.uniform(0.03, 0.2)),
                requests,
                ok,
                hard,
                challenges,
                soft,
                errors,
                int(hard + challenges + soft > 0),
            )
        )
    return variants


def window_variants(one: Profile, rnd: random.Random, bad: bool) -> list[tuple]:
    """Tuples of one health window (``requests`` … ``score``)."""
    variants = []
    for _ in range(VARIANTS):
        requests = max(1, round(rnd.gauss(one.requests * WINDOW / 60, 8)))
        hard, challenges, soft, errors = blocks(rnd, requests, bad)
        ok = max(0, requests - hard - challenges - soft - errors)
        items = ok * rnd.randint(7, 10)
        valid = items - (rnd.randint(0, 3) if one.parser_score > 90 else items // 4)
        result_pages = ok - rnd.randint(0, 2) if ok > 2 else ok
        yielding = result_pages - (0 if one.parser_score > 90 else result_pages // 3)
        latency = one.latency * (1.6 if bad else 1.0) * rnd.uniform(0.85, 1.2)
        missing = json.dumps({"source": items - valid}) if items > valid else None
        normal = one.score if one.score >= 80 else 92
        score = rnd.randint(30, 70) if bad else min(100, max(80, round(rnd.gauss(normal, 4))))
        p95 = latency * rnd.uniform(1.8, 2.6)
        variants.append(
            (
                requests,
                ok,
                hard,
                challenges,
                soft,
                errors,
                items,
                valid,
                0,
                ok * rnd.randint(60_000, 95_000),
                round(requests * latency / 1000, 3),
                round(latency, 1),
                round(p95, 1),
                result_pages,
                yielding,
                missing,
                int(challenges > 0 and rnd.random() < 0.3),
                score,
            )
        )
    return variants


class Pair:
    """One engine on one node while the rows are drawn: its variants, and the sums of the cycle rows drawn."""

    def __init__(self, one: Profile, params: Params, seed: int) -> None:
        rnd = random.Random(f"{seed}/{one.node}/{one.engine}")
        self.profile = one
        self.cycles = cycle_variants(one, params.interval, rnd, bad=False)
        self.bad_cycles = cycle_variants(one, params.interval, rnd, bad=True) if one.troubled else self.cycles
        self.windows = window_variants(one, rnd, bad=False)
        self.bad_windows = window_variants(one, rnd, bad=True) if one.troubled else self.windows
        self.totals = [0] * len(TOTALS)
        self.last_cycle_end: int | None = None

    def add(self, variant: tuple, end: int) -> None:
        ok_topics, entries, new_events, requests, ok, hard, challenges, soft, errors, cooldowns = variant
        for position, value in enumerate(
            (requests, ok, hard, challenges, soft, errors, cooldowns, ok_topics, entries, new_events)
        ):
            self.totals[position] += value
        self.last_cycle_end = end if self.last_cycle_end is None else max(self.last_cycle_end, end)


@dataclass
class Day:
    """The rows of one transaction: a span of time of every table, in time order."""

    cycles: list[tuple] = field(default_factory=list)
    windows: list[tuple] = field(default_factory=list)
    logs: list[tuple] = field(default_factory=list)


def day_spans(start: int, end: int) -> Iterator[tuple[int, int]]:
    """(start, end] cut at UTC midnights."""
    while start < end:
        stop = min(end, (start // 86400 + 1) * 86400)
        yield start, stop
        start = stop


def draw(
    pairs: list[Pair], params: Params, start: int, end: int, logs: int, rnd: random.Random, texts: LogTexts
) -> Iterator[Day]:
    """The cycles, windows and *logs* log rows of (start, end], a UTC day at a time. *end* is the data's end: the
    troubled engines' last BAD_HOURS hours are bad."""
    bad_from = end - BAD_HOURS * 3600
    bits = VARIANTS.bit_length() - 1  # a random index into the variants
    spans = list(day_spans(start, end))
    total = end - start
    placed = 0
    for number, (first, last) in enumerate(spans):
        day = Day()
        for moment in grid(first, last, params.interval):
            began, ended = text_of(moment - params.interval), text_of(moment)
            for pair in pairs:
                variants = pair.bad_cycles if moment > bad_from else pair.cycles
                variant = variants[rnd.getrandbits(bits)]
                pair.add(variant, moment)
                day.cycles.append((pair.profile.engine, pair.profile.node, began, ended, *variant))
        for moment in grid(first, last, WINDOW):
            began, ended = text_of(moment - WINDOW), text_of(moment)
            for pair in pairs:
                variants = pair.bad_windows if moment > bad_from else pair.windows
                variant = variants[rnd.getrandbits(bits)]
                day.windows.append((pair.profile.engine, pair.profile.node, began, ended, *variant))
        # the logs of this span: their share of the whole, the last span taking what rounding left
        count = logs - placed if number == len(spans) - 1 else round(logs * (last - first) / total)
        count = min(count, logs - placed)
        placed += count
        moments = sorted(rnd.uniform(first, last) for _ in range(count))
        day.logs = [texts.row(moment, rnd) for moment in moments]
        yield day


def daily_rows(pairs: list[Pair], days: list[date], today: date, now: int, rnd: random.Random) -> list[tuple]:
    """The ``health_daily`` rows of *days* (today's partial: the windows so far)."""
    rows = []
    for day in days:
        share = (now - datetime.combine(day, datetime.min.time(), UTC).timestamp()) / 86400 if day == today else 1.0
        windows = max(1, round(144 * min(1.0, share)))
        for pair in pairs:
            one = pair.profile
            bad = one.troubled and day == today
            requests = round(windows * one.requests * WINDOW / 60 * rnd.uniform(0.9, 1.05))
            hard, challenges, soft, errors = (
                round(requests * share * rnd.uniform(0.5, 1.5) * (6 if bad else 1))
                for share in (0.004, 0.002, 0.006, 0.002)
            )
            ok = max(0, requests - hard - challenges - soft - errors)
            items = ok * 8
            valid = items - (items // 4 if one.parser_score < 90 else rnd.randint(0, 20))
            result_pages = ok - rnd.randint(0, windows)
            yielding = result_pages - (result_pages // 3 if one.parser_score < 90 else 0)
            mean = rnd.uniform(50, 75) if bad else rnd.uniform(86, 97)
            rows.append(
                (
                    one.engine,
                    one.node,
                    day.isoformat(),
                    windows,
                    round(mean, 2),
                    round(mean - rnd.uniform(5, 30)),
                    requests,
                    ok,
                    hard,
                    challenges,
                    soft,
                    errors,
                    items,
                    valid,
                    result_pages,
                    yielding,
                    round(one.latency * rnd.uniform(1.9, 2.5) * (1.6 if bad else 1), 1),
                    min(100, round(100 * yielding / max(1, result_pages) * valid / max(1, items))),
                )
            )
    return rows


class LogTexts:
    """Log records as a fleet of crawls stores them: levels, loggers and messages like the project's own."""

    def __init__(self, nodes: list[str], seed: int) -> None:
        self.nodes = nodes
        self.topics = topic_names(200, random.Random(seed))
        self.levels = [name for name, _ in LOG_LEVELS]
        self.level_weights = list(_accumulate(weight for _, weight in LOG_LEVELS))

    def row(self, moment: float, rnd: random.Random) -> tuple:
        node = rnd.choice(self.nodes)
        level = rnd.choices(self.levels, cum_weights=self.level_weights)[0]
        engine = None if level != "INFO" and rnd.random() < NO_ENGINE_SHARE else rnd.choice(ENGINES)
        logger, message = self.message(level, engine, node, rnd)
        return text_of(moment), node, engine, level, logger, message

    def message(self, level: str, engine: str | None, node: str, rnd: random.Random) -> tuple[str, str]:
        choice = rnd.choice
        topic = choice(self.topics)
        if level == "INFO":
            topics = rnd.randint(20, 30)
            entries = topics * rnd.randint(5, 10)
            return (
                "topicstreams.extensions.cycle_accounting",
                f"[{engine}] swept {topics} topics, {entries} entries, {round(entries * rnd.uniform(0.03, 0.2))} "
                f"new events",
            )
        if engine is None:
            return choice(
                (
                    (
                        "topicstreams.extensions.saturation_watch",
                        f"EXIT IP SATURATION SUSPECTED: robust engines cooling: bing, google (node {node}): "
                        f"the node's exit "
                        f"IP is probably at capacity; add a node with its own exit IP rather than slowing down",
                    ),
                    (
                        "topicstreams.storage.durable",
                        f"The database sqlite:///var/lib/topicstreams/topicstreams.db cannot be written "
                        f"(OperationalError: "
                        f"database is locked): nothing is lost — {rnd.randint(1, 40)} item(s) in the journal; retrying "
                        f"with backoff until it is back",
                    ),
                    (
                        "scrapy.core.engine",
                        f"Error while obtaining start requests: timed out after {rnd.randint(30, 90)} s",
                    ),
                )
            )
        if level == "CRITICAL":
            score = rnd.randint(20, 49)
            return (
                "topicstreams.extensions.watch",
                f"[{engine}] paused on node {node}: health {score} (critical): hard_block, challenge; it schedules "
                f"no topic until a person runs `scrapy health resume {engine} --node {node}`",
            )
        url = f"https://www.{engine}.example/news/search?q={topic.replace(' ', '+')}"
        if level == "ERROR":
            return choice(
                (
                    (engine, f"gave up topic {topic!r} after 5 attempts: last hard_block (status 429)"),
                    (
                        "topicstreams.pipelines.store",
                        f"Not storing an item of {engine}: no title (url 'https://news.example/{slug(topic)}-"
                        f"{rnd.randint(1, 99999)}')",
                    ),
                    (
                        "scrapy.core.scraper",
                        f'Error downloading <GET {url}>\nTraceback (most recent call last):\n  File "playwright/_impl/'
                        f'_page.py", line 475, in goto\n'
                        f"playwright._impl._errors.TimeoutError: Page.goto: Timeout 30000ms "
                        f"exceeded.",
                    ),
                )
            )
        kind = rnd.randrange(7)
        if kind == 0:
            reason = choice(("status 429", "status 503", "status 403", "connection reset"))
            return "topicstreams.middlewares.blocks", f"[{engine}] hard_block for topic {topic!r} ({url}): {reason}"
        if kind == 1:
            return (
                "topicstreams.middlewares.blocks",
                f"[{engine}] soft_block for topic {topic!r} ({url}): body {rnd.randint(9, 25)},"
                f"{rnd.randint(100, 999)} bytes, below 0.3 × the running median",
            )
        if kind == 2:
            seconds, row = choice(((60, 1), (120, 2), (240, 3), (480, 4)))
            return (
                "topicstreams.middlewares.blocks",
                f"[{engine}] cooling down for {seconds} s ({row} in a row): nothing goes to it until then, "
                f"then one probe",
            )
        if kind == 3:
            return (
                engine,
                f"topic {topic!r} failed: challenge (captcha marker); trying it again in {rnd.randint(60, 600)} s",
            )
        if kind == 4:
            return (
                "topicstreams.extensions.watch",
                f"[{engine}] health {rnd.randint(50, 79)} (degraded): latency, soft_block; slowing down: the "
                f"pacing floor and the re-scrape interval × 2 until it recovers",
            )
        if kind == 5:
            return (
                "topicstreams.extensions.watch",
                f"[{engine}] canary mismatch: canary 'weather forecast': no result from expected domain "
                f"example.org; the page looked normal, but it is not what a real visitor would see",
            )
        return (
            engine,
            f"{engine} {topic!r}, page 1: its request never came back within 60 s: dropped by a "
            f"middleware, or lost by the browser",
        )


def _accumulate(values) -> Iterator[float]:
    total = 0.0
    for value in values:
        total += value
        yield total


def status_rows(params: Params, now: float, rnd: random.Random) -> list[dict]:
    """The ``engine_status`` rows, written at *now* (so they are fresh)."""
    rows = []
    for one in fleet(params):
        p95 = one.latency * rnd.uniform(1.9, 2.5)
        requests = round(one.requests * WINDOW / 60)
        bad = one.troubled or one.state == "cooling"
        hard, challenges, soft, errors = (
            round(requests * share * (6 if bad else 1) * rnd.uniform(0.3, 1.5))
            for share in (0.004, 0.002, 0.006, 0.002)
        )
        ok = max(0, requests - hard - challenges - soft - errors)
        counts = {
            "requests": requests,
            "ok": ok,
            "hard_blocks": hard,
            "challenges": challenges,
            "soft_blocks": soft,
            "errors": errors,
            "items": ok * 8,
            "valid_items": ok * 8 - 2,
            "parse_errors": 0,
            "bytes": ok * 80_000,
            "browser_seconds": round(requests * one.latency / 1000, 3),
            "p50_latency_ms": round(one.latency, 1),
            "p95_latency_ms": round(p95, 1),
            "result_pages": ok,
            "yielding_pages": ok,
            "missing_fields": {},
            "consent_walls": 0,
        }
        window = {
            "attempts": round(requests / max(1, ok * 8 - 2), 3),
            "bytes": 10_000.0,
            "browser_seconds": round(one.latency / 8000, 3),
        }
        factor = rnd.uniform(1.6, 2.4) if bad else rnd.uniform(0.9, 1.15)
        baseline = {key: round(value / factor, 3) for key, value in window.items()}
        drift = {key: round(window[key] / baseline[key], 3) for key in window}
        canary_at = datetime.fromtimestamp(now - rnd.uniform(60, 3500), UTC).isoformat()
        canary = {
            "query": "weather forecast",
            "at": canary_at,
            "matched": one.canary_problem is None,
            "results": rnd.randint(8, 12) if one.canary_problem is None else 0,
            "problem": one.canary_problem,
        }
        rows.append(
            {
                "engine": one.engine,
                "node": one.node,
                "score": one.score,
                "band": one.band,
                "state": one.state,
                "cooling_until": text_of(now + rnd.uniform(60, 900)) if one.state == "cooling" else None,
                "reasons": json.dumps(list(one.reasons)),
                "updated_at": text_of(now - rnd.uniform(0, 5)),
                "raw_score": max(0, one.score - rnd.randint(0, 8)),
                "p50_ms": round(one.latency, 1),
                "p95_ms": round(p95, 1),
                "window_counts": json.dumps(counts),
                "paused_at": text_of(now - rnd.uniform(600, 7200)) if one.state == "paused" else None,
                "resumed_at": None,
                "pace_multiplier": 2.0 if one.troubled else 1.0,
                "parser_score": one.parser_score,
                "parser_reasons": json.dumps(list(one.parser_reasons)),
                "canary_mismatches": json.dumps(["weather forecast"] if one.canary_problem else []),
                "cost": json.dumps({"window": window, "baseline": baseline, "drift": drift}),
                "last_canary": json.dumps(canary),
            }
        )
    return rows


def news_rows(count: int, end: int, span: int, seed: int) -> Iterator[list[tuple]]:
    """*count* articles first seen over the *span* seconds before *end*, in chunks of 20,000."""
    rnd = random.Random(seed)
    words = Headlines(rnd)
    topics = topic_names(200, rnd)
    sources = source_names(200, rnd)
    chunk: list[tuple] = []
    for serial, moment in enumerate(sorted(rnd.uniform(end - span, end) for _ in range(count)), start=1):
        topic = rnd.choice(topics)
        title = words.title(topic, rnd.random() < 0.01)
        source, domain = rnd.choice(sources)
        url = f"https://www.{domain}/news/{slug(title)}-{serial}"
        chunk.append(
            (
                news_id(url),
                url,
                title,
                source,
                words.snippet(topic),
                text_of(moment - rnd.uniform(60, 86400)),
                text_of(moment),
            )
        )
        if len(chunk) == 20_000:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


# ---- building and bringing up to date --------------------------------------------------------------------------


def write_span(
    conn: sqlite3.Connection,
    pairs: list[Pair],
    params: Params,
    start: int,
    end: int,
    logs: int,
    rnd: random.Random,
    label: str,
) -> None:
    """The cycles, windows and logs of (start, end], a day per transaction."""
    texts = LogTexts(params.node_names(), params.seed)
    days = max(1, math.ceil((end - start) / 86400))
    for number, day in enumerate(draw(pairs, params, start, end, logs, rnd, texts), start=1):
        conn.execute("BEGIN")
        conn.executemany(insert_sql("scraper_cycles", CYCLE_COLUMNS), day.cycles)
        conn.executemany(insert_sql("health_windows", WINDOW_COLUMNS), day.windows)
        conn.executemany(insert_sql("scraper_logs", LOG_COLUMNS), day.logs)
        conn.execute("COMMIT")
        if sys.stderr.isatty():
            print(f"\r  {label}: day {number} of {days}", end="", file=sys.stderr, flush=True)
    if sys.stderr.isatty():
        print(file=sys.stderr, flush=True)


def write_totals(conn: sqlite3.Connection, pairs: list[Pair]) -> None:
    """Add the cycle rows drawn to ``engine_totals`` (as ``save_cycle`` does, row by row)."""
    columns = ", ".join(TOTALS)
    added = ", ".join(f"{name} = {name} + excluded.{name}" for name in TOTALS)
    conn.executemany(
        f"INSERT INTO engine_totals (engine, node, {columns}, last_cycle_end) VALUES "
        f"(?, ?, {', '.join('?' * len(TOTALS))}, ?) ON CONFLICT (engine, node) DO UPDATE SET {added}, "
        f"last_cycle_end = max(coalesce(last_cycle_end, ''), excluded.last_cycle_end)",
        [
            (pair.profile.engine, pair.profile.node, *pair.totals, text_of(pair.last_cycle_end))
            for pair in pairs
            if pair.last_cycle_end is not None
        ],
    )


def write_days(
    conn: sqlite3.Connection, pairs: list[Pair], first: date, today: date, end: int, rnd: random.Random
) -> None:
    days = [first + timedelta(days=offset) for offset in range((today - first).days + 1)]
    conn.executemany(
        insert_sql("health_daily", DAILY_COLUMNS, "INSERT OR REPLACE"), daily_rows(pairs, days, today, end, rnd)
    )


def open_for_build(path: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA synchronous = OFF")
    conn.execute("PRAGMA cache_size = -1000000")  # 1 GB for the build: the indexes stay in memory
    return conn


def build(path: Path, params: Params, now: float) -> None:
    """Build the database of *params* at *path*, ending at *now* (through a temporary file, renamed when complete)."""
    partial = start_partial(path)
    end = data_end(now)
    rnd = random.Random(params.seed)
    conn = open_for_build(partial)
    for chunk in news_rows(params.news, end, params.span, params.seed):
        conn.execute("BEGIN")
        conn.executemany(
            insert_sql("news", ("id", "url", "title", "source", "snippet", "published_at", "first_seen_at")), chunk
        )  # the triggers index each for search
        conn.execute("COMMIT")
    pairs = [Pair(one, params, params.seed) for one in fleet(params)]
    write_span(conn, pairs, params, end - params.span, end, params.logs, rnd, "building")
    conn.execute("BEGIN")
    write_totals(conn, pairs)
    today = datetime.fromtimestamp(end, UTC).date()
    write_days(conn, pairs, today - timedelta(days=HISTORY_DAYS - 1), today, end, rnd)
    conn.execute("COMMIT")
    finish_partial(conn, partial, path, DATA_VERSION)


def schema_of(conn: sqlite3.Connection) -> set[tuple]:
    """The tables, indexes and triggers of a database, as SQLite keeps their definitions."""
    return set(conn.execute("SELECT type, name, tbl_name, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite_%'"))


def current_schema() -> set[tuple]:
    """The schema ``upgrade`` makes now: an edited migration (an index added under the same revision, while it is
    being written) makes a cached file stale as surely as a new revision does."""
    with tempfile.TemporaryDirectory(prefix="topicstreams-monitorbench-") as tmp:
        upgrade(f"sqlite:///{tmp}/schema.db")  # its handle closed when it is done
        conn = sqlite3.connect(f"{tmp}/schema.db")
        try:
            return schema_of(conn)
        finally:
            conn.close()


def stored_end(path: Path) -> int | None:
    """Where the data of a cached file ends (its newest window), or None when the file is not a complete build of
    this version with the schema ``upgrade`` makes now."""
    if not path.exists():
        return None
    try:
        with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as conn:
            version = conn.execute("PRAGMA user_version").fetchone()[0]
            revisions = {row[0] for row in conn.execute("SELECT version_num FROM alembic_version")}
            newest = conn.execute("SELECT max(window_end) FROM health_windows").fetchone()[0]
            schema = schema_of(conn)
        conn.close()
    except sqlite3.Error:
        return None
    if version != DATA_VERSION or revisions != head_revisions() or newest is None or schema != current_schema():
        return None
    return int(datetime.fromisoformat(newest).replace(tzinfo=UTC).timestamp())


def bring_up_to_date(path: Path, params: Params, old_end: int, now: float) -> int:
    """Add what the fleet would have written between *old_end* and *now*, and drop as much of the oldest; the
    windows added per node and engine."""
    end = data_end(now)
    if end <= old_end:
        return 0
    rnd = random.Random(f"{params.seed}/{end}")
    logs = round(params.logs * (end - old_end) / params.span)
    conn = open_for_build(path)
    pairs = [Pair(one, params, params.seed) for one in fleet(params)]
    write_span(conn, pairs, params, old_end, end, logs, rnd, "bringing up to date")
    cutoff = text_of(end - params.span)
    today = datetime.fromtimestamp(end, UTC).date()
    conn.execute("BEGIN")
    write_totals(conn, pairs)
    write_days(conn, pairs, datetime.fromtimestamp(old_end, UTC).date(), today, end, rnd)
    conn.execute("DELETE FROM health_daily WHERE day <= ?", ((today - timedelta(days=HISTORY_DAYS)).isoformat(),))
    conn.execute("DELETE FROM scraper_cycles WHERE window_end <= ?", (cutoff,))
    conn.execute("DELETE FROM health_windows WHERE window_end <= ?", (cutoff,))
    conn.execute("DELETE FROM scraper_logs WHERE id IN (SELECT id FROM scraper_logs ORDER BY at, id LIMIT ?)", (logs,))
    conn.execute("COMMIT")
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    return len(grid(old_end, end, WINDOW))


def refresh_status(path: Path, params: Params, now: float) -> None:
    """Write every ``engine_status`` row anew at *now*: fresh, cooling into the future, paused a while ago."""
    rows = status_rows(params, now, random.Random(params.seed))
    columns = tuple(rows[0])
    with sqlite3.connect(path, isolation_level=None) as conn:
        conn.execute("BEGIN")
        conn.execute("DELETE FROM engine_status")
        conn.executemany(insert_sql("engine_status", columns), [tuple(row[name] for name in columns) for row in rows])
        conn.execute("COMMIT")
    conn.close()


class Heartbeat:
    """Write the status rows' ``updated_at`` every HEARTBEAT_SECONDS, as running crawls do, until ``stop()``: the
    rows stay fresh however long the measuring takes, and the app reads while a writer writes, as it does live."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._run, name="heartbeat", daemon=True)
        self.thread.start()

    def _run(self) -> None:
        conn = sqlite3.connect(self.path, isolation_level=None, timeout=10)
        try:
            while not self.done.wait(HEARTBEAT_SECONDS):
                conn.execute("UPDATE engine_status SET updated_at = ?", (text_of(time.time()),))
        finally:
            conn.close()

    def stop(self) -> None:
        self.done.set()
        self.thread.join()


def prepare(params: Params, folder: Path, rebuild: bool, label: str) -> Path:
    """The database file of *params*: built, or reused and brought up to date; its status rows written now."""
    path = folder / f"{params.key}.db"
    now = time.time()
    old_end = None if rebuild else stored_end(path)
    if old_end is not None and now - old_end < params.span:
        started = time.perf_counter()
        added = bring_up_to_date(path, params, old_end, now)
        print(
            f"database ({label}): {path} (cached, reused; --rebuild to build it again); brought up to date: "
            f"{added} window(s) per node and engine added in {time.perf_counter() - started:.1f} s"
        )
    else:
        why = (
            "building"
            if not path.exists() or rebuild
            else "building again (another schema or generator)"
            if old_end is None
            else f"building again (its data ended over {params.days} days ago)"
        )
        print(f"database ({label}): {path}: {why} (SQLite, executemany, a day a transaction)", flush=True)
        started = time.perf_counter()
        build(path, params, now)
        print(f"built in {time.perf_counter() - started:.0f} s")
    refresh_status(path, params, time.time())
    return path


TABLES = ("engine_status", "engine_totals", "health_windows", "scraper_cycles", "health_daily", "scraper_logs", "news")


def row_counts(path: Path) -> dict[str, int]:
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as conn:
        counts = {table: conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0] for table in TABLES}
    conn.close()
    return counts


def size_mib(path: Path) -> float:
    return sum(each.stat().st_size for each in (path, Path(f"{path}-wal")) if each.exists()) / 2**20


# ---- measuring -------------------------------------------------------------------------------------------------


@dataclass
class Target:
    """One path timed on one side: its requests and what they took."""

    name: str
    path: str
    query: dict[str, str]
    ms: list[float] = field(default_factory=list)
    sizes: list[int] = field(default_factory=list)


def ask(client: httpx.Client, target: Target) -> httpx.Response:
    """GET *target*; exits on anything but 200 (the app failed)."""
    try:
        response = client.get(target.path, params=target.query)
    except httpx.HTTPError as exc:
        raise SystemExit(f"{target.name}: no answer from the app: {exc!r}") from None
    if response.status_code != 200:
        raise SystemExit(f"{target.name}: the app answered {response.status_code}: {response.text[:500]}")
    return response


def deep_cursor(client: httpx.Client, page: int) -> str:
    """The cursor of page *page* of /api/logs, by following ``next`` from page 1 through the app."""
    cursor = None
    for number in range(1, page):
        answer = ask(client, Target("walk", "/api/logs", {"before": cursor} if cursor else {})).json()
        cursor = answer["next"]
        if cursor is None:
            raise SystemExit(f"the logs end at page {number}: fewer than {page} pages (--page, --logs)")
    return cursor


def timed(client: httpx.Client):
    """A step of ``in_rounds``: one request of a target through ``client``, its time and size kept."""

    def step(target: Target, _index: int) -> None:
        started = time.perf_counter()
        response = ask(client, target)
        target.ms.append((time.perf_counter() - started) * 1000)
        target.sizes.append(len(response.content))

    return step


def measure(url: str, requests: int, budget: float, page: int, heartbeat_path: Path) -> list[Target]:
    """Time every path through the app served on *url*."""
    targets = [Target(name, path, dict(query)) for name, path, query in PATHS]
    beat = Heartbeat(heartbeat_path)
    with tempfile.TemporaryDirectory(prefix="topicstreams-monitorbench-") as tmp:
        served = Served(url, Path(tmp) / "app.log")
        try:
            with httpx.Client(base_url=served.base, timeout=120) as client:
                targets.append(
                    Target(f"GET /api/logs page {page} by cursor", "/api/logs", {"before": deep_cursor(client, page)})
                )
                for target in targets:  # warm-up: the running app has served each path before
                    for _ in range(5):
                        ask(client, target)

                in_rounds(targets, lambda _target: requests, budget, timed(client))
        finally:
            served.stop()
        # The same page from an app that keeps nothing: every request reads every chart's rows, as the first request
        # after the kept hours and days expire does (once every 5 minutes).
        cold = Target(COLD, "/monitor", {})
        served = Served(url, Path(tmp) / "cold.log", {"chart_keep_seconds": 0})
        try:
            with httpx.Client(base_url=served.base, timeout=120) as client:
                for _ in range(2):
                    ask(client, cold)
                in_rounds([cold], lambda _target: requests, budget, timed(client))
        finally:
            served.stop()
            beat.stop()
    return [*targets, cold]


# ---- the run ---------------------------------------------------------------------------------------------------


def report(sides: list[tuple[str, Params, Path, list[Target]]], requests: int, budget: float) -> None:
    print()
    print(f"{'table':<16}" + "".join(f"{label:>16}" for label, *_ in sides))
    counts = [row_counts(path) for _, _, path, _ in sides]
    for table in TABLES:
        print(f"{table:<16}" + "".join(f"{each[table]:>16,}" for each in counts))
    print(f"{'size MiB':<16}" + "".join(f"{size_mib(path):>16,.0f}" for _, _, path, _ in sides))
    print()
    big, small = sides[0], sides[-1]
    print(f"SQLite, ms, GET through uvicorn, one client (p95 target: <= {TARGET_P95_MS:.0f} ms with {big[0]})")
    print(
        f"{'path':<40} {'n':>4} {big[0] + ' p50':>14} {big[0] + ' p95':>14} {small[0] + ' p50':>12} "
        f"{small[0] + ' p95':>12} {'KB':>7}  target"
    )
    worst = None
    for mine, theirs in zip(big[3], small[3], strict=True):
        met = p95(mine.ms) <= TARGET_P95_MS
        if mine.name != COLD:
            worst = mine if worst is None or p95(mine.ms) > p95(worst.ms) else worst
        print(
            f"{mine.name:<40} {len(mine.ms):>4} {p50(mine.ms):>14.1f} {p95(mine.ms):>14.1f} {p50(theirs.ms):>12.1f} "
            f"{p95(theirs.ms):>12.1f} {mean(mine.sizes) / 1024:>7.1f}  "
            f"{'-' if mine.name == COLD else 'met' if met else 'NOT MET'}"
        )
    if any(len(target.ms) < requests for _, _, _, targets in sides for target in targets):
        print(
            f"(fewer than {requests} requests: the rounds, one request of each path a round, took over --budget "
            f"{budget:g} s a path)"
        )
    all_met = all(p95(target.ms) <= TARGET_P95_MS for target in big[3] if target.name != COLD)
    print(
        f"target: every path p95 <= {TARGET_P95_MS:.0f} ms with {big[0]}: {'PASS' if all_met else 'FAIL'} "
        f"(worst: {worst.name}, {p95(worst.ms):.1f} ms)"
    )


def mean(values: list[int]) -> float:
    return sum(values) / len(values) if values else 0.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--nodes",
        type=int,
        default=TARGET_NODES,
        help=f"nodes of the big side (default {TARGET_NODES}; the baseline has 1)",
    )
    parser.add_argument("--days", type=int, default=30, help="days of windows, cycles and logs (default 30)")
    parser.add_argument(
        "--cycle-interval",
        type=int,
        default=60,
        help="seconds of a scraper_cycles row (scraper.scrape_interval; default 60)",
    )
    parser.add_argument("--logs", type=int, default=1_000_000, help="scraper_logs rows (default 1000000)")
    parser.add_argument("--news", type=int, default=100_000, help="news rows (default 100000)")
    parser.add_argument("--seed", type=int, default=1, help="the data's random seed (default 1)")
    parser.add_argument("--requests", type=int, default=100, help="requests timed per path and side (default 100)")
    parser.add_argument(
        "--budget",
        type=float,
        default=20.0,
        help="seconds at most for each path's series (fewer requests when slower; default 20)",
    )
    parser.add_argument("--page", type=int, default=20, help="the deep page of /api/logs (default 20)")
    parser.add_argument("--cache", help="folder of the cached SQLite files (default .topicstreams/bench)")
    parser.add_argument("--rebuild", action="store_true", help="build the databases even if cached ones fit")
    args = parser.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit("terminated"))  # the app's process is stopped on the way out
    if args.nodes < 1 or args.days < 1 or args.cycle_interval < 1 or args.logs < 0 or args.news < 0:
        parser.error("--nodes, --days and --cycle-interval take positive numbers; --logs and --news at least 0")
    if args.logs <= 50 * args.page:
        parser.error(f"--page {args.page} needs more than {50 * args.page} log rows (--logs)")
    if args.nodes > 99:
        parser.error("at most 99 nodes")

    folder = Path(args.cache) if args.cache else REPO / ".topicstreams" / "bench"
    sides = []
    for nodes in (args.nodes, 1):
        label = f"{nodes} node{'s' if nodes > 1 else ''}"
        params = Params(nodes, args.days, args.cycle_interval, args.logs, args.news, args.seed)
        path = prepare(params, folder, args.rebuild, label)
        sides.append((label, params, path))
    results = []
    for label, params, path in sides:
        print(f"measuring {label} ...", flush=True)
        results.append((label, params, path, measure(f"sqlite:///{path}", args.requests, args.budget, args.page, path)))
    report(results, args.requests, args.budget)


if __name__ == "__main__":
    main()
