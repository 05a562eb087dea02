"""Soak benchmark: ``scrapy crawlall`` on the four fake engines for a long while, its process tree sampled.

    python benchmarks/soak.py [--minutes 60] [--every 15] [--warmup 120] [--pace-scale 1.0] [--plain]
                              [--json PATH] [--keep DIR] [--grace 60]

The fake engines (google, bing, yahoo, brave) run here, in this process, on loopback, with their realistic
page weight (:class:`PageWeight` of ``benchmarks/page_weight.py``, as the render benchmark serves them: a
stylesheet, a script, web fonts, 20 thumbnails, every asset after 50 ms); ``--plain`` serves the pages as
the fake engines write them. The crawl is a real one, as users run it: ``python -m scrapy crawlall`` (cwd a
temp project folder, TOPICSTREAMS_CONFIG a config written there the way ``tests/support/crawl_checks.crawl_config``
writes one: the SQLite database ``news.db`` and ``browser.profile_dir`` in that folder, node ``soak``, every
engine enabled at its fake's base URL), continuous (no ``once``), on 40 topics given in the config's
``topics`` list (which seeds the topics table as active topics). The config keeps the crawl realistic:

  scraper.scrape_interval  60 s: with 40 topics a round of an engine takes longer than that at the shipped
                           pace, so every topic comes round again and again for the whole run, and each
                           engine goes from page to page at its floor;
  scraper.pacing           the shipped floors and jitter (the packaged defaults: 2.0 s, brave 4.0 s, jitter
                           0.25), each floor multiplied by ``--pace-scale`` (default 1.0: the real pace);
  scraper.max_pages        1 (the shipped default).

Every ``--every`` seconds (default 15, from the crawl's start) it samples the crawl's whole process tree:
the scrapy process and every descendant (the Playwright driver(s), ``node``; every Chromium process):

  PSS        sum of ``memory_full_info().pss`` (psutil, from /proc/PID/smaps_rollup), so that pages shared
             between processes (Chromium's) count once; where a process's PSS cannot be read, that sample
             sums RSS instead (the report says which, per sample and in the summary);
  by kind    the same sum per kind of process (:func:`process_kind`, the kinds of ``benchmarks/render.py``:
             scrapy, driver, browser, renderer (zygotes included), gpu-process, utility:<service>…), to see
             where growth comes from;
  processes  how many processes the tree has;
  fds        the sum of ``num_fds()`` over the tree (open file descriptors: files, sockets, pipes);
  db         the size of the SQLite database: ``news.db`` plus its ``-wal`` and ``-shm`` files.

The sampler runs here, outside the crawl's tree (so do the fake engines): neither counts in the figures.

After ``--minutes`` (default 60) it sends SIGINT to crawlall (Scrapy's graceful stop), waits for it to exit
and kills what is left of the tree after ``--grace`` seconds (default 60). Then it prints a line per sample
(elapsed, PSS MiB total and per kind, processes, fds, db KB) and a summary, over the samples after a
warm-up (``--warmup`` seconds, default 120):

  steady PSS       the median of the post-warm-up samples' PSS;
  growth           the least-squares slope of PSS over the post-warm-up samples, in MiB/h and in % of the
                   steady PSS per hour (and the same slope per kind of process);
  peak PSS         the largest sample (warm-up included);
  processes        at the end (the last sample) and the most of any sample;
  fds              at the start of the steady part (the first post-warm-up sample) and at the end, with
                   their least-squares slope (fds/h);
  database         its size at the end; the rows of ``news`` stored; the results pages each engine served
                   (the fakes' request log: results requests, and how many were answered 200).

Targets, each printed as met / not met: steady PSS <= 700 MiB; growth <= 5 %/h; no fd growth — the fitted fd
trend adds fewer than max(10, 2 % of the start-of-steady count) fds over the post-warm-up span. A figure that
cannot be computed (a run no longer than its warm-up, or a single post-warm-up sample) is "not measured".

``--json PATH`` writes the samples (bytes) and the summary. Exit status: 0 when the crawl ran for the whole
time and produced samples, whatever the figures; 1 when the crawl failed — it exited before the end, no
sample was taken, or it stored no news — with the reason and the end of its log printed. Ctrl-C ends the run
early, as at the deadline, and still reports.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import signal
import sqlite3
import statistics
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
if __package__ in (None, ""):  # run as a script: make the project importable from a checkout
    sys.path.insert(0, str(REPO))

import contextlib

import psutil
import yaml

from benchmarks.pacing import tail, work_folder
from benchmarks.page_weight import PageWeight
from fake_engines import FakeEngines
from topicstreams import ENGINES

MiB = 2**20
TARGET_STEADY_MIB = 700.0
TARGET_GROWTH_PCT_H = 5.0
FD_TOLERANCE = (10, 0.02)
"""No fd growth: the fitted trend adds fewer than max(10, 2 % of the start-of-steady count) fds."""
SCRAPE_INTERVAL = 60
NODE = "soak"
DB_NAME = "news.db"
DROPPED_ENV = ("TOPICSTREAMS_CONFIG", "TOPICSTREAMS_DB_URL", "SCRAPER_PROXY")
"""The user's own config, database and proxies stay out of the crawl."""

