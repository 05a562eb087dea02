"""Fake news engines on loopback: one ``ThreadingHTTPServer`` per engine, scriptable from tests.

Each engine's pages live in their own module (``fake_engines.<engine>``), which exposes ``PAGES``,
an :class:`EnginePages`. The server does the rest for every engine alike: the step queue and per-topic
routes, delays, the request log, the shared assets (``/thumbs/…`` PNGs, ``/fonts/…``) and the
``/__fakes__/…`` control endpoints.

    with FakeEngines(("google",)) as fakes:
        fakes.script("google", [{"page": "sorry"}, {"page": "results", "delay": 0.5}])
        fakes.route("google", "quiet topic", "empty")
        url = fakes.base_url("google") + "/search?q=climate&tbm=nws"
        ...
        fakes.requests("google")  # what the engine saw

A step is a dict (or just a page kind name):

* ``page`` — a page kind of the engine (Google: results, empty, sorry, captcha200, blank, small, consent, restyled);
  defaults to ``results`` (or to the raw ``body`` when one is given);
* ``status`` — overrides the status of the response to the results request;
* ``delay`` — seconds to wait before answering;
* ``headers`` — extra response headers (a mapping);
* ``body`` — raw HTML served instead of the page kind's markup.

Results requests take their step from the topic's route if there is one (a route's steps are served in
order, the last one then repeats for good), otherwise from the engine's FIFO; with both empty the page is a
normal results page.

Every log entry has ``bytes``: the body bytes the server sent (0 for HEAD), and ``host``: the host name the
client asked for (its ``Host`` header: "127.0.0.1", or "localhost" on the consent host), and ``cookies``: the sorted
names of the cookies the request carried (every fake listens on 127.0.0.1, and cookies ignore ports: a cookie one
engine's fake sets would reach the others' if their pages shared a browser context). Results entries also
have ``consent_cookie``: whether the request carried the engine's consent cookie.

Consent walls: ``fakes.consent("google", "redirect", "de")`` (or ``POST /__fakes__/consent`` with
``{"mode": …, "language": …}``; ``GET`` tells the current one) puts the engine's consent wall in front of every
results request that lacks the engine's consent cookie; ``off`` (the default, and after :meth:`FakeEngines.reset`)
serves pages as without it. See :mod:`fake_engines.consent_pages` for the modes, paths, cookies and log fields.

A news world: ``FakeEngines(engines, world=NewsWorld())`` (see :mod:`fake_engines.world`) gives every engine's
results pages the world's articles instead of the catalogue's: ``RequestContext.articles`` hands a page renderer the
topic's list on that engine at the request's world time (None without a world: the catalogue, byte for byte as
before). ``POST /__fakes__/world`` with ``{"advance": seconds}`` and/or ``{"stale": "bing", "on": true}`` (on any
engine's port) moves its clock or makes an engine stale; ``GET`` tells its :meth:`~NewsWorld.state`; both answer 404
when the fakes have no world. :meth:`FakeEngines.reset` of an engine also makes it fresh again (not the clock).

Extensions: ``FakeEngines(engines, extensions=[...])`` adds to every engine's server alike what is not the fake
engines' own (see :class:`Extension`): more asset paths, asset replies that come first (and may wait), a
change to every results reply. The package ships none: the render benchmark's page weight
(``benchmarks/page_weight.py``) is one. Without extensions (the default) pages are as the engine modules write them.
"""

from __future__ import annotations

import html
import importlib
import json
import struct
import sys
import threading
import time
import zlib
from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache, partial
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

import yaml

from fake_engines.catalogue import Article
from fake_engines.world import NewsWorld
from topicstreams import ENGINES

STEP_KEYS = frozenset({"page", "status", "delay", "headers", "body"})
CONTROL_PREFIX = "/__fakes__/"
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
    """The pages of one engine. A module ``fake_engines.<engine>`` exposes an instance as ``PAGES``."""

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


def load_pages(engine: str) -> EnginePages:
    """The :class:`EnginePages` of ``engine``, from ``fake_engines.<engine>``."""
    if engine not in ENGINES:
        raise ValueError(f"unknown engine {engine!r}; engines are {', '.join(ENGINES)}")
    try:
        module = importlib.import_module(f"{__package__}.{engine}")
    except ModuleNotFoundError as exc:
        if exc.name != f"{__package__}.{engine}":
            raise
        raise ValueError(f"there are no fake pages for engine {engine!r} yet") from None
    return module.PAGES


