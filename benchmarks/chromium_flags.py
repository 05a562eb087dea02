"""Which Chromium launch flags pay, and where a long-lived tab's memory grows: one shared headless Chromium.

    python benchmarks/chromium_flags.py [--pages 60] [--repeat 3] [--only NAME ...] [--list] [--json FILE]
    python benchmarks/chromium_flags.py --tab-growth [--flags base shipped] [--strategies keep tab:100 ...]
                                        [--navigations 1500] [--sample-every 100] [--pace SECONDS]

No Scrapy: the Playwright async API directly, set up as the project's crawl will be. The four fake engines
(``fake_engines``, started here as threads of this process) serve their results pages with the render
benchmark's page weight (``benchmarks/page_weight.py``: a render-blocking stylesheet and script, web fonts,
20 thumbnails, every asset after 50 ms). ONE Chromium (``find_executable()``, headless) is launched with
``topicstreams.browser.chromium.CHROMIUM_ARGS`` (the *base*) on top of Playwright's own default switches; it gets one
browser context per engine (google, bing, yahoo, brave), each with a context route that aborts what
``should_abort_request`` aborts (and continues the rest), and ONE tab each.

Flags mode (the default). Per run, a fresh Playwright driver and a fresh browser: one untimed warm-up page per
engine, then each engine's tab is navigated through --pages results pages (first pages of 16 topics in turn),
the four engines concurrently, one navigation at a time per engine (``page.goto(url,
wait_until="domcontentloaded")`` then ``page.content()``). Every page must answer 200, contain its topic and
give results to the engine's own ``result_nodes`` (``topicstreams.engines.REGISTRY``, parsed with parsel); at
the end the weighted page's script must have run in every tab (``window.__tsWeight``). Measured per run:

  pages/s      timed pages / wall time from the first timed navigation to the last page checked;
  peak PSS     the largest sum of PSS over the tree, sampled every 0.25 s from just before the launch to
               just before the browser is closed (startup included);
  final PSS    one sample 1 s after the last page, tabs still open (garbage of past documents included: a
               renderer navigated non-stop does not collect it, see tab growth);
  GC PSS       one sample after ``page.request_gc()`` in every tab and 1 s: what is live; also the tree's
               private dirty memory then ("dirty": what the processes wrote themselves, which other users of
               the same binaries, e.g. a parallel test's Chromium, cannot change as they change PSS and USS:
               the figure that compares flags best on a shared machine) and its PSS by kind of process: browser,
               renderer, zygote (both zygotes), gpu (gpu-process), net (utility: NetworkService), other
               utility/unknown, driver (Playwright's node);
  processes    the largest number of processes in the tree seen while sampling.

The tree is every descendant of this Python process: the driver (node) and, under it, every Chromium process.
This process itself (the Playwright client, the fake servers, the sampler) is not counted; PSS and USS are
read from ``/proc/PID/smaps_rollup``.

Variations are changes to the base, one at a time, each in a fresh browser: ``drop:FLAG`` drops a project flag
(from CHROMIUM_ARGS, and from Playwright's defaults too when Playwright passes it as well, so that it is
really gone); ``add:FLAG`` adds a switch; ``features-off:A,B`` / ``features-on:A`` adds features to
Playwright's own ``--disable-features`` / ``--enable-features`` lists (merged: Chromium keeps the last value
of a switch, so a bare ``--disable-features=A`` would silently re-enable Playwright's list); ``ctx:…`` is a
browser-context option; ``driver:…`` is a NODE_OPTIONS of the driver. A variation whose switch or feature
name is nowhere in the executable (Chromium keeps those names as NUL-terminated strings) is not measured but
listed as a no-op of this build, unless --only names it. Runs are interleaved (every variation once, then
again), the figures are medians over --repeat runs, deltas are against the base's medians.

Tab-growth mode (--tab-growth). ONE context (google's fake), one tab, --navigations results pages as fast as
they go (or --pace seconds apart), for each flag set (--flags) and strategy (--strategies): ``keep`` (one tab
for good), ``tab:N`` (close the tab and open a fresh one in the same context every N navigations),
``context:N`` (every N navigations save ``context.storage_state()``, close the context and open a new one with
that state, route and tab), ``gc:N`` (``page.request_gc()`` every N navigations), or several joined with
``+`` (``tab:300+gc:10``). Every --sample-every navigations: PSS per kind of process, this process's RSS, the Playwright
client's live objects (``connection._objects``, by type) and Python's allocated blocks. After the last sample the tab is
closed and the client's objects counted again. Prints the growth per 1,000 navigations (least-squares slope over the
samples after the first) of each kind of process and of the client.

Exit 1 when a page fails its check or a run fails; 0 otherwise, whatever the figures.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import gc
import html
import json
import os
import statistics
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make the project importable from a checkout
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import psutil
from parsel import Selector
from playwright.async_api import async_playwright

from benchmarks.page_weight import PageWeight
from fake_engines import FakeEngines
from topicstreams.browser.chromium import CHROMIUM_ARGS, DRIVER_NODE_OPTIONS, find_executable, should_abort_request
from topicstreams.engines import REGISTRY

ENGINE_NAMES = ("google", "bing", "yahoo", "brave")
TOPICS = (
    "climate summit",
    "central bank rates",
    "world cup final",
    "chip export rules",
    "wildfire season",
    "space station",
    "election debate",
    "housing market",
    "rail strike",
    "drought relief",
    "open source ai",
    "vaccine trial",
    "border talks",
    "oil prices",
    "solar farm",
    "ocean cleanup",
)
"""Plain words only: a rendered page must contain its topic as written. First pages only (a fake Brave topic
may have a single page)."""
SAMPLE_SECONDS = 0.25
SETTLE_SECONDS = 1.0
MAX_LANE_FAILURES = 3
"""A lane (an engine's tab) stops after this many failed pages: a variation that breaks pages fails fast."""
RUN_TIMEOUT = 300.0
"""Seconds one run of one variation may take in all."""
KINDS = ("browser", "renderer", "zygote", "gpu", "net", "other", "driver")
MIB = 2**20


# -- memory of the process tree ------------------------------------------------------------------------------


def kind_of(cmdline: list[str]) -> str:
    """The kind of one process of the tree, from its command line (see KINDS)."""
    if not cmdline:
        return "other"
    exe = os.path.basename(cmdline[0])
    if exe == "node" or exe.startswith("node"):
        return "driver"
    kind = next((a[len("--type=") :] for a in cmdline[1:] if a.startswith("--type=")), None)
    if kind is None:
        return "browser" if "chrom" in exe else "other"
    if kind == "gpu-process":
        return "gpu"
    if kind in ("renderer", "zygote"):
        return kind
    if kind == "utility" and any("NetworkService" in a for a in cmdline if a.startswith("--utility-sub-type=")):
        return "net"
    return "other"


def smaps_rollup(pid: int) -> tuple[int, int, int] | None:
    """(PSS, private dirty, RSS) of one process in bytes, from /proc/PID/smaps_rollup; None when it is gone.

    Private dirty (memory written by this process alone: its heaps, mostly) is the figure neighbours cannot
    move: PSS and even USS change when another program runs the same node or Chromium binary (their clean
    text pages then count as shared), which on a shared machine is worth tens of MiB either way."""
    try:
        with open(f"/proc/{pid}/smaps_rollup", "rb") as f:
            data = f.read()
    except OSError:
        return None
    fields: dict[bytes, int] = {}
    for line in data.splitlines():
        name, _, rest = line.partition(b":")
        if name in (b"Rss", b"Pss", b"Private_Dirty"):
            fields[name] = int(rest.split()[0]) * 1024
    if b"Pss" not in fields:
        return None
    return fields[b"Pss"], fields.get(b"Private_Dirty", 0), fields.get(b"Rss", 0)


def tree_snapshot() -> dict[str, Any]:
    """PSS and private dirty memory of every descendant of this process, summed (PSS by kind too), and how many
    there are."""
    by_kind = dict.fromkeys(KINDS, 0)
    pss = dirty = count = 0
    for proc in psutil.Process().children(recursive=True):
        try:
            kind = kind_of(proc.cmdline())
        except psutil.Error:
            continue
        mem = smaps_rollup(proc.pid)
        if mem is None:
            continue
        count += 1
        pss += mem[0]
        dirty += mem[1]
        by_kind[kind] += mem[0]
    return {"pss": pss, "dirty": dirty, "processes": count, "kinds": by_kind}


class Sampler(threading.Thread):
    """Samples the tree every SAMPLE_SECONDS; keeps the peak PSS and the most processes seen."""

    def __init__(self) -> None:
        super().__init__(daemon=True, name="pss-sampler")
        self.halt = threading.Event()
        self.peak = 0
        self.processes = 0

    def sample(self) -> dict[str, Any]:
        snap = tree_snapshot()
        self.peak = max(self.peak, snap["pss"])
        self.processes = max(self.processes, snap["processes"])
        return snap

    def run(self) -> None:
        while not self.halt.wait(SAMPLE_SECONDS):
            self.sample()

    def stop(self) -> None:
        self.halt.set()
        self.join()


# -- variations ------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Variation:
    """A change to the base launch: switches added or dropped, features, context options, driver env."""

    name: str
    add: tuple[str, ...] = ()
    drop: tuple[str, ...] = ()
    features_off: tuple[str, ...] = ()
    features_on: tuple[str, ...] = ()
    context: dict[str, Any] = field(default_factory=dict)
    node_options: str = ""
    note: str = ""

    def launch_options(self, executable: str, defaults: PlaywrightDefaults) -> dict[str, Any]:
        args = [a for a in CHROMIUM_ARGS if a not in self.drop] + list(self.add)
        if self.features_off:
            args.append("--disable-features=" + ",".join(defaults.disabled_features + self.features_off))
        if self.features_on:
            args.append("--enable-features=" + ",".join(defaults.enabled_features + self.features_on))
        options: dict[str, Any] = {"executable_path": executable, "headless": True, "args": args}
        ignored = [a for a in self.drop if a in defaults.switches]
        if ignored:
            options["ignore_default_args"] = ignored
        return options

    def names(self) -> list[bytes]:
        """The switch and feature names this variation relies on, as the binary would spell them."""
        switches = [a.lstrip("-").split("=", 1)[0] for a in self.add + self.drop]
        return [n.encode() for n in switches + list(self.features_off) + list(self.features_on)]


def unknown_to_binary(executable: str, variation: Variation) -> list[str]:
    """The switches and features of ``variation`` whose name is nowhere in the executable (as a NUL-terminated
    string, the way Chromium's switch and feature constants are stored): no code can read them, so they are
    no-ops in this build. (A name that is there may still do nothing; one that is not certainly does nothing.)"""
    data = _binary(executable)
    return [n.decode() for n in variation.names() if n + b"\0" not in data]


_BINARIES: dict[str, bytes] = {}


def _binary(executable: str) -> bytes:
    if executable not in _BINARIES:
        _BINARIES[executable] = Path(executable).read_bytes()
    return _BINARIES[executable]


@dataclass(frozen=True)
class PlaywrightDefaults:
    """The switches Playwright itself passes (read from a launched browser's command line)."""

    switches: tuple[str, ...]
    disabled_features: tuple[str, ...]
    enabled_features: tuple[str, ...]


def _features(switches: tuple[str, ...], name: str) -> tuple[str, ...]:
    value = next((s.split("=", 1)[1] for s in reversed(switches) if s.startswith(name + "=")), "")
    return tuple(f for f in value.split(",") if f)


async def playwright_defaults(executable: str) -> PlaywrightDefaults:
    """Launch a bare browser once and read what Playwright put on its command line."""
    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=executable, headless=True)
        try:
            for proc in psutil.Process().children(recursive=True):
                cmdline = proc.cmdline()
                if cmdline and kind_of(cmdline) == "browser":
                    switches = tuple(a for a in cmdline[1:] if not a.startswith(("--user-data-dir=",)))
                    return PlaywrightDefaults(
                        switches, _features(switches, "--disable-features"), _features(switches, "--enable-features")
                    )
        finally:
            await browser.close()
    raise RuntimeError("could not find the browser process to read Playwright's default switches")


