"""What an engine's pages and the server hand each other: the request, the reply, the pages' contract, extensions.

Each engine's pages (``fake_engines.<engine>``) expose an :class:`EnginePages` as ``PAGES``; the server
(:mod:`fake_engines.scripted_engine`) builds a :class:`RequestContext` for every request and sends the
:class:`Reply` the pages hand back. An :class:`Extension` adds to every engine's server alike what is not the fake
engines' own. See :mod:`fake_engines.server` for the whole scripting API.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from fake_engines.catalogue import Article

CONSENT_MODES = ("off", "wall", "redirect", "broken")
"""The consent modes of an engine (see :mod:`fake_engines.consent_pages`)."""
CONSENT_HOST = "localhost"
"""The host name of every engine's consent host: the same fake server, reached by another name than 127.0.0.1."""
CONSENT_SET_PATH = "/consent/set"
"""Every engine's endpoint on the results host that sets the consent cookie there and redirects on (the hop from
a save on the consent host)."""
ASSET_PREFIXES = ("/thumbs/", "/fonts/", "/favicon.ico")
"""The shared assets' paths, on every engine (an :class:`Extension` may claim more)."""


@dataclass
class RequestContext:
    """What a page renderer needs to know about one request."""

    engine: str
    method: str
    path: str
    query: dict[str, str]
    """First value of each query parameter."""
    query_lists: dict[str, list[str]]
    raw_target: str
    """The request target as sent (path and query)."""
    base_url: str
    headers: dict[str, str]
    now: float
    body: bytes = b""
    address: str = ""
    """The client's IP address, as the server sees it (a proxy's source address when the request came through one)."""
    consent_mode: str = "off"
    """The engine's consent mode when the request came (one of :data:`CONSENT_MODES`)."""
    consent_language: str = "en"
    """The language of the engine's consent walls when the request came."""
    articles: Callable[[str], Sequence[Article]] | None = None
    """With a news world: a topic's whole list of articles on this engine at the world's time of the call, newest
    first (``NewsWorld.articles`` of the engine); None without one (the pages take the catalogue's)."""

    @property
    def url(self) -> str:
        """The absolute URL of this request on the fake host."""
        return self.base_url + self.raw_target

    @property
    def host(self) -> str:
        """The host name the client asked for (``Host`` header, port and case dropped), e.g. "127.0.0.1"."""
        return host_name(self.headers.get("host", "")) or (urlsplit(self.base_url).hostname or "")

    @property
    def consent_base_url(self) -> str:
        """``http://localhost:PORT``: this server under the name of its consent host."""
        return consent_base_url(self.base_url)

    @property
    def origin(self) -> str:
        """The origin the client asked for: :attr:`base_url` or :attr:`consent_base_url` (any other Host: base_url)."""
        if self.base_url and self.host == CONSENT_HOST:
            return self.consent_base_url
        return self.base_url

    @property
    def on_consent_host(self) -> bool:
        """Whether the request came to the consent host (``localhost``) rather than the results host."""
        return self.host == CONSENT_HOST and self.base_url != self.consent_base_url

    def articles_of(self, topic: str) -> tuple[Article, ...] | None:
        """``topic``'s whole list on this engine from the news world, newest first; None without a world."""
        return None if self.articles is None else tuple(self.articles(topic))

    def cookies(self) -> dict[str, str]:
        """The request's cookies, name -> value (the first of a repeated name)."""
        jar: dict[str, str] = {}
        for part in self.headers.get("cookie", "").split(";"):
            name, sep, value = part.strip().partition("=")
            if sep and name:
                jar.setdefault(name.strip(), value.strip())
        return jar

    def form(self, keep_blank_values: bool = True) -> dict[str, str]:
        """The fields of a form posted in the request's body, name -> value (the last of a repeated name)."""
        return dict(parse_qsl(self.body.decode("utf-8", "replace"), keep_blank_values=keep_blank_values))


def host_name(host_header: str) -> str:
    """The host name of a ``Host`` header value ("127.0.0.1:8000" -> "127.0.0.1", "[::1]:80" -> "::1")."""
    host = host_header.strip().lower()
    if host.startswith("["):
        return host[1:].partition("]")[0]
    return host.rpartition(":")[0] if host.count(":") == 1 else host


