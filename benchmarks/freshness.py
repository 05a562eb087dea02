"""Benchmark of freshness: the fixed schedule, the adaptive one and an oracle, on one news world, same requests.

    python benchmarks/freshness.py [--topics 200] [--speed 10] [--interval 900] [--warmup 30] [--window 45]
                                   [--margin 30] [--seed 7] [--floor 0.05] [--lanes …] [--quick] [--keep DIR]

The world is a :class:`~benchmarks.freshness_oracle.BenchWorld` (a rated world: ``--topics`` topics whose base
rates span 1/24 … 120 articles an hour, skewed towards the quiet end, and for 15 % of them a story that breaks
within the run and fades over minutes to hours; every engine shows every article, a topic's list holds its 60
newest), served by the fake Google here, in this process, on loopback. Its clock runs ``--speed`` times the real
one (10: a world hour in 6 real minutes). Each lane gets a new world with the same seed and origin, so every lane
sees the same news from its own start.

Each lane is a real continuous crawl, as users run it: ``python -m scrapy crawl google -a topics=t000,…`` (cwd the
repo root, TOPICSTREAMS_CONFIG a config written for the lane: its own SQLite file and browser profiles folder, the
fake's base URL, the other engines off). The crawl runs on the real clock, so every duration of its config is the
world's divided by the speed: ``scrape_interval`` I (``--interval`` world seconds), ``scraper.adaptive``
``min_interval`` 60 and ``max_interval`` 3600 world seconds, ``burst_pages`` 3, ``TOPICSTREAMS_RATE_MEMORY``
6 world hours; ``max_pages`` 1; the floor ``--floor`` real seconds (small: the budget binds, not the floor),
no jitter. The lanes:

  fixed:        ``scraper.schedule: fixed``: every topic every I, page one only;
  adaptive:     ``scraper.schedule: adaptive`` (rates learnt by the crawl, the budget the fixed schedule spends);
  oracle:       the adaptive schedule told each topic's true rate at every allocation
                (``-s TOPICSTREAMS_FRESHNESS_RATES=benchmarks.freshness_oracle.WorldRates``, rebuilt in the crawl
                from the world's parameters), same budget;
  adaptive ½:   the adaptive schedule at half the budget (``scrape_interval`` 2 × I).

Each lane runs ``--warmup`` + ``--window`` + ``--margin`` world minutes from its world's start (the crawl's own
start-up included), then stops (Ctrl-C). Measures, over the articles published in the window (world time), from
the lane's SQLite file (``topic_news_engines.first_seen_at``, the real time each article was stored, read as world
time) and the fake's log of results-page requests:

  requests      results-page requests for the topics in the window (burst pages included); ``req/h`` per world
                hour, against the budget (topics × 3600 ÷ I × ``max_pages``);
  mean, p95     the delay from an article's publication to its storage, world minutes, over the stored ones (and
                the pending ones, below);
  missed        the share of the window's articles never stored although their topic was visited after they
                were published (they fell off the pages the crawl read);
  pending       articles not stored because their topic was not visited again before the lane ended (a quiet
                topic may wait up to ``max_interval``): not missed, and counted in the delays with the delay their
                topic's next planned visit (``topic_rates.next_due_at``, the lane's end at the earliest) gives them;
  holes, burst  ``topic_rates`` summed over the run: visits whose last page held only new articles, and pages
                read past ``max_pages``.

Targets (the issue's): adaptive's mean delay ≤ 0.5 × fixed's and its missed share ≤ 0.2 × fixed's, at requests
≤ 1.05 × fixed's; adaptive's mean delay ≤ 1.25 × the oracle's; adaptive at half the requests misses fewer than
fixed at full. A lane whose crawl fails prints its log's end and the benchmark exits 1; a missed target exits 1 too,
except with ``--quick`` (a few topics and seconds, for the test suite: figures that short only show that the
benchmark runs).
"""

from __future__ import annotations

import argparse
import bisect
import os
import shutil
import signal
import sqlite3
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
if __package__ in (None, ""):  # run as a script: make the project importable from a checkout
    sys.path.insert(0, str(REPO))

import yaml