SHIPPED = Variation(
    "shipped",
    node_options=DRIVER_NODE_OPTIONS,
    note=(
        f"what the project ships: the base + driver:{DRIVER_NODE_OPTIONS} "
        "(topicstreams.browser.chromium.DRIVER_NODE_OPTIONS)"
    ),
)
"""What the project ships on top of the base. Measured here (Chromium 150 headless shell, Playwright 1.65, 4 engines
x 20 pages, medians of 3): a 1 MiB young generation for the driver's V8 took about 25 MiB off the driver with no
loss of speed that showed. The network service in the browser process (features-on:NetworkServiceInProcess2) took
about 10 MiB more and one process off, but a crash of that service would then take the browser with it; it is not
shipped."""

ALREADY_PASSED = {
    "--disable-extensions": "Playwright passes it",
    "--mute-audio": "Playwright passes it when headless",
    "--disable-renderer-backgrounding": "Playwright passes it",
    "--disable-back-forward-cache": "Playwright passes it",
    "MediaRouter, OptimizationHints, PaintHolding": "in Playwright's --disable-features",
}
"""Candidates not measured: the browser gets them already."""


def variations() -> list[Variation]:
    """Every variation, the base first."""
    out = [Variation("base", note="CHROMIUM_ARGS on top of Playwright's defaults")]
    out += [Variation(f"drop:{flag}", drop=(flag,)) for flag in CHROMIUM_ARGS]
    for flag in (
        "--disable-gpu",
        "--disable-software-rasterizer",
        "--in-process-gpu",
        "--renderer-process-limit=1",
        "--process-per-site",
        "--disable-site-isolation-trials",
        "--js-flags=--max-old-space-size=32",
        "--js-flags=--lite-mode",
        "--js-flags=--max-semi-space-size=1",
        "--js-flags=--jitless",
        "--enable-low-end-device-mode",
        "--disk-cache-size=1",
        "--aggressive-cache-discard",
        "--no-zygote",
        "--memory-pressure-off",
        "--num-raster-threads=1",
        "--single-process",
    ):
        out.append(Variation(f"add:{flag}", add=(flag,)))
    out.append(
        Variation(
            "add:--disable-gpu,--disable-software-rasterizer", add=("--disable-gpu", "--disable-software-rasterizer")
        )
    )
    for features in (
        ("BackForwardCache",),
        ("SpareRendererForSitePerProcess",),
        ("IsolateOrigins", "site-per-process"),
        ("Translate", "OptimizationHints", "MediaRouter", "AudioServiceOutOfProcess", "PaintHolding"),
        ("PartitionAllocBackupRefPtr",),
    ):
        out.append(Variation("features-off:" + ",".join(features), features_off=features))
    out.append(Variation("features-on:NetworkServiceInProcess2", features_on=("NetworkServiceInProcess2",)))
    out.append(Variation("ctx:service_workers=block", context={"service_workers": "block"}))
    out.append(
        Variation(
            "ctx:viewport=800x600",
            context={"viewport": {"width": 800, "height": 600}},
            note="changes the layout pages get",
        )
    )
    out.append(Variation("driver:--max-semi-space-size=1", node_options="--max-semi-space-size=1"))
    out.append(Variation("driver:--jitless", node_options="--jitless"))
    out.append(SHIPPED)
    return out