TOPICS = (
    "climate summit",
    "central bank rates",
    "world cup final",
    "chip export rules",
    "wildfire season",
    "space station",
    "election debate",
    "housing market",
    "oil prices",
    "vaccine trial",
    "trade talks",
    "electric cars",
    "heatwave",
    "drought",
    "flood warning",
    "stock market",
    "inflation report",
    "jobs report",
    "tech layoffs",
    "merger deal",
    "privacy law",
    "cyber attack",
    "ai regulation",
    "satellite launch",
    "mars rover",
    "olympic games",
    "tennis open",
    "marathon",
    "film festival",
    "music awards",
    "museum opening",
    "rail strike",
    "airline delays",
    "port congestion",
    "grain exports",
    "coffee prices",
    "solar power",
    "wind farms",
    "nuclear plant",
    "ocean plastic",
)
"""40 topics, plain words (the fake engines write their results for any query)."""

KIND_COLUMNS = ("scrapy", "driver", "browser", "renderer", "gpu", "utility", "other")
"""The per-kind columns of the report's table; the JSON keeps every kind as :func:`process_kind` names it."""


def process_kind(proc: psutil.Process, root: psutil.Process) -> str:
    """What ``proc`` is in the tree of ``root``, as ``benchmarks/render.py`` names its kinds: scrapy (the root),
    driver (Playwright's ``node``), or a Chromium process by its ``--type=`` (browser without one; a zygote counts
    as renderer, since renderers fork from it; a utility process as ``utility:<service>``). Raises psutil.Error
    for a process that is gone."""
    if proc.pid == root.pid:
        return "scrapy"
    argv = proc.cmdline()
    if not argv:
        return "other"
    program = os.path.basename(argv[0])
    if program.startswith("node"):
        return "driver"
    options = dict(arg[2:].partition("=")[::2] for arg in argv[1:] if arg.startswith("--"))
    kind = options.get("type")
    if kind is None:
        if "chrom" not in program:
            return program
        # A helper Chromium has just forked shows the browser's own command line until it turns into what it is:
        # the browser is the one the driver started.
        parent = proc.parent()
        return (
            "browser"
            if parent is None or not os.path.basename((parent.cmdline() or [""])[0]).startswith("chrom")
            else "other"
        )
    if kind == "zygote":
        return "renderer"
    if kind == "utility" and options.get("utility-sub-type"):
        return "utility:" + options["utility-sub-type"].rsplit(".", 1)[-1]
    return kind


