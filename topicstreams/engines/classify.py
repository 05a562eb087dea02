"""Classify an engine's response: challenge, hard_block, soft_block, error or ok.

One classifier for every engine, in the order of the contract:

1. ``challenge``  — the page carries a CAPTCHA or interstitial marker (the engine's or a generic wall), any status;
   an engine's consent wall is one too, with the reason ``consent`` (the reader recognises it first, see
   :mod:`topicstreams.engines.consent_walls`); so is, on a page without result items, a wall that is not the
   engine's own (:mod:`topicstreams.engines.foreign_walls`): another engine's or site's consent form (reason
   ``consent``), a login form or a network's portal (reason :data:`WALL`).
2. ``hard_block`` — status 403, 429 or 503, or a connection reset, refusal or timeout.
3. ``soft_block`` — status 200 and a block-page marker, or no result items and no "no results" message, or
   (:func:`size_verdict`) a page far smaller than the engine's normal; and (:func:`oversized_verdict`, before any
   of the above: such a page is not read at all) a page larger than ``scraper.limits.page_bytes``, with the reason
   ``oversized``.
4. ``error``      — any other failure.
5. ``ok``.

The markers a maintainer extends live in two places: each engine's own challenge, block and "no results"
markers on the engine (``markers`` of its class in :mod:`topicstreams.engines`), and :data:`WALL_MARKERS` here,
the walls in front of any site (checked for every engine). Markers are lowercase substrings of the final URL (its
query values blanked) or of the page's HTML; HTML markers only count on a page without result items. So a topic
or a headline that quotes a marker does not bench the engine.
"""

from __future__ import annotations

import enum
import statistics
from collections import deque
from dataclasses import dataclass

from topicstreams.engines.consent_walls import CONSENT, blank_query_values


class ResponseClass(enum.StrEnum):
    CHALLENGE = "challenge"
    HARD_BLOCK = "hard_block"
    SOFT_BLOCK = "soft_block"
    ERROR = "error"
    OK = "ok"


BENCHING_CLASSES = frozenset({ResponseClass.CHALLENGE, ResponseClass.HARD_BLOCK, ResponseClass.SOFT_BLOCK})
"""Classes that mean the engine is turning against us (they bench it in the Pacing issue)."""

HARD_BLOCK_STATUSES = frozenset({403, 429, 503})

STAT_KEYS = {
    ResponseClass.CHALLENGE: "challenges",
    ResponseClass.HARD_BLOCK: "hard_blocks",
    ResponseClass.SOFT_BLOCK: "soft_blocks",
    ResponseClass.ERROR: "errors",
    ResponseClass.OK: "ok",
}
"""The stat counted under ``topicstreams/<engine>/`` for each class."""


@dataclass(frozen=True)
class EngineMarkers:
    """What one engine's unfriendly and empty pages look like.

    ``challenge_urls`` / ``challenge_html``: CAPTCHA and interstitial pages (URL parts, HTML snippets).
    ``block_html``: a block page served with 200 that is not a challenge (a JavaScript shell, say).
    ``no_results``: the engine's own "nothing found" phrasings; an empty list without one is suspect.
    """

    challenge_urls: tuple[str, ...] = ()
    challenge_html: tuple[str, ...] = ()
    block_html: tuple[str, ...] = ()
    no_results: tuple[str, ...] = ()


WALL_MARKERS = EngineMarkers(
    challenge_urls=("/cdn-cgi/challenge-platform/", "captcha-delivery.com"),
    challenge_html=(
        # Cloudflare
        "<title>just a moment...</title>",
        "please wait... | cloudflare",
        "attention required! | cloudflare",
        "cf_chl_opt",
        "/cdn-cgi/challenge-platform/",
        # DataDome
        "captcha-delivery.com",
        # PerimeterX
        "px-captcha",
        "press &amp; hold",
        "press & hold",
        # Imperva
        "_incapsula_resource",
    ),
    block_html=(
        # Akamai's "Access Denied ... Reference #" page
        "you don't have permission to access",
    ),
)
"""The walls in front of any site."""

WALL_HEADERS = {"cf-mitigated": "challenge"}
"""Response headers that mark a challenge whatever the body says."""


def _contains(haystack: str, needles: tuple[str, ...]) -> str | None:
    for needle in needles:
        if needle in haystack:
            return needle
    return None


