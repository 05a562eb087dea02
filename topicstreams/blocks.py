"""Classify an engine's response: challenge, hard_block, soft_block, error or ok.

One classifier for every engine, in the order of the contract:

1. ``challenge``  — the page carries a CAPTCHA or interstitial marker (the engine's or a generic wall), any status.
2. ``hard_block`` — status 403, 429 or 503, or a connection reset, refusal or timeout.
3. ``soft_block`` — status 200 and a block-page marker, or no result items and no "no results" message.
4. ``error``      — any other failure.
5. ``ok``.

The markers live in tables a maintainer extends: :data:`WALL_MARKERS` for the walls in front of any site,
and each engine's :class:`EngineMarkers` (declared beside its spider). Markers are matched as lowercase
substrings of the final URL or the page's HTML.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass


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


@dataclass(frozen=True)
class Verdict:
    cls: ResponseClass
    reason: str

    @property
    def benches(self) -> bool:
        return self.cls in BENCHING_CLASSES


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
    lowered_url = url.lower()
    lowered = html.lower()
    for header, value in (headers or {}).items():
        if WALL_HEADERS.get(header.lower()) == str(value).strip().lower():
            return Verdict(ResponseClass.CHALLENGE, f"header {header}: {value}")
    for table in (markers, WALL_MARKERS):
        found = _contains(lowered_url, table.challenge_urls) or _contains(lowered, table.challenge_html)
        if found:
            return Verdict(ResponseClass.CHALLENGE, f"challenge marker {found!r}")
    if status in HARD_BLOCK_STATUSES:
        return Verdict(ResponseClass.HARD_BLOCK, f"HTTP {status}")
    if not 200 <= status < 300:
        return Verdict(ResponseClass.ERROR, f"HTTP {status}")
    for table in (markers, WALL_MARKERS):
        found = _contains(lowered, table.block_html)
        if found:
            return Verdict(ResponseClass.SOFT_BLOCK, f"block marker {found!r}")
    if item_count == 0:
        if _contains(lowered, markers.no_results):
            return Verdict(ResponseClass.OK, "no results")
        return Verdict(ResponseClass.SOFT_BLOCK, "no result items and no 'no results' message")
    return Verdict(ResponseClass.OK, f"{item_count} results")


def classify_failure(exception: BaseException) -> Verdict:
    """Classify a request that got no response: resets, refusals and timeouts are hard blocks."""
    from twisted.internet import error as net_error

    name = type(exception).__name__
    text = str(exception)
    hard = (net_error.ConnectionRefusedError, net_error.ConnectionLost, net_error.TimeoutError,
            net_error.TCPTimedOutError, net_error.ConnectionDone)
    if isinstance(exception, hard) or isinstance(exception, (ConnectionError, TimeoutError)):
        return Verdict(ResponseClass.HARD_BLOCK, name)
    # Chromium reports network failures of a navigation as Playwright errors carrying net::ERR_* codes.
    for code in ("ERR_CONNECTION_RESET", "ERR_CONNECTION_REFUSED", "ERR_CONNECTION_CLOSED",
                 "ERR_TIMED_OUT", "ERR_CONNECTION_TIMED_OUT", "Timeout"):
        if code in text:
            return Verdict(ResponseClass.HARD_BLOCK, code)
    first_line = text.strip().splitlines()[0] if text.strip() else ""
    return Verdict(ResponseClass.ERROR, f"{name}: {first_line}"[:200])