def kind_column(kind: str) -> str:
    """The report column of a :func:`process_kind` kind."""
    if kind == "gpu-process":
        return "gpu"
    if kind.startswith("utility"):
        return "utility"
    return kind if kind in KIND_COLUMNS else "other"


# -- sampling -------------------------------------------------------------------------------------------------


@dataclass
class Sample:
    """One look at the crawl's process tree. Memory in bytes."""

    elapsed: float
    """Seconds since the crawl was started."""
    memory: int
    """PSS (or RSS, see ``memory_kind``) summed over the tree."""
    processes: int
    fds: int
    db_bytes: int = 0
    memory_kind: str = "PSS"
    memory_by_kind: dict[str, int] = field(default_factory=dict)
    processes_by_kind: dict[str, int] = field(default_factory=dict)
    fds_by_kind: dict[str, int] = field(default_factory=dict)


def tree(pid: int) -> list[psutil.Process]:
    """The process ``pid`` and every live descendant ([] when it is gone)."""
    try:
        root = psutil.Process(pid)
        return [root, *root.children(recursive=True)]
    except psutil.Error:
        return []


def db_size(db: Path | None) -> int:
    """Bytes of the SQLite file ``db`` and its ``-wal`` and ``-shm`` files (those that exist)."""
    if db is None:
        return 0
    total = 0
    for path in (db, db.with_name(db.name + "-wal"), db.with_name(db.name + "-shm")):
        with contextlib.suppress(OSError):
            total += path.stat().st_size
    return total


def sample_tree(pid: int, elapsed: float = 0.0, db: Path | None = None) -> Sample | None:
    """A :class:`Sample` of the tree of ``pid`` (None when the process is gone): PSS where every process's
    can be read, else RSS for all of them; processes that end while being read are left out."""
    procs = tree(pid)
    if not procs:
        return None
    root = procs[0]
    for memory_kind in ("PSS", "RSS"):
        seen: list[tuple[str, int, int]] = []
        denied = False
        for proc in procs:
            try:
                kind = process_kind(proc, root)
                memory = proc.memory_full_info().pss if memory_kind == "PSS" else proc.memory_info().rss
                fds = proc.num_fds()
            except psutil.AccessDenied:
                denied = True
                break
            except (psutil.NoSuchProcess, psutil.ZombieProcess):
                continue
            except AttributeError:  # no pss field on this platform
                denied = True
                break
            seen.append((kind, memory, fds))
        if denied and memory_kind == "PSS":
            continue
        sample = Sample(elapsed=elapsed, memory=0, processes=0, fds=0, db_bytes=db_size(db), memory_kind=memory_kind)
        for kind, memory, fds in seen:
            sample.memory += memory
            sample.processes += 1
            sample.fds += fds
            sample.memory_by_kind[kind] = sample.memory_by_kind.get(kind, 0) + memory
            sample.processes_by_kind[kind] = sample.processes_by_kind.get(kind, 0) + 1
            sample.fds_by_kind[kind] = sample.fds_by_kind.get(kind, 0) + fds
        return sample
    return None


# -- the figures ------------------------------------------------------------------------------------------------


def slope(xs: list[float], ys: list[float]) -> float | None:
    """The least-squares slope of ys over xs (None with fewer than 2 points, or all xs equal)."""
    if len(xs) != len(ys):
        raise ValueError(f"slope: {len(xs)} xs for {len(ys)} ys")
    if len(xs) < 2:
        return None
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    sxx = sum((x - mx) ** 2 for x in xs)
    if sxx == 0:
        return None
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / sxx


@dataclass
class Summary:
    """The figures of a run (memory in MiB, slopes per hour). None: not measured (too few samples)."""

    samples: int
    steady_samples: int
    warmup: float
    memory_kind: str
    steady_mib: float | None
    growth_mib_h: float | None
    growth_pct_h: float | None
    peak_mib: float
    peak_at: float
    processes_end: int
    processes_max: int
    fds_start: int | None
    fds_end: int
    fds_slope_h: float | None
    fds_added: float | None
    """What the fitted fd trend adds over the post-warm-up span."""
    db_bytes_end: int
    steady_by_kind: dict[str, float] = field(default_factory=dict)
    growth_by_kind: dict[str, float | None] = field(default_factory=dict)
    news_rows: int | None = None
    pages: dict[str, dict[str, int]] = field(default_factory=dict)
    targets: dict[str, bool | None] = field(default_factory=dict)


