"""Benchmark of routes: an engine through three real proxies against the same engine direct, same per-route floor.

    python benchmarks/routes.py [--seconds 45] [--warmup 3] [--floor 1.0] [--jitter 0.2] [--interval 5] [--topics 24]
                                [--engines google,bing] [--quick] [--keep DIR]

The fake engines run here, in this process, on loopback; three real forward proxies run beside them
(``tests/support/route_proxies.py``: pproxy, one process each — plain http, http with credentials, socks5 — each
sending from its own loopback address, so the fakes see one client per route). Each lane is a real continuous
crawl, as users run it: ``python -m scrapy crawl ENGINE -a topics=t00,t01,…`` (cwd the repo root,
TOPICSTREAMS_CONFIG a config written for the lane: its own SQLite file and browser profiles folder, the fake's base
URL, the other engines off, ``scraper.max_pages: 1``, ``scrape_interval`` I, floor F and jitter j), with every
classified response recorded (``tests/support/classification_recorder.py``: its route, the moment it left, its
latency). Per engine, two lanes:

  1 route (direct):     no ``routes``: the one ``default`` route, as before routes existed;
  3 routes (proxies):   ``routes: r0, r1, r2``, one per proxy, each with its own persona; after the measured window
                        proxy 2 is killed (route r2) and the crawl goes on for one interval and a little more.

The load keeps the floor the binding constraint: ``--topics`` topics due every ``--interval`` seconds is more than
three routes can take at one page per F, so every lane always has a topic due and goes as fast as its floor lets it.

Measures, per lane, from the recorded classifications (the crawl's own clock for the moments requests left):

  topics/h      ok first pages (topics scraped) per hour over the window: ``--seconds`` from ``--warmup`` seconds
                after the first ok page; (pages − 1) ÷ the span from the window's first to its last;
  per route     the window's ok pages on each route (the 3-route lane must use all three);
  min gap, < F  per route, the gaps between two consecutive requests leaving on it (every request of the run,
                the kill's failures and probes included), their smallest, and how many are below F;
  render ms     the median latency of the window's ok pages (from the request leaving to its rendered page); and
                that of the pages that rendered alone (no other route's page in flight meanwhile), which leaves
                out the cost of three pages sharing one Chromium on a busy machine, so that the proxies' own cost
                shows;
  route killed  the topics route r2 held when its proxy died (each of its requests that failed after the kill):
                for each, the seconds from the kill to its next ok scrape on another route; their maximum.

Targets: topics/h with 3 routes ≥ 2.8 × with 1 route; no gap below F on any route of any lane; render ms through
the proxies (pages alone) ≤ 1.2 × direct; every topic the killed route held scraped by the others within one
interval. A lane whose crawl fails (non-zero exit, no ok page, a time-out) prints its log's end and the benchmark
exits 1; a missed target exits 1 too, except with ``--quick`` (short durations, for the test suite: figures that
short only show that the benchmark runs).
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import statistics
import subprocess
import sys
import time
from collections import Counter
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
if __package__ in (None, ""):  # run as a script: make the project (and tests.support) importable from a checkout
    sys.path.insert(0, str(REPO))

import yaml

from benchmarks.pacing import crawl_env, seconds, tail, topic_names, work_folder
from fake_engines import FakeEngines
from tests.support.crawl_checks import FLOAT_ROUNDING, classified, differences, recording
from tests.support.route_proxies import RouteProxies
from topicstreams import ENGINES

ENGINES_MEASURED = ("google", "bing")
PROXY_KINDS = ("http", "http-auth", "socks5")
ROUTE_NAMES = ("r0", "r1", "r2")
KILLED = 2
"""The proxy killed after the window (route r2, the socks5 one)."""
TARGET_RATIO = 2.8
TARGET_RENDER = 1.2
START_TIMEOUT = 90.0
"""Seconds a crawl may take to its first ok page (Python, Scrapy, Chromium and the database starting)."""
STOP_TIMEOUT = 60.0


@dataclass(frozen=True)
class Params:
    floor: float
    jitter: float
    interval: float
    topics: int
    warmup: float
    seconds: float
    after_kill: float
    """Seconds the crawl goes on after the kill: one interval and a little more."""


@dataclass(frozen=True)
class LaneSpec:
    engine: str
    routes: int
    """1: direct (no ``routes``); 3: one route per proxy."""

    @property
    def name(self) -> str:
        return f"{self.engine}, {self.routes} route{'s' if self.routes > 1 else ''} " + (
            "(proxies)" if self.routes > 1 else "(direct)"
        )

    @property
    def kill(self) -> bool:
        return self.routes > 1


def write_config(folder: Path, spec: LaneSpec, fakes: FakeEngines, proxies: RouteProxies, p: Params) -> Path:
    data: dict[str, Any] = {
        "database": {"url": f"sqlite:///{folder / 'news.db'}"},
        "node": {"id": "bench"},
        "engines": {
            name: {"base_url": fakes.base_url(name)} if name == spec.engine else {"enabled": False} for name in ENGINES
        },
        "scraper": {
            "schedule": "fixed",
            "scrape_interval": p.interval,
            "max_pages": 1,
            "pacing": {
                "default_min_interval": p.floor,
                "jitter_ratio": p.jitter,
                "per_engine": {spec.engine: p.floor},
            },
        },
        "browser": {"profile_dir": str(folder / "profiles")},
    }
    if spec.routes > 1:
        data["routes"] = proxies.route_entries((spec.engine,), names=ROUTE_NAMES[: spec.routes])
    path = folder / "config.yml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def first_ok(folder: Path) -> bool:
    return any(c["cls"] == "ok" for c in classified(folder))


def run_lane(
    spec: LaneSpec, folder: Path, fakes: FakeEngines, proxies: RouteProxies, p: Params, topics: list[str]
) -> dict[str, Any]:
    """One continuous crawl into a fresh folder: to its first ok page, the window, the kill; then Ctrl-C."""
    folder.mkdir(parents=True)
    config = write_config(folder, spec, fakes, proxies, p)
    env = crawl_env(config)
    command = [
        sys.executable,
        "-m",
        "scrapy",
        "crawl",
        spec.engine,
        "-a",
        "topics=" + ",".join(topics),
        *recording(folder),
    ]
    log_path = folder / "crawl.log"
    fakes.clear_log()
    result: dict[str, Any] = {"spec": spec, "log": log_path, "error": None, "killed_at": None}
    started = time.monotonic()
    with log_path.open("w") as log:
        proc = subprocess.Popen(
            command, cwd=REPO, env=env, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT
        )
        try:
            deadline = time.monotonic() + START_TIMEOUT
            while not first_ok(folder):
                if proc.poll() is not None:
                    result["error"] = f"the crawl exited {proc.returncode} before its first ok page"
                    break
                if time.monotonic() > deadline:
                    result["error"] = f"no ok page within {START_TIMEOUT:.0f} s of the start"
                    break
                time.sleep(0.1)
            if result["error"] is None:
                time.sleep(p.warmup + p.seconds + 0.5)  # the window, measured in the crawl's clock afterwards
                if spec.kill:
                    proxies.stop(KILLED)
                    result["killed_at"] = time.time()
                    time.sleep(p.after_kill)
                if proc.poll() is not None:
                    result["error"] = f"the crawl exited {proc.returncode} while measured"
        finally:
            if proc.poll() is None:
                proc.send_signal(signal.SIGINT)
            try:
                proc.wait(timeout=STOP_TIMEOUT)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
                result["error"] = result["error"] or f"the crawl did not stop within {STOP_TIMEOUT:.0f} s of Ctrl-C"
            proxies.start()  # the killed proxy back, for the next lane
    result["wall"] = time.monotonic() - started
    if result["error"] is None and proc.returncode != 0:
        result["error"] = f"the crawl exited {proc.returncode} after Ctrl-C"
    result.update(figures(classified(folder), spec, p, result["killed_at"]))
    if result["error"] is None and result["rate"] is None:
        result["error"] = "fewer than two ok pages in the window"
    if result["error"]:
        result["log_tail"] = tail(log_path)  # read now: the work folder may go before the table is printed
    return result


def wall(c: dict[str, Any]) -> float:
    """A classification's moment (its ``at``), on the wall clock."""
    return datetime.fromisoformat(c["at"]).timestamp()