from benchmarks.freshness_oracle import LOADED, SETTING, BenchWorld, WorldParams
from benchmarks.pacing import crawl_env, tail, topic_names, work_folder
from fake_engines import FakeEngines
from topicstreams import ENGINES
from topicstreams.engines.news_urls import normalize_url

ENGINE = "google"
ORIGIN = 1_767_571_200.0
"""2026-01-05T00:00:00Z: every lane's world starts here."""
MIN_INTERVAL = 60.0
MAX_INTERVAL = 3600.0
RATE_MEMORY = 21600.0
"""World seconds: the contract's ``scraper.adaptive`` bounds and the estimator's default memory, scaled per lane."""
BURST_PAGES = 3
MAX_PAGES = 1
TARGET_DELAY = 0.5
TARGET_MISSED = 0.2
TARGET_ORACLE = 1.25
TARGET_REQUESTS = 1.05
STOP_TIMEOUT = 90.0
VISIT_SLACK = 2.0
"""Real seconds before the stop a visit must have begun to count (its articles stored before the crawl ended)."""
ORACLE = "benchmarks.freshness_oracle.WorldRates"


@dataclass(frozen=True)
class Params:
    topics: int
    speed: float
    interval: float
    """The fixed schedule's ``scrape_interval``, world seconds."""
    warmup: float
    window: float
    margin: float
    """World seconds."""
    seed: int
    floor: float

    @property
    def span(self) -> float:
        return self.warmup + self.window + self.margin

    def real(self, world_seconds: float) -> float:
        return world_seconds / self.speed


@dataclass(frozen=True)
class Lane:
    name: str
    schedule: str
    budget: float
    """The share of the fixed budget: 1 or 0.5 (by ``scrape_interval``)."""
    oracle: bool = False


LANES = (
    Lane("fixed", "fixed", 1.0),
    Lane("adaptive", "adaptive", 1.0),
    Lane("oracle", "adaptive", 1.0, oracle=True),
    Lane("adaptive ½", "adaptive", 0.5),
)


def world_params(p: Params) -> WorldParams:
    return WorldParams(seed=p.seed, origin=ORIGIN, speed=p.speed, horizon_hours=p.span / 3600)


def write_config(folder: Path, lane: Lane, base_url: str, p: Params) -> Path:
    interval = p.real(p.interval) / lane.budget
    data = {
        "database": {"url": f"sqlite:///{folder / 'news.db'}"},
        "engines": {name: {"base_url": base_url} if name == ENGINE else {"enabled": False} for name in ENGINES},
        "scraper": {
            "scrape_interval": interval,
            "max_pages": MAX_PAGES,
            "schedule": lane.schedule,
            "adaptive": {
                "min_interval": p.real(MIN_INTERVAL),
                "max_interval": p.real(MAX_INTERVAL),
                "burst_pages": BURST_PAGES,
            },
            "pacing": {"default_min_interval": p.floor, "jitter_ratio": 0, "per_engine": {ENGINE: p.floor}},
        },
        "browser": {"profile_dir": str(folder / "profiles")},
    }
    path = folder / "config.yml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def run_lane(lane: Lane, folder: Path, p: Params, topics: list[str]) -> dict[str, Any]:
    """One continuous crawl of a new world into a fresh folder, for the lane's span of world time; its figures."""
    folder.mkdir(parents=True)
    world = BenchWorld(world_params(p))
    result: dict[str, Any] = {"lane": lane, "log": folder / "crawl.log", "error": None}
    with FakeEngines((ENGINE,), world=world) as fakes:
        config = write_config(folder, lane, fakes.base_url(ENGINE), p)
        command = [sys.executable, "-m", "scrapy", "crawl", ENGINE, "-a", "topics=" + ",".join(topics)]
        command += ["-s", f"TOPICSTREAMS_RATE_MEMORY={p.real(RATE_MEMORY)}"]
        if lane.oracle:
            oracle = replace(world.params, started=world.started)
            command += ["-s", f"TOPICSTREAMS_FRESHNESS_RATES={ORACLE}", "-s", f"{SETTING}={oracle.to_json()}"]
        ends = world.started + p.real(p.span)
        began = time.monotonic()
        with result["log"].open("w") as log:
            proc = subprocess.Popen(
                command, cwd=REPO, env=crawl_env(config), stdin=subprocess.DEVNULL, stdout=log, stderr=log
            )
            try:
                while time.time() < ends:
                    if proc.poll() is not None:
                        result["error"] = f"the crawl exited {proc.returncode} before the lane's end"
                        break
                    time.sleep(0.2)
            finally:
                stopped = time.time()
                if proc.poll() is None:
                    proc.send_signal(signal.SIGINT)
                try:
                    proc.wait(timeout=STOP_TIMEOUT)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
                    result["error"] = result["error"] or f"the crawl did not stop within {STOP_TIMEOUT:.0f} s of Ctrl-C"
        if result["error"] is None and proc.returncode != 0:
            result["error"] = f"the crawl exited {proc.returncode} after Ctrl-C"
        result["wall"] = time.monotonic() - began
        requests = fakes.results_requests(ENGINE)
    result.update(figures(world, folder / "news.db", requests, topics, p, stopped))
    if result["error"] is None and not result["stored"]:
        result["error"] = "no article of the window stored"
    if result["error"] is None and lane.oracle and LOADED not in result["log"].read_text(errors="replace"):
        result["error"] = f"the crawl did not load the oracle (no {LOADED!r} in its log)"
    if result["error"]:
        result["log_tail"] = tail(result["log"])  # read now: the work folder may go before the table is printed
    return result


