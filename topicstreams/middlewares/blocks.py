"""Classify every engine response, bench the engine on a block, and hand the classification on.

A downloader middleware, next to pacing (it sees responses right after it). For each results-page request of
an engine spider (``topicstreams_engine`` in its meta):

* a response whose body is larger than ``scraper.limits.page_bytes`` is not read at all: a ``soft_block`` with the
  reason ``oversized``, and a WARNING with its size;
* any other is read once, by the crawl's :class:`~topicstreams.engines.reader.PageReader` (the engine spider's
  own: the markers, the result items, the structural fallback: a WARNING the first time it reads a page and
  ``topicstreams/<engine>/layout_fallbacks``; a page of more than ``scraper.limits.items_per_page`` items: its first
  ones kept, a WARNING each time, the others counted in ``topicstreams/<engine>/items_over_limit``; fields cut at
  their limits counted in ``topicstreams/<engine>/fields_cut``), then judged by size: an otherwise ok 200 page below
  ``scraper.soft_block.min_size_ratio`` × the engine's running median size of pages with results, for its
  page type (a topic's first page or a later one), is a soft block; a failure (reset, refusal, timeout, …) by
  :func:`~topicstreams.engines.classify.classify_failure`;
* the class goes to :class:`~topicstreams.crawl.engine_state.EngineState`, which benches the engine for a
  challenge, hard block or soft block (a longer ``Retry-After`` wins) and resets it on success;
* the counts go to the stats (``topicstreams/<engine>/<class>``, ``cooldowns``), and a
  :class:`~topicstreams.crawl.signals.Classification` goes out as the ``response_classified`` signal;
* the reading and the classification ride on in ``request.meta`` (``topicstreams_reading``,
  ``topicstreams_classification``: plain data, see :mod:`topicstreams.crawl.meta`) for the spider's callback, so each
  page is read once and its parse outcome joins its classification.
"""

from __future__ import annotations

import logging
import time
from dataclasses import replace
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime

from scrapy import Request, Spider
from scrapy.crawler import Crawler
from scrapy.http import Response

from topicstreams.config.setting_names import sections_from
from topicstreams.crawl import meta as keys
from topicstreams.crawl.engine_state import RouteLane
from topicstreams.crawl.route_standing import DOWN
from topicstreams.crawl.signals import Classification, RouteChange, response_classified, route_changed
from topicstreams.engines.classify import (
    STAT_KEYS,
    ResponseClass,
    RunningMedian,
    Verdict,
    classify_failure,
    is_connection_level,
    is_route_failure,
    size_verdict,
)
from topicstreams.engines.reader import Page, Reading
from topicstreams.middlewares import EngineMiddleware, is_engine_request

logger = logging.getLogger(__name__)