def figures(records: list[dict[str, Any]], spec: LaneSpec, p: Params, killed_at: float | None) -> dict[str, Any]:
    """A lane's figures from its recorded classifications (see the module's docstring)."""
    pages = sorted(
        (
            c
            for c in records
            if c["cls"] == "ok" and c["page_type"] == "first" and not c["canary"] and c["sent_at"] is not None
        ),
        key=lambda c: c["sent_at"],
    )
    found: dict[str, Any] = {"rate": None, "per_route": {}, "render": None, "render_alone": None, "alone": 0}
    if pages:
        start = pages[0]["sent_at"] + p.warmup
        window = [c for c in pages if start <= c["sent_at"] <= start + p.seconds]
        if len(window) >= 2:
            found["rate"] = (len(window) - 1) / (window[-1]["sent_at"] - window[0]["sent_at"]) * 3600
        found["per_route"] = dict(sorted(Counter(c["route"] for c in window).items()))
        latencies = [c["latency"] for c in window if c["latency"] is not None]
        found["render"] = statistics.median(latencies) if latencies else None
        alone = [c["latency"] for c in window if c["latency"] is not None and rendered_alone(c, records)]
        found["alone"] = len(alone)
        found["render_alone"] = statistics.median(alone) if alone else None
    gaps = [
        gap
        for route in {c["route"] for c in records}
        for gap in differences(sorted(c["sent_at"] for c in records if c["route"] == route and c["sent_at"]))
    ]
    found.update(gaps=len(gaps), below=sum(gap < p.floor - FLOAT_ROUNDING for gap in gaps))
    found["smallest"] = min(gaps) if gaps else None
    found.update(held={}, rescued=None)
    if killed_at is not None:
        found.update(kill_figures(records, killed_at, ROUTE_NAMES[KILLED]))
    return found