EMPTY_LIST = "no result items and no 'no results' message"
"""The reason of a soft block that is only an unexplained empty list (a parser may still find results)."""


PARSE_ERROR = "parse error: "
"""How the reason of a page the parser failed on starts."""


@dataclass(frozen=True)
class Verdict:
    cls: ResponseClass
    reason: str

    @property
    def benches(self) -> bool:
        return self.cls in BENCHING_CLASSES

    @property
    def parse_failed(self) -> bool:
        """Whether the parser failed on the page (see :func:`parse_error`)."""
        return self.cls is ResponseClass.ERROR and self.reason.startswith(PARSE_ERROR)


CONSENT_WALL = Verdict(ResponseClass.CHALLENGE, CONSENT)
"""The verdict on an engine's consent wall (:mod:`topicstreams.engines.consent_walls`): an interstitial, so a
``challenge``."""

WALL = "wall"
"""The reason of a ``challenge`` that is a login form or a network's portal standing where results should be
(:mod:`topicstreams.engines.foreign_walls`)."""


def classify_response(
    markers: EngineMarkers,
    *,
    status: int,
    url: str,
    html: str,
    item_count: int,
    headers: dict[str, str] | None = None,
) -> Verdict:
    """Classify one rendered response. ``headers`` keys are compared case-insensitively."""
    lowered_url = blank_query_values(url).lower()
    lowered = html.lower()
    for header, value in (headers or {}).items():
        if WALL_HEADERS.get(header.lower()) == str(value).strip().lower():
            return Verdict(ResponseClass.CHALLENGE, f"header {header}: {value}")
    # Markers in the HTML count only on a page without result items: a challenge or block page has none, and
    # a results page may quote a marker (a topic, a headline) without being one.
    read_html = item_count == 0
    for table in (markers, WALL_MARKERS):
        found = _contains(lowered_url, table.challenge_urls) or (read_html and _contains(lowered, table.challenge_html))
        if found:
            return Verdict(ResponseClass.CHALLENGE, f"challenge marker {found!r}")
    if status in HARD_BLOCK_STATUSES:
        return Verdict(ResponseClass.HARD_BLOCK, f"HTTP {status}")
    if not 200 <= status < 300:
        return Verdict(ResponseClass.ERROR, f"HTTP {status}")
    for table in (markers, WALL_MARKERS):
        found = read_html and _contains(lowered, table.block_html)
        if found:
            return Verdict(ResponseClass.SOFT_BLOCK, f"block marker {found!r}")
    if item_count == 0:
        if _contains(lowered, markers.no_results):
            return Verdict(ResponseClass.OK, "no results")
        return Verdict(ResponseClass.SOFT_BLOCK, EMPTY_LIST)
    return Verdict(ResponseClass.OK, f"{item_count} results")


def parse_error(exception: BaseException) -> Verdict:
    """The verdict on a page the parser failed on: an ``error`` naming the exception."""
    return Verdict(ResponseClass.ERROR, f"{PARSE_ERROR}{type(exception).__name__}: {exception}")


CONNECTION_LEVEL = (
    "ConnectionRefusedError",
    "DNSLookupError",
    "NoRouteError",
    "ERR_CONNECTION_REFUSED",
    "ERR_NAME_NOT_RESOLVED",
    "ERR_NAME_RESOLUTION_FAILED",
    "ERR_ADDRESS_UNREACHABLE",
    "ERR_INTERNET_DISCONNECTED",
    "ERR_NETWORK_CHANGED",
    "ERR_PROXY_CONNECTION_FAILED",
)
"""The failures that say the way out of this node is broken (no name resolution, nothing listening, no route) rather
than what an engine answered: when every engine of a node gets them at once, it is the node's network
(:mod:`topicstreams.alerts.network`). They are hard blocks, as the engine cannot be reached."""


def is_connection_level(reason: str) -> bool:
    """Whether a verdict's reason is a connection-level failure (:data:`CONNECTION_LEVEL`)."""
    return reason in CONNECTION_LEVEL


PROXY_FAILURES = (
    "ERR_TUNNEL_CONNECTION_FAILED",
    "ERR_PROXY_AUTH_UNSUPPORTED",
    "ERR_PROXY_CERTIFICATE_INVALID",
    "ERR_SOCKS_CONNECTION_FAILED",
    "ERR_SOCKS_CONNECTION_HOST_UNREACHABLE",
    "ERR_EMPTY_RESPONSE",
)
"""Chromium's failures of a navigation through a proxy that say the proxy (or the tunnel through it) failed."""

