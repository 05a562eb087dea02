"""The engine contract and the spider loop every engine shares.

An engine implements four small things (:class:`EngineSpider`'s abstract part):

* :meth:`~EngineSpider.results_url` — its results URL for a topic: newest first, the freshness window, page N;
* :meth:`~EngineSpider.result_nodes` — the result items of a rendered page: by default the first of its
  :attr:`~EngineSpider.layouts` (one item selector per known layout) that matches;
* :meth:`~EngineSpider.parse_result` — one item's fields;
* its markers — what its block, challenge and "no results" pages look like: its row of
  :data:`topicstreams.classify.ENGINE_MARKERS`.

When no known layout matches a page that is neither a block nor a "no results" page, the structural
fallback (:mod:`topicstreams.spiders.fallback`) reads the results by the page's shape, and the spider says
so (a WARNING and ``topicstreams/<engine>/layout_fallbacks``): the next redesign does not silently empty the
feed.

The loop: ``start()`` drives the engine's :class:`~topicstreams.scheduler.TopicSchedule`, one topic at a time
(parallelism is across engines, never within one): it takes the topic due first, renders its pages in the
engine's persistent Chromium profile one after another, and re-arms it an interval later. The pacing
middleware keeps the floor between requests; while the engine is benched (:mod:`topicstreams.engine_state`)
the loop takes no topic, and a topic that met a block goes back with its due time, so it is the probe once the
cooldown is over. In once mode every topic is due at once and the spider closes when none is left.

Canary queries (``canaries.queries.<engine>``) have a schedule of their own (every ``canaries.interval``
seconds, the first at start; once each in once mode): they go through the same path as topics (pacing, the
blocks middleware), still while the engine is paused, and their answer is checked instead of stored
(:mod:`topicstreams.canaries`; the ``canary_checked`` signal).
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
from collections import Counter
from collections.abc import AsyncIterator, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, ClassVar

import scrapy
from scrapy import signals
from scrapy.crawler import Crawler
from scrapy.http import Response
from scrapy.selector import Selector, SelectorList
from twisted.python.failure import Failure

from topicstreams.classify import (
    EMPTY_LIST,
    EngineMarkers,
    ResponseClass,
    Verdict,
    classify_failure,
    classify_response,
    markers_for,
    parse_error,
)
from topicstreams.browser import ProfileLock, profile_path
from topicstreams.canaries import CanaryQuery, answer_problem, canaries_for
from topicstreams.config import load_config
from topicstreams.dates import parse_result_time
from topicstreams.engine_state import state_for
from topicstreams.items import NewsItem, ParsedResult, missing_fields
from topicstreams.pipelines.normalize import engine_hosts, normalize_url
from topicstreams.scheduler import TopicSchedule
from topicstreams.signals import CanaryChecked, PageParsed, canary_checked, page_parsed
from topicstreams.spiders.fallback import structural_results
from topicstreams.storage import active_topics, database_for, ensure_topics, seed_topics, upgrade

logger = logging.getLogger(__name__)

TRUE_WORDS = frozenset({"1", "true", "yes", "on"})
PAUSE_POLL = 1.0
"""Seconds between looks at a paused engine's state."""


@dataclass
class TopicRun:
    """One attempt at one topic: its pages go out one after another; ``done`` resolves with the outcome."""

    topic: str
    done: asyncio.Future = field(repr=False)
    seen: set[str] = field(default_factory=set, repr=False)
    """The URLs of the pages so far (an engine that repeats its last page past the end is caught by it)."""
    canary: CanaryQuery | None = None
    """Set when this is a canary query's run: its answer is checked, its items are not stored."""

    def finish(self, verdict: Verdict) -> None:
        if not self.done.done():
            self.done.set_result(verdict)


