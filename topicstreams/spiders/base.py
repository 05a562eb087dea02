"""The spider every engine shares: it drives one engine's loop, and nothing else.

An engine spider (:mod:`topicstreams.spiders.google`, …) binds one engine of :mod:`topicstreams.engines`. Its
``start()`` asks the engine's :class:`~topicstreams.topic_supply.TopicSupply` for the topic due next, one topic
at a time (parallelism is across engines, never within one), sends its pages one after another in the engine's
persistent Chromium profile, and tells the supply how the topic went. The pacing middleware keeps the floor
between requests; while the engine is benched (:mod:`topicstreams.engine_state`) the loop takes no topic; a
paused engine runs only its canaries. In once mode the spider closes when the supply has no topic left.

Each page is read once, by the blocks middleware (through :class:`~topicstreams.engines.reader.PageReader`);
the callback turns that reading into items, sends ``page_parsed``, and asks for the next page.

Canary queries (``canaries.queries.<engine>``) have a schedule of their own (every ``canaries.interval``
seconds, the first at start; once each in once mode): they go the same way as topics, still while the engine is
paused, and their answer is checked (``canary_checked``) instead of stored.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import AsyncIterator, Iterable
from dataclasses import dataclass, field
from typing import Any, ClassVar

import scrapy
from scrapy.http import Response
from twisted.python.failure import Failure

from topicstreams import meta as keys
from topicstreams.arguments import is_true, split_names
from topicstreams.canaries import CanaryQuery, canaries_for, check_answer
from topicstreams.classify import ResponseClass, Verdict, classify_failure, parse_error
from topicstreams.engine_state import state_for
from topicstreams.engines import Engine
from topicstreams.engines.reader import ItemsOfPage, Reading, reader_from_settings
from topicstreams.items import NewsItem, missing_fields
from topicstreams.scheduler import TopicSchedule
from topicstreams.signals import PageParsed, canary_checked, page_parsed
from topicstreams.topic_supply import Fate, topic_supply_for

PAUSE_POLL = 1.0
"""Seconds between looks at a paused engine's state."""


