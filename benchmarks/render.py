"""Benchmark of rendering: the project's settings against scrapy-playwright's defaults, same browser.

    python benchmarks/render.py [-n 200] [--concurrency 4] [--engines google,bing] [--executable PATH]

The fake engines (started here, in this process) serve their results pages with a realistic weight
(:class:`PageWeight` of ``benchmarks/page_weight.py``, an extension of the fake servers: 20 thumbnails, 2 web
fonts, a render-blocking stylesheet and script, every asset answered after 50 ms, all on the engine's own
loopback port). Each side renders the same N results pages, round-robin over the engines and a few topics,
in its own process: a small Scrapy crawl through scrapy-playwright, no download delay, no AutoThrottle, no
retries, no pipelines, no add-on. The N pages go in --concurrency lanes (CONCURRENT_REQUESTS the same): a
lane sends its next page when its last one is back, as an engine spider goes from page to page.

  project:  the project's rendering settings, imported (every ``PLAYWRIGHT_*`` of ``topicstreams.settings``:
            request blocking with ``should_abort_request``, the browser's own headers) and the request meta
            its engine spiders send (``EngineSpider.page_request``: one shared browser launched with
            ``launch_options()`` of the packaged defaults — the executable, headless, the project's
            Chromium arguments — and in it one context per engine, its state kept in a temp folder;
            ``wait_until="domcontentloaded"``; the engine's tab kept and navigated again for its next
            page, as the spider does, with its hygiene: ``EngineTab.keep`` asks for a garbage
            collection every ``TOPICSTREAMS_TAB_GC_PAGES`` pages and renews the tab after
            ``TOPICSTREAMS_TAB_PAGES``).
            PLAYWRIGHT_MAX_PAGES_PER_CONTEXT is raised to --concurrency when it is lower, so that this
            side too renders --concurrency pages at a time whatever the number of engines.
  defaults: scrapy-playwright's defaults on the same executable: PLAYWRIGHT_LAUNCH_OPTIONS =
            {executable_path, headless}, the default context, no request blocking, Scrapy's headers,
            ``page.goto`` waiting for ``load``.

Measures, per side, over the N timed pages (each side first renders one page per engine, untimed, so
that browser and context start-up are left out):

  pages/s, ms/page   wall time from the first timed request to the last response (monotonic clock in
                     the side's process);
  CPU-s/page         CPU time of the side's whole process tree (Python, the Playwright driver, every
                     Chromium process) over that window: at both ends the side sums user + system +
                     reaped children's time of every live process of its tree (psutil), so processes
                     that come and go within the window count too;
  KB/page            body bytes the fake servers sent from the start of the window to the end of the
                     side (their request log's ``bytes``): the results pages and every asset fetched;
  peak memory        the largest sum over the side's process tree, sampled every 100 ms from here for the
                     side's whole run: PSS where /proc gives it (RSS otherwise; the output says which);
  in flight          the timed pages' time in the downloader (from Scrapy's request_reached_downloader
                     to the callback) added up, over the window: the concurrency each side really had.

It also prints each side's CPU by kind of process (scrapy, driver, browser, renderer, gpu-process,
NetworkService…) and the CPU this process (fake servers, memory sampler) spent per page, outside the
sides' trees: on a small machine the sides are CPU-bound, so pages/s follows CPU-s/page.

Every response must be a 200 whose HTML holds its topic and, when the engine has a spider, results its
``result_nodes`` finds; a side with failures prints them and the benchmark exits 1. Otherwise it exits 0,
whatever the figures (targets: the project at >= 2.5x the defaults' pages/s with <= 60 % of their bytes and a peak
memory <= 1.1x theirs).
"""

from __future__ import annotations

import argparse
import asyncio
import html
import importlib
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make the project importable from a checkout
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import psutil

from benchmarks.page_weight import PageWeight
from fake_engines import FakeEngines
from topicstreams import ENGINES
from topicstreams.browser.chromium import find_executable