def stored_at(db: Path) -> dict[tuple[str, str], float]:
    """(topic, clean URL) -> the real time the engine's find of it was stored."""
    if not db.exists():
        return {}
    query = (
        "select t.name, n.url, e.first_seen_at from topic_news_engines e join news n on n.id = e.news_id "
        "join topics t on t.id = e.topic_id where e.engine = ?"
    )
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
        rows = conn.execute(query, (ENGINE,)).fetchall()
    return {(topic, url): parse_utc(seen) for topic, url, seen in rows}


def next_visits(db: Path) -> dict[str, float]:
    """topic -> the real time of its next planned visit (``topic_rates.next_due_at``)."""
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
            rows = conn.execute(
                "select t.name, r.next_due_at from topic_rates r join topics t on t.id = r.topic_id "
                "where r.engine = ? and r.next_due_at is not null",
                (ENGINE,),
            ).fetchall()
    except sqlite3.Error:
        return {}
    return {topic: parse_utc(due) for topic, due in rows}


def topic_rate_sums(db: Path) -> tuple[int, int]:
    """(holes, burst pages) summed over the engine's ``topic_rates`` rows."""
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
            row = conn.execute(
                "select coalesce(sum(holes), 0), coalesce(sum(burst_pages), 0) from topic_rates where engine = ?",
                (ENGINE,),
            ).fetchone()
    except sqlite3.Error:
        return 0, 0
    return int(row[0]), int(row[1])


def parse_utc(text: str) -> float:
    return datetime.fromisoformat(text).replace(tzinfo=UTC).timestamp()


def figures(
    world: BenchWorld, db: Path, requests: list[dict[str, Any]], topics: list[str], p: Params, stopped: float
) -> dict[str, Any]:
    """A lane's figures (see the module's docstring)."""
    begin, end = ORIGIN + p.warmup, ORIGIN + p.warmup + p.window
    wanted = set(topics)
    in_window = [r for r in requests if r["query"].get("q") in wanted and begin < world.at(r["time"]) <= end]
    visits: dict[str, list[float]] = {topic: [] for topic in topics}
    for r in requests:
        first_page = int(r["query"].get("start") or 0) == 0
        if r["query"].get("q") in wanted and first_page and r["time"] <= stopped - VISIT_SLACK:
            visits[r["query"]["q"]].append(world.at(r["time"]))
    stored, due = stored_at(db), next_visits(db)
    delays: list[float] = []
    missed = pending = published = stored_count = 0
    for topic in topics:
        seen = sorted(visits[topic])
        for k, t in world.published_between(topic, begin, end):
            published += 1
            url = normalize_url(world.article(topic, k, t).url)
            at = stored.get((topic, url))
            if at is not None:
                stored_count += 1
                delays.append(world.at(at) - t)
            elif bisect.bisect_right(seen, t) < len(seen):
                missed += 1
            else:
                pending += 1
                delays.append(world.at(max(due.get(topic, stopped), stopped)) - t)
    holes, bursts = topic_rate_sums(db)
    delays.sort()
    counted = stored_count + pending + missed
    return {
        "requests": len(in_window),
        "per_hour": len(in_window) / (p.window / 3600),
        "published": published,
        "stored": stored_count,
        "missed": missed,
        "pending": pending,
        "missed_share": missed / counted if counted else None,
        "mean": statistics.fmean(delays) / 60 if delays else None,
        "p95": delays[min(len(delays) - 1, int(0.95 * len(delays)))] / 60 if delays else None,
        "holes": holes,
        "burst_pages": bursts,
    }