def normalize_step(step: Any, pages: EnginePages) -> dict[str, Any]:
    """A validated copy of ``step`` (a dict or a page kind name)."""
    if isinstance(step, str):
        step = {"page": step}
    if not isinstance(step, Mapping):
        raise ValueError(f"a step is a dict or a page kind name, not {step!r}")
    unknown = set(step) - STEP_KEYS
    if unknown:
        raise ValueError(f"unknown step keys {sorted(unknown)}; known: {sorted(STEP_KEYS)}")
    out: dict[str, Any] = {}
    if "body" in step and step["body"] is not None:
        if not isinstance(step["body"], (str, bytes)):
            raise ValueError("a step's body is a string")
        out["body"] = step["body"]
    page = step.get("page")
    if page is None and "body" not in out:
        page = "results"
    if page is not None:
        if page not in pages.page_kinds:
            raise ValueError(f"unknown page kind {page!r} for {pages.name}; kinds: {sorted(pages.page_kinds)}")
        out["page"] = page
    if step.get("status") is not None:
        status = step["status"]
        if not isinstance(status, int) or isinstance(status, bool) or not 100 <= status <= 599:
            raise ValueError(f"bad status {status!r}")
        out["status"] = status
    if step.get("delay") is not None:
        delay = step["delay"]
        if not isinstance(delay, (int, float)) or isinstance(delay, bool) or delay < 0:
            raise ValueError(f"bad delay {delay!r}")
        out["delay"] = float(delay)
    if step.get("headers"):
        headers = step["headers"]
        if not isinstance(headers, Mapping):
            raise ValueError("a step's headers are a mapping")
        out["headers"] = {str(name): str(value) for name, value in headers.items()}
    return out


def _steps_list(steps: Any) -> list[Any]:
    if isinstance(steps, (str, Mapping)):
        return [steps]
    return list(steps)


def route_key(query: str) -> str:
    """How routes match queries: whitespace collapsed, case folded."""
    return " ".join(query.split()).casefold()


