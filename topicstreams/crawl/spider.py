"""The spider every engine shares: it drives one engine's loop, and nothing else.

An engine spider (:mod:`topicstreams.spiders.google`, …) binds one engine of :mod:`topicstreams.engines`. Its
``start()`` drives one loop per lane — a route the engine takes (``routes``; one ``default`` lane without them,
:class:`~topicstreams.crawl.topic_run.Lane`) — and hands Scrapy their requests. Each lane asks the engine's
:class:`~topicstreams.crawl.supply.TopicSupply` for the topic due next, one topic at a time per lane (several at once
across the engine's routes), sends its pages one after another in the lane's own tab of the process's shared
Chromium (:class:`~topicstreams.browser.tabs.EngineTab`: the route's browser context, proxy and persona), and tells
the supply how the topic went (:mod:`topicstreams.crawl.topic_fates`). A topic whose request failed for a route's
reason (the proxy, the connection) on a proxied route is given back due now when another lane is free: it fails
over at once; a challenge or block never does (it waits for that pair's cooldown). The pacing middleware keeps the
floor between a lane's requests; while a lane is benched (:mod:`topicstreams.crawl.engine_state`) the loop takes no
topic; a paused engine runs only its canaries; an engine the store holds (its journal cannot be written while the
database cannot either) takes no topic and asks for no further page until the store releases it, in once mode too.
In once mode the spider closes when the supply has no topic left.

The engine's :class:`~topicstreams.crawl.topic_planner.TopicPlanner` is told what each page held that the engine had
not stored for the topic before, and how each visit went: it gives each topic its interval (``scraper.schedule``) and
lets a visit read past ``scraper.max_pages`` while every article is new (depth on demand, adaptive schedule only).

The spider's :class:`~topicstreams.engines.reader.PageReader` is the crawl's one engine object: the blocks and
consent middlewares use it too. Each page is read once, by the blocks middleware; the callback turns that reading
into items (:mod:`topicstreams.crawl.page_items`, which sends ``page_parsed``) and asks for the next page.

Canary queries (``canaries.queries.<engine>``) have a schedule of their own (every ``canaries.interval``
seconds, the first at start; once each in once mode): they go the same way as topics, still while the engine is
paused, and their answer is checked (``canary_checked``) instead of stored.

Its arguments (``-a topics=a,b``, ``-a once=1``) are read in ``__init__`` by
:func:`~topicstreams.crawl.arguments.spider_arguments`, whichever way the spider is run (``scrapy crawl``, a Scrapyd
job, a script): an unknown name or a ``once`` that is not ``1``, ``true``, ``yes``, ``0``, ``false`` or ``no`` raises
:class:`~topicstreams.crawl.arguments.ArgumentRefused` naming it (the ``crawl`` and ``crawlall`` commands refuse it
before that, in one line, exit 2).

No topic can stall the loop:

* the topic names of ``-a topics=`` are checked first (:mod:`topicstreams.engines.topic_names`): one that is
  empty, holds a control character or whose results URL would pass ``URLLENGTH_LIMIT`` closes the spider at once
  with the reason ``topics_refused`` and an ERROR naming it (the ``crawl`` and ``crawlall`` commands refuse it
  before that, exit 2); a name of the table that breaks the rule (stored before the check existed) is skipped by
  the topic supply with one WARNING;
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
from collections.abc import AsyncIterator, Iterable
from functools import cached_property
from typing import Any, ClassVar

import scrapy
from scrapy.exceptions import CloseSpider
from scrapy.http import Response
from twisted.python.failure import Failure

from topicstreams.browser.tabs import EngineTab
from topicstreams.config.sections import CanaryQuerySection
from topicstreams.config.setting_names import sections_from
from topicstreams.crawl import meta as keys
from topicstreams.crawl import signals as crawl_signals
from topicstreams.crawl.arguments import SPIDER_ARGUMENTS, spider_arguments, topics_refusal
from topicstreams.crawl.canaries import canaries_for
from topicstreams.crawl.deadline import LOST, PageDeadline, response_budget
from topicstreams.crawl.engine_state import crawl_routes
from topicstreams.crawl.page_items import PageItems
from topicstreams.crawl.runtime import Runtime
from topicstreams.crawl.supply_factory import supply_mode, topic_supply_for
from topicstreams.crawl.topic_fates import TopicFates
from topicstreams.crawl.topic_planner import TopicPlanner, VisitCount
from topicstreams.crawl.topic_run import Lane, TopicRun
from topicstreams.crawl.topic_schedule import TopicSchedule
from topicstreams.engines import Engine
from topicstreams.engines.classify import ResponseClass, Verdict, classify_failure, is_route_failure
from topicstreams.engines.items import NewsItem
from topicstreams.engines.news_urls import news_id
from topicstreams.engines.reader import PageReader, engine_reader
from topicstreams.engines.topic_names import shown, topic_problem, url_length_limit

PAUSE_POLL = 1.0
"""Seconds between looks at a paused engine's state."""