def summarize(samples: list[Sample], warmup: float) -> Summary:
    """The figures of ``samples`` (at least one), the steady part being those at ``elapsed >= warmup``."""
    if not samples:
        raise ValueError("summarize: no samples")
    steady = [s for s in samples if s.elapsed >= warmup]
    hours = [s.elapsed / 3600 for s in steady]
    kinds = {s.memory_kind for s in samples}
    peak = max(samples, key=lambda s: s.memory)
    steady_mib = statistics.median(s.memory / MiB for s in steady) if steady else None
    growth = slope(hours, [s.memory / MiB for s in steady])
    fds_slope = slope(hours, [float(s.fds) for s in steady])
    span = (steady[-1].elapsed - steady[0].elapsed) / 3600 if steady else 0.0
    all_kinds = sorted({kind for s in steady for kind in s.memory_by_kind})
    summary = Summary(
        samples=len(samples),
        steady_samples=len(steady),
        warmup=warmup,
        memory_kind="PSS" if kinds == {"PSS"} else "RSS" if kinds == {"RSS"} else "PSS and RSS",
        steady_mib=steady_mib,
        growth_mib_h=growth,
        growth_pct_h=100 * growth / steady_mib if growth is not None and steady_mib else None,
        peak_mib=peak.memory / MiB,
        peak_at=peak.elapsed,
        processes_end=samples[-1].processes,
        processes_max=max(s.processes for s in samples),
        fds_start=steady[0].fds if steady else None,
        fds_end=samples[-1].fds,
        fds_slope_h=fds_slope,
        fds_added=fds_slope * span if fds_slope is not None else None,
        db_bytes_end=samples[-1].db_bytes,
        steady_by_kind={k: statistics.median(s.memory_by_kind.get(k, 0) / MiB for s in steady) for k in all_kinds},
        growth_by_kind={k: slope(hours, [s.memory_by_kind.get(k, 0) / MiB for s in steady]) for k in all_kinds},
    )
    summary.targets = targets(summary)
    return summary


def fd_allowance(fds_start: int) -> float:
    """Fds the fitted trend may add over the steady part and still count as no growth."""
    return max(FD_TOLERANCE[0], FD_TOLERANCE[1] * fds_start)


def targets(summary: Summary) -> dict[str, bool | None]:
    """Each target: met (True), not met (False) or not measured (None)."""
    fd_ok = None
    if summary.fds_added is not None and summary.fds_start is not None:
        fd_ok = summary.fds_added < fd_allowance(summary.fds_start)
    return {
        f"steady PSS <= {TARGET_STEADY_MIB:.0f} MiB": None
        if summary.steady_mib is None
        else summary.steady_mib <= TARGET_STEADY_MIB,
        f"growth <= {TARGET_GROWTH_PCT_H:g} %/h": None
        if summary.growth_pct_h is None
        else summary.growth_pct_h <= TARGET_GROWTH_PCT_H,
        "no fd growth": fd_ok,
    }


# -- the report ---------------------------------------------------------------------------------------------------


def table_header(memory_kind: str = "PSS") -> str:
    kinds = " ".join(f"{k:>8}" for k in KIND_COLUMNS)
    return f"{'elapsed':>8} {memory_kind + ' MiB':>8} {kinds} {'procs':>6} {'fds':>6} {'db KB':>9}"


