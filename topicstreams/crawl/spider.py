"""The spider every engine shares: it drives one engine's loop, and nothing else.

An engine spider (:mod:`topicstreams.spiders.google`, …) binds one engine of :mod:`topicstreams.engines`. Its
``start()`` asks the engine's :class:`~topicstreams.crawl.supply.TopicSupply` for the topic due next, one topic
at a time (parallelism is across engines, never within one), sends its pages one after another in the engine's
own context of the process's shared Chromium (:mod:`topicstreams.browser.provider`), and tells the supply how the topic went. The pacing middleware keeps the floor
between requests; while the engine is benched (:mod:`topicstreams.crawl.engine_state`) the loop takes no topic; a
paused engine runs only its canaries. In once mode the spider closes when the supply has no topic left.

Each page is read once, by the blocks middleware (through :class:`~topicstreams.engines.reader.PageReader`);
the callback turns that reading into items, sends ``page_parsed``, and asks for the next page.

Canary queries (``canaries.queries.<engine>``) have a schedule of their own (every ``canaries.interval``
seconds, the first at start; once each in once mode): they go the same way as topics, still while the engine is
paused, and their answer is checked (``canary_checked``) instead of stored.

No topic can stall the loop:

* the topic names of ``-a topics=`` are checked first (:mod:`topicstreams.engines.topic_names`): one that is empty, holds a
  control character or whose results URL would pass ``URLLENGTH_LIMIT`` closes the spider at once with the reason
  ``topics_refused`` and an ERROR naming it (the ``crawl`` and ``crawlall`` commands refuse it before that, exit 2);
  a name of the table that breaks the rule (stored before the check existed) is skipped by the topic supply with
  one WARNING;
* each page is awaited with a deadline (:mod:`topicstreams.crawl.deadline`: the navigation timeout plus
  ``TOPICSTREAMS_RESPONSE_MARGIN``, from when pacing lets the request go). A request that has not come back by
  then (dropped by a middleware without an errback, lost by the browser) resolves its topic as an ``error``
  (``no response``), with a WARNING and ``topicstreams/<engine>/requests_lost``; the topic supply decides its retry
  as for any error, and the loop goes on. Should its answer come after all, it no longer belongs to the topic in
  flight: its items are kept (stored like any others: the writes are idempotent, and nothing scraped is thrown
  away), but it asks for no further page and finishes nothing.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import Counter
from collections.abc import AsyncIterator, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import scrapy
from scrapy.exceptions import CloseSpider
from scrapy.http import Response
from twisted.python.failure import Failure

from topicstreams.browser.chromium import state_path
from topicstreams.crawl import meta as keys
from topicstreams.crawl.arguments import is_true, split_names
from topicstreams.crawl.canaries import CanaryQuery, canaries_for, check_answer
from topicstreams.crawl.deadline import LOST, PageDeadline, response_budget
from topicstreams.crawl.leased_supply import LeasedTopics
from topicstreams.crawl.runtime import Runtime
from topicstreams.crawl.signals import PageParsed, canary_checked, page_parsed, topic_swept
from topicstreams.crawl.supply import Fate
from topicstreams.crawl.supply_factory import topic_supply_for
from topicstreams.crawl.topic_schedule import TopicSchedule
from topicstreams.engines import Engine
from topicstreams.engines.classify import ResponseClass, Verdict, classify_failure, parse_error
from topicstreams.engines.items import NewsItem, missing_fields
from topicstreams.engines.reader import ItemsOfPage, Reading, reader_from_settings
from topicstreams.engines.topic_names import TopicsRefused, check_topics, shown, topic_problem, url_length_limit

PAUSE_POLL = 1.0
"""Seconds between looks at a paused engine's state."""

TOPICS_REFUSED = "topics_refused"
"""The close reason of a spider whose ``-a topics=`` breaks the topic-name rule."""