# -- pages ---------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Item:
    engine: str
    topic: str
    url: str


def plan(fakes: FakeEngines, engines: tuple[str, ...], pages: int) -> tuple[dict[str, Item], dict[str, list[Item]]]:
    """(one warm-up page per engine, each engine's ``pages`` timed pages)."""
    parsers = {e: REGISTRY[e](fakes.base_url(e), "hour") for e in engines}
    warm = {e: Item(e, "warm up", parsers[e].results_url("warm up", 0)) for e in engines}
    timed = {
        e: [Item(e, TOPICS[i % len(TOPICS)], parsers[e].results_url(TOPICS[i % len(TOPICS)], 0)) for i in range(pages)]
        for e in engines
    }
    return warm, timed


PARSERS: dict[str, Any] = {}


def check_page(item: Item, status: int | None, text: str) -> str | None:
    """None when the page is a 200 with its topic and results the engine's parser finds; else the problem."""
    if status != 200:
        return f"status {status}"
    if item.topic not in text and html.escape(item.topic) not in text:
        return "topic not in the page"
    parser = PARSERS.get(item.engine) or PARSERS.setdefault(item.engine, REGISTRY[item.engine]("http://x", "hour"))
    if not len(parser.result_nodes(Selector(text=text))):
        return "no results found by the engine's parser"
    return None