def in_shard(topic: str, shard: str) -> bool:
    """Whether this node takes ``topic`` under ``shard`` ("i/n"): a hash stable across machines and runs."""
    index, count = (int(part) for part in shard.split("/"))
    if count == 1:
        return True
    digest = hashlib.sha256(topic.encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") % count == index


def split_names(value: str) -> list[str]:
    """A comma-separated argument (``topics``, ``engines``): each trimmed, blanks and repeats dropped."""
    seen: dict[str, None] = {}
    for name in value.split(","):
        if name.strip():
            seen.setdefault(name.strip(), None)
    return list(seen)


class EngineSpider(scrapy.Spider):
    """The base of the four engine spiders."""

    markers: ClassVar[EngineMarkers] = EngineMarkers()
    """The engine's row of :data:`~topicstreams.classify.ENGINE_MARKERS` (set from the spider's name)."""
    layouts: ClassVar[dict[str, str]] = {}
    """Known layouts, newest first: a name and the CSS selector of its result items."""
    own_domains: ClassVar[tuple[str, ...]] = ()
    """The engine's domains: links to them (and to the page's own host) are not results for the fallback."""
    results_per_page: ClassVar[int] = 10
    time_languages: ClassVar[tuple[str, ...] | None] = None
    """Languages of the result times; None: the page's ``<html lang>``, then English."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if getattr(cls, "name", None):
            cls.markers = markers_for(cls.name)

    # ---- the engine contract --------------------------------------------------------------------------
    def results_url(self, topic: str, page: int) -> str:
        """The results URL for ``topic``, newest first, in the configured freshness window, page ``page`` (0-based)."""
        raise NotImplementedError

    def result_nodes(self, response: Response) -> SelectorList:
        """The result items of a rendered results page: those of the first known layout that has any."""
        for selector in self.layouts.values():
            nodes = response.css(selector)
            if nodes:
                return nodes
        return SelectorList()

    def parse_result(self, node: Selector, response: Response) -> ParsedResult:
        """One result item's fields."""
        raise NotImplementedError

    def has_next_page(self, response: Response, page: int) -> bool:
        """Whether the engine offers a page after ``page``."""
        return True

    def clean(self, parsed: ParsedResult) -> ParsedResult:
        """Engine-specific tidying of a result's fields, whichever parser read them."""
        return parsed

    # ---- set-up ---------------------------------------------------------------------------------------
    def __init__(self, *args: Any, topics: str | None = None, once: str | bool = False, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.topics_arg = split_names(topics) if topics is not None else None
        self.once = once is True or str(once).strip().lower() in TRUE_WORDS

    @classmethod
    def from_crawler(cls, crawler: Crawler, *args: Any, **kwargs: Any) -> EngineSpider:
        spider = super().from_crawler(crawler, *args, **kwargs)
        # Settings from the configuration arrive with the add-on, after the spider is made; the profile
        # lock comes first, so that a second process for this engine stops before anything starts.
        config = load_config(crawler.settings)
        spider.profile = profile_path(config.get("browser.profile_dir"), config.get("node.id"), spider.name)
        spider.profile_lock = ProfileLock(spider.profile)
        spider.profile_lock.acquire()
        crawler.signals.connect(spider._on_closed, signal=signals.spider_closed)
        return spider

    def _configure(self) -> None:
        settings = self.settings
        engine = settings.getdict("TOPICSTREAMS_ENGINES")[self.name]
        self.base_url: str = engine["base_url"].rstrip("/")
        self.freshness: str = engine["freshness"]
        self.scrape_interval = settings.getfloat("TOPICSTREAMS_SCRAPE_INTERVAL")
        self.max_pages = settings.getint("TOPICSTREAMS_MAX_PAGES")
        self.once_attempts = settings.getint("TOPICSTREAMS_ONCE_ATTEMPTS")
        self.shard = settings.get("TOPICSTREAMS_SHARD")
        self.database_url = settings.get("TOPICSTREAMS_DATABASE_URL")
        self.seed = settings.getlist("TOPICSTREAMS_TOPICS")
        canaries = settings.getdict("TOPICSTREAMS_CANARIES")
        self.canaries = {canary.query: canary for canary in canaries_for(canaries, self.name)}
        self.canary_interval = float(canaries.get("interval") or 3600)
        self.context_name = f"{self.name}-profile"
        self.context_kwargs = {**settings.getdict("TOPICSTREAMS_CONTEXT_OPTIONS"), "user_data_dir": str(self.profile)}
        self.redirector_hosts = engine_hosts(settings.getdict("TOPICSTREAMS_ENGINES"))
        self.fallback_warned = False
        self.page = None  # the engine's Playwright page (tab), kept from one request to the next

    def _on_closed(self, spider: scrapy.Spider, reason: str) -> None:
        self.profile_lock.release()

    def stat(self, key: str, count: int = 1) -> None:
        self.crawler.stats.inc_value(f"topicstreams/{self.name}/{key}", count)

    # ---- topics ---------------------------------------------------------------------------------------
    def current_topics(self) -> list[str]:
        """The topics of this pass: the ``topics`` argument, else the table's active topics; sharded."""
        if self.topics_arg is not None:
            names = self.topics_arg
        else:
            names = [name for _, name in active_topics(database_for(self.database_url))]
        return [name for name in names if in_shard(name, self.shard)]

    # ---- the loop -------------------------------------------------------------------------------------
    async def start(self) -> AsyncIterator[scrapy.Request]:
        self._configure()
        mode = "once: each topic one pass, then close" if self.once else (
            f"continuous: every {self.scrape_interval:g} s until stopped")
        if self.shard != "0/1":
            mode += f"; shard {self.shard}: the topics whose hash falls here"
        self.logger.info("%s spider starting (%s)", self.name, mode)
        upgrade(self.database_url)
        if self.topics_arg is not None:
            ensure_topics(database_for(self.database_url), self.topics_arg, active=False)
        elif self.seed:
            seed_topics(database_for(self.database_url), self.seed)
        self.state = state_for(self.crawler)
        schedule = TopicSchedule(self.scrape_interval, self.state.jitter_ratio)
        canaries = TopicSchedule(self.canary_interval, self.state.jitter_ratio)
        canaries.add_now(self.canaries)
        follows_table = self.topics_arg is None and not self.once
        if self.once:
            schedule.add_now(self.current_topics())
        elif not follows_table:
            schedule.stagger(self.current_topics())
        if not follows_table and not len(schedule):
            self.warn_no_topics()
        attempts: Counter[str] = Counter()
        while True:
            if follows_table and schedule.reconcile_due():
                self.reconcile(schedule)
            # A benched engine schedules nothing (its topics keep their due times); a paused one runs only
            # its canaries.
            benched = self.state.bench_remaining()
            canary = None if benched else canaries.pop_due()
            if canary is not None:
                run = TopicRun(canary[0], asyncio.get_running_loop().create_future(), canary=self.canaries[canary[0]])
                yield self.page_request(run, 0)
                await run.done
                if not self.once:
                    canaries.rearm(run.topic)
                continue
            if self.once and not len(schedule) and not len(canaries):
                return
            if self.once and self.state.paused and not len(canaries):
                self.give_up_paused(schedule)
                return
            if benched or self.state.paused:
                await asyncio.sleep(benched or PAUSE_POLL)
                continue
            popped = schedule.pop_due()
            if popped is None:
                await asyncio.sleep(self.idle_time(schedule, follows_table, canaries))
                continue
            topic, due = popped
            run = TopicRun(topic, asyncio.get_running_loop().create_future())
            yield self.page_request(run, 0)  # its later pages follow from parse_results
            verdict = await run.done
            if verdict.cls is ResponseClass.OK:
                self.stat("topics_swept")
                if not self.once:
                    schedule.rearm(topic, self.state.pace_multiplier)  # a slowed engine comes round later too
                continue
            attempts[topic] += 1
            if self.once and attempts[topic] >= self.once_attempts:
                self.logger.error("gave up topic %r after %d attempts: last %s (%s)",
                                  topic, attempts[topic], verdict.cls, verdict.reason)
                self.stat("topics_given_up")
                continue
            # A block: the topic goes first once the cooldown is over (it is the probe). Another failure:
            # the topic is tried again a cooldown later, the others go on meanwhile.
            retry_at = due if verdict.benches else schedule.clock() + self.state.cooldown.initial
            schedule.put_back(topic, retry_at)
            self.logger.warning("topic %r %s: %s (%s); trying it again %s", topic,
                                f"attempt {attempts[topic]} failed" if self.once else "failed", verdict.cls,
                                verdict.reason, "after the cooldown" if verdict.benches else
                                f"in {self.state.cooldown.initial:g} s")

    def give_up_paused(self, schedule: TopicSchedule) -> None:
        """Once mode on a paused engine: the topics left cannot be scraped until a person resumes it."""
        left = schedule.topics
        self.logger.error("%s is paused by its health (see `scrapy health`): %d topic(s) not scraped: %s; a person "
                          "lifts the pause with `scrapy health resume %s`", self.name, len(left), ", ".join(left),
                          self.name)
        self.stat("topics_given_up", len(left))

    def reconcile(self, schedule: TopicSchedule) -> None:
        topics = self.current_topics()
        added, dropped = schedule.reconcile(topics)
        if added and len(added) < len(schedule):
            self.logger.info("topics table: %d new topic(s) scheduled within the next %g s: %s",
                             len(added), self.scrape_interval, ", ".join(added))
        if dropped:
            self.logger.info("topics table: %d topic(s) no longer active, dropped: %s",
                             len(dropped), ", ".join(dropped))
        if not topics:
            self.warn_no_topics()

    def warn_no_topics(self) -> None:
        self.logger.warning("no topics to scrape: add some with `scrapy topics add NAME`, "
                            "list them in the config's `topics`, or pass -a topics=a,b")

    def idle_time(self, schedule: TopicSchedule, follows_table: bool, canaries: TopicSchedule) -> float:
        """Seconds to sleep when no topic is due: until the next one is, the next canary, or the next reconcile."""
        wakes = [when for when in (schedule.next_due(), canaries.next_due(),
                                   schedule.next_reconcile if follows_table else None)
                 if when is not None]
        if not wakes:
            return self.scrape_interval
        return max(0.0, min(wakes) - schedule.clock())

    def page_request(self, run: TopicRun, page: int) -> scrapy.Request:
        meta = {"playwright_page": self.page} if self.page is not None and not self.page.is_closed() else {}
        return scrapy.Request(
            self.results_url(run.topic, page),
            callback=self.parse_results,
            errback=self.results_failed,
            dont_filter=True,
            meta={
                "topicstreams_engine": self.name,
                "topicstreams_topic": run.topic,
                "topicstreams_run": run,
                "topicstreams_page": page,
                "topicstreams_canary": run.canary is not None,
                "dont_retry": True,  # retrying a block is the project's job, after the cooldown
                "handle_httpstatus_all": True,
                "playwright": True,
                "playwright_context": self.context_name,
                "playwright_context_kwargs": self.context_kwargs,
                "playwright_page_goto_kwargs": {"wait_until": "domcontentloaded"},
                # One tab per engine, navigated from page to page as a person would: no new renderer
                # process for every page (see the render benchmark).
                "playwright_include_page": True,
                **meta,
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
        run: TopicRun = response.meta["topicstreams_run"]
        page: int = response.meta["topicstreams_page"]
        self.keep_page(response.meta.get("playwright_page"))
        verdict, parsed, fetched_at = self.classified(response)
        try:
            languages = self.languages(response)
            items = [self._item(result, response, run.topic, page * self.results_per_page + rank, fetched_at,
                                languages) for rank, result in enumerate(parsed, start=1)]
        except Exception as exc:  # a parser bug must not stall the topic loop
            self.logger.exception("could not parse %s", response.url)
            verdict, items = parse_error(exc), []
        lacking = [missing_fields(item) for item in items]
        self.crawler.signals.send_catch_log(signal=page_parsed, outcome=PageParsed(
            response.meta.get("topicstreams_classification"), items=len(items),
            valid_items=lacking.count([]), error=verdict.reason if verdict.parse_failed else None,
            missing=dict(Counter(name for names in lacking for name in names))))
        if run.canary is not None:
            try:
                self.check_canary(run.canary, verdict, items)
            finally:
                run.finish(verdict)
            return
        urls = {self._identity(item["url"]) for item in items}
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
            if (items and page + 1 < self.max_pages and self.has_next_page(response, page)
                    and not self.state.paused):
                next_page = self.page_request(run, page + 1)
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
        urls = [self._identity(item["url"]) for item in items]
        problem = answer_problem(canary, urls)
        self.stat("canaries")
        if problem:
            self.stat("canary_mismatches")
        self.logger.debug("canary %r: %d results, %s", canary.query, len(urls), problem or "as expected")
        self.crawler.signals.send_catch_log(signal=canary_checked, check=CanaryChecked(
            engine=self.name, query=canary.query, matched=problem is None, results=len(urls), problem=problem,
            at=datetime.now(UTC)))

    def classified(self, response: Response) -> tuple[Verdict, list[ParsedResult], datetime]:
        """The page's verdict and results, as the blocks middleware found them (read here when it did not run)."""
        meta = response.meta
        if "topicstreams_verdict" in meta:
            return meta["topicstreams_verdict"], meta.get("topicstreams_results", []), meta["topicstreams_fetched_at"]
        return self.read_page(response)

    def read_page(self, response: Response) -> tuple[Verdict, list[ParsedResult], datetime]:
        """:meth:`extract` now; a parser bug makes this page an ``error`` instead of stalling the topic loop."""
        fetched_at = datetime.now(UTC)
        try:
            verdict, parsed = self.extract(response, fetched_at)
        except Exception as exc:
            self.logger.exception("could not parse %s", response.url)
            verdict, parsed = parse_error(exc), []
        return verdict, parsed, fetched_at

    def extract(self, response: Response, fetched_at: datetime) -> tuple[Verdict, list[ParsedResult]]:
        """Classify a results page and read its results: known layouts first, then the structural fallback."""
        nodes = self.result_nodes(response) if response.status == 200 else SelectorList()
        verdict = classify_response(self.markers, status=response.status, url=response.url,
                                    html=response.text, item_count=len(nodes),
                                    headers=response.headers.to_unicode_dict())
        if verdict.cls is ResponseClass.OK:
            return verdict, [self.clean(self.parse_result(node, response)) for node in nodes]
        if verdict.reason != EMPTY_LIST:
            return verdict, []
        languages = self.languages(response)
        found = structural_results(
            response.selector.root, response.url, own_domains=self.own_domains,
            redirector_hosts=self.redirector_hosts,
            reads_as_time=lambda text: parse_result_time(text, fetched_at, languages=languages) is not None)
        if not found:
            return verdict, []
        self.stat("layout_fallbacks")
        log = self.logger.debug if self.fallback_warned else self.logger.warning
        log("no known %s layout matched %s: the structural fallback found %d results; the engine's page has "
            "probably changed, update its layouts", self.name, response.url, len(found))
        self.fallback_warned = True
        return Verdict(ResponseClass.OK, f"{len(found)} results (structural fallback)"), [
            self.clean(result) for result in found]

    def languages(self, response: Response) -> tuple[str, ...] | None:
        """The languages to read result times in: the engine's, else the page's ``<html lang>`` and English."""
        if self.time_languages is not None:
            return self.time_languages
        lang = (response.xpath("/html/@lang").get() or "").strip().lower().replace("_", "-").split("-")[0]
        if not lang.isalpha():
            return None
        return (lang,) if lang == "en" else (lang, "en")

    def _identity(self, url: str | None) -> str | None:
        try:
            return normalize_url(url, self.redirector_hosts) if url else None
        except ValueError:
            return url

    def results_failed(self, failure: Failure) -> None:
        run: TopicRun = failure.request.meta["topicstreams_run"]
        self.drop_page(failure.request.meta.get("playwright_page"))
        run.finish(failure.request.meta.get("topicstreams_verdict") or classify_failure(failure.value))

    def _item(self, parsed: ParsedResult, response: Response, topic: str, rank: int, fetched_at: datetime,
              languages: tuple[str, ...] | None) -> NewsItem:
        published = parse_result_time(parsed.time_text, fetched_at, timestamp=parsed.timestamp,
                                      languages=languages)
        if published is None and (parsed.time_text or parsed.timestamp):
            self.stat("times_unparsed")
            self.logger.debug("unparsed time %r / %r on %s", parsed.time_text, parsed.timestamp, response.url)
        return NewsItem(
            url=response.urljoin(parsed.url) if parsed.url else None,
            title=parsed.title,
            source=parsed.source,
            snippet=parsed.snippet,
            published_at=published,
            topic=topic,
            engine=self.name,
            rank=rank,
            fetched_at=fetched_at,
        )


def text_of(selection: SelectorList | Selector | None) -> str | None:
    """The whitespace-collapsed text of a selection, or None when empty."""
    if selection is None:
        return None
    joined = " ".join(" ".join(part.split()) for part in selection.xpath("string()").getall())
    return " ".join(joined.split()) or None