@dataclass
class TopicRun:
    """The topic (or canary query) whose pages are out; ``done`` resolves with the last page's verdict."""

    topic: str
    done: asyncio.Future = field(repr=False)
    seen: set[str] = field(default_factory=set, repr=False)
    """The URLs of the pages so far (an engine that repeats its last page past the end is caught by it)."""
    canary: CanaryQuery | None = None

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

    def _configure(self) -> None:
        settings = self.settings
        self.reader = reader_from_settings(self.name, settings)
        self.engine = self.reader.engine
        self.scrape_interval = settings.getfloat("TOPICSTREAMS_SCRAPE_INTERVAL")
        self.max_pages = settings.getint("TOPICSTREAMS_MAX_PAGES")
        self.state = state_for(self.crawler)
        self.supply = topic_supply_for(settings, self.state, topics=self.topics_arg, once=self.once)
        canaries = settings.getdict("TOPICSTREAMS_CANARIES")
        self.canaries = {canary.query: canary for canary in canaries_for(canaries, self.name)}
        self.canary_schedule = TopicSchedule(float(canaries.get("interval") or 3600), self.state.jitter_ratio)
        self.canary_schedule.add_now(self.canaries)
        self.context_kwargs = {**settings.getdict("TOPICSTREAMS_CONTEXT_OPTIONS"),
                               "user_data_dir": settings.get("TOPICSTREAMS_PROFILE_PATH")}

    def stat(self, key: str, count: int = 1) -> None:
        self.crawler.stats.inc_value(f"topicstreams/{self.name}/{key}", count)

    # ---- the loop -------------------------------------------------------------------------------------
    async def start(self) -> AsyncIterator[scrapy.Request]:
        self._configure()
        mode = "once: each topic one pass, then close" if self.once else (
            f"continuous: every {self.scrape_interval:g} s until stopped")
        shard = self.settings.get("TOPICSTREAMS_SHARD")
        if shard != "0/1":
            mode += f"; shard {shard}: the topics whose hash falls here"
        self.logger.info("%s spider starting (%s)", self.name, mode)
        self.supply.open()
        canaries, state = self.canary_schedule, self.state
        while True:
            # A benched engine takes nothing (its topics keep their due times); a paused one runs only canaries.
            benched = state.bench_remaining()
            canary = None if benched else canaries.pop_due()
            if canary is not None:
                yield self.begin(canary[0], self.canaries[canary[0]])
                await self.run.done
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
            topic = self.supply.take()
            if topic is None:
                wakes = [wait for wait in (self.supply.wait(), canaries.wait()) if wait is not None]
                await asyncio.sleep(min(wakes) if wakes else self.scrape_interval)
                continue
            yield self.begin(topic)  # its later pages follow from parse_results
            self.settle(topic, await self.run.done)

    def begin(self, topic: str, canary: CanaryQuery | None = None) -> scrapy.Request:
        self.run = TopicRun(topic, asyncio.get_running_loop().create_future(), canary=canary)
        return self.page_request(0)

    def settle(self, topic: str, verdict: Verdict) -> None:
        outcome = self.supply.done(topic, verdict)
        if outcome.fate is Fate.SWEPT:
            self.stat("topics_swept")
        elif outcome.fate is Fate.GIVEN_UP:
            self.logger.error("gave up topic %r after %d attempts: last %s (%s)",
                              topic, outcome.attempts, verdict.cls, verdict.reason)
            self.stat("topics_given_up")
        else:
            self.logger.warning("topic %r %s: %s (%s); trying it again %s", topic,
                                f"attempt {outcome.attempts} failed" if self.once else "failed", verdict.cls,
                                verdict.reason, "after the cooldown" if outcome.retry_in is None else
                                f"in {outcome.retry_in:g} s")

    def give_up_paused(self) -> None:
        """Once mode on a paused engine: the topics left cannot be scraped until a person resumes it."""
        left = self.supply.abandon()
        self.logger.error("%s is paused by its health (see `scrapy health`): %d topic(s) not scraped: %s; a person "
                          "lifts the pause with `scrapy health resume %s`", self.name, len(left), ", ".join(left),
                          self.name)
        self.stat("topics_given_up", len(left))

    # ---- requests and their answers -------------------------------------------------------------------
    def page_request(self, page: int) -> scrapy.Request:
        run = self.run
        tab = {"playwright_page": self.page} if self.page is not None and not self.page.is_closed() else {}
        return scrapy.Request(
            self.engine.results_url(run.topic, page),
            callback=self.parse_results,
            errback=self.results_failed,
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

    def keep_page(self, page: Any) -> None:
        """Keep the engine's tab for its next request."""
        if page is not None:
            self.page = page

    def drop_page(self, page: Any) -> None:
        """Close a tab whose navigation failed: the next request starts from a fresh one."""
        if page is None:
            return
        if page is self.page:
            self.page = None
        if not page.is_closed():
            closing = asyncio.ensure_future(page.close())
            closing.add_done_callback(lambda done: done.cancelled() or done.exception())

    def parse_results(self, response: Response) -> Iterable[NewsItem | scrapy.Request]:
        run, page = self.run, response.meta[keys.PAGE]
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
        self.crawler.signals.send_catch_log(signal=page_parsed, outcome=PageParsed(
            response.meta.get(keys.CLASSIFICATION), items=len(items), valid_items=lacking.count([]),
            error=verdict.reason if verdict.parse_failed else None,
            missing=dict(Counter(name for names in lacking for name in names))))
        if run.canary is not None:
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
        next_page = None
        try:
            for item in items:
                self.stat("items_scraped")
                yield item
            if items and page + 1 < self.max_pages and reading.has_next and not self.state.paused:
                next_page = self.page_request(page + 1)
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
        self.drop_page(meta.get("playwright_page"))
        reading = meta.get(keys.READING)
        if self.run is not None:
            self.run.finish(reading.verdict if reading is not None else classify_failure(failure.value))