async def abort_or_continue(route: Any, request: Any) -> None:
    """The project's request blocking, as a context route."""
    if should_abort_request(request):
        await route.abort()
    else:
        await route.continue_()


async def visit(page: Any, item: Item) -> str | None:
    """Navigate the tab to ``item`` and check what it shows; the problem, or None."""
    try:
        response = await page.goto(item.url, wait_until="domcontentloaded", timeout=30_000)
        text = await page.content()
    except Exception as exc:
        return f"{type(exc).__name__}: {str(exc).splitlines()[0][:120]}"
    return check_page(item, response.status if response is not None else None, text)


class DriverEnv:
    """NODE_OPTIONS for the driver about to be started (the Python client copies os.environ when it starts it)."""

    def __init__(self, node_options: str) -> None:
        self.node_options = node_options
        self.saved: str | None = None

    def __enter__(self) -> None:
        self.saved = os.environ.get("NODE_OPTIONS")
        if self.node_options:
            os.environ["NODE_OPTIONS"] = self.node_options

    def __exit__(self, *exc: object) -> None:
        if self.saved is None:
            os.environ.pop("NODE_OPTIONS", None)
        else:
            os.environ["NODE_OPTIONS"] = self.saved


# -- flags mode --------------------------------------------------------------------------------------------------