ROUTE_FAILURES = (
    *CONNECTION_LEVEL,
    *PROXY_FAILURES,
    "ERR_CONNECTION_RESET",
    "ERR_CONNECTION_CLOSED",
    "ERR_TIMED_OUT",
    "ERR_CONNECTION_TIMED_OUT",
    "Timeout",
    "ConnectionLost",
    "ConnectionDone",
    "TimeoutError",
    "TCPTimedOutError",
    "HTTP 407",
)
"""The reasons that say a request's way out failed (the proxy refused, wanted credentials, dropped the tunnel, the
connection timed out) rather than what an engine answered: on a proxied route they are the route's failures
(:mod:`topicstreams.crawl.route_standing`), and its topic fails over at once to another route."""


def is_route_failure(reason: str) -> bool:
    """Whether a verdict's reason is a route's failure (:data:`ROUTE_FAILURES`)."""
    return reason in ROUTE_FAILURES


def classify_failure(exception: BaseException) -> Verdict:
    """Classify a request that got no response: resets, refusals, timeouts and the connection-level failures
    (:data:`CONNECTION_LEVEL`: no name resolution, no route) are hard blocks."""
    from twisted.internet import error as net_error

    name = type(exception).__name__
    text = str(exception)
    hard = (
        net_error.ConnectionRefusedError,
        net_error.ConnectionLost,
        net_error.TimeoutError,
        net_error.TCPTimedOutError,
        net_error.ConnectionDone,
        net_error.DNSLookupError,
        net_error.NoRouteError,
    )
    if isinstance(exception, (*hard, ConnectionError, TimeoutError)):
        return Verdict(ResponseClass.HARD_BLOCK, name)
    # Chromium reports network failures of a navigation as Playwright errors carrying net::ERR_* codes.
    for code in (
        "ERR_CONNECTION_RESET",
        "ERR_CONNECTION_REFUSED",
        "ERR_CONNECTION_CLOSED",
        "ERR_TIMED_OUT",
        "ERR_CONNECTION_TIMED_OUT",
        *CONNECTION_LEVEL[3:],
        *PROXY_FAILURES,
        "Timeout",
    ):
        if code in text:
            return Verdict(ResponseClass.HARD_BLOCK, code)
    first_line = text.strip().splitlines()[0] if text.strip() else ""
    return Verdict(ResponseClass.ERROR, f"{name}: {first_line}"[:200])


SIZE_SAMPLES = 51
"""How many recent ok pages the running median size remembers."""
SIZE_MIN_SAMPLES = 5
"""How many ok pages it takes before sizes are judged at all."""


class RunningMedian:
    """The median of the last ``samples`` values; None until ``min_samples`` have been seen."""

    def __init__(self, samples: int = SIZE_SAMPLES, min_samples: int = SIZE_MIN_SAMPLES) -> None:
        self.values: deque[float] = deque(maxlen=samples)
        self.min_samples = min_samples

    def add(self, value: float) -> None:
        self.values.append(value)

    @property
    def value(self) -> float | None:
        if len(self.values) < self.min_samples:
            return None
        return statistics.median(self.values)


OVERSIZED = "oversized"
"""The reason of a soft block that is a page larger than ``scraper.limits.page_bytes``."""


def oversized_verdict(body_bytes: int, page_bytes: int) -> Verdict | None:
    """The verdict on a page of ``body_bytes`` above the limit ``page_bytes``: a soft block with the reason
    :data:`OVERSIZED` (the page is not read: no engine's results page is that large, and reading one would cost the
    crawl memory and time it cannot spare); None when the page is within it."""
    if body_bytes <= page_bytes:
        return None
    return Verdict(ResponseClass.SOFT_BLOCK, OVERSIZED)


def size_verdict(verdict: Verdict, body_bytes: int, normal_bytes: float | None, min_size_ratio: float) -> Verdict:
    """An ``ok`` verdict turned into a soft block when the page is below ``min_size_ratio`` × its normal size."""
    if verdict.cls is not ResponseClass.OK or not normal_bytes or body_bytes >= min_size_ratio * normal_bytes:
        return verdict
    return Verdict(
        ResponseClass.SOFT_BLOCK,
        f"page of {body_bytes} bytes, below {min_size_ratio:g} x the median {normal_bytes:.0f}",
    )
