"""Whether each route reaches each engine it serves, now: one request per (route, engine) in a real Chromium, through
the route's proxy and wearing its persona (:func:`~topicstreams.browser.chromium.route_context_options`) —
``scrapy routes check``.

One short-lived browser (the crawl's launch options) and one fresh context per route (no saved cookies: nothing a
crawl keeps is touched), every request at once, each waiting only for the answer's headers (``commit``). Pages and
contexts are left to the browser's close: closing a page whose proxy refused its credentials (a 407) can hang
while another context's request is still out. A request
*reached* its engine when an HTTP response came back, whatever its status (a 403 is the site answering; a 407 is
the proxy refusing its credentials, and is not). Else :func:`failure_text` says why in a few words with Chromium's
error code (proxy refused, 407, DNS, timeout…), trimmed to one line and its credentials masked.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from playwright.async_api import Browser, BrowserContext, async_playwright
from playwright.async_api import Error as PlaywrightError
from playwright.async_api import TimeoutError as PlaywrightTimeout

from topicstreams.browser.chromium import BrowserNotFound, route_context_options
from topicstreams.config.route_table import DIRECT
from topicstreams.config.secrets import Masker, shown_proxy
from topicstreams.config.sections import RouteSection

PROXY_AUTH_STATUS = 407

NET_ERRORS = {
    "ERR_PROXY_CONNECTION_FAILED": "proxy refused the connection or cannot be reached",
    "ERR_TUNNEL_CONNECTION_FAILED": "proxy could not open a tunnel to the site",
    "ERR_PROXY_AUTH_UNSUPPORTED": "407: the proxy refused the credentials",
    "ERR_PROXY_AUTH_REQUESTED": "407: the proxy asks for credentials",
    "ERR_PROXY_CERTIFICATE_INVALID": "the proxy's TLS certificate is refused",
    "ERR_SOCKS_CONNECTION_FAILED": "SOCKS proxy refused the connection",
    "ERR_SOCKS_CONNECTION_HOST_UNREACHABLE": "SOCKS proxy cannot reach the site",
    "ERR_NAME_NOT_RESOLVED": "DNS: the name does not resolve",
    "ERR_NAME_RESOLUTION_FAILED": "DNS: the name could not be resolved",
    "ERR_CONNECTION_REFUSED": "connection refused",
    "ERR_CONNECTION_RESET": "connection reset",
    "ERR_CONNECTION_CLOSED": "connection closed without an answer",
    "ERR_EMPTY_RESPONSE": "connection closed without an answer",
    "ERR_CONNECTION_TIMED_OUT": "timeout while connecting",
    "ERR_TIMED_OUT": "timeout",
    "ERR_ADDRESS_UNREACHABLE": "address unreachable",
    "ERR_INTERNET_DISCONNECTED": "no network",
}
"""Chromium's network errors as ``scrapy routes check`` names them (others are shown by their code alone)."""

_NET_ERROR = re.compile(r"net::(ERR_[A-Z_]+)")

CLOSE_TIMEOUT = 10.0
"""Seconds the browser's close may take before the driver is left to end it."""

LONGEST = 160
"""An error shown is cut to this many characters."""


@dataclass(frozen=True)
class Reach:
    """What one request of ``route`` to ``engine`` met."""

    route: str
    proxy: str
    """The route's proxy as it may be shown (:func:`~topicstreams.config.secrets.shown_proxy`)."""
    engine: str
    url: str
    status: int | None
    """The HTTP status of the answer (None: none came)."""
    seconds: float
    problem: str | None
    """Why it did not reach the engine (None: it did)."""

    @property
    def reachable(self) -> bool:
        return self.problem is None

    def as_json(self) -> dict[str, Any]:
        return {
            "route": self.route,
            "proxy": self.proxy,
            "engine": self.engine,
            "url": self.url,
            "reachable": self.reachable,
            "status": self.status,
            "seconds": round(self.seconds, 3),
            "problem": self.problem,
        }