async def run_once(
    variation: Variation,
    executable: str,
    defaults: PlaywrightDefaults,
    warm: dict[str, Item],
    timed: dict[str, list[Item]],
) -> dict[str, Any]:
    """One run of one variation in a fresh driver and browser."""
    result: dict[str, Any] = {"variation": variation.name}
    sampler = Sampler()
    sampler.start()
    failures: list[str] = []
    try:
        with DriverEnv(variation.node_options):
            async with async_playwright() as pw:
                browser = await pw.chromium.launch(**variation.launch_options(executable, defaults))
                tabs = {}
                for engine in timed:
                    context = await browser.new_context(**variation.context)
                    await context.route("**/*", abort_or_continue)
                    tabs[engine] = await context.new_page()
                for engine, problem in zip(
                    warm, await asyncio.gather(*(visit(tabs[e], warm[e]) for e in warm)), strict=False
                ):
                    if problem:
                        failures.append(f"warm-up {engine}: {problem}")

                async def lane(engine: str) -> int:
                    ok = bad = 0
                    for item in timed[engine]:
                        problem = await visit(tabs[engine], item)
                        if problem:
                            failures.append(f"{engine} {item.url}: {problem}")
                            bad += 1
                            if bad >= MAX_LANE_FAILURES:
                                failures.append(f"{engine}: lane given up after {bad} failures")
                                break
                        else:
                            ok += 1
                    return ok

                started = time.monotonic()
                oks = await asyncio.gather(*(lane(e) for e in timed))
                result["elapsed"] = time.monotonic() - started
                result["ok"] = sum(oks)
                result["pages"] = sum(len(items) for items in timed.values())
                scripts = await asyncio.gather(
                    *(tabs[e].evaluate("() => !!(window.__tsWeight || {}).functions") for e in timed)
                )
                result["js_ok"] = all(scripts)
                await asyncio.sleep(SETTLE_SECONDS)
                final = sampler.sample()
                result.update(final_pss=final["pss"], final_dirty=final["dirty"], final_kinds=final["kinds"])
                # the floor: what is live once the garbage of the past documents is collected (see --tab-growth)
                await asyncio.gather(*(tab.request_gc() for tab in tabs.values()))
                await asyncio.sleep(SETTLE_SECONDS)
                floor = sampler.sample()
                result.update(gc_pss=floor["pss"], gc_dirty=floor["dirty"], kinds=floor["kinds"])
                await browser.close()
    except Exception as exc:
        result["error"] = f"{type(exc).__name__}: {str(exc).splitlines()[0][:200]}"
    finally:
        sampler.stop()
    result.update(
        peak_pss=sampler.peak, processes=sampler.processes, failures=failures[:10], failure_count=len(failures)
    )
    return result


def median_of(runs: list[dict[str, Any]]) -> dict[str, Any] | None:
    good = [r for r in runs if "error" not in r and "gc_pss" in r]
    if not good:
        return None
    med = statistics.median
    return {
        "runs": len(good),
        "pages_s": med(r["pages"] / r["elapsed"] for r in good),
        "peak": med(r["peak_pss"] for r in good) / MIB,
        "final": med(r["final_pss"] for r in good) / MIB,
        "gc": med(r["gc_pss"] for r in good) / MIB,
        "dirty": med(r["gc_dirty"] for r in good) / MIB,
        "processes": med(r["processes"] for r in good),
        "kinds": {k: med(r["kinds"][k] for r in good) / MIB for k in KINDS},
        "ok": min(r["ok"] for r in good),
        "pages": good[0]["pages"],
        "js_ok": all(r["js_ok"] for r in good),
        "spread": (max(r["gc_pss"] for r in good) - min(r["gc_pss"] for r in good)) / MIB,
    }


def print_table(chosen: list[Variation], runs: dict[str, list[dict[str, Any]]]) -> None:
    figures = {v.name: median_of(runs[v.name]) for v in chosen}
    base = figures.get("base")
    head = (
        f"{'variation':<46} {'pages/s':>7} {'Δ%':>4} {'peak':>5} {'final':>5} {'Δ':>4} {'GC':>5} {'Δ':>4} {'±':>3} "
        f"{'dirty':>5} {'Δ':>4} {'procs':>5} " + " ".join(f"{k[:6]:>6}" for k in KINDS) + f" {'OK':>7} js"
    )
    print(
        "\nmedians; memory in MiB: PSS of the tree (driver + Chromium) at its peak, "
        "final (1 s after the last page) and "
        "GC (after request_gc() in every tab), private dirty after GC; Δ against base; ± = spread of GC PSS over runs; "
        "per-kind PSS after GC"
    )
    print(head)
    print("-" * len(head))
    for v in chosen:
        f = figures[v.name]
        if f is None:
            errors = {r.get("error", "no result") for r in runs[v.name]}
            print(f"{v.name:<46} FAILED: {'; '.join(sorted(errors))[:150]}")
            continue
        speed = 100 * (f["pages_s"] / base["pages_s"] - 1) if base else 0.0
        delta = f["final"] - base["final"] if base else 0.0
        delta_gc = f["gc"] - base["gc"] if base else 0.0
        print(
            f"{v.name:<46} {f['pages_s']:>7.2f} {speed:>+4.0f} {f['peak']:>5.0f} {f['final']:>5.0f} {delta:>+4.0f} "
            f"{f['gc']:>5.0f} {delta_gc:>+4.0f} {f['spread']:>3.0f} {f['dirty']:>5.0f} "
            f"{f['dirty'] - base['dirty'] if base else 0.0:>+4.0f} {f['processes']:>5.0f} "
            + " ".join(f"{f['kinds'][k]:>6.0f}" for k in KINDS)
            + f" {f['ok']:>3}/{f['pages']:<3} {'ok' if f['js_ok'] else 'NO'}"
        )
    print(
        "\nnot measured (the browser gets them already): "
        + "; ".join(f"{flag}: {why}" for flag, why in ALREADY_PASSED.items())
    )