def consent_base_url(base_url: str) -> str:
    """``base_url`` with its host replaced by :data:`CONSENT_HOST` (same scheme and port)."""
    parts = urlsplit(base_url)
    port = f":{parts.port}" if parts.port else ""
    return f"{parts.scheme}://{CONSENT_HOST}{port}" if parts.scheme else ""


@dataclass
class Reply:
    """A response a page renderer hands back to the server."""

    status: int = 200
    body: bytes | str = b""
    content_type: str = "text/html; charset=utf-8"
    headers: list[tuple[str, str]] = field(default_factory=list)
    served: str | None = None
    """The page kind served, for the request log."""
    kind: str | None = None
    """The log's ``kind`` when not decided by the server ("other" by default for non-results paths)."""
    log: dict[str, Any] = field(default_factory=dict)
    """More fields for the request log entry (e.g. ``consent_choice``); they never replace the server's own."""

    def payload(self) -> bytes:
        return self.body.encode("utf-8") if isinstance(self.body, str) else self.body


class EnginePages:
    """The pages of one engine. The package ``fake_engines.<engine>`` exposes an instance as ``PAGES``."""

    name: str = ""
    page_kinds: frozenset[str] = frozenset({"results"})
    query_param: str = "q"

    def is_results(self, ctx: RequestContext) -> bool:
        """Whether ``ctx`` asks for a results page (those consume steps)."""
        raise NotImplementedError

    def topic(self, ctx: RequestContext) -> str:
        """The query of a results request (what routes match)."""
        return ctx.query.get(self.query_param, "")

    def render(self, kind: str, ctx: RequestContext) -> Reply:
        """The response of a results request served as page kind ``kind``."""
        raise NotImplementedError

    def other(self, ctx: RequestContext) -> Reply | None:
        """Any other path of the engine (challenge pages, redirect pages…); None for a 404."""
        return None

    # -- consent walls (see fake_engines.consent_pages) -------------------------------------------------

    consent_languages: tuple[str, ...] = ("en",)
    """The languages of the engine's consent walls, "en" first."""
    consent_cookies: tuple[str, ...] = ()
    """The names of the cookies that tell the engine a consent was given; the first is the one a save sets."""

    def has_consent(self, ctx: RequestContext) -> bool:
        """Whether the request carries one of :attr:`consent_cookies` (with a value)."""
        jar = ctx.cookies()
        return any(jar.get(name) for name in self.consent_cookies)

    def consent_cookie_value(self, choice: str, ctx: RequestContext) -> str:
        """The value of the consent cookie for ``choice`` ("reject" or "accept")."""
        raise NotImplementedError

    def consent_wall(self, ctx: RequestContext) -> Reply:
        """The wall served at a results URL that lacks the consent cookie (modes wall and broken)."""
        raise NotImplementedError

    def consent_redirect(self, ctx: RequestContext) -> Reply:
        """The 302 from a results URL that lacks the consent cookie to the wall on the consent host."""
        raise NotImplementedError


class Extension:
    """What code outside the package adds to every engine's server alike (the render benchmark's page weight).

    Subclass it and override what you need: the base class changes nothing. ``FakeEngines(engines,
    extensions=[...])`` calls the extensions in their order. A hook that raises is a bug in a page: the client
    gets a 500, as for an engine's own page.
    """

    asset_prefixes: tuple[str, ...] = ()
    """Path prefixes served as assets besides :data:`ASSET_PREFIXES` (logged with ``kind`` "asset")."""

    def asset(self, ctx: RequestContext) -> Reply | None:
        """The reply to an asset request (any asset path, shared or claimed), or None to leave it to the next
        extension, then to the server (a shared asset; a 404 on a path only an extension claims).

        A hook may wait before answering (a slow CDN); it then sets ``ctx.now`` to when it answers, which the
        request log keeps as the request's ``time``.
        """
        return None

    def results(self, reply: Reply, ctx: RequestContext) -> Reply:
        """The reply to send for a results request, given the one the step made (any page kind, any status).

        A consent wall served in place of the step (see :mod:`fake_engines.consent_pages`) is not handed to it."""
        return reply