class _Engine:
    """The state of one engine's server: its pages, steps, routes and log."""

    def __init__(
        self, name: str, pages: EnginePages, extensions: tuple[Extension, ...] = (), world: NewsWorld | None = None
    ) -> None:
        self.name = name
        self.pages = pages
        self.extensions = extensions
        self.world = world
        self.asset_prefixes = ASSET_PREFIXES + tuple(p for e in extensions for p in e.asset_prefixes)
        self.lock = threading.Lock()
        self.queue: deque[dict[str, Any]] = deque()
        self.routes: dict[str, list[Any]] = {}  # key -> [steps, next index]
        self.log: list[dict[str, Any]] = []
        self.consent_mode = "off"
        self.consent_language = "en"
        self.base_url = ""
        self.server: ThreadingHTTPServer | None = None
        self.thread: threading.Thread | None = None

    # -- scripting ------------------------------------------------------------------------------------

    def script(self, steps: Any) -> int:
        checked = [normalize_step(step, self.pages) for step in _steps_list(steps)]
        with self.lock:
            self.queue.extend(checked)
            return len(self.queue)

    def route(self, query: str, steps: Any) -> None:
        checked = [normalize_step(step, self.pages) for step in _steps_list(steps)]
        with self.lock:
            if checked:
                self.routes[route_key(query)] = [checked, 0]
            else:
                self.routes.pop(route_key(query), None)

    def reset(self) -> None:
        with self.lock:
            self.queue.clear()
            self.routes.clear()
            self.log.clear()
            self.consent_mode, self.consent_language = "off", "en"
        if self.world is not None:
            self.world.set_stale(self.name, False)

    def set_consent(self, mode: Any, language: Any = "en") -> dict[str, str]:
        if mode not in CONSENT_MODES:
            raise ValueError(f"unknown consent mode {mode!r}; modes: {', '.join(CONSENT_MODES)}")
        if language not in self.pages.consent_languages:
            raise ValueError(
                f"unknown consent language {language!r} for {self.name}; languages: "
                f"{', '.join(self.pages.consent_languages)}"
            )
        with self.lock:
            self.consent_mode, self.consent_language = mode, language
        return self.consent_state()

    def consent_state(self) -> dict[str, str]:
        with self.lock:
            return {"mode": self.consent_mode, "language": self.consent_language}

    def clear_log(self) -> None:
        with self.lock:
            self.log.clear()

    def requests(self) -> list[dict[str, Any]]:
        with self.lock:
            return [dict(entry, query=dict(entry["query"])) for entry in self.log]

    def next_step(self, topic: str) -> dict[str, Any]:
        with self.lock:
            routed = self.routes.get(route_key(topic))
            if routed is not None:
                steps, index = routed
                routed[1] = index + 1
                return steps[min(index, len(steps) - 1)]
            if self.queue:
                return self.queue.popleft()
        return {"page": "results"}

    # -- serving --------------------------------------------------------------------------------------

    def dispatch(self, ctx: RequestContext) -> Reply:
        entry: dict[str, Any] = {
            "path": ctx.path,
            "query": dict(ctx.query),
            "time": ctx.now,
            "method": ctx.method,
            "kind": "other",
            "step": None,
            "status": None,
            "user_agent": ctx.headers.get("user-agent", ""),
            "accept_language": ctx.headers.get("accept-language", ""),
            "host": ctx.host,
            "cookies": sorted(ctx.cookies()),
        }
        with self.lock:
            ctx.consent_mode, ctx.consent_language = self.consent_mode, self.consent_language
        try:
            if ctx.path.startswith(self.asset_prefixes):
                entry["kind"] = "asset"
                reply = self.serve_asset(ctx)
                entry["time"] = ctx.now  # when it was answered, if an extension waited
            elif self.pages.is_results(ctx):
                entry["kind"] = "results"
                entry["consent_cookie"] = consented = self.pages.has_consent(ctx)
                if ctx.consent_mode != "off" and not consented:
                    # the wall instead of the step: the step (or route) waits for the request after the consent
                    redirect = ctx.consent_mode == "redirect"
                    reply = self.pages.consent_redirect(ctx) if redirect else self.pages.consent_wall(ctx)
                else:
                    reply = self.serve_step(self.next_step(self.pages.topic(ctx)), ctx)
                    for extension in self.extensions:
                        reply = extension.results(reply, ctx)
            elif ctx.path == CONSENT_SET_PATH and self.pages.consent_cookies:
                reply = self.set_consent_cookie(ctx)
            else:
                reply = self.pages.other(ctx) or not_found(ctx.path)
                entry["kind"] = reply.kind or "other"
        except Exception as exc:  # a bug in a page: say so rather than hang the client
            reply = Reply(500, f"<h1>fake engine error</h1><pre>{type(exc).__name__}: {exc}</pre>", served="error")
        reply.body = reply.payload()  # encoded once: counted here, sent as is
        entry["step"] = reply.served
        entry["status"] = reply.status
        entry["bytes"] = 0 if ctx.method == "HEAD" else len(reply.body)
        for name, value in reply.log.items():
            entry.setdefault(name, value)
        with self.lock:
            self.log.append(entry)
        return reply

    def set_consent_cookie(self, ctx: RequestContext) -> Reply:
        """``/consent/set?choice=…&continue=…``: the consent cookie for the host asked (the results host, after a
        save on the consent host), then a redirect to ``continue`` (never off this machine)."""
        from fake_engines.consent_pages import cookie_reply, parse_choice, safe_continue

        choice = parse_choice(ctx.query.get("choice"))
        return cookie_reply(
            self.pages, ctx, choice, safe_continue(ctx.query.get("continue", ""), ctx), served="consent_set"
        )

    def serve_asset(self, ctx: RequestContext) -> Reply:
        for extension in self.extensions:
            reply = extension.asset(ctx)
            if reply is not None:
                return reply
        return asset(ctx.path) if ctx.path.startswith(ASSET_PREFIXES) else not_found(ctx.path)

    def serve_step(self, step: dict[str, Any], ctx: RequestContext) -> Reply:
        if step.get("delay"):
            time.sleep(step["delay"])
            ctx.now = time.time()
        if "body" in step:
            reply = Reply(200, step["body"], served=step.get("page", "body"))
        else:
            reply = self.pages.render(step["page"], ctx)
        if "status" in step:
            reply.status = step["status"]
        reply.headers.extend(step.get("headers", {}).items())
        return reply