async def flags_mode(args: argparse.Namespace, executable: str) -> int:
    every = variations()
    if args.list:
        for v in every:
            print(v.name + (f"  ({v.note})" if v.note else ""))
        return 0
    chosen = every
    if args.only:
        unknown = [n for n in args.only if n not in {v.name for v in every}]
        if unknown:
            sys.exit(f"unknown variation(s): {', '.join(unknown)} (see --list)")
        chosen = [v for v in every if v.name == "base" or v.name in args.only]
    defaults = await playwright_defaults(executable)
    noops = {v.name: unknown_to_binary(executable, v) for v in chosen}
    skipped = [v for v in chosen if noops[v.name] and not (args.only and v.name in args.only)]
    if skipped:
        print(
            "not measured, unknown to this binary (no-ops here; --only NAME measures one anyway): "
            + "; ".join(f"{v.name} ({', '.join(noops[v.name])})" for v in skipped)
        )
        chosen = [v for v in chosen if v not in skipped]
    _BINARIES.clear()
    duplicated = [a for a in CHROMIUM_ARGS if a in defaults.switches]
    print(
        f"{executable}; {len(chosen)} variations x {args.repeat} runs, {args.pages} pages per engine, "
        f"engines {', '.join(ENGINE_NAMES)} concurrently"
    )
    print(
        "project flags Playwright passes too (dropping them from CHROMIUM_ARGS alone changes nothing; "
        f"'drop:FLAG' drops them from both): {', '.join(duplicated) or 'none'}"
    )
    overridden = [
        a
        for a in CHROMIUM_ARGS
        if "=" in a
        and a.split("=", 1)[0] in {s.split("=", 1)[0] for s in defaults.switches if "=" in s}
        and a not in defaults.switches
    ]
    if overridden:
        print(
            f"project flags that replace one of Playwright's (Chromium keeps the last value): {', '.join(overridden)}"
        )
    runs: dict[str, list[dict[str, Any]]] = {v.name: [] for v in chosen}
    with FakeEngines(ENGINE_NAMES, extensions=[PageWeight()]) as fakes:
        warm, timed = plan(fakes, ENGINE_NAMES, args.pages)
        for round_ in range(args.repeat):
            for v in chosen:
                try:
                    r = await asyncio.wait_for(run_once(v, executable, defaults, warm, timed), RUN_TIMEOUT)
                except TimeoutError:
                    r = {
                        "variation": v.name,
                        "error": f"timed out after {RUN_TIMEOUT:.0f} s",
                        "failures": [],
                        "failure_count": 0,
                    }
                runs[v.name].append(r)
                status = r.get("error") or (
                    f"{r['pages'] / r['elapsed']:.2f} pages/s, peak {r['peak_pss'] / MIB:.0f}, "
                    f"final {r['final_pss'] / MIB:.0f}, after GC {r['gc_pss'] / MIB:.0f} MiB, "
                    f"{r['processes']} procs, {r['ok']}/{r['pages']} OK"
                )
                print(f"[{round_ + 1}/{args.repeat}] {v.name}: {status}", flush=True)
                for line in r["failures"][:3]:
                    print(f"    {line}")
    print_table(chosen, runs)
    if args.json:
        Path(args.json).write_text(json.dumps({"defaults": defaults.__dict__, "runs": runs}, indent=1, default=str))
    bad = any(
        "error" in r or r.get("failure_count") or r.get("ok") != r.get("pages") or not r.get("js_ok")
        for rs in runs.values()
        for r in rs
    )
    return 1 if bad else 0


# -- tab-growth mode ---------------------------------------------------------------------------------------------


def client_objects(page: Any) -> collections.Counter:
    """The Playwright client's live protocol objects (its connection's ``_objects``), by type."""
    connection = page._impl_obj._connection
    return collections.Counter(type(obj).__name__ for obj in list(connection._objects.values()))