def rendered_alone(page: dict[str, Any], records: list[dict[str, Any]]) -> bool:
    """Whether no other request was in flight (left, not yet answered) while ``page`` was."""
    begin, end = page["sent_at"], page["sent_at"] + page["latency"]
    return not any(
        other is not page
        and other["sent_at"] is not None
        and other["latency"] is not None
        and other["sent_at"] < end
        and other["sent_at"] + other["latency"] > begin
        for other in records
    )


def kill_figures(records: list[dict[str, Any]], killed_at: float, route: str) -> dict[str, Any]:
    """The topics ``route`` held when its proxy died (each failed on it after the kill): the seconds from the kill
    to each one's next ok scrape on another route (None: not scraped again before the crawl stopped)."""
    failed = {}
    for c in sorted(records, key=wall):
        if c["route"] == route and c["cls"] != "ok" and not c["canary"] and c["topic"] and wall(c) >= killed_at:
            failed.setdefault(c["topic"], wall(c))
    held: dict[str, float | None] = {}
    for topic, failed_at in failed.items():
        again = [
            wall(c)
            for c in records
            if c["topic"] == topic and c["cls"] == "ok" and c["route"] != route and wall(c) >= failed_at
        ]
        held[topic] = min(again) - killed_at if again else None
    rescued = [delay for delay in held.values() if delay is not None]
    reasons = Counter(c["reason"] for c in records if c["route"] == route and c["cls"] != "ok")
    return {
        "held": held,
        "rescued": max(rescued) if held and len(rescued) == len(held) else None,
        "kill_reasons": dict(reasons),
    }


def ms(value: float | None, width: int) -> str:
    return f"{value * 1000:>{width}.0f}" if value is not None else f"{'-':>{width}}"