def failure_text(error: str, masker: Masker, timeout: float) -> str:
    """A Playwright error of a navigation in a few words: Chromium's code named (``proxy refused the connection
    (net::ERR_PROXY_CONNECTION_FAILED)``), else its first line; one line, cut to :data:`LONGEST`, masked."""
    found = _NET_ERROR.search(error)
    if found:
        code = found[1]
        if code in NET_ERRORS:
            return masker.mask(f"{NET_ERRORS[code]} (net::{code})")
        return masker.mask(f"net::{code}")
    if "Timeout" in error and "exceeded" in error:
        return f"timeout: no answer within {timeout:g} s"
    first = next((line.strip() for line in error.splitlines() if line.strip()), "unknown error")
    first = re.sub(r"^\w+\.\w+: ", "", first)  # "Page.goto: "
    first = masker.mask(first)
    return first if len(first) <= LONGEST else first[: LONGEST - 1] + "…"


def route_masker(route: RouteSection) -> Masker:
    """Masks the route's proxy credentials wherever an error repeats them (and any ``user:password@``)."""
    if route.proxy == DIRECT:
        return Masker()
    parts = urlsplit(route.proxy)
    return Masker([secret for secret in (parts.password, parts.username) if secret])


async def _reach(
    context: BrowserContext, route: RouteSection, engine: str, url: str, timeout: float, masker: Masker
) -> Reach:
    status: int | None = None
    problem: str | None = None
    page = await context.new_page()
    started = time.monotonic()
    try:
        response = await page.goto(url, timeout=timeout * 1000, wait_until="commit")
        status = response.status if response is not None else None
        if status == PROXY_AUTH_STATUS:
            problem = "407: the proxy refused the credentials (Proxy Authentication Required)"
        elif status is None:
            problem = "no answer"
    except PlaywrightTimeout:
        problem = f"timeout: no answer within {timeout:g} s"
    except PlaywrightError as exc:
        problem = failure_text(str(exc), masker, timeout)
    seconds = time.monotonic() - started
    return Reach(route.name, shown_proxy(route.proxy), engine, url, status, seconds, problem)


async def _reach_route(
    browser: Browser, route: RouteSection, targets: Sequence[tuple[str, str]], timeout: float
) -> list[Reach]:
    masker = route_masker(route)
    started = time.monotonic()
    try:
        context = await browser.new_context(**route_context_options(route))
    except PlaywrightError as exc:  # a proxy Chromium will not take: every engine of the route fails alike
        problem = failure_text(str(exc), masker, timeout)
        seconds = time.monotonic() - started
        return [Reach(route.name, shown_proxy(route.proxy), e, u, None, seconds, problem) for e, u in targets]
    return list(
        await asyncio.gather(*(_reach(context, route, engine, url, timeout, masker) for engine, url in targets))
    )


async def _reach_all(
    targets: Sequence[tuple[RouteSection, Sequence[tuple[str, str]]]], launch: dict[str, Any], timeout: float
) -> list[Reach]:
    async with async_playwright() as playwright:
        try:
            browser = await playwright.chromium.launch(**launch)
        except PlaywrightError as exc:
            first = next((line.strip() for line in str(exc).splitlines() if line.strip()), "no reason given")
            raise BrowserNotFound(f"Chromium did not start: {first[:LONGEST]}") from None
        try:
            groups = await asyncio.gather(
                *(_reach_route(browser, route, pairs, timeout) for route, pairs in targets if pairs)
            )
        finally:
            with contextlib.suppress(TimeoutError):  # else the driver's exit, next, ends the browser all the same
                await asyncio.wait_for(browser.close(), CLOSE_TIMEOUT)
    return [reach for group in groups for reach in group]


def check_routes(
    targets: Sequence[tuple[RouteSection, Sequence[tuple[str, str]]]], launch: dict[str, Any], timeout: float
) -> list[Reach]:
    """One request per (route, engine) of ``targets`` (each route with its ``(engine, url)`` pairs), all at once in
    one Chromium launched with ``launch`` (:func:`~topicstreams.browser.chromium.launch_options`), each given
    ``timeout`` seconds; what each met, in the order of ``targets``. :class:`BrowserNotFound` when Chromium does
    not start."""
    launch = {key: value for key, value in launch.items() if key != "handle_sigint"}  # Ctrl-C closes it here
    return asyncio.run(_reach_all(targets, launch, timeout))