def growth_sample(done: int, page: Any, started: float) -> dict[str, Any]:
    snap = tree_snapshot()
    me = psutil.Process().memory_info()
    objects = client_objects(page)
    return {
        "navigations": done,
        "seconds": time.monotonic() - started,
        "pss": snap["pss"],
        "kinds": snap["kinds"],
        "processes": snap["processes"],
        "py_rss": me.rss,
        "py_blocks": sys.getallocatedblocks(),
        "objects": sum(objects.values()),
        "by_type": dict(objects),
    }


def slope_per_1000(xs: list[float], ys: list[float]) -> float:
    """Least-squares slope of ys over xs, times 1,000."""
    if len(xs) < 2:
        return 0.0
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    den = sum((x - mx) ** 2 for x in xs)
    return 1000 * sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=False)) / den if den else 0.0


def parse_strategy(strategy: str) -> dict[str, int]:
    """``keep``, or ``tab:N``, ``context:N``, ``gc:N`` joined with ``+`` (e.g. ``tab:100+gc:10``): kind -> period."""
    if strategy == "keep":
        return {}
    periods: dict[str, int] = {}
    for part in strategy.split("+"):
        kind, _, n = part.partition(":")
        if kind not in ("tab", "context", "gc") or not n.isdigit() or int(n) < 1 or kind in periods:
            raise ValueError(f"unknown strategy {strategy!r}: keep, or tab:N, context:N, gc:N joined with '+'")
        periods[kind] = int(n)
    return periods


async def tab_growth_run(
    variation: Variation,
    strategy: str,
    executable: str,
    defaults: PlaywrightDefaults,
    warm: Item,
    items: list[Item],
    every: int,
    pace: float = 0.0,
) -> dict[str, Any]:
    periods = parse_strategy(strategy)
    samples: list[dict[str, Any]] = []
    failures: list[str] = []
    out: dict[str, Any] = {"variation": variation.name, "strategy": strategy, "pace": pace, "samples": samples}
    with DriverEnv(variation.node_options):
        async with async_playwright() as pw:
            browser = await pw.chromium.launch(**variation.launch_options(executable, defaults))

            async def fresh_context(state: Any = None) -> tuple[Any, Any]:
                options = dict(variation.context)
                if state is not None:
                    options["storage_state"] = state
                context = await browser.new_context(**options)
                await context.route("**/*", abort_or_continue)
                return context, await context.new_page()

            context, page = await fresh_context()
            problem = await visit(page, warm)
            if problem:
                failures.append(f"warm-up: {problem}")
            started = time.monotonic()
            samples.append(growth_sample(0, page, started))
            for i, item in enumerate(items):
                due = {kind for kind, period in periods.items() if i and i % period == 0}
                if "context" in due:
                    state = await context.storage_state()
                    await context.close()
                    context, page = await fresh_context(state)
                elif "tab" in due:
                    await page.close()
                    page = await context.new_page()
                elif "gc" in due:
                    await page.request_gc()
                if pace and i:
                    await asyncio.sleep(pace)
                problem = await visit(page, item)
                if problem:
                    failures.append(f"{item.url}: {problem}")
                if (i + 1) % every == 0:
                    samples.append(growth_sample(i + 1, page, started))
            out["elapsed"] = time.monotonic() - started
            before_close = client_objects(page)
            await page.close()
            await asyncio.sleep(0.5)
            gc.collect()
            after_close = collections.Counter(
                type(o).__name__ for o in list(page._impl_obj._connection._objects.values())
            )
            out["objects_before_close"] = dict(before_close)
            out["objects_after_close"] = dict(after_close)
            out["py_rss_after_close"] = psutil.Process().memory_info().rss
            await browser.close()
    out["failures"] = failures[:10]
    out["failure_count"] = len(failures)
    return out


