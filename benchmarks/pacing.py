"""Benchmark of pacing: the project's pacing middleware against Scrapy's DOWNLOAD_DELAY, same floor.

    python benchmarks/pacing.py [--topics 200] [--floor 0.5] [--jitter 0.2] [--keep DIR]

The fake Google engine runs here, in this process, on loopback. Each lane is a real crawl, as users run it:
``python -m scrapy crawl google -a once=1 -a topics=t000,t001,…`` (cwd the repo root, TOPICSTREAMS_CONFIG a
config written for the lane: its own SQLite file and browser profiles folder, the fake's base URL, the other
engines off, ``scraper.max_pages: 1``), so every topic is one results-page request:

  project:                the pacing middleware keeps the engine's floor: ``scraper.pacing``
                          ``default_min_interval`` F, ``jitter_ratio`` j, ``per_engine: {google: F}``;
                          every gap should be F plus a random 0…j × F, never below F;
  scrapy DOWNLOAD_DELAY:  the same config, with the middleware off and Scrapy's own delay at Scrapy's
                          default randomisation (``-s TOPICSTREAMS_PACING_ENABLED=0 -s DOWNLOAD_DELAY=F
                          -s DOWNLOAD_DELAY_JITTER=0.5``: each delay 0.5…1.5 × F).

Measures, per lane, from the fake's log of results-page requests (arrival times at the server):

  requests      results-page requests the fake received;
  mean/median/min gap
                the gaps between two consecutive arrivals;
  < F           gaps shorter than the floor F;
  utilisation   F × (1 + j/2) ÷ the mean gap: 1.0 when the engine is asked as often as the floor and the
                jitter (j/2 on average) allow, less when time is lost between requests. The same formula, with
                the same F and j, for both lanes, so that the column compares;
  wall s        the crawl process's wall time (browser start-up and shut-down included);
  answered      topics whose results page came back 200 (out of --topics); the crawl must exit 0 and
                every topic have exactly one page answered.

A lane whose crawl fails (non-zero exit, a time-out, a topic not answered) prints its log's end and the
benchmark exits 1. Otherwise it exits 0, whatever the figures (target: the project's utilisation >= 0.95 with
no gap below F).
"""

from __future__ import annotations

import argparse
import itertools
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
if __package__ in (None, ""):  # run as a script: make the project importable from a checkout
    sys.path.insert(0, str(REPO))

import yaml

from fake_engines.server import FakeEngines

ENGINE = "google"
TARGET_UTILISATION = 0.95
BASELINE_JITTER = 0.5
"""Scrapy's default DOWNLOAD_DELAY_JITTER: each delay drawn from 0.5…1.5 × DOWNLOAD_DELAY."""
OTHER_ENGINES = ("bing", "yahoo", "brave")
DROPPED_ENV = ("TOPICSTREAMS_CONFIG", "TOPICSTREAMS_DB_URL", "SCRAPER_PROXY")
"""The user's own config, database and proxies stay out of the lanes."""


def lanes(floor: float) -> list[tuple[str, list[str]]]:
    """(name, extra ``scrapy crawl`` arguments) of each lane, in the order they run."""
    return [
        ("project", []),
        (
            "scrapy DOWNLOAD_DELAY",
            [
                "-s",
                "TOPICSTREAMS_PACING_ENABLED=0",
                "-s",
                f"DOWNLOAD_DELAY={floor}",
                "-s",
                f"DOWNLOAD_DELAY_JITTER={BASELINE_JITTER}",
            ],
        ),
    ]


def topic_names(count: int) -> list[str]:
    width = max(3, len(str(count - 1)))
    return [f"t{i:0{width}d}" for i in range(count)]