TOPICS = (
    "climate summit",
    "central bank rates",
    "world cup final",
    "chip export rules",
    "wildfire season",
    "space station",
    "election debate",
    "housing market",
)
"""Plain words only: a rendered page must contain its topic as written."""
SIDES = ("defaults", "project")
TARGET_SPEED = 2.5
TARGET_BYTES = 0.60
TARGET_MEMORY = 1.10
SAMPLE_SECONDS = 0.1


# -- the plan (parent and side alike) ---------------------------------------------------------------------


def available_engines() -> list[str]:
    """Every engine that has fake pages."""
    return [name for name in ENGINES if importlib.util.find_spec(f"fake_engines.{name}") is not None]


def engine_spider(engine: str, base_url: str) -> Any | None:
    """The project's engine (``topicstreams.engines``) set up to build URLs and find results, or None."""
    from topicstreams.engines import REGISTRY

    cls = REGISTRY.get(engine)
    return cls(base_url, "hour") if cls is not None else None


def make_plan(fakes: FakeEngines, engines: list[str], pages: int) -> tuple[list[dict], list[dict]]:
    """(warm-up: one page per engine, the N timed pages round-robin over engines and topics)."""
    spiders = {engine: engine_spider(engine, fakes.base_url(engine)) for engine in engines}
    for engine, spider in spiders.items():
        if spider is None:
            sys.exit(f"no engine {engine!r}: cannot build its results URL (leave it out of --engines)")

    def item(engine: str, topic: str) -> dict:
        return {"engine": engine, "topic": topic, "url": spiders[engine].results_url(topic, 0)}

    warmup = [item(engine, "warm up") for engine in engines]
    timed = [item(engines[i % len(engines)], TOPICS[(i // len(engines)) % len(TOPICS)]) for i in range(pages)]
    return warmup, timed


# -- one side, in its own process ---------------------------------------------------------------------------


def process_kind(proc: psutil.Process, me: psutil.Process) -> str:
    """What a process of a side's tree is: scrapy (the side itself), driver (Playwright's node), or a
    Chromium process by its ``--type`` (browser when it has none; renderers, forked from the zygote, keep
    its command line, so the zygote counts as renderer)."""
    if proc.pid == me.pid:
        return "scrapy"
    cmdline = proc.cmdline()
    if not cmdline:
        return "other"
    if "node" in os.path.basename(cmdline[0]):
        return "driver"
    for arg in cmdline[1:]:
        if arg.startswith("--type="):
            kind = arg[len("--type=") :]
            if kind == "zygote":
                return "renderer"
            if kind == "utility":
                sub = next((a for a in cmdline if a.startswith("--utility-sub-type=")), "")
                kind = "utility:" + sub.rsplit(".", 1)[-1] if sub else kind
            return kind
    return "browser" if "chrom" in os.path.basename(cmdline[0]) else os.path.basename(cmdline[0])


def tree_cpu_seconds() -> dict[str, float]:
    """CPU time so far of this process and every live descendant, with the children each has reaped
    (counted under the reaper's kind, see :func:`process_kind`), by kind."""
    me = psutil.Process()
    totals: dict[str, float] = {}
    for proc in [me, *me.children(recursive=True)]:
        try:
            t = proc.cpu_times()
            kind = process_kind(proc, me)
        except psutil.Error:
            continue
        totals[kind] = totals.get(kind, 0.0) + t.user + t.system + t.children_user + t.children_system
    return totals


def side_settings(side: str, concurrency: int, executable: str, engines: int) -> tuple[dict, list[str]]:
    """The Scrapy settings of a side, and notes on what was changed from the source."""
    from topicstreams import settings as project

    notes: list[str] = []
    common = {
        "CONCURRENT_REQUESTS": concurrency,
        "CONCURRENT_REQUESTS_PER_DOMAIN": concurrency,
        "DOWNLOAD_DELAY": 0,
        "AUTOTHROTTLE_ENABLED": False,
        "RETRY_ENABLED": False,  # a failed page shows as one, on both sides
        "ITEM_PIPELINES": {},
        "ADDONS": {},
        "LOG_LEVEL": "WARNING",
        "TELNETCONSOLE_ENABLED": False,
        "ROBOTSTXT_OBEY": False,
    }
    if side == "defaults":
        return common | {
            "TWISTED_REACTOR": "twisted.internet.asyncioreactor.AsyncioSelectorReactor",
            "DOWNLOAD_HANDLERS": {
                "http": "scrapy_playwright.handler.ScrapyPlaywrightDownloadHandler",
                "https": "scrapy_playwright.handler.ScrapyPlaywrightDownloadHandler",
            },
            "PLAYWRIGHT_LAUNCH_OPTIONS": {"executable_path": executable, "headless": True},
        }, notes
    rendering = {name: getattr(project, name) for name in dir(project) if name.startswith("PLAYWRIGHT_")}
    rendering["PLAYWRIGHT_LAUNCH_OPTIONS"] = project_launch_options(executable)  # the add-on's, from the defaults
    settings = (
        common
        | rendering
        | {
            "TWISTED_REACTOR": project.TWISTED_REACTOR,
            "DOWNLOAD_HANDLERS": project.DOWNLOAD_HANDLERS,
            "COOKIES_ENABLED": project.COOKIES_ENABLED,
        }
    )
    per_context = settings.get("PLAYWRIGHT_MAX_PAGES_PER_CONTEXT") or concurrency
    if per_context < concurrency:
        notes.append(f"PLAYWRIGHT_MAX_PAGES_PER_CONTEXT {per_context} -> {concurrency} (same concurrency)")
        settings["PLAYWRIGHT_MAX_PAGES_PER_CONTEXT"] = concurrency
    return settings, notes


def packaged_defaults(executable: str) -> Any:
    """The packaged configuration defaults (whatever the environment says), on ``executable``: typed sections."""
    from dataclasses import replace

    from topicstreams.config.loading import load_config

    sections = load_config({}, environ={}).sections
    return replace(sections, browser=replace(sections.browser, executable_path=executable))


def project_launch_options(executable: str) -> dict:
    """The project's launch options of its one browser (``launch_options()`` of the packaged defaults)."""
    from topicstreams.browser.chromium import launch_options

    return launch_options(packaged_defaults(executable).browser)


def project_spider(engine: str, base_url: str, profiles: Path, executable: str) -> Any:
    """A spider of the project for ``engine`` whose ``page_request`` gives the project's playwright meta."""
    from topicstreams.browser.chromium import context_options, state_path
    from topicstreams.browser.tabs import EngineTab
    from topicstreams.config.route_table import DEFAULT_ROUTE
    from topicstreams.crawl.cooldown import CooldownPolicy
    from topicstreams.crawl.engine_state import EngineState
    from topicstreams.crawl.spider import EngineSpider
    from topicstreams.crawl.topic_run import Lane
    from topicstreams.engines import REGISTRY
    from topicstreams.engines.reader import PageReader

    class Probe(EngineSpider):
        engine_class = REGISTRY[engine]
        name = engine

    from topicstreams import settings as project

    probe = Probe()
    probe.reader = PageReader(Probe.engine_class(base_url))
    # the spider's tab hygiene (EngineTab.keep): a garbage collection every so many pages, renewal after so many
    tab = EngineTab(
        engine,
        {
            **context_options(packaged_defaults(executable).anti_detection),
            "storage_state": str(state_path(profiles / engine)),
        },
        gc_every=project.TOPICSTREAMS_TAB_GC_PAGES,
        limit=project.TOPICSTREAMS_TAB_PAGES,
    )
    # the engine's one lane (no routes): its pacing state is not used here, only its tab
    state = EngineState(engine, floor=0.0, jitter_ratio=0.0, cooldown=CooldownPolicy(0, 1, 0))
    probe.lanes = [Lane(DEFAULT_ROUTE, state.lane(DEFAULT_ROUTE), tab)]
    return probe


def project_meta(probe: Any, page: Any) -> dict:
    """The playwright meta the project's spider sends with its tab ``page`` (from ``EngineSpider.page_request``)."""
    from topicstreams.crawl.topic_run import TopicRun

    lane = probe.lanes[0]
    lane.tab.page = page
    request = probe.page_request(0, TopicRun("topic", done=None, lane=lane))
    return {k: v for k, v in request.meta.items() if k.startswith("playwright") or k == "handle_httpstatus_all"}


def run_side(spec: dict) -> None:
    """Crawl the plan with one side's settings; print one JSON line of results."""
    import scrapy
    from scrapy.crawler import CrawlerProcess

    side, executable = spec["side"], spec["executable"]
    settings, notes = side_settings(side, spec["concurrency"], executable, len(spec["engines"]))
    profiles = Path(tempfile.mkdtemp(prefix="topicstreams-render-bench-"))
    result: dict[str, Any] = {"side": side, "notes": notes}

    class RenderBench(scrapy.Spider):
        name = "render_bench"

        def __init__(self, **kwargs: Any) -> None:
            super().__init__(**kwargs)
            self.spiders = {e: engine_spider(e, spec["base_urls"][e]) for e in spec["engines"]}
            self.probes = (
                {e: project_spider(e, spec["base_urls"][e], profiles, executable) for e in spec["engines"]}
                if side == "project"
                else {}
            )
            # Lanes: --concurrency of them, each sending its next page when its last one is back, as an
            # engine spider does (one topic at a time); the project's lanes keep their tab per engine.
            lanes = spec["concurrency"]
            self.lanes = [spec["timed"][lane::lanes] for lane in range(lanes)]
            self.tabs: list[dict[str, Any]] = [{} for _ in range(lanes)]
            self.tab_pages: list[dict[str, int]] = [{} for _ in range(lanes)]
            self.done = self.ok = 0
            self.busy = 0.0  # the timed pages' seconds in the downloader, added up: / elapsed = pages in flight
            self.failures: list[str] = []
            self.pending_warm = len(spec["warmup"])
            self.warm: asyncio.Future | None = None

        def request(self, item: dict, warm: bool, lane: int = -1, step: int = 0) -> scrapy.Request:
            engine = item["engine"]
            if side == "project":
                tab = self.tabs[lane].get(engine) if lane >= 0 else None
                meta = project_meta(self.probes[engine], tab)
                if lane < 0:
                    meta.pop("playwright_include_page", None)  # warm-up pages are not kept
            else:
                meta = {"playwright": True, "handle_httpstatus_all": True}
            meta["bench"] = {"warm": warm, "lane": lane, "step": step, **item}
            return scrapy.Request(item["url"], callback=self.rendered, errback=self.failed, dont_filter=True, meta=meta)

        def next_in_lane(self, item: dict) -> scrapy.Request | None:
            lane, step = item["lane"], item["step"] + 1
            if item["warm"] or step >= len(self.lanes[lane]):
                return None
            return self.request(self.lanes[lane][step], warm=False, lane=lane, step=step)

        @classmethod
        def from_crawler(cls, crawler: Any, *args: Any, **kwargs: Any) -> RenderBench:
            spider = super().from_crawler(crawler, *args, **kwargs)
            crawler.signals.connect(spider.reached_downloader, signal=scrapy.signals.request_reached_downloader)
            return spider

        def reached_downloader(self, request: scrapy.Request, spider: scrapy.Spider) -> None:
            request.meta["bench_sent"] = time.monotonic()

        async def start(self):
            self.warm = asyncio.get_running_loop().create_future()
            for item in spec["warmup"]:
                yield self.request(item, warm=True)
            await self.warm
            result["window_started_at"] = time.time()
            result["cpu_start"] = tree_cpu_seconds()
            self.started = time.monotonic()
            for lane, items in enumerate(self.lanes):
                if items:
                    yield self.request(items[0], warm=False, lane=lane)

        def check(self, response: scrapy.http.Response, item: dict) -> str | None:
            if response.status != 200:
                return f"status {response.status}"
            text = response.text
            if item["topic"] not in text and html.escape(item["topic"]) not in text:
                return "topic not in the page"
            spider = self.spiders.get(item["engine"])
            if spider is not None and not len(spider.result_nodes(response)):
                return "no results found by the project's engine"
            return None

        def finish(self, item: dict, problem: str | None, sent: float) -> None:
            if item["warm"]:
                if problem:
                    self.failures.append(f"warm-up {item['engine']} {item['url']}: {problem}")
                self.pending_warm -= 1
                if self.pending_warm == 0 and self.warm is not None and not self.warm.done():
                    self.warm.set_result(None)
                return
            self.done += 1
            self.busy += time.monotonic() - sent
            if problem:
                self.failures.append(f"{item['engine']} {item['url']}: {problem}")
            else:
                self.ok += 1
            if self.done == len(spec["timed"]):
                result["elapsed"] = time.monotonic() - self.started
                result["in_flight"] = self.busy / result["elapsed"]
                result["cpu_end"] = tree_cpu_seconds()
                result["window_ended_at"] = time.time()

        def rendered(self, response: scrapy.http.Response):
            item = response.meta["bench"]
            try:
                problem = self.check(response, item)
            except Exception as exc:
                problem = f"{type(exc).__name__}: {exc}"
            self.finish(item, problem, response.meta["bench_sent"])
            page, lane, engine = response.meta.get("playwright_page"), item["lane"], item["engine"]
            if page is not None and lane >= 0:
                if side == "project":  # kept as the spider keeps its tab (EngineTab.keep), with its hygiene
                    tab = self.probes[engine].lanes[0].tab
                    tab.page, tab.pages = self.tabs[lane].get(engine), self.tab_pages[lane].get(engine, 0)
                    tab.keep(page)
                    page, self.tab_pages[lane][engine] = tab.page, tab.pages
                self.tabs[lane][engine] = page
            follow = self.next_in_lane(item)
            if follow is not None:
                yield follow

        def failed(self, failure: Any):
            item = failure.request.meta["bench"]
            sent = failure.request.meta.get("bench_sent", time.monotonic())  # absent: failed before downloading
            self.finish(item, f"{failure.type.__name__}: {failure.value}", sent)
            if item["lane"] >= 0:
                self.tabs[item["lane"]].pop(item["engine"], None)  # as the spider does: a fresh tab next time
            follow = self.next_in_lane(item)
            if follow is not None:
                yield follow

    process = CrawlerProcess(settings)
    crawler = process.create_crawler(RenderBench)
    process.crawl(crawler)
    process.start()
    spider = crawler.spider
    result.update(
        pages=len(spec["timed"]),
        done=spider.done,
        ok=spider.ok,
        failures=spider.failures[:20],
        failure_count=len(spider.failures),
        stats={
            k: v
            for k, v in crawler.stats.get_stats().items()
            if k.startswith(
                (
                    "playwright/request_count",
                    "playwright/page_count",
                    "playwright/context_count",
                    "playwright/browser_count",
                )
            )
        },
    )
    print("RESULT " + json.dumps(result, default=str), flush=True)
    shutil.rmtree(profiles, ignore_errors=True)


# -- the parent: servers, sampling, the table -----------------------------------------------------------------


class TreeMemory(threading.Thread):
    """Samples the summed PSS (or RSS) of a process tree every SAMPLE_SECONDS; keeps the peak."""

    def __init__(self, pid: int) -> None:
        super().__init__(daemon=True)
        self.root = psutil.Process(pid)
        self.stop = threading.Event()
        self.peak = 0
        self.peak_processes = 0
        self.kind = "PSS"

    def sample(self) -> None:
        try:
            procs = [self.root, *self.root.children(recursive=True)]
        except psutil.Error:
            return
        total = 0
        for proc in procs:
            try:
                if self.kind == "PSS":
                    total += proc.memory_full_info().pss
                else:
                    total += proc.memory_info().rss
            except psutil.AccessDenied:
                self.kind = "RSS"  # no /proc/PID/smaps here: RSS for every sample from now on
                self.peak = 0
                return
            except (psutil.Error, AttributeError):
                continue
        self.peak = max(self.peak, total)
        self.peak_processes = max(self.peak_processes, len(procs))

    def run(self) -> None:
        while not self.stop.wait(SAMPLE_SECONDS):
            self.sample()


def run_side_process(side: str, spec: dict, fakes: FakeEngines, timeout: float) -> dict:
    fakes.clear_log()
    me = psutil.Process()
    server_cpu = me.cpu_times()
    command = [sys.executable, os.path.abspath(__file__), "--run-side"]
    proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    memory = TreeMemory(proc.pid)
    memory.start()
    try:
        out, err = proc.communicate(json.dumps(spec | {"side": side}), timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        return {"side": side, "error": f"timed out after {timeout:.0f} s", "stderr": err}
    finally:
        memory.stop.set()
        memory.join()
    after = me.cpu_times()
    lines = [line for line in out.splitlines() if line.startswith("RESULT ")]
    if proc.returncode != 0 or not lines:
        return {"side": side, "error": f"exited {proc.returncode} without a result", "stderr": err}
    result = json.loads(lines[-1][len("RESULT ") :])
    result["stderr"] = err
    result["peak_memory"], result["memory_kind"] = memory.peak, memory.kind
    result["peak_processes"] = memory.peak_processes
    result["here_cpu"] = (after.user + after.system) - (server_cpu.user + server_cpu.system)
    if "window_started_at" in result:
        log = [e for name in fakes.engines for e in fakes.requests(name) if e["time"] >= result["window_started_at"]]
        result["bytes"] = sum(e["bytes"] for e in log)
        result["requests"] = len(log)
    return result


def describe(result: dict) -> dict:
    pages = result["pages"]
    elapsed = result["elapsed"]
    start, end = result["cpu_start"], result["cpu_end"]
    by_kind = {kind: (end.get(kind, 0.0) - start.get(kind, 0.0)) / pages for kind in end}
    return {
        "pages_s": pages / elapsed,
        "ms": 1000 * elapsed / pages,
        "cpu": sum(by_kind.values()),
        "cpu_by_kind": by_kind,
        "kb": result["bytes"] / pages / 1024,
        "requests": result["requests"] / pages,
        "peak": result["peak_memory"] / 2**20,
        "in_flight": result["in_flight"],
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-n", "--pages", type=int, default=200, help="pages rendered per side (default 200)")
    parser.add_argument("--concurrency", type=int, default=4, help="pages at a time, both sides (default 4)")
    parser.add_argument("--engines", help="comma-separated (default: every engine with fake pages)")
    parser.add_argument("--executable", default=None, help="the Chromium to run (default: find_executable())")
    parser.add_argument("--timeout", type=float, default=1200, help="seconds allowed per side (default 1200)")
    parser.add_argument("--run-side", action="store_true", help=argparse.SUPPRESS)  # one side: spec on stdin
    args = parser.parse_args()
    if args.run_side:
        run_side(json.load(sys.stdin))
        return 0

    engines = [e.strip() for e in (args.engines or "").split(",") if e.strip()] or available_engines()
    executable = args.executable or find_executable()
    if not executable:
        sys.exit("no Chromium found: pass --executable")
    if args.pages < 1 or args.concurrency < 1:
        sys.exit("--pages and --concurrency must be >= 1")
    weight = PageWeight()
    print(f"{args.pages} pages per side, {args.concurrency} at a time, engines {', '.join(engines)}; {executable}")
    print(
        f"page weight: {weight.thumbnails} thumbnails {weight.thumbnail_bytes[0] // 1000}-"
        f"{weight.thumbnail_bytes[1] // 1000} KB, {weight.fonts} fonts, a stylesheet "
        f"{weight.stylesheet_bytes // 1000} KB and a script {weight.script_bytes // 1000} KB, each asset after "
        f"{weight.asset_delay * 1000:.0f} ms",
        flush=True,
    )

    results: dict[str, dict] = {}
    with FakeEngines(engines, extensions=[weight]) as fakes:
        warmup, timed = make_plan(fakes, engines, args.pages)
        spec = {
            "engines": engines,
            "base_urls": {e: fakes.base_url(e) for e in engines},
            "warmup": warmup,
            "timed": timed,
            "concurrency": args.concurrency,
            "executable": executable,
        }
        for side in SIDES:
            results[side] = run_side_process(side, spec, fakes, args.timeout)

    failed = False
    for side in SIDES:
        result = results[side]
        if "error" in result or result.get("failure_count") or result.get("ok") != result.get("pages"):
            failed = True
            print(
                f"\n{side}: FAILED — {result.get('error') or ''}"
                f"{result.get('ok', 0)}/{result.get('pages', args.pages)} pages rendered OK"
            )
            for line in result.get("failures", []):
                print(f"  {line}")
            if result.get("stderr"):
                print("  stderr (end):\n    " + "\n    ".join(result["stderr"].strip().splitlines()[-15:]))
    if failed:
        return 1

    figures = {side: describe(results[side]) for side in SIDES}
    kind = results["project"]["memory_kind"]
    print()
    print(
        f"{'side':<10} {'pages/s':>8} {'ms/page':>8} {'CPU-s/page':>11} {'KB/page':>8} {'req/page':>9} "
        f"{'peak ' + kind + ' MiB':>14} {'in flight':>10}"
    )
    for side in ("project", "defaults"):
        f = figures[side]
        print(
            f"{side:<10} {f['pages_s']:>8.2f} {f['ms']:>8.1f} {f['cpu']:>11.3f} {f['kb']:>8.1f} "
            f"{f['requests']:>9.1f} {f['peak']:>14.0f} {f['in_flight']:>10.2f}"
        )
    p, d = figures["project"], figures["defaults"]
    speed, size = p["pages_s"] / d["pages_s"], p["kb"] / d["kb"]
    print(
        f"{'project/defaults':<18} pages/s {speed:.2f}x, CPU {p['cpu'] / d['cpu']:.2f}x, "
        f"bytes {100 * size:.0f} %, peak memory {100 * p['peak'] / d['peak']:.0f} %"
    )
    for side in ("project", "defaults"):
        kinds = sorted(figures[side]["cpu_by_kind"].items(), key=lambda kv: -kv[1])
        print(f"  {side} CPU-s/page by process: " + ", ".join(f"{k} {v:.3f}" for k, v in kinds if v >= 0.0005))
    for side in ("project", "defaults"):
        r = results[side]
        extra = "; ".join(r.get("notes", []))
        print(
            f"  {side}: {r['peak_processes']} processes at most; fake servers and sampler here "
            f"{r['here_cpu'] / r['pages']:.3f} CPU-s/page" + (f"; {extra}" if extra else "")
        )
    memory = p["peak"] / d["peak"]
    print(
        f"target: pages/s >= {TARGET_SPEED:.2f}x: {'PASS' if speed >= TARGET_SPEED else 'FAIL'}, "
        f"bytes <= {TARGET_BYTES:.0%}: {'PASS' if size <= TARGET_BYTES else 'FAIL'}, "
        f"peak memory <= {TARGET_MEMORY:.2f}x: {'PASS' if memory <= TARGET_MEMORY else 'FAIL'}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
