"""One engine's server state and its request routing: steps, routes, addresses, spells, consent mode, the request log.

A :class:`ScriptedEngine` answers every request of one engine (control requests excepted, see
:mod:`fake_engines.server`): shared assets and extensions' assets, results requests (a consent wall in front of
them, or the step of their client address's script, of their topic's route, of a spell in force or of the FIFO),
the consent hop ``/consent/set``, and the engine's other paths; every request goes to its log.

A *spell* is a span of time rather than a count of requests: from ``start`` to ``end`` (the monotonic clock), every
results request without an address script or a route takes the spell's next step, in turn, round and round; before
and after it the FIFO and the normal pages answer as ever. The demo plays one: an engine turning hostile partway
through, then recovering, however many requests the crawl happens to send meanwhile.

An *address* script answers the results requests of one client address (a route's proxy's source address, e.g.
127.0.0.3) with its steps, in order, the last one repeating, before routes, spells and the FIFO (a site that has
flagged an IP answers it so whatever it asks; a consent wall still comes first): ``address("127.0.0.3", "sorry")``
challenges that address until reset; an empty list removes it. Its client watch (sessions, personas) is
:mod:`fake_engines.client_watch`'s.
"""

from __future__ import annotations

import importlib
import threading
import time
from collections import deque
from collections.abc import Mapping
from http.server import ThreadingHTTPServer
from typing import Any

from fake_engines.client_watch import ClientWatch
from fake_engines.consent_pages import cookie_reply, parse_choice, safe_continue
from fake_engines.engine_pages import (
    ASSET_PREFIXES,
    CONSENT_MODES,
    CONSENT_SET_PATH,
    EnginePages,
    Extension,
    Reply,
    RequestContext,
)
from fake_engines.markup import esc
from fake_engines.shared_assets import asset
from fake_engines.world import NewsWorld
from topicstreams import ENGINES

STEP_KEYS = frozenset({"page", "status", "delay", "headers", "body"})


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


class ScriptedEngine:
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
        self.addresses: dict[str, list[Any]] = {}  # client address -> [steps, next index]
        self.watch = ClientWatch(name)
        self.spell: tuple[list[dict[str, Any]], float, float] | None = None  # steps, start, end (monotonic)
        self.spell_served = 0
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

    def address(self, address: str, steps: Any) -> None:
        """Serve ``steps`` to every results request from client ``address`` (first of all; the last step repeats);
        an empty list removes the address's script."""
        checked = [normalize_step(step, self.pages) for step in _steps_list(steps)]
        if not address.strip():
            raise ValueError("address: a client IP address such as 127.0.0.3")
        with self.lock:
            if checked:
                self.addresses[address.strip()] = [checked, 0]
            else:
                self.addresses.pop(address.strip(), None)

    def cast_spell(self, steps: Any, after: float, lasting: float) -> None:
        """From ``after`` seconds from now, for ``lasting`` seconds, results requests take ``steps`` in turn."""
        checked = [normalize_step(step, self.pages) for step in _steps_list(steps)]
        if not checked:
            raise ValueError("a spell has at least one step")
        if after < 0 or lasting <= 0:
            raise ValueError(f"a spell starts at >= 0 s from now and lasts > 0 s, not {after!r} and {lasting!r}")
        start = time.monotonic() + after
        with self.lock:
            self.spell, self.spell_served = (checked, start, start + lasting), 0

    def reset(self) -> None:
        with self.lock:
            self.queue.clear()
            self.routes.clear()
            self.addresses.clear()
            self.spell = None
            self.log.clear()
            self.consent_mode, self.consent_language = "off", "en"
        self.watch.reset()
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

    def next_step(self, topic: str, address: str = "") -> dict[str, Any]:
        with self.lock:
            routed = self.addresses.get(address)
            if routed is None:
                routed = self.routes.get(route_key(topic))
            if routed is not None:
                steps, index = routed
                routed[1] = index + 1
                return steps[min(index, len(steps) - 1)]
            if self.spell is not None:
                steps, start, end = self.spell
                if start <= time.monotonic() < end:
                    self.spell_served += 1
                    return steps[(self.spell_served - 1) % len(steps)]
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
            "address": ctx.address,
            "session": self.watch.session_of(ctx),
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
                    reply = self.serve_step(self.next_step(self.pages.topic(ctx), ctx.address), ctx)
                    for extension in self.extensions:
                        reply = extension.results(reply, ctx)
                entry["session_set"] = None
                self.watch.results(reply, ctx, entry)
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
        f"<!DOCTYPE html><title>404 Not Found</title><p>The URL {esc(path)} was not found.</p>",
        served="not_found",
    )