def ratio(a: float | None, b: float | None) -> float | None:
    return a / b if a is not None and b else None


def print_lanes(results: list[dict[str, Any]]) -> None:
    print(
        f"{'lane':<26} {'topics/h':>9}  {'per route (window)':<22} {'min gap':>8} {'< F':>7} "
        f"{'render ms':>9} {'alone ms':>8} {'alone':>5} {'wall s':>7}"
    )
    for r in results:
        per_route = ", ".join(f"{route} {count}" for route, count in r["per_route"].items()) or "-"
        rate = f"{r['rate']:>9,.0f}" if r["rate"] is not None else f"{'-':>9}"
        print(
            f"{r['spec'].name:<26} {rate}  {per_route:<22} {seconds(r['smallest'], 8)} "
            f"{str(r['below']) + '/' + str(r['gaps']):>7} {ms(r['render'], 9)} {ms(r['render_alone'], 8)} "
            f"{r['alone']:>5} {r['wall']:>7.1f}"
        )


def verdicts(results: list[dict[str, Any]], p: Params) -> list[tuple[str, str, str, bool]]:
    """(figure, value, target, met) of every target."""
    rows: list[tuple[str, str, str, bool]] = []
    by = {(r["spec"].engine, r["spec"].routes): r for r in results}
    for engine in dict.fromkeys(r["spec"].engine for r in results):
        one, three = by[(engine, 1)], by[(engine, 3)]
        speed = ratio(three["rate"], one["rate"])
        rows.append(
            (
                f"{engine}: topics/h, 3 routes ÷ 1 route",
                f"{speed:.2f}×" if speed is not None else "-",
                f">= {TARGET_RATIO:.2f}×",
                speed is not None and speed >= TARGET_RATIO,
            )
        )
        cost = ratio(three["render_alone"], one["render_alone"])
        rows.append(
            (
                f"{engine}: render ms/page, proxies ÷ direct",
                f"{cost:.2f}×" if cost is not None else "-",
                f"<= {TARGET_RENDER:.2f}×",
                cost is not None and cost <= TARGET_RENDER,
            )
        )
        held, rescued = three["held"], three["rescued"]
        rows.append(
            (
                f"{engine}: r2 killed, its {len(held)} topic(s) scraped again",
                f"{rescued:.1f} s" if rescued is not None else ("none held" if not held else "not all"),
                f"<= {p.interval:g} s",
                bool(held) and rescued is not None and rescued <= p.interval,
            )
        )
    below = sum(r["below"] for r in results)
    gaps = sum(r["gaps"] for r in results)
    rows.append(("gaps below the floor, any route, any lane", f"{below} of {gaps}", "0", below == 0))
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=45.0, help="the measured window per lane, s (default 45)")
    parser.add_argument("--warmup", type=float, default=3.0, help="s after the first ok page before it (default 3)")
    parser.add_argument("--floor", type=float, default=1.0, help="the per-route floor F, s (default 1.0)")
    parser.add_argument("--jitter", type=float, default=0.2, help="the jitter_ratio j (default 0.2)")
    parser.add_argument("--interval", type=float, default=5.0, help="scrape_interval I, s (default 5)")
    parser.add_argument("--topics", type=int, default=24, help="topics per lane (default 24)")
    parser.add_argument(
        "--engines", default=",".join(ENGINES_MEASURED), help="engines measured, comma-separated (default google,bing)"
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help="short durations for the test suite (google only, a 3 s window, F 0.5 s, I 2 s); targets not enforced",
    )
    parser.add_argument(
        "--keep",
        metavar="DIR",
        help="work in DIR (created, kept: configs, databases, crawl logs, classifications) instead of a temp folder",
    )
    args = parser.parse_args()
    if args.quick:
        args.seconds, args.warmup, args.floor, args.interval, args.engines = 3.0, 1.0, 0.5, 2.0, "google"
    engines = [name.strip() for name in args.engines.split(",") if name.strip()]
    unknown = [name for name in engines if name not in ENGINES]
    if unknown or not engines:
        sys.exit(f"--engines: some of {', '.join(ENGINES)}, not {args.engines!r}")
    if args.floor <= 0 or not 0 <= args.jitter <= 1 or args.seconds <= 0 or args.interval <= 0:
        sys.exit("--floor, --seconds and --interval must be > 0, --jitter within 0…1")
    p = Params(
        floor=args.floor,
        jitter=args.jitter,
        interval=args.interval,
        topics=args.topics,
        warmup=args.warmup,
        seconds=args.seconds,
        after_kill=args.interval + 2 * args.floor + 1.0,
    )
    if p.topics / p.interval <= len(ROUTE_NAMES) / p.floor:
        print(
            f"note: {p.topics} topics every {p.interval:g} s is no more than {len(ROUTE_NAMES)} routes take at one "
            f"page per {p.floor:g} s: the floor may not be what binds",
            flush=True,
        )
    topics = topic_names(p.topics)
    work = work_folder(args.keep, "topicstreams-routes-bench-")
    specs = [LaneSpec(engine, routes) for engine in engines for routes in (1, len(ROUTE_NAMES))]

    results: list[dict[str, Any]] = []
    began, load = time.monotonic(), os.getloadavg()
    try:
        with FakeEngines(tuple(engines)) as fakes, RouteProxies(PROXY_KINDS) as proxies:
            print(
                f"{p.topics} topics every {p.interval:g} s (scrape_interval), one results page each; floor F "
                f"{p.floor:g} s per route, jitter j {p.jitter:g}; window {p.seconds:g} s after {p.warmup:g} s; "
                f"proxies {', '.join(f'{proxies.kind(i)} {proxies.server(i)} from {proxies.address(i)}' for i in range(len(proxies)))}; "  # noqa: E501
                f"work folder {work}" + ("" if args.keep else " (removed at the end)"),
                flush=True,
            )
            for index, spec in enumerate(specs):
                folder = work / f"lane{index}-{spec.engine}-{spec.routes}"
                kill = f"; route r{KILLED} killed after the window, {p.after_kill:g} s more" if spec.kill else ""
                print(f"  {spec.name}: scrapy crawl {spec.engine} -a topics=…{kill}", flush=True)
                results.append(run_lane(spec, folder, fakes, proxies, p, topics))
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    took = time.monotonic() - began

    print()
    print_lanes(results)
    failed = [r for r in results if r["error"]]
    for r in failed:
        print(f"\n{r['spec'].name}: FAILED — {r['error']}")
        print(f"  log (end{'' if not args.keep else ', whole: ' + str(r['log'])}):\n    {r['log_tail']}")
    if failed:
        return 1

    print()
    for r in results:
        if r["spec"].kill:
            held = ", ".join(
                f"{topic} {delay:.1f} s" if delay is not None else f"{topic} never"
                for topic, delay in r["held"].items()
            )
            reasons = ", ".join(f"{reason} {count}" for reason, count in r["kill_reasons"].items())
            print(
                f"{r['spec'].engine}: route r{KILLED} killed: topics it held, s from the kill to their next ok "
                f"scrape elsewhere: {held or 'none'} (its failures: {reasons or 'none'})"
            )
    print()
    rows = verdicts(results, p)
    width = max(len(row[0]) for row in rows)
    print(f"{'figure':<{width}}  {'value':>12}  {'target':<10}  result")
    for figure, value, target, met in rows:
        print(f"{figure:<{width}}  {value:>12}  {target:<10}  {'PASS' if met else 'FAIL'}")
    missed = [row for row in rows if not row[3]]
    print(
        f"{len(specs)} lanes in {took:.0f} s; load average (1 min) {load[0]:.1f} at the start, "
        f"{os.getloadavg()[0]:.1f} at the end, on {os.cpu_count()} CPUs; "
        f"targets: {len(rows) - len(missed)} of {len(rows)} met"
    )
    if missed and not args.quick:
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
