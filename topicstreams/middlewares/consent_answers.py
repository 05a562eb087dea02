"""Answer an engine's consent wall once, as a person would, in the engine's own browser tab.

A downloader middleware between pacing and blocks (it sees a response before the blocks middleware reads it).
When a results page comes back as one of the engine's consent walls (:meth:`Engine.consent_wall`,
:mod:`topicstreams.engines.consent_walls`) and ``browser.consent`` is ``reject`` or ``accept``:

1. it presses the wall's own button for that choice in the engine's tab (the page's own form: no request is
   forged), and waits for the navigation it starts, redirects back included;
2. it loads the results page again, once, in the same tab, and hands that page on instead of the wall. The choice
   now lives in the engine's browser context (its cookies), saved in its profile folder, so the next start meets no
   wall.

``topicstreams/<engine>/consents_answered`` counts the answers; the first one of a crawl is logged at INFO, with the
profile that keeps it. The blocks middleware then reads the page it is given like any other: results are stored,
and a wall met again is a ``challenge`` (reason ``consent``: cooldown, probe, health) — as is a wall that could not be
answered (no button for the choice, the button or the navigation timing out; a WARNING says why).

It never loops: after an answer, no wall is answered again until the engine has cooled down and sent its probe,
so at most one answer per engine per cooldown. Both steps together get one navigation timeout
(``PLAYWRIGHT_DEFAULT_NAVIGATION_TIMEOUT``); the response deadline of the spider allows for it
(:func:`topicstreams.crawl.deadline.response_budget`). With ``browser.consent: none`` the middleware is not
enabled (``NotConfigured``), and a wall is a ``challenge`` from the start.
"""

from __future__ import annotations

import logging
import time
from typing import Any

from scrapy import Request, Spider
from scrapy.crawler import Crawler
from scrapy.exceptions import NotConfigured
from scrapy.http import HtmlResponse, Response

from topicstreams.config.setting_names import sections_from
from topicstreams.crawl import meta as keys
from topicstreams.crawl.deadline import navigation_timeout
from topicstreams.engines.consent_walls import ConsentWall, answers_walls
from topicstreams.middlewares import EngineMiddleware, is_engine_request

logger = logging.getLogger(__name__)


class ConsentNotAnswered(Exception):
    """The wall could not be answered; the message says why."""


class ConsentMiddleware(EngineMiddleware):
    def __init__(self, crawler: Crawler) -> None:
        super().__init__(crawler)
        choice = sections_from(crawler.settings).browser.consent
        if not answers_walls(choice):
            raise NotConfigured  # browser.consent: none (a person's choice: no WARNING about it)
        self.choice = choice
        self.timeout = navigation_timeout(crawler.settings)
        self.spent = False
        """An answer was given, and the engine has not cooled down and probed since."""
        self.told = False

    async def process_response(self, request: Request, response: Response, spider: Spider | None = None) -> Response:
        if not is_engine_request(request) or not isinstance(response, HtmlResponse):
            return response
        if self.reader.oversized(len(response.body)) is not None:
            return response  # not read at all: the blocks middleware makes it a soft block (oversized)
        if request.meta.get(keys.PROBE):
            self.spent = False  # the engine cooled down since the last answer: one more is allowed
        wall = self.reader.engine.consent_wall(response.url, response.text)
        if wall is None:
            return response
        page = request.meta.get("playwright_page")
        if self.spent or page is None or page.is_closed():
            logger.debug(
                "[%s] consent wall on %s left unanswered: %s",
                self.state.engine,
                response.url,
                "answered once already since the last cooldown" if self.spent else "no tab to answer in",
            )
            return response
        self.spent = True
        try:
            answered = await self.answer(page, wall, request)
        except ConsentNotAnswered as exc:
            logger.warning(
                "[%s] could not answer the consent wall (%s) on %s: %s; it counts as a challenge "
                "(reason consent) until the engine has cooled down",
                self.state.engine,
                self.choice,
                response.url,
                exc,
            )
            return response
        self.stat("consents_answered")
        log = logger.debug if self.told else logger.info
        log(
            "[%s] answered its consent wall (%s) once, as a person would; the browser profile %s keeps the choice",
            self.state.engine,
            self.choice,
            self.crawler.settings.get("TOPICSTREAMS_PROFILE_PATH") or "(none)",
        )
        self.told = True
        return answered

    async def answer(self, page: Any, wall: ConsentWall, request: Request) -> HtmlResponse:
        """Press the wall's button for the choice, wait for the way back, load the results page again."""
        from playwright.async_api import Error as PlaywrightError

        selector = wall.button(self.choice)
        if selector is None:
            raise ConsentNotAnswered(f"this wall has no {self.choice} button")
        deadline = time.monotonic() + self.timeout

        def left_ms() -> float:
            left = deadline - time.monotonic()
            if left <= 0:
                raise ConsentNotAnswered(f"no answer within {self.timeout:g} s")
            return left * 1000

        try:
            button = page.locator(selector).first
            if not await button.count():
                raise ConsentNotAnswered(f"no {self.choice} button on the page ({selector})")
            async with page.expect_navigation(wait_until="domcontentloaded", timeout=left_ms()):
                await button.click(timeout=left_ms())
            request.meta[keys.SENT_AT] = time.monotonic()  # the latency is the retried page's
            self.lane(request).mark_sent()
            reply = await page.goto(request.url, wait_until="domcontentloaded", timeout=left_ms())
            html = await page.content()
            headers = await reply.all_headers() if reply is not None else {}
        except PlaywrightError as exc:
            first_line = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
            raise ConsentNotAnswered(first_line[:200]) from None
        headers.pop("content-encoding", None)
        headers.pop("content-length", None)
        return HtmlResponse(
            url=page.url,
            status=reply.status if reply is not None else 200,
            headers=headers,
            body=html.encode("utf-8"),
            encoding="utf-8",
            request=request,
            flags=["playwright"],
        )