def table_line(sample: Sample) -> str:
    columns = dict.fromkeys(KIND_COLUMNS, 0)
    for kind, memory in sample.memory_by_kind.items():
        columns[kind_column(kind)] += memory
    kinds = " ".join(f"{columns[k] / MiB:>8.1f}" for k in KIND_COLUMNS)
    note = "" if sample.memory_kind == "PSS" else f"  ({sample.memory_kind})"
    return (
        f"{sample.elapsed:>7.0f}s {sample.memory / MiB:>8.1f} {kinds} {sample.processes:>6} {sample.fds:>6} "
        f"{sample.db_bytes / 1024:>9.0f}{note}"
    )


def figure(value: float | None, fmt: str, unit: str = "") -> str:
    return "not measured" if value is None else f"{value:{fmt}}{unit}"


def verdict(value: bool | None) -> str:
    return "not measured" if value is None else "met" if value else "NOT met"


def report(summary: Summary) -> str:
    s = summary
    kind = s.memory_kind
    lines = [
        f"summary ({s.samples} samples, {s.steady_samples} after the {s.warmup:.0f} s warm-up; memory is {kind}):",
        f"  steady {kind}        "
        + ("not measured" if s.steady_mib is None else f"{s.steady_mib:.1f} MiB (median after the warm-up)"),
        "  growth            "
        + (
            "not measured"
            if s.growth_mib_h is None
            else f"{s.growth_mib_h:+.1f} MiB/h = {figure(s.growth_pct_h, '+.2f', ' %')} of steady "
            "per hour (least squares after the warm-up)"
        ),
    ]
    if s.steady_by_kind:
        parts = [
            f"{k} {s.steady_by_kind[k]:.1f} ({figure(s.growth_by_kind.get(k), '+.1f')}/h)"
            for k in sorted(s.steady_by_kind, key=lambda k: -s.steady_by_kind[k])
        ]
        lines.append("  by kind (MiB)     " + ", ".join(parts))
    lines += [
        f"  peak {kind}          {s.peak_mib:.1f} MiB at {s.peak_at:.0f} s",
        f"  processes         {s.processes_end} at the end, {s.processes_max} at most",
        "  fds               "
        + (
            f"{s.fds_end} at the end (no steady part)"
            if s.fds_start is None
            else f"{s.fds_start} at the start of the steady part, {s.fds_end} at the end; slope "
            + (
                "not measured"
                if s.fds_added is None
                else f"{s.fds_slope_h:+.1f} fds/h (the trend adds {s.fds_added:+.1f} over the steady part)"
            )
        ),
        (
            f"  database          {s.db_bytes_end / 1024:.0f} KB at the end, "
            f"{'?' if s.news_rows is None else f'{s.news_rows:,}'} news rows"
        ),
    ]
    if s.pages:
        lines.append(
            "  pages per engine  "
            + ", ".join(f"{engine} {p['requests']} ({p['ok']} answered 200)" for engine, p in s.pages.items())
        )
    lines.append("targets:")
    for name, met in s.targets.items():
        lines.append(f"  {name}: {verdict(met)}")
    return "\n".join(lines)


# -- the crawl ------------------------------------------------------------------------------------------------


def shipped_pacing() -> dict[str, Any]:
    """The packaged defaults' ``scraper.pacing`` (floors and jitter as they ship)."""
    from topicstreams.config.loading import load_config

    return load_config({}, environ={}).data["scraper"]["pacing"]