def write_config(folder: Path, base_url: str, floor: float, jitter: float) -> Path:
    """The lane's config (as ``tests.support.project.write_config`` writes one): its own database and profiles."""
    data = {
        "database": {"url": f"sqlite:///{folder / 'news.db'}"},
        "engines": {ENGINE: {"base_url": base_url}, **{name: {"enabled": False} for name in OTHER_ENGINES}},
        "scraper": {
            "max_pages": 1,
            "pacing": {"default_min_interval": floor, "jitter_ratio": jitter, "per_engine": {ENGINE: floor}},
        },
        "browser": {"profile_dir": str(folder / "profiles")},
    }
    path = folder / "config.yml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def crawl_env(config: Path) -> dict[str, str]:
    """The environment of a lane's ``scrapy crawl``: this one without the user's own config, database and proxies
    (:data:`DROPPED_ENV`), with ``config``, the project's settings and this checkout on the path."""
    env = {k: v for k, v in os.environ.items() if k not in DROPPED_ENV}
    env.update(
        TOPICSTREAMS_CONFIG=str(config),
        SCRAPY_SETTINGS_MODULE="topicstreams.settings",
        PYTHONPATH=os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")])),
    )
    return env


def run_lane(
    name: str,
    extra: list[str],
    folder: Path,
    fakes: FakeEngines,
    topics: list[str],
    floor: float,
    jitter: float,
    timeout: float,
) -> dict[str, Any]:
    """One crawl into a fresh folder; its figures from the fake's request log."""
    folder.mkdir(parents=True)
    config = write_config(folder, fakes.base_url(ENGINE), floor, jitter)
    env = crawl_env(config)
    command = [
        sys.executable,
        "-m",
        "scrapy",
        "crawl",
        ENGINE,
        "-a",
        "once=1",
        "-a",
        "topics=" + ",".join(topics),
        *extra,
    ]
    log_path = folder / "crawl.log"
    fakes.clear_log(ENGINE)
    result: dict[str, Any] = {"lane": name, "log": log_path, "error": None}
    started = time.monotonic()
    with log_path.open("w") as log:
        try:
            proc = subprocess.run(
                command,
                cwd=REPO,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                timeout=timeout,
                check=False,
            )
            result["returncode"] = proc.returncode
            if proc.returncode != 0:
                result["error"] = f"the crawl exited {proc.returncode}"
        except subprocess.TimeoutExpired:
            result["returncode"] = None
            result["error"] = f"the crawl timed out after {timeout:.0f} s"
    result["wall"] = time.monotonic() - started

    log_entries = sorted(fakes.results_requests(ENGINE), key=lambda entry: entry["time"])
    times = [entry["time"] for entry in log_entries]
    gaps = [later - earlier for earlier, later in itertools.pairwise(times)]
    answered = {entry["query"].get("q") for entry in log_entries if entry["status"] == 200}
    result.update(
        requests=len(log_entries),
        answered=len(answered & set(topics)),
        gaps=gaps,
        mean=statistics.fmean(gaps) if gaps else None,
        median=statistics.median(gaps) if gaps else None,
        smallest=min(gaps) if gaps else None,
        below=sum(gap < floor for gap in gaps),
        span=(times[-1] - times[0]) if len(times) > 1 else 0.0,
    )
    result["utilisation"] = floor * (1 + jitter / 2) / result["mean"] if result["mean"] else None
    if result["error"] is None and (result["answered"] != len(topics) or result["requests"] != len(topics)):
        result["error"] = (
            f"{result['answered']} of {len(topics)} topics answered 200, "
            f"{result['requests']} results requests for {len(topics)} topics"
        )
    if result["error"]:
        result["log_tail"] = tail(log_path)  # read now: the work folder may go before the table is printed
    return result


def work_folder(keep: str | None, prefix: str) -> Path:
    """The benchmark's work folder: ``--keep DIR`` (made, and it must be empty), else a new temp folder."""
    if not keep:
        return Path(tempfile.mkdtemp(prefix=prefix))
    work = Path(keep).resolve()
    work.mkdir(parents=True, exist_ok=True)
    if any(work.iterdir()):
        sys.exit(f"--keep {work}: the folder is not empty")
    return work


def tail(path: Path, lines: int = 25) -> str:
    try:
        return "\n    ".join(path.read_text(errors="replace").strip().splitlines()[-lines:])
    except OSError:
        return "(no log)"