def print_growth(result: dict[str, Any]) -> None:
    samples = result["samples"]
    name = f"{result['variation']} / {result['strategy']}" + (f" / {result['pace']} s apart" if result["pace"] else "")
    n = samples[-1]["navigations"] if samples else 0
    rate = n / result["elapsed"] if result.get("elapsed") else 0.0
    print(f"\n== {name}: {n} navigations, {rate:.1f}/s, {result['failure_count']} failed")
    print(
        f"{'navs':>5} {'tree':>5} "
        + " ".join(f"{k[:6]:>6}" for k in KINDS)
        + f" {'procs':>5} {'py RSS':>6} {'objects':>7}  top client objects"
    )
    for s in samples:
        top = ", ".join(f"{t} {c}" for t, c in sorted(s["by_type"].items(), key=lambda kv: -kv[1])[:4])
        print(
            f"{s['navigations']:>5} {s['pss'] / MIB:>5.0f} "
            + " ".join(f"{s['kinds'][k] / MIB:>6.1f}" for k in KINDS)
            + f" {s['processes']:>5} {s['py_rss'] / MIB:>6.1f} {s['objects']:>7}  {top}"
        )
    fit = samples[1:]  # after the first 100: start-up is not growth
    xs = [s["navigations"] for s in fit]
    parts = [f"tree {slope_per_1000(xs, [s['pss'] / MIB for s in fit]):+.1f}"]
    parts += [f"{k} {slope_per_1000(xs, [s['kinds'][k] / MIB for s in fit]):+.1f}" for k in KINDS]
    parts += [
        f"python RSS {slope_per_1000(xs, [s['py_rss'] / MIB for s in fit]):+.1f}",
        f"client objects {slope_per_1000(xs, [s['objects'] for s in fit]):+.0f}",
    ]
    print("growth per 1,000 navigations (MiB; objects): " + ", ".join(parts))
    before, after = result["objects_before_close"], result["objects_after_close"]
    interesting = sorted(set(before) | set(after), key=lambda t: -before.get(t, 0))[:6]
    print(
        "client objects before -> after closing the last tab: "
        + ", ".join(f"{t} {before.get(t, 0)}->{after.get(t, 0)}" for t in interesting)
        + f"; python RSS after close {result['py_rss_after_close'] / MIB:.1f} MiB"
    )


async def tab_growth_mode(args: argparse.Namespace, executable: str) -> int:
    by_name = {v.name: v for v in variations()}
    unknown = [n for n in args.flags if n not in by_name]
    if unknown:
        sys.exit(f"unknown variation(s) for --flags: {', '.join(unknown)} (see --list)")
    for strategy in args.strategies:
        try:
            parse_strategy(strategy)
        except ValueError as exc:
            sys.exit(str(exc))
    defaults = await playwright_defaults(executable)
    results = []
    with FakeEngines(("google",), extensions=[PageWeight()]) as fakes:
        parser = REGISTRY["google"](fakes.base_url("google"), "hour")
        warm = Item("google", "warm up", parser.results_url("warm up", 0))
        items = [
            Item("google", TOPICS[i % len(TOPICS)], parser.results_url(TOPICS[i % len(TOPICS)], 0))
            for i in range(args.navigations)
        ]
        for name in args.flags:
            for strategy in args.strategies:
                if name == "base" and strategy != "keep" and not args.all_pairs:
                    continue  # the base only as the reference long-lived tab
                result = await tab_growth_run(
                    by_name[name], strategy, executable, defaults, warm, items, args.sample_every, args.pace
                )
                results.append(result)
                print_growth(result)
                sys.stdout.flush()
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1, default=str))
    return 1 if any(r["failure_count"] for r in results) else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", type=int, default=60, help="timed pages per engine and run (default 60)")
    parser.add_argument("--repeat", type=int, default=3, help="runs per variation (default 3; medians)")
    parser.add_argument("--only", nargs="+", metavar="NAME", help="only these variations (and always the base)")
    parser.add_argument("--list", action="store_true", help="list the variations and exit")
    parser.add_argument("--executable", help="the Chromium to run (default: find_executable())")
    parser.add_argument("--json", help="write the raw results to this file")
    parser.add_argument("--tab-growth", action="store_true", help="measure a long-lived tab's growth instead")
    parser.add_argument(
        "--flags",
        nargs="+",
        default=["base", "shipped"],
        help="tab growth: the variations to launch with (default: base shipped)",
    )
    parser.add_argument(
        "--strategies",
        nargs="+",
        default=["keep", "tab:100", "tab:300", "context:300", "gc:10"],
        help="tab growth: keep, tab:N, context:N, gc:N (default: keep tab:100 tab:300 context:300 "
        "gc:10); "
        "the base runs only 'keep' unless --all-pairs",
    )
    parser.add_argument("--all-pairs", action="store_true", help="tab growth: every strategy with every flag set")
    parser.add_argument("--navigations", type=int, default=1500, help="tab growth: navigations per run (1500)")
    parser.add_argument("--sample-every", type=int, default=100, help="tab growth: sample every N (100)")
    parser.add_argument(
        "--pace",
        type=float,
        default=0.0,
        help="tab growth: seconds between two navigations (default 0: as fast as it goes)",
    )
    args = parser.parse_args()
    if args.pages < 1 or args.repeat < 1 or args.navigations < 1 or args.sample_every < 1:
        sys.exit("--pages, --repeat, --navigations and --sample-every must be >= 1")
    executable = args.executable or find_executable()
    if not executable:
        sys.exit("no Chromium found: pass --executable")
    if args.tab_growth:
        return asyncio.run(tab_growth_mode(args, executable))
    return asyncio.run(flags_mode(args, executable))


if __name__ == "__main__":
    sys.exit(main())