def not_found(path: str) -> Reply:
    return Reply(
        404,
        f"<!DOCTYPE html><title>404 Not Found</title><p>The URL {_esc(path)} was not found.</p>",
        served="not_found",
    )


def _esc(text: str) -> str:
    return html.escape(text, quote=True)


# -- shared assets --------------------------------------------------------------------------------------


@lru_cache(maxsize=256)
def png_bytes(name: str, size: int = 16) -> bytes:
    """A small valid PNG, a solid colour chosen from ``name``."""
    seed = zlib.crc32(name.encode("utf-8"))
    rgb = bytes(((seed >> 16) & 0xFF, (seed >> 8) & 0xFF, seed & 0xFF))
    raw = b"".join(b"\x00" + rgb * size for _ in range(size))

    def chunk(tag: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + tag + data + struct.pack(">I", zlib.crc32(tag + data))

    header = struct.pack(">IIBBBBB", size, size, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b"")


@lru_cache(maxsize=16)
def font_bytes(name: str) -> bytes:
    """Some bytes standing in for a web font (browsers reject them and fall back, which is fine)."""
    filler = b"".join(struct.pack(">I", zlib.crc32(f"{name}/{i}".encode())) for i in range(512))
    return b"wOF2" + filler


def asset(path: str) -> Reply:
    cache = [("Cache-Control", "public, max-age=86400")]
    if path.startswith("/fonts/"):
        return Reply(200, font_bytes(path), "font/woff2", cache, served="font", kind="asset")
    if path == "/favicon.ico":
        return Reply(200, png_bytes(path), "image/x-icon", cache, served="image", kind="asset")
    return Reply(
        200, png_bytes(path, 32 if "logo" not in path else 24), "image/png", cache, served="image", kind="asset"
    )


# -- HTTP -----------------------------------------------------------------------------------------------


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "gws"
    sys_version = ""
    timeout = 60
    server: _Server

    def version_string(self) -> str:
        return self.server_version

    def do_GET(self) -> None:
        self._handle("GET")

    def do_HEAD(self) -> None:
        self._handle("HEAD")

    def do_POST(self) -> None:
        self._handle("POST")

    def log_message(self, format: str, *args: Any) -> None:
        if self.server.verbose:
            super().log_message(format, *args)

    def _handle(self, method: str) -> None:
        now = time.time()
        engine = self.server.engine
        split = urlsplit(self.path)
        path = split.path or "/"
        target = path + (f"?{split.query}" if split.query else "")
        query_lists = parse_qs(split.query, keep_blank_values=True)
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length > 0 else b""
        if path.startswith(CONTROL_PREFIX):
            self._send(self._control(engine, method, path[len(CONTROL_PREFIX) :], body), method)
            return
        ctx = RequestContext(
            engine=engine.name,
            method=method,
            path=path,
            query={name: values[0] for name, values in query_lists.items()},
            query_lists=query_lists,
            raw_target=target,
            base_url=engine.base_url,
            headers={name.lower(): value for name, value in self.headers.items()},
            now=now,
            body=body,
            articles=partial(engine.world.articles, engine.name) if engine.world is not None else None,
        )
        self._send(engine.dispatch(ctx), method)

    def _control(self, engine: _Engine, method: str, action: str, body: bytes) -> Reply:
        try:
            data = json.loads(body or b"null")
            if method == "POST" and action == "script":
                result: Any = {"queued": engine.script(data or [])}
            elif method == "POST" and action == "route":
                engine.route(str(data["query"]), data.get("steps", data.get("step", [])))
                result = {"ok": True}
            elif method == "POST" and action == "reset":
                engine.reset()
                result = {"ok": True}
            elif method == "POST" and action == "clear_log":
                engine.clear_log()
                result = {"ok": True}
            elif method in ("GET", "HEAD") and action == "requests":
                result = engine.requests()
            elif method in ("GET", "HEAD") and action == "health":
                result = {"ok": True, "engine": engine.name}
            elif method == "POST" and action == "consent":
                if not isinstance(data, Mapping):
                    raise ValueError('consent: a JSON object {"mode": …, "language": …}')
                result = engine.set_consent(data.get("mode"), data.get("language", "en"))
            elif method in ("GET", "HEAD") and action == "consent":
                result = engine.consent_state()
            elif action == "world" and method in ("GET", "HEAD", "POST"):
                if engine.world is None:
                    return Reply(
                        404,
                        json.dumps(
                            {
                                "error": "no news world here: these fakes serve the static "
                                "catalogue (FakeEngines(..., world=NewsWorld()) or "
                                "serve --world)"
                            }
                        ),
                        "application/json",
                    )
                result = engine.world.apply(data, self.server.served) if method == "POST" else engine.world.state()
            else:
                return Reply(404, json.dumps({"error": f"no control action {method} {action}"}), "application/json")
        except (ValueError, KeyError, TypeError) as exc:
            return Reply(400, json.dumps({"error": str(exc)}), "application/json")
        return Reply(200, json.dumps(result), "application/json")

    def _send(self, reply: Reply, method: str) -> None:
        payload = reply.payload()
        try:
            self.send_response(reply.status)
            self.send_header("Content-Type", reply.content_type)
            self.send_header("Content-Length", str(len(payload)))
            names = {name.lower() for name, _ in reply.headers}
            if "cache-control" not in names:
                self.send_header("Cache-Control", "private, max-age=0")
            for name, value in reply.headers:
                self.send_header(name, value)
            self.end_headers()
            if method != "HEAD":
                self.wfile.write(payload)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, address: tuple[str, int], engine: _Engine, verbose: bool, served: tuple[str, ...] = ()) -> None:
        self.engine = engine
        self.verbose = verbose
        self.served = served or (engine.name,)  # the engines of its FakeEngines: those a world may make stale
        super().__init__(address, _Handler)

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A browser closing a kept-alive connection is no error of the fake engine.
        if isinstance(sys.exc_info()[1], (ConnectionResetError, BrokenPipeError)):
            return
        super().handle_error(request, client_address)