def seconds(value: float | None, width: int, digits: int = 3) -> str:
    return f"{value:>{width}.{digits}f}" if value is not None else f"{'-':>{width}}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--topics", type=int, default=200, help="topics crawled per lane, one page each (default 200)")
    parser.add_argument("--floor", type=float, default=0.5, help="the floor F between two requests, s (default 0.5)")
    parser.add_argument("--jitter", type=float, default=0.2, help="the project's jitter_ratio j (default 0.2)")
    parser.add_argument(
        "--keep",
        metavar="DIR",
        help="work in DIR (created, kept: configs, databases, crawl logs) instead of a temp folder",
    )
    parser.add_argument("--timeout", type=float, help="seconds allowed per lane (default 120 + 3 × topics × F)")
    args = parser.parse_args()
    if args.topics < 2:
        sys.exit("--topics must be >= 2 (gaps need two requests)")
    if args.floor <= 0 or not 0 <= args.jitter <= 1:
        sys.exit("--floor must be > 0 and --jitter within 0…1")
    floor, jitter = args.floor, args.jitter
    timeout = args.timeout or 120 + 3 * args.topics * floor
    topics = topic_names(args.topics)

    work = work_folder(args.keep, "topicstreams-pacing-bench-")

    results: list[dict[str, Any]] = []
    try:
        with FakeEngines((ENGINE,)) as fakes:
            print(
                f"{args.topics} topics per lane, one results page each; floor F {floor:g} s, jitter j {jitter:g}; "
                f"fake {ENGINE} at {fakes.base_url(ENGINE)}; work folder {work}"
                + ("" if args.keep else " (removed at the end)"),
                flush=True,
            )
            for index, (name, extra) in enumerate(lanes(floor)):
                folder = work / f"lane{index}-{name.split()[0]}"
                print(f"  {name}: scrapy crawl {ENGINE} -a once=1 -a topics=… {' '.join(extra)}".rstrip(), flush=True)
                results.append(run_lane(name, extra, folder, fakes, topics, floor, jitter, timeout))
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)

    print()
    print(
        f"{'lane':<22} {'requests':>8} {'mean gap':>9} {'median':>8} {'min gap':>8} {'< F':>5} "
        f"{'utilisation':>11} {'wall s':>7} {'answered':>9}"
    )
    for r in results:
        print(
            f"{r['lane']:<22} {r['requests']:>8} {seconds(r['mean'], 9)} {seconds(r['median'], 8)} "
            f"{seconds(r['smallest'], 8)} {r['below']:>5} {seconds(r['utilisation'], 11)} "
            f"{r['wall']:>7.1f} {str(r['answered']) + '/' + str(args.topics):>9}"
        )

    failed = [r for r in results if r["error"]]
    for r in failed:
        print(f"\n{r['lane']}: FAILED — {r['error']}")
        print(f"  log (end{'' if not args.keep else ', whole: ' + str(r['log'])}):\n    {r['log_tail']}")
    if failed:
        return 1

    project, baseline = results
    passed = project["utilisation"] >= TARGET_UTILISATION and project["below"] == 0
    print(
        f"F × (1 + j/2) = {floor * (1 + jitter / 2):.3f} s: the mean gap pacing at the floor plus the mean jitter "
        f"should keep"
    )
    if baseline["smallest"] < floor:
        print(
            f"baseline (scrapy DOWNLOAD_DELAY) undercut F: smallest gap {baseline['smallest']:.3f} s < "
            f"{floor:g} s, {baseline['below']} of {len(baseline['gaps'])} gaps below F"
        )
    else:
        print(
            f"baseline (scrapy DOWNLOAD_DELAY) did not undercut F: smallest gap {baseline['smallest']:.3f} s "
            f">= {floor:g} s"
        )
    print(
        f"target: utilisation >= {TARGET_UTILISATION:.2f} and no gap below F (project): {'PASS' if passed else 'FAIL'}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