@dataclass
class TopicRun:
    """The topic (or canary query) whose pages are out; ``done`` resolves with the last page's verdict."""

    topic: str
    done: asyncio.Future = field(repr=False)
    seen: set[str] = field(default_factory=set, repr=False)
    """The URLs of the pages so far (an engine that repeats its last page past the end is caught by it)."""
    canary: CanaryQuery | None = None
    request: scrapy.Request | None = field(default=None, repr=False)
    """The request of its latest page."""
    asked_at: float = 0.0
    """When that request was made (monotonic)."""
    lost: bool = False
    """Its latest page's request never came back in time: the run is over, its late answers belong to no run."""
    settled: bool = False
    """Its verdict went to the topic supply (once, by the loop, or by :meth:`EngineSpider.closed` when the spider
    closed between the last page and the loop's turn)."""

    def finish(self, verdict: Verdict) -> None:
        if not self.done.done():
            self.done.set_result(verdict)


class EngineSpider(scrapy.Spider):
    """The base of the four engine spiders: ``engine_class`` is the engine it drives."""

    engine_class: ClassVar[type[Engine]]

    def __init__(self, *args: Any, topics: str | None = None, once: str | bool = False, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.topics_arg = split_names(topics) if topics is not None else None
        self.once = is_true(once)
        self.run: TopicRun | None = None
        self.page = None  # the engine's Playwright page (tab), kept from one request to the next
        self.tab_pages = 0  # the pages it has shown

    def _configure(self) -> None:
        settings = self.settings
        self.reader = reader_from_settings(self.name, settings)
        self.engine = self.reader.engine
        self.scrape_interval = settings.getfloat("TOPICSTREAMS_SCRAPE_INTERVAL")
        self.max_pages = settings.getint("TOPICSTREAMS_MAX_PAGES")
        self.tab_limit = settings.getint("TOPICSTREAMS_TAB_PAGES")
        self.tab_gc_every = settings.getint("TOPICSTREAMS_TAB_GC_PAGES")
        runtime = Runtime.of(self.crawler)
        self.state = runtime.engine_state(self.crawler)
        self.response_budget = response_budget(settings)
        self.url_limit = url_length_limit(settings)
        self.supply = topic_supply_for(
            settings,
            self.state,
            topics=self.topics_arg,
            once=self.once,
            problem_of=self.topic_problem,
            database=runtime.database,
        )
        canaries = settings.getdict("TOPICSTREAMS_CANARIES")
        self.canaries = {canary.query: canary for canary in canaries_for(canaries, self.name)}
        self.canary_schedule = TopicSchedule(float(canaries.get("interval") or 3600), self.state.jitter_ratio)
        self.canary_schedule.add_now(self.canaries)
        # The engine's own context of the shared browser, its cookies and storage kept in its profile folder.
        self.context_kwargs = {
            **settings.getdict("TOPICSTREAMS_CONTEXT_OPTIONS"),
            "storage_state": str(state_path(Path(settings.get("TOPICSTREAMS_PROFILE_PATH")))),
        }

    def topic_problem(self, name: str) -> str | None:
        """What keeps ``name`` from being a topic of this engine (:mod:`topicstreams.engines.topic_names`), or None."""
        return topic_problem(name, [self.engine], limit=self.url_limit, max_pages=self.max_pages)

    def refuse_topics_arg(self) -> None:
        """Close the spider, with an ERROR, when ``-a topics=`` names no topic or a name that breaks the rule."""
        if self.topics_arg is None:
            return
        if not self.topics_arg:
            message = (
                "-a topics= names no topic: give at least one (-a topics=a,b), or leave the argument out to "
                "crawl the active topics of the table"
            )
        else:
            try:
                check_topics(self.topics_arg, [self.engine], limit=self.url_limit, max_pages=self.max_pages)
                return
            except TopicsRefused as exc:
                message = f"-a topics: {exc}"
        self.logger.error("%s", message)
        raise CloseSpider(TOPICS_REFUSED)

    def stat(self, key: str, count: int = 1) -> None:
        self.crawler.stats.inc_value(f"topicstreams/{self.name}/{key}", count)

    # ---- the loop -------------------------------------------------------------------------------------
    async def start(self) -> AsyncIterator[scrapy.Request]:
        self._configure()
        self.refuse_topics_arg()
        mode = (
            "once: each topic one pass, then close"
            if self.once
            else (f"continuous: every {self.scrape_interval:g} s until stopped")
        )
        shard = self.settings.get("TOPICSTREAMS_SHARD")
        if shard != "0/1":
            mode += f"; shard {shard}: the topics whose hash falls here"
        if self.settings.get("TOPICSTREAMS_ASSIGNMENT") == "lease":
            mode += (
                "; lease mode: topics claimed from the schedule every node shares"
                if isinstance(self.supply, LeasedTopics)
                else "; lease mode, but a one-off run (once=1 or -a topics=) claims nothing from the shared schedule"
            )
        self.logger.info("%s spider starting (%s)", self.name, mode)
        self.supply.open()
        canaries, state = self.canary_schedule, self.state
        while True:
            # A benched engine takes nothing (its topics keep their due times); a paused one runs only canaries.
            benched = state.bench_remaining()
            canary = None if benched else canaries.pop_due()
            if canary is not None:
                yield self.begin(canary[0], self.canaries[canary[0]])
                await self.outcome(self.run)
                if not self.once:
                    canaries.rearm(canary[0])
                continue
            if self.once and self.supply.exhausted and not len(canaries):
                return
            if self.once and state.paused and not len(canaries):
                self.give_up_paused()
                return
            if benched or state.paused:
                await asyncio.sleep(benched or PAUSE_POLL)
                continue
            await self.supply.prepare()
            topic = self.supply.take()
            if topic is None:
                wakes = [wait for wait in (self.supply.wait(), canaries.wait()) if wait is not None]
                await asyncio.sleep(min(wakes) if wakes else self.scrape_interval)
                continue
            yield self.begin(topic)  # its later pages follow from parse_results
            run = self.run
            verdict = await self.outcome(run)
            run.settled = True
            self.settle(topic, verdict)

    def begin(self, topic: str, canary: CanaryQuery | None = None) -> scrapy.Request:
        self.run = TopicRun(topic, asyncio.get_running_loop().create_future(), canary=canary)
        return self.page_request(0)

    async def outcome(self, run: TopicRun) -> Verdict:
        """The run's verdict: its last page's, or :data:`~topicstreams.crawl.deadline.LOST` when a page's
        request has not come back by its deadline (the deadline of whichever page is out, looked at again each
        time one passes: a later page, or pacing letting the request go, moves it)."""
        deadline = None
        while not run.done.done():
            if deadline is None or deadline.request is not run.request:
                deadline = PageDeadline(run.request, self.response_budget, self.state, asked_at=run.asked_at)
            remaining = deadline.remaining()
            if remaining <= 0:
                self.lose(run, let_go=deadline.let_go)
                break
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.shield(run.done), remaining)
        return run.done.result()

    def lose(self, run: TopicRun, *, let_go: bool) -> None:
        """The run's latest request never came back: the run ends as an error, its late answers belong to none."""
        request = run.request
        self.logger.warning(
            "%s %s, page %d: its request never came back within %g s: dropped by a middleware, or lost by the "
            "browser; counted as an error",
            "canary" if run.canary is not None else "topic",
            shown(run.topic),
            request.meta[keys.PAGE] + 1,
            self.response_budget,
        )
        self.stat("requests_lost")
        run.lost = True
        if let_go:  # it went to the browser: its tab may hang on it; the next request starts from a fresh one
            self.drop_page(request.meta.get("playwright_page"))
        run.finish(LOST)

    def settle(self, topic: str, verdict: Verdict) -> None:
        outcome = self.supply.done(topic, verdict)
        if outcome.fate is Fate.SWEPT:
            self.stat("topics_swept")
            self.crawler.signals.send_catch_log(signal=topic_swept, engine=self.name, topic=topic)
        elif outcome.fate is Fate.GIVEN_UP:
            self.logger.error(
                "gave up topic %r after %d attempt%s: last %s (%s)",
                topic,
                outcome.attempts,
                "" if outcome.attempts == 1 else "s",
                verdict.cls,
                verdict.reason,
            )
            self.stat("topics_given_up")
        else:
            if isinstance(self.supply, LeasedTopics):
                again = "given back to the shared schedule, " + (
                    "for a node that still reaches the engine to take now"
                    if outcome.retry_in is None
                    else f"due in {outcome.retry_in:g} s"
                )
            else:
                again = "trying it again " + (
                    "after the cooldown" if outcome.retry_in is None else f"in {outcome.retry_in:g} s"
                )
            self.logger.warning(
                "topic %r %s: %s (%s); %s",
                topic,
                f"attempt {outcome.attempts} failed" if self.once else "failed",
                verdict.cls,
                verdict.reason,
                again,
            )

    def closed(self, reason: str) -> None:
        """The spider closes (the end of a once run, SIGTERM, Ctrl-C): the supply gives back what it holds."""
        supply = getattr(self, "supply", None)
        if supply is None:
            return
        run = getattr(self, "run", None)
        if run is not None and run.canary is None and not run.settled and not run.lost and run.done.done():
            # its pages were all read, and the spider closed before the loop's turn came: settle it now, or the
            # topic would be given back as not scraped (and scraped again by another node in lease mode)
            run.settled = True
            self.settle(run.topic, run.done.result())
        supply.close()

    def give_up_paused(self) -> None:
        """Once mode on a paused engine: the topics left cannot be scraped until a person resumes it."""
        left = self.supply.abandon()
        self.logger.error(
            "%s is paused by its health (see `scrapy health`): %d topic(s) not scraped: %s; a person "
            "lifts the pause with `scrapy health resume %s`",
            self.name,
            len(left),
            ", ".join(left),
            self.name,
        )
        self.stat("topics_given_up", len(left))

    # ---- requests and their answers -------------------------------------------------------------------
    def page_request(self, page: int, run: TopicRun | None = None) -> scrapy.Request:
        run = run if run is not None else self.run
        tab = {"playwright_page": self.page} if self.page is not None and not self.page.is_closed() else {}
        request = scrapy.Request(
            self.engine.results_url(run.topic, page),
            callback=self.parse_results,
            errback=self.results_failed,
            cb_kwargs={"run": run},  # its answer goes to its own run, even once another topic is in flight
            dont_filter=True,
            meta={
                keys.ENGINE: self.name,
                keys.TOPIC: run.topic,
                keys.PAGE: page,
                keys.CANARY: run.canary is not None,
                "dont_retry": True,  # retrying a block is the project's job, after the cooldown
                "handle_httpstatus_all": True,
                "playwright": True,
                "playwright_context": f"{self.name}-profile",
                "playwright_context_kwargs": self.context_kwargs,
                "playwright_page_goto_kwargs": {"wait_until": "domcontentloaded"},
                # One tab per engine, navigated from page to page as a person would: no new renderer
                # process for every page (see the render benchmark).
                "playwright_include_page": True,
                **tab,
            },
        )
        run.request, run.asked_at = request, time.monotonic()
        return request

    def keep_page(self, page: Any) -> None:
        """Keep the engine's tab for its next request, with two kinds of hygiene:

        * every ``TOPICSTREAMS_TAB_GC_PAGES`` pages it asks the tab's renderer for a garbage collection (in the
          background): a tab navigated from page to page keeps each page it left in memory until V8 collects it,
          which a renderer left alone does late (on the render benchmark's pages, four tabs took 1.9 GiB after
          120 pages each, 0.13 GiB with a collection after each page);
        * after ``TOPICSTREAMS_TAB_PAGES`` pages it closes the tab, and the next request opens a fresh one: a tab
          keeps every request and response it has seen until it closes, in the browser, the driver and here.
        """
        if page is None:
            return
        if page is not self.page:
            self.page, self.tab_pages = page, 0
        self.tab_pages += 1
        if self.tab_limit and self.tab_pages >= self.tab_limit:
            self.stat("tabs_renewed")
            self.drop_page(page)
        elif self.tab_gc_every and self.tab_pages % self.tab_gc_every == 0:
            collect_garbage(page)

    def leave_late_tab(self, page: Any) -> None:
        """Close the tab of a late answer, unless it is the engine's tab (the run in flight may be using it)."""
        if page is not None and page is not self.page:
            close_tab(page)

    def drop_page(self, page: Any) -> None:
        """Close a tab (its navigation failed, or it is renewed): the next request starts from a fresh one."""
        if page is None:
            return
        if page is self.page:
            self.page = None
        close_tab(page)

    def parse_results(self, response: Response, run: TopicRun | None = None) -> Iterable[NewsItem | scrapy.Request]:
        run, page = run if run is not None else self.run, response.meta[keys.PAGE]
        if run.lost:
            self.leave_late_tab(response.meta.get("playwright_page"))
        else:
            self.keep_page(response.meta.get("playwright_page"))
        reading: Reading = response.meta[keys.READING]  # the blocks middleware's reading of the page
        verdict = reading.verdict
        try:
            built = self.reader.items(reading, topic=run.topic, number=page)
        except Exception as exc:  # a parser bug must not stall the topic loop
            self.logger.exception("could not parse %s", response.url)
            verdict, built = parse_error(exc), ItemsOfPage([], [])
        items = built.items
        for time_text, timestamp in built.unparsed_times:
            self.stat("times_unparsed")
            self.logger.debug("unparsed time %r / %r on %s", time_text, timestamp, response.url)
        lacking = [missing_fields(item) for item in items]
        self.crawler.signals.send_catch_log(
            signal=page_parsed,
            outcome=PageParsed(
                response.meta.get(keys.CLASSIFICATION),
                items=len(items),
                valid_items=lacking.count([]),
                error=verdict.reason if verdict.parse_failed else None,
                missing=dict(Counter(name for names in lacking for name in names)),
            ),
        )
        if run.canary is not None:
            if run.lost:
                self.logger.debug("canary %r: a late answer, after its run timed out; not checked", run.topic)
                return
            try:
                self.check_canary(run.canary, verdict, items)
            finally:
                run.finish(verdict)
            return
        urls = {self.reader.identity(item["url"]) for item in items}
        if page and urls and urls <= run.seen:
            # Past its end an engine may serve its last page again (Bing does): that is the end, not news.
            self.logger.debug("page %d of topic %r repeats earlier results: no more pages", page, run.topic)
            items = []
        run.seen |= urls
        if run.lost:
            self.logger.info(
                "topic %s, page %d: a late answer, after its run timed out: its %d item(s) are kept; "
                "no further page is asked for, and the topic's outcome stays the error",
                shown(run.topic),
                page + 1,
                len(items),
            )
            for item in items:
                self.stat("items_scraped")
                yield item
            return
        next_page = None
        try:
            for item in items:
                self.stat("items_scraped")
                yield item
            if items and page + 1 < self.max_pages and reading.has_next and not self.state.paused:
                next_page = self.page_request(page + 1, run)
        finally:
            # Whatever happens here (the spider closing mid-page included), the topic loop is never left waiting.
            if next_page is None:
                run.finish(verdict)
        if next_page is not None:
            yield next_page

    def check_canary(self, canary: CanaryQuery, verdict: Verdict, items: list[NewsItem]) -> None:
        """A canary's answer, when its page looked normal (a block is the hostility signals' business)."""
        if verdict.cls is not ResponseClass.OK:
            return
        check = check_answer(canary, self.name, [self.reader.identity(item["url"]) for item in items])
        self.stat("canaries")
        if not check.matched:
            self.stat("canary_mismatches")
        self.logger.debug("canary %r: %d results, %s", canary.query, check.results, check.problem or "as expected")
        self.crawler.signals.send_catch_log(signal=canary_checked, check=check)

    def results_failed(self, failure: Failure) -> None:
        meta = failure.request.meta
        run = failure.request.cb_kwargs.get("run") or self.run
        if run is not None and run.lost:  # a late failure: the run is over already
            self.leave_late_tab(meta.get("playwright_page"))
            self.logger.debug(
                "topic %s: the request that timed out failed later: %s", shown(run.topic), failure.getErrorMessage()
            )
            return
        self.drop_page(meta.get("playwright_page"))
        reading = meta.get(keys.READING)
        if run is not None:
            run.finish(reading.verdict if reading is not None else classify_failure(failure.value))


def on_open_tab(page: Any, action: str) -> None:
    """Run a Playwright page's coroutine method ``action`` in the background, unless the tab is closed already (a
    tab that closes meanwhile, or an action that fails, is no matter)."""
    if not page.is_closed():
        running = asyncio.ensure_future(getattr(page, action)())
        running.add_done_callback(lambda done: done.cancelled() or done.exception())


def collect_garbage(page: Any) -> None:
    """Ask a Playwright page's renderer for a garbage collection, in the background."""
    on_open_tab(page, "request_gc")


def close_tab(page: Any) -> None:
    """Close a Playwright page in the background."""
    on_open_tab(page, "close")