def retry_after_seconds(value: str | None, now: datetime | None = None) -> float | None:
    """A ``Retry-After`` header in seconds: delta-seconds or an HTTP date; None when absent or unreadable."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - (now or datetime.now(UTC))).total_seconds())


def page_type(page: int | None) -> str:
    return "first" if not page else "next"


class BlocksMiddleware(EngineMiddleware):
    def __init__(self, crawler: Crawler) -> None:
        super().__init__(crawler)
        self.min_size_ratio = sections_from(crawler.settings).scraper.soft_block.min_size_ratio
        self.sizes: dict[str, RunningMedian] = {}
        """The running median size of the engine's ok pages, per page type."""
        self.fallback_warned = False

    def process_request(self, request: Request, spider: Spider | None = None) -> None:
        if is_engine_request(request):
            self.stat("requests")  # every request the engine gets, probes and canaries included

    def process_response(self, request: Request, response: Response, spider: Spider | None = None) -> Response:
        if not is_engine_request(request):
            return response
        page = request.meta.get(keys.PAGE) or 0
        size = len(response.body)
        oversized = self.reader.oversized(size)
        if oversized is not None:
            reading = Reading(oversized, base_url=response.url)  # not read at all: no item, no marker, no fallback
            self.too_large(request, response.url, size)
        else:
            reading = self.read(request, response, page, size)
        request.meta[keys.READING] = reading
        retry_after = retry_after_seconds(response.headers.get("Retry-After", b"").decode("latin-1"))
        self._take(
            request,
            reading.verdict,
            url=response.url,
            status=response.status,
            size=size,
            items=len(reading.results),
            retry_after=retry_after,
        )
        return response

    def read(self, request: Request, response: Response, page: int, size: int) -> Reading:
        """The reading of a page within ``scraper.limits.page_bytes``, judged by its size too."""
        reading = self.reader.read(
            Page(response.url, response.status, response.text, response.headers.to_unicode_dict(), page)
        )
        if reading.fallback:
            self.fell_back(response.url, len(reading.results))
        if reading.items_over_limit:
            self.too_many(request, response.url, reading)
        if reading.fields_cut:
            self.stat("fields_cut", reading.fields_cut)
        if response.status == 200:
            norm = self.sizes.setdefault(page_type(page), RunningMedian())
            verdict = size_verdict(reading.verdict, size, norm.value, self.min_size_ratio)
            if verdict.cls is ResponseClass.OK and reading.results:
                norm.add(size)
            if verdict is not reading.verdict:
                reading = replace(reading, verdict=verdict)
        return reading

    def too_large(self, request: Request, url: str, size: int) -> None:
        limit = self.reader.limits.page_bytes if self.reader.limits is not None else 0
        logger.warning(
            "[%s] the results page for topic %r (%s) is %s bytes, above scraper.limits.page_bytes (%s): it is not "
            "read (nothing of it is stored) and counts as a soft block (reason oversized), which benches the "
            "engine; no engine's results page is this large, so the engine is serving something else. If its "
            "pages really are, raise scraper.limits.page_bytes",
            self.state.engine,
            request.meta.get(keys.TOPIC),
            url,
            f"{size:,}",
            f"{limit:,}",
        )

    def too_many(self, request: Request, url: str, reading: Reading) -> None:
        kept, over = len(reading.results), reading.items_over_limit
        self.stat("items_over_limit", over)
        logger.warning(
            "[%s] the results page for topic %r (%s) holds %d result items, more than scraper.limits.items_per_page "
            "(%d): the first %d are kept, the other %d left out. No engine shows this many on one page, so the page "
            "is suspect (a changed layout matching more than results, or a stuffed page); if the engine really "
            "does, raise scraper.limits.items_per_page",
            self.state.engine,
            request.meta.get(keys.TOPIC),
            url,
            kept + over,
            self.reader.limits.items_per_page if self.reader.limits is not None else kept,
            kept,
            over,
        )

    def fell_back(self, url: str, found: int) -> None:
        self.stat("layout_fallbacks")
        log = logger.debug if self.fallback_warned else logger.warning
        log(
            "no known %s layout matched %s: the structural fallback found %d results; the engine's page has "
            "probably changed, update its layouts",
            self.state.engine,
            url,
            found,
        )
        self.fallback_warned = True

    def route_changed(self, lane: RouteLane, verdict: Verdict, bench: float | None) -> None:
        """The request's outcome turned its route down, or brought it back: one line, and the signal Health alerts
        on (:data:`~topicstreams.crawl.signals.route_changed`)."""
        standing = lane.standing
        if standing is None or lane.route_change is None:
            return
        change = RouteChange(
            route=lane.route,
            change=lane.route_change,
            engine=self.state.engine,
            engines=tuple(sorted(standing.failing)),
            reason=standing.reason or verdict.reason,
            at=datetime.now(UTC),
            since=standing.down_since,
            bench=bench,
        )
        if change.change == DOWN:
            logger.warning(
                "route %s is down: it failed on every engine that takes it (latest: %s); no request goes on it for "
                "%g s, then one probe; its engines go on through their other routes, and none of them is held "
                "responsible. Check the route's proxy (`scrapy routes check`)",
                lane.route,
                change.reason,
                round(bench or 0.0, 3),
            )
        else:
            logger.info("route %s recovered: its probe got an answer; every engine takes it again", lane.route)
        self.crawler.signals.send_catch_log(signal=route_changed, change=change)

    def process_exception(self, request: Request, exception: Exception, spider: Spider | None = None) -> None:
        if not is_engine_request(request):
            return
        verdict = classify_failure(exception)
        request.meta[keys.READING] = Reading(verdict)
        self._take(request, verdict, url=request.url, status=None, size=0, items=0, retry_after=None)

    def _take(
        self,
        request: Request,
        verdict: Verdict,
        *,
        url: str,
        status: int | None,
        size: int,
        items: int,
        retry_after: float | None,
    ) -> None:
        lane = self.lane(request)
        state = self.state
        meta = request.meta
        probe = bool(meta.get(keys.PROBE))
        route_failure = lane.standing is not None and is_route_failure(verdict.reason)
        connection_level = is_connection_level(verdict.reason)  # a route's failure is its route's (the lane knows)
        bench = lane.record(
            verdict.cls, probe=probe, retry_after=retry_after, connection_level=connection_level, reason=verdict.reason
        )
        sent_at = meta.get(keys.SENT_AT)
        latency = time.monotonic() - sent_at if sent_at is not None else None
        topic = meta.get(keys.TOPIC)
        self.stat(STAT_KEYS[verdict.cls])
        self.route_stat(lane.route, "requests")
        self.route_stat(lane.route, STAT_KEYS[verdict.cls])
        if bench is not None:
            self.route_stat(lane.route, "cooldowns")
        if lane.route_change is not None:
            self.route_changed(lane, verdict, bench)
        if route_failure:
            # The route's failure, not the engine's: the route's own lines say it (when it turns down, and back).
            self.stat("route_failures")
            logger.debug(
                "[%s] route %s: %s for topic %r (%s): %s; this lane waits %g s, its topic fails over to another route",
                state.engine,
                lane.route,
                verdict.cls,
                topic,
                url,
                verdict.reason,
                round(bench or 0.0, 3),
            )
        elif bench is not None and connection_level and state.network_down:
            # The node's network is down: its one WARNING said so, and that the engines retry; each engine's failed
            # retry changes nothing a person must know.
            self.stat("cooldowns")
            logger.debug(
                "[%s] %s for topic %r (%s): %s; the node's network is down: next try in %g s",
                state.engine,
                verdict.cls,
                topic,
                url,
                verdict.reason,
                round(bench, 3),
            )
        elif bench is not None:
            # One WARNING per cooldown, saying the failure that started it (not one line for each, and a third for
            # the topic: while the engine cools, each request is a probe, so there is one line per probe at most).
            self.stat("cooldowns")
            logger.warning(
                "[%s] %s for topic %r (%s): %s; cooling down for %g s (%d in a row%s): nothing goes to it%s until "
                "then, then one probe",
                state.engine,
                verdict.cls,
                topic,
                url,
                verdict.reason,
                round(bench, 3),
                lane.failures,
                f", Retry-After {retry_after:g} s" if retry_after is not None else "",
                f" on route {lane.route} (its other routes go on)" if len(state.lanes) > 1 else "",
            )
        elif verdict.cls is not ResponseClass.OK:
            logger.warning("[%s] %s for topic %r (%s): %s", state.engine, verdict.cls, topic, url, verdict.reason)
        elif probe and verdict.cls is ResponseClass.OK:
            logger.info("[%s] the probe came back ok: cooldown reset, back to the normal pace", state.engine)
        page = meta.get(keys.PAGE)
        classification = Classification(
            engine=state.engine,
            topic=topic,
            page=page,
            page_type=page_type(page),
            url=url,
            status=status,
            cls=verdict.cls,
            reason=verdict.reason,
            latency=latency,
            bytes=size,
            items=items,
            sent_at=sent_at,
            probe=probe,
            bench=bench,
            at=datetime.now(UTC),
            canary=bool(meta.get(keys.CANARY)),
            route=lane.route,
        )
        meta[keys.CLASSIFICATION] = classification
        self.crawler.signals.send_catch_log(signal=response_classified, classification=classification)
