"""Per-engine pacing: a floor between the starts of two requests, jitter on top, and the cooldown gate.

A downloader middleware for the engine spiders' results-page requests (those with ``topicstreams_engine`` in
their meta; a page's own assets are the browser's business, not requests of the engine's pace). Each of the
engine's lanes (one per route it takes, :class:`~topicstreams.crawl.engine_state.RouteLane`; one without
``routes``) has its own gate, floor, jitter, bench and probe: the lanes go side by side, and on each it lets one
request go at a time:

1. it waits until the previous request has actually left the browser (the main frame's navigation request,
   reported by the page's ``request`` event), or has ended without one;
2. it waits until the engine is off the bench, until the outcome of a probe in flight is known, and until the
   gap since the previous request's start (:attr:`EngineState.gap`: floor × multiplier + jitter) has passed;
3. it lets the request go; the first one after a bench is the probe (``topicstreams/<engine>/probes``).

Neither wait can last forever: a request let go that never leaves the browser nor ends (lost by the browser,
or held by a middleware after this one), or a probe whose outcome never comes, is waited for at most the
response budget (:func:`~topicstreams.crawl.deadline.response_budget`: the navigation timeout plus
``TOPICSTREAMS_RESPONSE_MARGIN``) after it was let go, the same budget the spider gives it; then the next request
goes (and, for a probe, is the probe).

Because the gap counts from when the browser actually sent the previous request, page creation and rendering
inside the download handler can never shorten it, and Scrapy's own slot delay (``DOWNLOAD_DELAY``,
AutoThrottle) can only add to it. Scrapy's retries are off for these requests (``dont_retry``): retrying a
block is the project's job, after the cooldown.

Set ``TOPICSTREAMS_PACING_ENABLED = False`` to leave pacing to Scrapy's ``DOWNLOAD_DELAY`` alone (the pacing
benchmark's baseline does).
"""

from __future__ import annotations

import asyncio
import logging
import time
from functools import partial
from typing import Any

from scrapy import Request, Spider
from scrapy.crawler import Crawler
from scrapy.exceptions import NotConfigured
from scrapy.http import Response

from topicstreams.config.setting_names import sections_from
from topicstreams.crawl import meta as keys
from topicstreams.crawl.deadline import response_budget
from topicstreams.crawl.engine_state import RouteLane
from topicstreams.middlewares import EngineMiddleware, is_engine_request

logger = logging.getLogger(__name__)

PROBE_POLL = 0.05
"""Seconds between looks at a probe's outcome while other requests wait for it."""


class LaneGate:
    """What pacing holds for one lane (route) of the engine: its lock, and the request it let go last."""

    def __init__(self, lane: RouteLane) -> None:
        self.lane = lane
        self.lock = asyncio.Lock()
        self.sending: asyncio.Future | None = None
        """The request let go last, until it has left the browser (or ended)."""
        self.sending_request: Request | None = None
        self.sending_left = False
        """Whether the browser has reported the request let go last as sent."""
        self.sending_since = 0.0
        """When the request let go last was let go (monotonic)."""
        self.probe_since: float | None = None
        """When the probe in flight was let go."""

    def release(self, request: Request | None = None) -> None:
        if request is not None and request is not self.sending_request:
            return
        if self.sending is not None and not self.sending.done():
            self.sending.set_result(None)


class PacingMiddleware(EngineMiddleware):
    def __init__(self, crawler: Crawler) -> None:
        if not crawler.settings.getbool("TOPICSTREAMS_PACING_ENABLED"):
            raise NotConfigured("TOPICSTREAMS_PACING_ENABLED is off")
        super().__init__(crawler)
        self.budget = response_budget(crawler.settings, sections_from(crawler.settings).browser.consent)
        """Seconds a request let go is waited for (to leave the browser; a probe: for its outcome)."""
        self.gates: dict[str, LaneGate] = {}
        """The engine's lanes' gates, by route (made on a lane's first request)."""

    def gate(self, request: Request) -> LaneGate:
        lane = self.lane(request)
        found = self.gates.get(lane.route)
        if found is None:
            found = self.gates[lane.route] = LaneGate(lane)
        return found

    async def process_request(self, request: Request, spider: Spider | None = None) -> None:
        if not is_engine_request(request):
            return
        gate = self.gate(request)
        state = gate.lane
        async with gate.lock:
            await self._previous_left(gate)
            while True:
                wait = state.wait_time()
                if wait is None:  # a probe is out: nothing else goes until its outcome is known
                    self._forget_lost_probe(gate)
                    await asyncio.sleep(PROBE_POLL)
                elif wait > 0:
                    await asyncio.sleep(wait)
                else:
                    break
            probe = state.start_request()
            gate.sending = asyncio.get_running_loop().create_future()
            gate.sending_request, gate.sending_left = request, False
            gate.sending_since = time.monotonic()
            if probe:
                gate.probe_since = gate.sending_since
        request.meta[keys.SENT_AT] = state.last_sent
        request.meta[keys.PROBE] = probe
        request.meta["dont_retry"] = True
        if probe:
            self.stat("probes")
            logger.debug("[%s] cooldown over: one probe goes (%s, route %s)", state.engine, request.url, state.route)
        page = request.meta.get("playwright_page")
        if page is None or page.is_closed():
            # A new tab is made for this request: listen to it for the moment each navigation leaves.
            request.meta["playwright_page_event_handlers"] = {"request": partial(self._browser_request, gate)}

    async def _previous_left(self, gate: LaneGate) -> None:
        """Wait until the request let go last on the lane has left the browser or ended; at most the budget after
        it was let go (a request that never leaves nor ends is lost: the spider's deadline has resolved its topic)."""
        if gate.sending is None or gate.sending.done():
            return
        remaining = gate.sending_since + self.budget - time.monotonic()
        try:
            await asyncio.wait_for(asyncio.shield(gate.sending), max(0.0, remaining))
        except TimeoutError:
            logger.debug(
                "[%s] the request let go last neither left the browser nor ended within %g s: the next one goes",
                gate.lane.engine,
                self.budget,
            )
            gate.release()

    def _forget_lost_probe(self, gate: LaneGate) -> None:
        """A probe out for longer than the budget is lost: its outcome will not come, the next request probes."""
        if gate.probe_since is not None and time.monotonic() - gate.probe_since >= self.budget:
            logger.info(
                "[%s] the probe's request never came back within %g s: the next request is the probe",
                gate.lane.engine,
                self.budget,
            )
            gate.probe_since = None
            gate.lane.forget_probe()

    def _browser_request(self, gate: LaneGate, browser_request: Any) -> None:
        """The page's ``request`` event: a main-frame navigation is the engine request leaving now."""
        try:
            if not browser_request.is_navigation_request() or browser_request.frame.parent_frame is not None:
                return
        except Exception:  # a request without a frame (a service worker's): not ours
            return
        state = gate.lane
        state.mark_sent()
        if gate.sending_request is not None and not gate.sending_left:
            gate.sending_left = True
            gate.sending_request.meta[keys.SENT_AT] = state.last_sent
        gate.release()

    def process_response(self, request: Request, response: Response, spider: Spider | None = None) -> Response:
        if is_engine_request(request):
            self.gate(request).release(request)
        return response

    def process_exception(self, request: Request, exception: Exception, spider: Spider | None = None) -> None:
        if is_engine_request(request):
            self.gate(request).release(request)