def soak_config(
    folder: Path, fakes: FakeEngines, topics: tuple[str, ...] | list[str] = TOPICS, pace_scale: float = 1.0
) -> Path:
    """``folder/config.yml`` for crawlall on every fake engine, into ``folder/news.db``, at the shipped pace × scale."""
    pacing = shipped_pacing()
    data = {
        "database": {"url": f"sqlite:///{DB_NAME}"},
        "topics": list(topics),
        "node": {"id": NODE},
        "engines": {name: {"base_url": fakes.base_url(name), "enabled": True} for name in ENGINES},
        "scraper": {
            "schedule": "fixed",
            "scrape_interval": SCRAPE_INTERVAL,
            "max_pages": 1,
            "pacing": {
                "default_min_interval": pacing["default_min_interval"] * pace_scale,
                "jitter_ratio": pacing["jitter_ratio"],
                "per_engine": {name: floor * pace_scale for name, floor in (pacing.get("per_engine") or {}).items()},
            },
        },
        "browser": {"profile_dir": "profiles"},
    }
    path = folder / "config.yml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def crawl_env(config: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in DROPPED_ENV}
    env.update(
        TOPICSTREAMS_CONFIG=str(config),
        SCRAPY_SETTINGS_MODULE="topicstreams.settings",
        PYTHONPATH=os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])),
    )
    return env


def stop_crawl(proc: subprocess.Popen, grace: float, known: list[psutil.Process] = ()) -> dict[str, Any]:
    """SIGINT to the crawl (unless it has exited already), then wait up to ``grace`` s for it, and kill it after.
    Its descendants (those alive now, and ``known``: the tree of the last sample, in case the crawl died and left
    orphans) get 5 s more to follow it; any still running then is killed."""
    members = [*known, *tree(proc.pid)[1:]]
    started = time.monotonic()
    outcome: dict[str, Any] = {"signalled": False, "killed": False}
    if proc.poll() is None:
        outcome["signalled"] = True
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            outcome["killed"] = True
            members += tree(proc.pid)[1:]
            proc.kill()
            proc.wait()
    outcome["returncode"] = proc.returncode
    outcome["seconds"] = time.monotonic() - started
    unique = list({member.pid: member for member in members}.values())
    _, alive = psutil.wait_procs(unique, timeout=5)  # is_running() checks the start time too: no reused pid
    for member in alive:
        try:
            member.kill()
        except psutil.Error:
            continue
    outcome["stragglers_killed"] = len(alive)
    return outcome


def news_rows(db: Path) -> int | None:
    if not db.exists():
        return None
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
            return conn.execute("select count(*) from news").fetchone()[0]
    except sqlite3.Error:
        return None


def pages_served(fakes: FakeEngines) -> dict[str, dict[str, int]]:
    pages = {}
    for engine in fakes.engines:
        log = fakes.results_requests(engine)
        pages[engine] = {"requests": len(log), "ok": sum(1 for e in log if e["status"] == 200)}
    return pages


