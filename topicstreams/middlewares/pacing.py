"""Per-engine pacing: a floor between the starts of two requests, jitter on top, and the cooldown gate.

A downloader middleware for the engine spiders' results-page requests (those with ``topicstreams_engine`` in
their meta; a page's own assets are the browser's business, not requests of the engine's pace). It lets one
request go at a time:

1. it waits until the previous request has actually left the browser (the main frame's navigation request,
   reported by the page's ``request`` event), or has ended without one;
2. it waits until the engine is off the bench, until the outcome of a probe in flight is known, and until the
   gap since the previous request's start (:attr:`EngineState.gap`: floor × multiplier + jitter) has passed;
3. it lets the request go; the first one after a bench is the probe (``topicstreams/<engine>/probes``).

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
from typing import Any

from scrapy import Request, Spider
from scrapy.crawler import Crawler
from scrapy.exceptions import NotConfigured
from scrapy.http import Response

from topicstreams import meta as keys
from topicstreams.middlewares import EngineMiddleware, is_engine_request

logger = logging.getLogger(__name__)

PROBE_POLL = 0.05
"""Seconds between looks at a probe's outcome while other requests wait for it."""


class PacingMiddleware(EngineMiddleware):
    def __init__(self, crawler: Crawler) -> None:
        if not crawler.settings.getbool("TOPICSTREAMS_PACING_ENABLED"):
            raise NotConfigured("TOPICSTREAMS_PACING_ENABLED is off")
        super().__init__(crawler)
        self._lock: asyncio.Lock | None = None
        self._sending: asyncio.Future | None = None
        """The request let go last, until it has left the browser (or ended)."""
        self._sending_request: Request | None = None
        self._sending_left = False
        """Whether the browser has reported the request let go last as sent."""

    async def process_request(self, request: Request, spider: Spider | None = None) -> None:
        if not is_engine_request(request):
            return
        if self._lock is None:
            self._lock = asyncio.Lock()
        state = self.state
        async with self._lock:
            if self._sending is not None and not self._sending.done():
                await asyncio.shield(self._sending)
            while True:
                wait = state.wait_time()
                if wait is None:  # a probe is out: nothing else goes until its outcome is known
                    await asyncio.sleep(PROBE_POLL)
                elif wait > 0:
                    await asyncio.sleep(wait)
                else:
                    break
            probe = state.start_request()
            self._sending = asyncio.get_running_loop().create_future()
            self._sending_request, self._sending_left = request, False
        request.meta[keys.SENT_AT] = state.last_sent
        request.meta[keys.PROBE] = probe
        request.meta["dont_retry"] = True
        if probe:
            self.stat("probes")
            logger.info("[%s] cooldown over: one probe goes (%s)", state.engine, request.url)
        page = request.meta.get("playwright_page")
        if page is None or page.is_closed():
            # A new tab is made for this request: listen to it for the moment each navigation leaves.
            request.meta["playwright_page_event_handlers"] = {"request": self._browser_request}

    def _browser_request(self, browser_request: Any) -> None:
        """The page's ``request`` event: a main-frame navigation is the engine request leaving now."""
        try:
            if not browser_request.is_navigation_request() or browser_request.frame.parent_frame is not None:
                return
        except Exception:  # a request without a frame (a service worker's): not ours
            return
        state = self.state
        state.mark_sent()
        if self._sending_request is not None and not self._sending_left:
            self._sending_left = True
            self._sending_request.meta[keys.SENT_AT] = state.last_sent
        self._release()

    def _release(self, request: Request | None = None) -> None:
        if request is not None and request is not self._sending_request:
            return
        if self._sending is not None and not self._sending.done():
            self._sending.set_result(None)

    def process_response(self, request: Request, response: Response, spider: Spider | None = None) -> Response:
        if is_engine_request(request):
            self._release(request)
        return response

    def process_exception(self, request: Request, exception: Exception, spider: Spider | None = None) -> None:
        if is_engine_request(request):
            self._release(request)