def number(value: float | None, width: int, digits: int = 1) -> str:
    return f"{value:>{width}.{digits}f}" if value is not None else f"{'-':>{width}}"


def percent(value: float | None, width: int) -> str:
    return f"{value * 100:>{width - 1}.2f}%" if value is not None else f"{'-':>{width}}"


def print_lanes(results: list[dict[str, Any]], budget: float) -> None:
    print(
        f"{'lane':<11} {'requests':>8} {'req/h':>7} {'÷ budget':>8} {'published':>9} {'stored':>7} "
        f"{'mean min':>8} {'p95 min':>7} {'missed':>8} {'pending':>7} {'holes':>6} {'burst':>6} {'wall s':>7}"
    )
    for r in results:
        share = budget * r["lane"].budget
        print(
            f"{r['lane'].name:<11} {r['requests']:>8} {r['per_hour']:>7.0f} {r['per_hour'] / share:>8.2f} "
            f"{r['published']:>9} {r['stored']:>7} {number(r['mean'], 8)} {number(r['p95'], 7)} "
            f"{percent(r['missed_share'], 8)} {r['pending']:>7} {r['holes']:>6} {r['burst_pages']:>6} "
            f"{r['wall']:>7.1f}"
        )


def ratio(a: float | None, b: float | None) -> float | None:
    return a / b if a is not None and b else None