def soak(args: argparse.Namespace, work: Path) -> int:
    weight = None if args.plain else PageWeight()
    db = work / DB_NAME
    log_path = work / "crawl.log"
    samples: list[Sample] = []
    failure: str | None = None
    interrupted = False
    with FakeEngines(ENGINES, extensions=[weight] if weight else []) as fakes:
        config = soak_config(work, fakes, TOPICS, args.pace_scale)
        pacing = yaml.safe_load(config.read_text())["scraper"]["pacing"]
        print(
            f"scrapy crawlall for {args.minutes:g} min on the fake {', '.join(ENGINES)} "
            f"({'plain pages' if weight is None else 'with page weight'}), {len(TOPICS)} topics, "
            f"scrape_interval {SCRAPE_INTERVAL} s, max_pages 1, floors {pacing['default_min_interval']:g} s "
            f"(per engine: {', '.join(f'{k} {v:g} s' for k, v in pacing['per_engine'].items()) or 'none'}), "
            f"jitter {pacing['jitter_ratio']:g}; a sample every {args.every:g} s, warm-up {args.warmup:g} s; "
            f"work folder {work}" + ("" if args.keep else " (removed at the end)"),
            flush=True,
        )
        print(table_header(), flush=True)
        with log_path.open("w") as log:
            proc = subprocess.Popen(
                [sys.executable, "-m", "scrapy", "crawlall"],
                cwd=work,
                env=crawl_env(config),
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )  # our Ctrl-C is ours to pass on
            started = time.monotonic()
            deadline = started + args.minutes * 60
            known: list[psutil.Process] = []
            try:
                tick = 0
                while True:
                    at = started + tick * args.every
                    if at > deadline + 1e-6:  # the last sample falls at the deadline itself
                        break
                    time.sleep(max(0.0, at - time.monotonic()))
                    if proc.poll() is not None:
                        failure = (
                            f"the crawl exited early (code {proc.returncode}) after "
                            f"{time.monotonic() - started:.0f} s of {args.minutes * 60:.0f}"
                        )
                        break
                    sample = sample_tree(proc.pid, time.monotonic() - started, db)
                    known = tree(proc.pid)[1:] or known
                    if sample is not None:
                        samples.append(sample)
                        print(table_line(sample), flush=True)
                    tick += 1
                if failure is None:
                    time.sleep(max(0.0, deadline - time.monotonic()))
            except KeyboardInterrupt:
                interrupted = True
                print(f"interrupted after {time.monotonic() - started:.0f} s: stopping the crawl", flush=True)
            stop = stop_crawl(proc, args.grace, known)
        pages = pages_served(fakes)
    rows = news_rows(db)
    print(
        (
            f"crawl stopped: exit code {stop['returncode']} after SIGINT, in {stop['seconds']:.1f} s"
            if stop["signalled"]
            else f"crawl had exited: exit code {stop['returncode']}"
        )
        + (f"; killed after the {args.grace:g} s grace" if stop["killed"] else "")
        + (f"; {stop['stragglers_killed']} leftover processes killed" if stop["stragglers_killed"] else "")
    )
    if failure is None and not samples:
        failure = "no sample was taken"
    if failure is None and not rows:
        failure = "the crawl stored no news"

    summary = summarize(samples, args.warmup) if samples else None
    if summary is not None:
        summary.news_rows, summary.pages = rows, pages
        print()
        print(report(summary))
    if args.json:
        Path(args.json).write_text(
            json.dumps(
                {
                    "options": {k: v for k, v in vars(args).items() if k != "json"},
                    "topics": list(TOPICS),
                    "page_weight": weight is not None,
                    "pacing": pacing,
                    "failure": failure,
                    "interrupted": interrupted,
                    "stop": stop,
                    "samples": [asdict(s) for s in samples],
                    "summary": asdict(summary) if summary is not None else None,
                },
                indent=1,
            )
        )
    if failure is not None:
        print(f"\nFAILED: {failure}\n  crawl log (end):\n    {tail(log_path, 30)}")
        return 1
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--minutes", type=float, default=60, help="how long the crawl runs (default 60)")
    parser.add_argument("--every", type=float, default=15, help="seconds between two samples (default 15)")
    parser.add_argument(
        "--warmup", type=float, default=120, help="seconds left out of the steady figures (default 120)"
    )
    parser.add_argument(
        "--pace-scale",
        type=float,
        default=1.0,
        help="multiplies the shipped pacing floors (default 1.0: the real pace)",
    )
    parser.add_argument("--plain", action="store_true", help="the fake engines' pages without the page weight")
    parser.add_argument(
        "--grace",
        type=float,
        default=60,
        help="seconds the crawl has to stop after SIGINT before its tree is killed (default 60)",
    )
    parser.add_argument("--json", metavar="PATH", help="write the samples and the summary to PATH")
    parser.add_argument(
        "--keep",
        metavar="DIR",
        help="work in DIR (created, kept: config, database, profiles, crawl log) instead of a temp folder",
    )
    args = parser.parse_args(argv)
    if not (args.minutes > 0 and args.every > 0 and args.warmup >= 0 and args.pace_scale > 0 and args.grace >= 0):
        parser.error("--minutes, --every and --pace-scale must be > 0, --warmup and --grace >= 0")
    if not math.isfinite(args.minutes):
        parser.error("--minutes must be finite")
    work = work_folder(args.keep, "topicstreams-soak-")
    try:
        return soak(args, work)
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