# -- the public object ----------------------------------------------------------------------------------


class FakeEngines:
    """Fake engines on loopback, one port each. A context manager; ``start()``/``stop()`` work too.

    ``ports``: None (free ports), an int ``N`` (google=N, bing=N+1, yahoo=N+2, brave=N+3, whichever are
    started) or a mapping engine -> port (engines missing from it get free ports). ``extensions``: the
    :class:`Extension` instances (or one) every engine's server runs, in order (none: the pages as written).
    ``world``: a :class:`~fake_engines.world.NewsWorld` whose articles every engine's results pages show
    (None, the default: the static catalogue); it is :attr:`world`.
    """

    def __init__(
        self,
        engines: Iterable[str] = ("google",),
        host: str = "127.0.0.1",
        ports: int | Mapping[str, int] | None = None,
        verbose: bool = False,
        extensions: Extension | Iterable[Extension] = (),
        world: NewsWorld | None = None,
    ) -> None:
        names = [engines] if isinstance(engines, str) else list(engines)
        if not names:
            raise ValueError("no engines to fake")
        self.host = host
        self.verbose = verbose
        added = (extensions,) if isinstance(extensions, Extension) else tuple(extensions)
        for extension in added:
            if not isinstance(extension, Extension):
                raise TypeError(f"extensions: Extension instances, not {extension!r}")
        self.extensions = added
        if world is not None and not isinstance(world, NewsWorld):
            raise TypeError(f"world: a NewsWorld or None, not {world!r}")
        self.world = world  # the news world the engines' results pages show, or None (the static catalogue)
        self._engines = {name: _Engine(name, load_pages(name), added, world) for name in dict.fromkeys(names)}
        if ports is None:
            self._ports = dict.fromkeys(self._engines, 0)
        elif isinstance(ports, int):
            self._ports = {name: ports + ENGINES.index(name) for name in self._engines}
        else:
            self._ports = {name: int(ports.get(name, 0)) for name in self._engines}
        self._started = False

    # -- lifecycle ------------------------------------------------------------------------------------

    def start(self) -> FakeEngines:
        if self._started:
            return self
        url_host = "127.0.0.1" if self.host in ("", "0.0.0.0") else self.host
        created: list[_Server] = []
        try:
            for name, engine in self._engines.items():
                server = _Server((self.host, self._ports[name]), engine, self.verbose, self.engines)
                created.append(server)
                engine.server = server
                engine.base_url = f"http://{url_host}:{server.server_address[1]}"
        except BaseException:
            for server in created:
                server.server_close()
            raise
        for name, engine in self._engines.items():
            assert engine.server is not None
            engine.thread = threading.Thread(
                target=engine.server.serve_forever,
                kwargs={"poll_interval": 0.1},
                name=f"fake-{name}",
                daemon=True,
            )
            engine.thread.start()
        self._started = True
        return self

    def stop(self) -> None:
        if not self._started:
            return
        for engine in self._engines.values():
            if engine.server is not None:
                engine.server.shutdown()
                engine.server.server_close()
            if engine.thread is not None:
                engine.thread.join(timeout=5)
            engine.server = engine.thread = None
        self._started = False

    def __enter__(self) -> FakeEngines:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    # -- addresses ------------------------------------------------------------------------------------

    @property
    def engines(self) -> tuple[str, ...]:
        return tuple(self._engines)

    def _engine(self, engine: str) -> _Engine:
        try:
            return self._engines[engine]
        except KeyError:
            raise KeyError(f"engine {engine!r} is not running here; running: {', '.join(self._engines)}") from None

    def base_url(self, engine: str) -> str:
        """``http://127.0.0.1:PORT`` of ``engine`` (no path, no trailing slash)."""
        base = self._engine(engine).base_url
        if not base:
            raise RuntimeError("the fake engines are not started")
        return base

    def port(self, engine: str) -> int:
        return int(self.base_url(engine).rsplit(":", 1)[1])

    def consent_base_url(self, engine: str) -> str:
        """``http://localhost:PORT`` of ``engine``: its consent host (the same server under another name)."""
        return consent_base_url(self.base_url(engine))

    def config_overrides(self) -> dict[str, Any]:
        """``{"engines": {name: {"base_url": ...}}}``, to merge over a topicstreams config."""
        return {"engines": {name: {"base_url": self.base_url(name)} for name in self._engines}}

    def config_snippet(self) -> str:
        """:meth:`config_overrides` as YAML text."""
        return yaml.safe_dump(self.config_overrides(), sort_keys=False, default_flow_style=False)

    # -- scripting ------------------------------------------------------------------------------------

    def script(self, engine: str, steps: Any) -> None:
        """Queue ``steps`` (a list, or one step) for ``engine``'s next results requests, one per request."""
        self._engine(engine).script(steps)

    def route(self, engine: str, query: str, step_or_steps: Any) -> None:
        """Serve ``step_or_steps`` to every results request for ``query`` (case and spacing ignored).

        A list is served in order and its last step then repeats; an empty list removes the route.
        """
        self._engine(engine).route(query, step_or_steps)

    def consent(self, engine: str, mode: str, language: str = "en") -> None:
        """Put ``engine``'s consent wall in front of its results (``mode`` wall, redirect or broken), or not (off).

        ``language``: "en" or the engine's second one (google "de", yahoo "it", bing "fr", brave "es"); anything
        else is a ValueError, as is an unknown mode. See :mod:`fake_engines.consent_pages`.
        """
        self._engine(engine).set_consent(mode, language)

    def consent_state(self, engine: str) -> dict[str, str]:
        """``{"mode": …, "language": …}`` of ``engine``."""
        return self._engine(engine).consent_state()

    def consent_languages(self, engine: str) -> tuple[str, ...]:
        """The languages of ``engine``'s consent walls: "en" and its second one."""
        return self._engine(engine).pages.consent_languages

    def requests(self, engine: str) -> list[dict[str, Any]]:
        """Every request ``engine`` received (control requests excepted), oldest first."""
        return self._engine(engine).requests()

    def results_requests(self, engine: str) -> list[dict[str, Any]]:
        """The results-page requests of :meth:`requests`."""
        return [entry for entry in self.requests(engine) if entry["kind"] == "results"]

    def clear_log(self, engine: str | None = None) -> None:
        for name in [engine] if engine else self._engines:
            self._engine(name).clear_log()

    def reset(self, engine: str | None = None) -> None:
        """Forget scripted steps, routes and logs, and turn consent walls off (of one engine, or all); with a news
        world, the engine is no longer stale (the world's clock goes on)."""
        for name in [engine] if engine else self._engines:
            self._engine(name).reset()