TOPICS_REFUSED = "topics_refused"
"""The close reason of a spider whose ``-a topics=`` breaks the topic-name rule."""


class EngineSpider(scrapy.Spider):
    """The base of the four engine spiders: ``engine_class`` is the engine it drives."""

    engine_class: ClassVar[type[Engine]]

    def __init__(self, *args: Any, **kwargs: Any):
        # Every way of running the spider comes here (``scrapy crawl``, Scrapyd's jobs, a script's CrawlerProcess):
        # an argument it does not understand is refused (ArgumentRefused) before anything starts.
        arguments = spider_arguments(kwargs)
        for name in SPIDER_ARGUMENTS:
            kwargs.pop(name, None)
        super().__init__(*args, **kwargs)  # what is left: a scheduler's own (Scrapyd's ``_job``)
        self.topics_arg = arguments.topics
        self.once = arguments.once
        self.lanes: list[Lane] = []

    @cached_property
    def reader(self) -> PageReader:
        """The engine's page reader, the crawl's one engine object (the blocks and consent middlewares use it too),
        made at its first use from the crawl's settings (final by then: the add-on has set them)."""
        sections = sections_from(self.settings)
        engines = sections.engines
        own = engines[self.name]
        return engine_reader(
            self.name,
            own.base_url,
            own.freshness,
            {name: engine.base_url for name, engine in engines.items()},
            sections.scraper.limits,
        )

    @property
    def engine(self) -> Engine:
        return self.reader.engine

    def _configure(self) -> None:
        settings = self.settings
        sections = sections_from(settings)
        self.scrape_interval = sections.scraper.scrape_interval
        self.max_pages = sections.scraper.max_pages
        runtime = Runtime.of(self.crawler)
        self.state = runtime.engine_state(self.crawler)
        self.response_budget = response_budget(settings, sections.browser.consent)
        self.url_limit = url_length_limit(settings)
        self.planner = TopicPlanner(
            self.crawler, self.state, database=runtime.database, outbox=runtime.outbox(sections.database.url)
        )
        self.supply = topic_supply_for(
            settings,
            self.state,
            topics=self.topics_arg,
            once=self.once,
            problem_of=self.topic_problem,
            database=runtime.database,
            planner=self.planner,
        )
        self.fates = TopicFates(self.crawler, self.name, self.supply, once=self.once, logger=self.logger)
        self.page_items = PageItems(self.crawler, self.reader, self.logger)
        routes = crawl_routes(settings)
        several = len(routes) > 1
        self.lanes = [
            Lane(
                route.name,
                self.state.lane(route.name),
                EngineTab.from_settings(self.name, settings, self.crawler.stats, route if sections.routes else None),
                slot=f"{self.name}@{route.name}" if several else None,
            )
            for route in routes
        ]
        self.gave_up_paused = False
        canaries = sections.canaries
        self.canaries = {canary.query: canary for canary in canaries_for(canaries, self.name)}
        self.canary_schedule = TopicSchedule(canaries.interval, self.state.jitter_ratio)
        self.canary_schedule.add_now(self.canaries)

    def topic_problem(self, name: str) -> str | None:
        """What keeps ``name`` from being a topic of this engine (:mod:`topicstreams.engines.topic_names`), or None."""
        return topic_problem(name, [self.engine], limit=self.url_limit, max_pages=self.max_pages)

    def refuse_topics_arg(self) -> None:
        """Close the spider, with an ERROR, when ``-a topics=`` names no topic or a name that breaks the rule."""
        message = topics_refusal(self.topics_arg, self.engine, limit=self.url_limit, max_pages=self.max_pages)
        if message is not None:
            self.logger.error("%s", message)
            raise CloseSpider(TOPICS_REFUSED)

    def stat(self, key: str, count: int = 1) -> None:
        self.crawler.stats.inc_value(f"topicstreams/{self.name}/{key}", count)

    # ---- the loop ----------------------------------------------------------------------------------------
    async def start(self) -> AsyncIterator[scrapy.Request]:
        self._configure()
        self.refuse_topics_arg()
        routes = f"; routes: {', '.join(lane.route for lane in self.lanes)}" if len(self.lanes) > 1 else ""
        mode = supply_mode(self.settings, self.supply, once=self.once)
        self.logger.info("%s spider starting (%s%s)", self.name, mode, routes)
        self.crawler.signals.send_catch_log(signal=crawl_signals.engine_starting, engine=self.name)
        self.planner.load()
        self.supply.open()
        # One loop per lane (route); their requests come out here, one after another, as Scrapy asks for them.
        requests: asyncio.Queue[scrapy.Request | BaseException | None] = asyncio.Queue()
        loops = [asyncio.ensure_future(self.lane_loop(lane, requests)) for lane in self.lanes]
        running = len(loops)
        try:
            while running:
                request = await requests.get()
                if request is None:
                    running -= 1
                elif isinstance(request, BaseException):
                    raise request
                else:
                    yield request
        finally:
            for loop in loops:
                loop.cancel()

    async def lane_loop(self, lane: Lane, requests: asyncio.Queue) -> None:
        """Drive ``lane``: its canaries and topics, one at a time; then say it is over (None) — or how it failed."""
        try:
            await self.drive(lane, requests)
        except asyncio.CancelledError:
            raise
        except BaseException as exc:  # the spider's start() raises it, as a loop of its own would have
            requests.put_nowait(exc)
        else:
            requests.put_nowait(None)

    async def drive(self, lane: Lane, requests: asyncio.Queue) -> None:
        canaries, state = self.canary_schedule, self.state
        while True:
            # A benched lane takes nothing (its topics keep their due times); a paused engine runs only canaries.
            benched = lane.state.bench_remaining()
            canary = None if benched else canaries.pop_due()
            if canary is not None:
                requests.put_nowait(self.begin(lane, canary[0], self.canaries[canary[0]]))
                await self.outcome(lane.run)
                if not self.once:
                    canaries.rearm(canary[0])
                continue
            if self.once and self.supply.exhausted and not len(canaries):
                if not self.others_busy(lane):
                    return
                await asyncio.sleep(PAUSE_POLL)  # another lane's topic may fail and come back to the schedule
                continue
            if self.once and state.paused and not len(canaries):
                if not self.gave_up_paused:
                    self.gave_up_paused = True
                    self.fates.give_up_paused()
                return
            if benched or state.paused or state.held:
                await asyncio.sleep(benched or PAUSE_POLL)
                continue
            await self.supply.prepare()
            topic = self.supply.take()
            if topic is None:
                wakes = [wait for wait in (self.supply.wait(), canaries.wait()) if wait is not None]
                await asyncio.sleep(min(wakes) if wakes else self.scrape_interval)
                continue
            requests.put_nowait(self.begin(lane, topic))  # its later pages follow from parse_results
            run = lane.run
            verdict = await self.outcome(run)
            run.settled = True
            self.settle(lane, topic, verdict)

    def others_busy(self, lane: Lane) -> bool:
        """Whether another lane has a topic in flight (once mode: a failure may give it back to the schedule)."""
        return any(other.run is not None and not other.run.done.done() for other in self.lanes if other is not lane)

    def settle(self, lane: Lane, topic: str, verdict: Verdict) -> None:
        """The topic's run on ``lane`` is over: a route's failure fails over at once to another free lane of the
        engine (CONTRACT "Routes": a challenge or block never does — it waits for the pair's cooldown); anything
        else goes to the topic's fate."""
        if lane.state.standing is not None and is_route_failure(verdict.reason):
            others = [other.route for other in self.lanes if other is not lane and other.free]
            if others:
                self.supply.fail_over(topic)
                self.stat("failovers")
                self.logger.info(
                    "topic %s: route %s failed (%s): tried again at once on another route (%s free)",
                    shown(topic),
                    lane.route,
                    verdict.reason,
                    ", ".join(others),
                )
                return
        if verdict.cls is ResponseClass.OK and lane.run is not None and lane.run.visit is not None:
            self.planner.visited(lane.run.visit, lane.route)  # before the supply re-arms it by what it learnt
        # A block on one of several routes: the topic waits for that pair's cooldown (another route does not take it
        # at once); with one route it is the pair's probe, as the schedule has always made it.
        hold = lane.state.bench_remaining() if len(self.lanes) > 1 and verdict.benches else 0.0
        self.fates.settle(topic, verdict, hold)

    def begin(self, lane: Lane, topic: str, canary: CanaryQuerySection | None = None) -> scrapy.Request:
        lane.run = TopicRun(topic, asyncio.get_running_loop().create_future(), canary=canary, lane=lane)
        if canary is None:
            lane.run.visit = VisitCount(topic)
            self.planner.spent(1)
        return self.page_request(0, lane.run)

    async def outcome(self, run: TopicRun) -> Verdict:
        """The run's verdict: its last page's, or :data:`~topicstreams.crawl.deadline.LOST` when a page's
        request has not come back by its deadline (the deadline of whichever page is out, looked at again each
        time one passes: a later page, or pacing letting the request go, moves it)."""
        deadline = None
        while not run.done.done():
            if deadline is None or deadline.request is not run.request:
                deadline = PageDeadline(run.request, self.response_budget, run.lane.state, asked_at=run.asked_at)
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
            run.kind,
            shown(run.topic),
            request.meta[keys.PAGE] + 1,
            self.response_budget,
        )
        self.stat("requests_lost")
        run.lost = True
        if let_go:  # it went to the browser: its tab may hang on it; the next request starts from a fresh one
            run.lane.tab.drop(request.meta.get("playwright_page"))
        run.finish(LOST)

    def closed(self, reason: str) -> None:
        """The spider closes (the end of a once run, SIGTERM, Ctrl-C): the supply gives back what it holds."""
        supply = getattr(self, "supply", None)
        if supply is None:
            return
        for lane in getattr(self, "lanes", ()):
            run = lane.run
            if run is not None and run.canary is None and not run.settled and not run.lost and run.done.done():
                # its pages were all read, and the spider closed before the loop's turn came: settle it now, or the
                # topic would be given back as not scraped (and scraped again by another node in lease mode)
                run.settled = True
                self.fates.settle(run.topic, run.done.result())
        supply.close()

    # ---- requests and their answers -------------------------------------------------------------------
    def page_request(self, page: int, run: TopicRun) -> scrapy.Request:
        lane = run.lane
        slot = {"download_slot": lane.slot} if lane.slot is not None else {}
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
                keys.ROUTE: lane.route,
                "dont_retry": True,  # retrying a block is the project's job, after the cooldown
                "handle_httpstatus_all": True,
                **slot,
                **lane.tab.meta(),  # in the lane's one tab, navigated from page to page
            },
        )
        run.request, run.asked_at = request, time.monotonic()
        return request

    def parse_results(self, response: Response, run: TopicRun) -> Iterable[NewsItem | scrapy.Request]:
        page = response.meta[keys.PAGE]
        tab = response.meta.get("playwright_page")
        if run.lost:
            run.lane.tab.leave_late(tab)
        else:
            run.lane.tab.keep(tab)
        verdict, items = self.page_items.of(response, topic=run.topic, number=page)
        urls = [self.reader.identity(item["url"]) for item in items]
        if run.canary is not None:
            if run.lost:
                self.logger.debug("canary %r: a late answer, after its run timed out; not checked", run.topic)
                return
            try:
                self.fates.check_canary(run.canary, verdict, urls)
            finally:
                run.finish(verdict)
            return
        if page and urls and set(urls) <= run.seen:
            # Past its end an engine may serve its last page again (Bing does): that is the end, not news.
            self.logger.debug("page %d of topic %r repeats earlier results: no more pages", page, run.topic)
            items = []
        run.seen.update(urls)
        if run.lost:
            self.logger.info(
                "topic %s, page %d: a late answer, after its run timed out: its %d item(s) are kept; "
                "no further page is asked for, and the topic's outcome stays the error",
                shown(run.topic),
                page + 1,
                len(items),
            )
            yield from self.scraped(items)
            return
        next_page = None
        try:
            yield from self.scraped(items)
            next_page = self.next_page(run, page, items, urls, response.meta[keys.READING].has_next)
        finally:
            # Whatever happens here (the spider closing mid-page included), the topic loop is never left waiting.
            if next_page is None:
                run.finish(verdict)
        if next_page is not None:
            yield next_page

    def next_page(
        self, run: TopicRun, page: int, items: list[NewsItem], urls: list[str | None], has_next: bool
    ) -> scrapy.Request | None:
        """The request of the visit's next page, or None when the visit is over: up to ``scraper.max_pages``, then,
        under the adaptive schedule, while every article so far is new and the budget allows (depth on demand: a
        burst is followed to where the known articles begin), up to ``scraper.adaptive.burst_pages`` more."""
        visit = run.visit
        if visit is not None:
            ids = [news_id(url) for url in urls if url] if items else []
            visit.page(ids, self.planner.stored(run.topic, ids))
        regular = page + 1 < self.max_pages
        if not items or not has_next or not (regular or (visit is not None and visit.censored)):
            return None
        if self.state.paused or self.state.held:
            return None
        if regular:
            self.planner.spent(1)
            return self.page_request(page + 1, run)
        if visit is None or self.planner.first_visit(run.topic) or not self.planner.burst_allowed(visit.burst_pages):
            return None
        visit.burst_pages += 1
        self.logger.debug(
            "topic %s: page %d held only new articles: reading page %d", shown(run.topic), page + 1, page + 2
        )
        return self.page_request(page + 1, run)

    def scraped(self, items: list[NewsItem]) -> Iterable[NewsItem]:
        for item in items:
            self.stat("items_scraped")
            yield item

    def results_failed(self, failure: Failure) -> None:
        meta = failure.request.meta
        run = failure.request.cb_kwargs.get("run")
        if run is None:
            return
        if run.lost:  # a late failure: the run is over already
            run.lane.tab.leave_late(meta.get("playwright_page"))
            self.logger.debug(
                "topic %s: the request that timed out failed later: %s", shown(run.topic), failure.getErrorMessage()
            )
            return
        run.lane.tab.drop(meta.get("playwright_page"))
        reading = meta.get(keys.READING)
        run.finish(reading.verdict if reading is not None else classify_failure(failure.value))
