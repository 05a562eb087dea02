"""How long an engine's results-page request may be out before the spider counts it as lost.

A request can fail to come back at all: a middleware may drop it without calling its errback (Scrapy's
``UrlLengthMiddleware`` filters a too-long URL out with an INFO line), or the browser may lose it. The spider's topic
loop waits for each page with a deadline instead of forever:

* the **budget** is the navigation timeout (``PLAYWRIGHT_DEFAULT_NAVIGATION_TIMEOUT``, ms; Playwright's 30 s where
  it is unset or 0) plus ``TOPICSTREAMS_RESPONSE_MARGIN`` seconds (starting the browser, opening a tab, reading the
  page: what the navigation timeout does not cover), plus one more navigation timeout where ``browser.consent``
  answers walls (answering one and loading the page again may take that long);
* it counts from when the pacing middleware lets the request go (``topicstreams_sent_at``, moved on to when the
  browser actually sent it), never from when the spider asked: the floor, a cooldown or a probe's outcome may hold
  a request in pacing for as long as they last, and that wait is not the request's. Until pacing lets it go, the
  deadline is the budget after the last moment pacing would still hold it (:meth:`EngineState.wait_time`) — so a
  request dropped before it ever reaches pacing is lost one budget after the engine was free to send it.

Pure apart from the clock (injected), so the rule is tested without waiting.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from topicstreams.crawl import meta as keys
from topicstreams.crawl.engine_state import EngineState
from topicstreams.engines.classify import ResponseClass, Verdict
from topicstreams.engines.consent_walls import answers_walls

LOST = Verdict(ResponseClass.ERROR, "no response")
"""The verdict on a page whose request never came back by its deadline."""

PLAYWRIGHT_NAVIGATION_DEFAULT_MS = 30_000.0
"""Playwright's own navigation timeout, where the setting is unset (0 means none there: not here)."""


def navigation_timeout(settings: Any) -> float:
    """The navigation timeout in seconds (``PLAYWRIGHT_DEFAULT_NAVIGATION_TIMEOUT``; Playwright's 30 s where it is
    unset or 0)."""
    unset = settings.get("PLAYWRIGHT_DEFAULT_NAVIGATION_TIMEOUT") in (None, "")
    navigation_ms = 0.0 if unset else settings.getfloat("PLAYWRIGHT_DEFAULT_NAVIGATION_TIMEOUT")
    if navigation_ms <= 0:
        navigation_ms = PLAYWRIGHT_NAVIGATION_DEFAULT_MS
    return navigation_ms / 1000


def response_budget(settings: Any, consent: str) -> float:
    """Seconds a results-page request may be out after pacing let it go: navigation timeout plus the margin, plus
    one more navigation timeout where consent walls are answered (``consent``, the choice of ``browser.consent``:
    the answer and the page loaded again share one, see :mod:`topicstreams.middlewares.consent_answers`)."""
    navigation = navigation_timeout(settings)
    answering = answers_walls(consent)
    return navigation * (2 if answering else 1) + settings.getfloat("TOPICSTREAMS_RESPONSE_MARGIN")


class PageDeadline:
    """The deadline of one page's request (see the module docstring)."""

    def __init__(
        self,
        request: Any,
        budget: float,
        state: EngineState,
        *,
        asked_at: float | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.request = request
        self.budget = budget
        self.state = state
        self.clock = clock
        self.free_at = clock() if asked_at is None else asked_at
        """When the request was asked for, then the latest moment pacing was seen to hold it."""

    @property
    def let_go(self) -> bool:
        """Whether pacing has let the request go."""
        return self.request.meta.get(keys.SENT_AT) is not None

    def remaining(self) -> float:
        """Seconds until the request counts as lost (0 or less: it does)."""
        now = self.clock()
        sent_at = self.request.meta.get(keys.SENT_AT)
        if sent_at is not None:
            return sent_at + self.budget - now
        hold = self.state.wait_time(now)
        if hold is None or hold > 0:
            # Pacing would hold it now, for the gap or a bench (until then); None: a probe is out and everything
            # waits for its outcome (held now, at least; pacing forgets a probe lost for a budget).
            self.free_at = max(self.free_at, now + (hold or 0.0))
        return self.free_at + self.budget - now