def verdicts(results: list[dict[str, Any]]) -> list[tuple[str, str, str, bool]]:
    """(figure, value, target, met) of every target, over the lanes that ran."""
    by = {r["lane"].name: r for r in results}
    rows: list[tuple[str, str, str, bool]] = []

    def row(figure: str, value: float | None, target: float, less: bool = False) -> None:
        met = value is not None and (value < target if less else value <= target)
        shown = f"{value:.2f}×" if value is not None else "-"
        rows.append((figure, shown, f"{'<' if less else '<='} {target:.2f}×", met))

    fixed, adaptive, oracle, half = (by.get(name) for name in ("fixed", "adaptive", "oracle", "adaptive ½"))
    if fixed and adaptive:
        row("adaptive ÷ fixed: requests", ratio(adaptive["requests"], fixed["requests"]), TARGET_REQUESTS)
        row("adaptive ÷ fixed: mean delay", ratio(adaptive["mean"], fixed["mean"]), TARGET_DELAY)
        row("adaptive ÷ fixed: missed share", ratio(adaptive["missed_share"], fixed["missed_share"]), TARGET_MISSED)
    if adaptive and oracle:
        row("adaptive ÷ oracle: mean delay", ratio(adaptive["mean"], oracle["mean"]), TARGET_ORACLE)
    if fixed and half:
        row("adaptive ½ ÷ fixed: missed share", ratio(half["missed_share"], fixed["missed_share"]), 1.0, less=True)
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--topics", type=int, default=200, help="topics in the world and the crawl (default 200)")
    parser.add_argument("--speed", type=float, default=10.0, help="world seconds per real second (default 10)")
    parser.add_argument(
        "--interval", type=float, default=900.0, help="the fixed scrape_interval I, world seconds (default 900)"
    )
    parser.add_argument("--warmup", type=float, default=30.0, help="world minutes before the window (default 30)")
    parser.add_argument("--window", type=float, default=45.0, help="the measured window, world minutes (default 45)")
    parser.add_argument("--margin", type=float, default=30.0, help="world minutes after the window (default 30)")
    parser.add_argument("--seed", type=int, default=7, help="the world's seed (default 7)")
    parser.add_argument("--floor", type=float, default=0.05, help="the pacing floor, real seconds (default 0.05)")
    parser.add_argument(
        "--lanes",
        default=",".join(lane.name for lane in LANES),
        help="the lanes to run, comma-separated (default: all; 'adaptive ½' may be written 'half')",
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help="short durations for the test suite (16 topics, speed 120, I 240 s; 8 + 6 + 2 world minutes); "
        "targets not enforced",
    )
    parser.add_argument(
        "--keep",
        metavar="DIR",
        help="work in DIR (created, kept: configs, databases, crawl logs) instead of a temp one",
    )
    args = parser.parse_args()
    if args.quick:
        args.topics, args.speed, args.interval, args.warmup, args.window, args.margin = 16, 120.0, 240.0, 8, 6, 2
    names = [name.strip().replace("half", "adaptive ½") for name in args.lanes.split(",") if name.strip()]
    lanes = [lane for lane in LANES if lane.name in names]
    if not lanes or len(lanes) != len(set(names)):
        sys.exit(f"--lanes: some of {', '.join(lane.name for lane in LANES)}, not {args.lanes!r}")
    if min(args.speed, args.interval, args.window, args.floor) <= 0 or args.topics < 1:
        sys.exit("--speed, --interval, --window and --floor must be > 0, --topics >= 1")
    p = Params(
        topics=args.topics,
        speed=args.speed,
        interval=args.interval,
        warmup=args.warmup * 60,
        window=args.window * 60,
        margin=args.margin * 60,
        seed=args.seed,
        floor=args.floor,
    )
    topics = topic_names(p.topics)
    budget = p.topics * 3600 / p.interval * MAX_PAGES
    world = BenchWorld(world_params(p))
    rates = sorted(world.profile(topic).base_per_hour for topic in topics)
    bursty = sum(1 for topic in topics if world.profile(topic).bursts)
    work = work_folder(args.keep, "topicstreams-freshness-bench-")
    print(
        f"{p.topics} topics, base rates {rates[0]:.3g} … {rates[-1]:.3g} an hour "
        f"(median {statistics.median(rates):.2g}, "
        f"{sum(rates):,.0f} in all), {bursty} with a burst; world speed {p.speed:g}× "
        f"(a world hour in {3600 / p.speed / 60:.1f} real min); fixed interval I {p.interval:g} s "
        f"({p.real(p.interval):g} real s), budget {budget:,.0f} requests a world hour "
        f"({budget * p.speed / 3600:.2f}/real s); per lane {p.warmup / 60:g} + {p.window / 60:g} (window) + "
        f"{p.margin / 60:g} world min = {p.real(p.span):.0f} real s; work folder {work}"
        + ("" if args.keep else " (removed at the end)"),
        flush=True,
    )
    results: list[dict[str, Any]] = []
    began, load = time.monotonic(), os.getloadavg()
    try:
        for index, lane in enumerate(lanes):
            folder = work / f"lane{index}-{lane.name.replace(' ½', '-half')}"
            print(
                f"  {lane.name}: scrapy crawl {ENGINE} -a topics=… ({lane.schedule}, budget × {lane.budget:g})",
                flush=True,
            )
            results.append(run_lane(lane, folder, p, topics))
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    took = time.monotonic() - began

    print()
    print_lanes(results, budget)
    failed = [r for r in results if r["error"]]
    for r in failed:
        print(f"\n{r['lane'].name}: FAILED — {r['error']}")
        print(f"  log (end{'' if not args.keep else ', whole: ' + str(r['log'])}):\n    {r['log_tail']}")
    if failed:
        return 1
    print()
    rows = verdicts(results)
    missed = [row for row in rows if not row[3]]
    if rows:
        width = max(len(row[0]) for row in rows)
        print(f"{'figure':<{width}}  {'value':>8}  {'target':<9}  result")
        for figure, value, target, met in rows:
            print(f"{figure:<{width}}  {value:>8}  {target:<9}  {'PASS' if met else 'FAIL'}")
    print(
        f"{len(lanes)} lanes in {took:.0f} s; load average (1 min) {load[0]:.1f} at the start, "
        f"{os.getloadavg()[0]:.1f} at the end, on {os.cpu_count()} CPUs; targets: {len(rows) - len(missed)} of "
        f"{len(rows)} met"
    )
    if missed and not args.quick:
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
