"""Fake news engines on loopback: one ``ThreadingHTTPServer`` per engine, scriptable from tests.

Each engine's pages live in their own package (``fake_engines.<engine>``), which exposes ``PAGES``,
an :class:`EnginePages`. The server does the rest for every engine alike: the step queue and per-topic
routes, delays, the request log, the shared assets (``/thumbs/…`` PNGs, ``/fonts/…``) and the
``/__fakes__/…`` control endpoints.

This module is the HTTP side and the public object (:class:`FakeEngines`). What the pages and the server hand each
other (:class:`RequestContext`, :class:`Reply`, :class:`EnginePages`, :class:`Extension`) is in
:mod:`fake_engines.engine_pages` (and importable from here); one engine's steps, routes, log and request routing in
:mod:`fake_engines.scripted_engine`; the thumbnails and fonts in :mod:`fake_engines.shared_assets`.

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

Results requests take their step from their client address's script if there is one (``fakes.address("google",
"127.0.0.3", "sorry")``, or ``POST /__fakes__/address`` with ``{"address": …, "steps": […]}``: a route proxy's source
address challenged until reset), otherwise from the topic's route if there is one (a route's or an address's steps
are served in order, the last one then repeats for good), otherwise from a spell in force (``fakes.spell("bing",
["captcha", "results"], after=12, lasting=10)``: for a span of time rather than a number of requests, its steps in
turn), otherwise from the engine's FIFO; with none of them the page is a normal results page.

Every log entry has ``bytes``: the body bytes the server sent (0 for HEAD), and ``host``: the host name the
client asked for (its ``Host`` header: "127.0.0.1", or "localhost" on the consent host), and ``cookies``: the sorted
names of the cookies the request carried (every fake listens on 127.0.0.1, and cookies ignore ports: a cookie one
engine's fake sets would reach the others' if their pages shared a browser context), and ``address``: the client's IP
address (behind a proxy, the proxy's source address), and ``session``: the engine's session cookie it carried (None
without one). Results entries also have ``consent_cookie``: whether the request carried the engine's consent cookie,
and ``session_set``: the session cookie issued with the reply (None unless watching).

Client watch: ``fakes.watch_clients("google")`` (``POST /__fakes__/clients`` with ``{"watch": true}``) gives each
client a session cookie and the results pages a script that reports the persona it sees; ``fakes.clients("google")``
(``GET /__fakes__/clients``) tells both per client address. See :mod:`fake_engines.client_watch`.

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
(``benchmarks/page_weight.py``) is one. Without extensions (the default) pages are as the engine packages write them.
"""

from __future__ import annotations

import json
import sys
import threading
import time
from collections.abc import Iterable, Mapping
from functools import partial
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

import yaml

from fake_engines.engine_pages import (
    ASSET_PREFIXES,
    CONSENT_HOST,
    CONSENT_MODES,
    CONSENT_SET_PATH,
    EnginePages,
    Extension,
    Reply,
    RequestContext,
    consent_base_url,
)
from fake_engines.scripted_engine import ScriptedEngine, load_pages
from fake_engines.world import NewsWorld
from topicstreams import ENGINES

__all__ = [
    "ASSET_PREFIXES",
    "CONSENT_HOST",
    "CONSENT_MODES",
    "CONSENT_SET_PATH",
    "CONTROL_PREFIX",
    "EnginePages",
    "Extension",
    "FakeEngines",
    "Reply",
    "RequestContext",
]

CONTROL_PREFIX = "/__fakes__/"

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
            address=str(self.client_address[0]),
            articles=partial(engine.world.articles, engine.name) if engine.world is not None else None,
        )
        if path.startswith(CONTROL_PREFIX):
            self._send(self._control(engine, method, path[len(CONTROL_PREFIX) :], body, ctx), method)
            return
        self._send(engine.dispatch(ctx), method)

    def _control(self, engine: ScriptedEngine, method: str, action: str, body: bytes, ctx: RequestContext) -> Reply:
        try:
            data = json.loads(body or b"null")
            if method == "POST" and action == "script":
                result: Any = {"queued": engine.script(data or [])}
            elif method == "POST" and action == "route":
                engine.route(str(data["query"]), data.get("steps", data.get("step", [])))
                result = {"ok": True}
            elif method == "POST" and action == "address":
                engine.address(str(data["address"]), data.get("steps", data.get("step", [])))
                result = {"ok": True}
            elif method == "POST" and action == "clients":
                result = engine.watch.watch(data.get("watch", True) if isinstance(data, Mapping) else data)
            elif method in ("GET", "HEAD") and action == "clients":
                result = engine.watch.state()
            elif method == "POST" and action == "persona":
                result = engine.watch.report(data, ctx)
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

    def __init__(
        self, address: tuple[str, int], engine: ScriptedEngine, verbose: bool, served: tuple[str, ...] = ()
    ) -> None:
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
        self._engines = {name: ScriptedEngine(name, load_pages(name), added, world) for name in dict.fromkeys(names)}
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

    def _engine(self, engine: str) -> ScriptedEngine:
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

    def spell(self, engine: str, steps: Any, after: float, lasting: float) -> None:
        """Between ``after`` and ``after + lasting`` seconds from now, serve ``steps`` (a list, or one step) in turn,
        round and round, to ``engine``'s results requests that have no route; a later spell replaces this one."""
        self._engine(engine).cast_spell(steps, after, lasting)

    def route(self, engine: str, query: str, step_or_steps: Any) -> None:
        """Serve ``step_or_steps`` to every results request for ``query`` (case and spacing ignored).

        A list is served in order and its last step then repeats; an empty list removes the route.
        """
        self._engine(engine).route(query, step_or_steps)

    def address(self, engine: str, address: str, step_or_steps: Any) -> None:
        """Serve ``step_or_steps`` to every results request of ``engine`` from client ``address`` (e.g. a route
        proxy's source address "127.0.0.3"), before its routes, spells and FIFO, until :meth:`reset`.

        A list is served in order and its last step then repeats; an empty list removes the address's script.
        """
        self._engine(engine).address(address, step_or_steps)

    def watch_clients(self, engine: str, on: bool = True) -> None:
        """Give ``engine``'s clients a session cookie each and its results pages the persona probe (or stop);
        see :mod:`fake_engines.client_watch`. :meth:`reset` turns it off."""
        self._engine(engine).watch.watch(on)

    def clients(self, engine: str) -> dict[str, dict[str, list[Any]]]:
        """Per client address: ``{"sessions": [...], "personas": [...]}`` of a watched ``engine``."""
        return self._engine(engine).watch.state()

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
        """Forget scripted steps, spells, routes, address scripts, client watches and logs, and turn consent walls off
        (of one engine, or all); with a news world, the engine is no longer stale (the world's clock goes on)."""
        for name in [engine] if engine else self._engines:
            self._engine(name).reset()
