"""Fake news engines on loopback: one ``ThreadingHTTPServer`` per engine, scriptable from tests.

Each engine's pages live in their own module (``topicstreams.fakes.<engine>``), which exposes ``PAGES``,
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

Every log entry has ``bytes``: the body bytes the server sent (0 for HEAD).

Page weight (for benchmarks): ``FakeEngines(engines, weight=PageWeight())`` serves every engine's results
pages with the weight of a real one, added by the server alike for every engine (see :class:`PageWeight`):
a render-blocking stylesheet and script in ``<head>``, web fonts the text uses, a strip of thumbnails, all
same-host and each asset answered after ``asset_delay``. Without a weight (the default) pages are as the
engine modules write them.
"""

from __future__ import annotations

import hashlib
import html
import importlib
import json
import math
import random
import re
import struct
import sys
import threading
import time
import zlib
from collections import deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

import yaml

from topicstreams import ENGINES

STEP_KEYS = frozenset({"page", "status", "delay", "headers", "body"})
CONTROL_PREFIX = "/__fakes__/"
ASSET_PREFIXES = ("/thumbs/", "/fonts/", "/favicon.ico")
WEIGHT_PREFIXES = (*ASSET_PREFIXES, "/static/")
"""The asset paths of a weighted server (``/static/`` is only served when there is a weight)."""


@dataclass(frozen=True)
class PageWeight:
    """What a weighted fake server adds to every full HTML results page (status 200, ``text/html``).

    Before ``</head>``: ``<link rel="stylesheet" href="/static/site-<v>.css">`` (about ``stylesheet_bytes``,
    declaring ``fonts`` ``@font-face`` web fonts under ``/fonts/`` that the body text and the headings use)
    and a synchronous ``<script src="/static/site-<v>.js">`` (about ``script_bytes`` of code that only
    computes a checksum into ``window.__tsWeight``). Before ``</body>``: a strip of ``thumbnails``
    ``<img src="/thumbs/w-<token>.png">`` (valid noisy PNGs of ``thumbnail_bytes``, different per page).
    A fragment (an HTML reply with no ``</head>``) gets only the thumbnails (before its last ``</body>``, else
    at its end), as a page would show the thumbnails of results it loads later. Every asset request
    (``/static/``, ``/fonts/``, ``/thumbs/``, the favicon: the engine's own assets too) is answered after
    ``asset_delay`` seconds. Everything is same-host: the engine's own loopback port.

    The fonts are valid TrueType fonts (``font/ttf``), so that Chromium decodes and uses them as it would a
    real web font (a real WOFF2 would need Brotli).
    """

    thumbnails: int = 20
    fonts: int = 2
    asset_delay: float = 0.05
    stylesheet_bytes: int = 30_000
    script_bytes: int = 60_000
    thumbnail_bytes: tuple[int, int] = (5_000, 10_000)
    """The range of a thumbnail's size; each one's size within it comes from its token."""
    font_bytes: int = 20_000

    def __post_init__(self) -> None:
        for name in ("thumbnails", "fonts", "stylesheet_bytes", "script_bytes", "font_bytes"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise ValueError(f"PageWeight.{name}: expected an int >= 0, got {value!r}")
        if self.fonts > len(_FONT_ROLES):
            raise ValueError(f"PageWeight.fonts: at most {len(_FONT_ROLES)}, got {self.fonts}")
        delay = self.asset_delay
        if not isinstance(delay, (int, float)) or isinstance(delay, bool) or delay < 0:
            raise ValueError(f"PageWeight.asset_delay: expected seconds >= 0, got {delay!r}")
        low, high = self.thumbnail_bytes
        if not 200 <= low <= high:
            raise ValueError(f"PageWeight.thumbnail_bytes: expected (low, high) with 200 <= low <= high, got "
                             f"{self.thumbnail_bytes!r}")

    @property
    def version(self) -> str:
        """The ``<v>`` of the asset names: changes with the weight, like a build hash."""
        return hashlib.sha256(repr(self).encode()).hexdigest()[:8]

    @property
    def stylesheet_path(self) -> str:
        return f"/static/site-{self.version}.css"

    @property
    def script_path(self) -> str:
        return f"/static/site-{self.version}.js"

    def font_paths(self) -> list[str]:
        return [f"/fonts/w-{role}-{self.version}.ttf" for role, _ in _FONT_ROLES[: self.fonts]]


_FONT_ROLES = (
    ("text", "body, input, button"),
    ("display", "[role=heading], h1, h2, h3, h4, b, strong"),
    ("mono", "code, kbd, pre, time"),
    ("caption", "small, cite, figcaption"),
)
"""Weighted fonts, in the order they are added: the family role and the selectors that use it."""


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

    @property
    def url(self) -> str:
        """The absolute URL of this request on the fake host."""
        return self.base_url + self.raw_target


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

    def payload(self) -> bytes:
        return self.body.encode("utf-8") if isinstance(self.body, str) else self.body


class EnginePages:
    """The pages of one engine. A module ``topicstreams.fakes.<engine>`` exposes an instance as ``PAGES``."""

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


def load_pages(engine: str) -> EnginePages:
    """The :class:`EnginePages` of ``engine``, from ``topicstreams.fakes.<engine>``."""
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

    def __init__(self, name: str, pages: EnginePages, weight: PageWeight | None = None) -> None:
        self.name = name
        self.pages = pages
        self.weight = weight
        self.lock = threading.Lock()
        self.queue: deque[dict[str, Any]] = deque()
        self.routes: dict[str, list[Any]] = {}  # key -> [steps, next index]
        self.log: list[dict[str, Any]] = []
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
        }
        weight = self.weight
        try:
            if weight is not None and ctx.path.startswith(WEIGHT_PREFIXES):
                entry["kind"] = "asset"
                if weight.asset_delay:
                    time.sleep(weight.asset_delay)
                    ctx.now = entry["time"] = time.time()
                reply = weighted_asset(weight, ctx.path) or asset(ctx.path)
            elif ctx.path.startswith(ASSET_PREFIXES):
                entry["kind"] = "asset"
                reply = asset(ctx.path)
            elif self.pages.is_results(ctx):
                entry["kind"] = "results"
                reply = self.serve_step(self.next_step(self.pages.topic(ctx)), ctx)
                if weight is not None:
                    reply = add_weight(weight, reply, f"{self.name} {ctx.raw_target}")
            else:
                reply = self.pages.other(ctx) or not_found(ctx.path)
                entry["kind"] = reply.kind or "other"
        except Exception as exc:  # a bug in a page: say so rather than hang the client
            reply = Reply(500, f"<h1>fake engine error</h1><pre>{type(exc).__name__}: {exc}</pre>", served="error")
        reply.body = reply.payload()  # encoded once: counted here, sent as is
        entry["step"] = reply.served
        entry["status"] = reply.status
        entry["bytes"] = 0 if ctx.method == "HEAD" else len(reply.body)
        with self.lock:
            self.log.append(entry)
        return reply

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
    return Reply(404, f"<!DOCTYPE html><title>404 Not Found</title><p>The URL {_esc(path)} was not found.</p>",
                 served="not_found")


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
    return Reply(200, png_bytes(path, 32 if "logo" not in path else 24), "image/png", cache, served="image",
                 kind="asset")


# -- page weight ----------------------------------------------------------------------------------------

_HEAD_END = re.compile(rb"</head\s*>", re.IGNORECASE)
_BODY_END = re.compile(rb"</body\s*>", re.IGNORECASE)


def thumbnail_tokens(weight: PageWeight, seed: str) -> list[str]:
    """The tokens of the thumbnails of the page ``seed`` (engine and request target): stable per page."""
    return [hashlib.sha256(f"{seed}|{i}".encode()).hexdigest()[:20] for i in range(weight.thumbnails)]


def add_weight(weight: PageWeight, reply: Reply, seed: str) -> Reply:
    """``reply`` with the weight's stylesheet, script and thumbnails, when it is a 200 HTML page.

    Anything else (a redirect, an error, JSON, a page that is not UTF-8) is left as it is.
    """
    if reply.status != 200 or not reply.content_type.lower().startswith("text/html"):
        return reply
    body = reply.payload()
    try:
        body.decode("utf-8")
    except UnicodeDecodeError:
        return reply
    strip = "".join(
        f'<img src="/thumbs/w-{token}.png" alt="" width="{92 + 20 * (i % 2)}" height="{92 + 20 * (i % 2)}">'
        for i, token in enumerate(thumbnail_tokens(weight, seed))
    )
    thumbs = f'\n<div class="tsw-strip" aria-hidden="true">{strip}</div>\n'.encode() if strip else b""
    head = _HEAD_END.search(body)
    if head is not None:
        tags = (f'<link rel="stylesheet" href="{weight.stylesheet_path}">\n'
                f'<script src="{weight.script_path}"></script>\n').encode()
        body = body[: head.start()] + tags + body[head.start():]
    ends = list(_BODY_END.finditer(body))
    at = ends[-1].start() if ends else len(body)
    reply.body = body[:at] + thumbs + body[at:]
    return reply


def weighted_asset(weight: PageWeight, path: str) -> Reply | None:
    """A weighted server's asset at ``path``; None for the engine's own assets (see :func:`asset`)."""
    cache = [("Cache-Control", "public, max-age=86400")]
    if path == weight.stylesheet_path:
        return Reply(200, stylesheet(weight), "text/css; charset=utf-8", cache, served="stylesheet", kind="asset")
    if path == weight.script_path:
        return Reply(200, script(weight), "text/javascript; charset=utf-8", cache, served="script", kind="asset")
    if path in weight.font_paths():
        return Reply(200, ttf_font(path, weight.font_bytes), "font/ttf", cache, served="font", kind="asset")
    match = re.fullmatch(r"/thumbs/w-([0-9a-f]{8,64})\.png", path)
    if match:
        low, high = weight.thumbnail_bytes
        size = low + int(match.group(1)[:8], 16) % (high - low + 1)
        return Reply(200, noisy_png(match.group(1), size), "image/png", cache, served="image", kind="asset")
    if path.startswith("/static/"):
        return Reply(404, "not found", "text/plain", served="not_found", kind="asset")
    return None


@lru_cache(maxsize=8)
def stylesheet(weight: PageWeight) -> bytes:
    """The site stylesheet: the fonts' ``@font-face`` rules, the rules that use them, the thumbnail strip,
    then generated rules up to ``stylesheet_bytes``."""
    families = [(f"TSW {role.title()}", path, selectors)
                for (role, selectors), path in zip(_FONT_ROLES, weight.font_paths())]
    parts = [
        f"@font-face{{font-family:'{family}';font-style:normal;font-weight:400;font-display:swap;"
        f"src:url({path}) format('truetype')}}\n"
        for family, path, _ in families
    ]
    parts += [f"{selectors}{{font-family:'{family}',arial,sans-serif}}\n" for family, _, selectors in families]
    parts.append(".tsw-strip{display:flex;flex-wrap:wrap;gap:8px;margin:24px 0 0 180px;max-width:652px}\n"
                 ".tsw-strip img{border-radius:8px;object-fit:cover;background:#f1f3f4}\n")
    rnd = random.Random(f"css {weight.version}")
    size = sum(len(part) for part in parts)
    i = 0
    while size < weight.stylesheet_bytes:
        n = rnd.getrandbits(32)
        rule = (f".tsw-{i:04x}{{margin:{n % 17}px {n % 11}px;padding:{n % 7}px {n % 5}px;"
                f"color:#{n % 0xFFFFFF:06x};line-height:{16 + n % 9}px;border-radius:{n % 13}px}}\n")
        if n % 4 == 0:
            rule += (f"@media (max-width:{600 + n % 700}px){{.tsw-{i:04x}>a{{display:block;"
                     f"font-size:{12 + n % 6}px}}}}\n")
        parts.append(rule)
        size += len(rule)
        i += 1
    return "".join(parts).encode("utf-8")


@lru_cache(maxsize=8)
def script(weight: PageWeight) -> bytes:
    """The site script: generated functions up to ``script_bytes``; running it only computes a checksum
    into ``window.__tsWeight`` (no DOM change, no request)."""
    rnd = random.Random(f"js {weight.version}")
    parts = ['(function(){"use strict";var M={},S=[];\n']
    size = len(parts[0])
    i = 0
    while size < weight.script_bytes:
        a, b, c = rnd.getrandbits(16), rnd.getrandbits(8) % 29 + 2, rnd.getrandbits(8) % 7 + 1
        words = ",".join(f'"{rnd.getrandbits(40):010x}"' for _ in range(3))
        part = (f"M.f{i}=function(x,y){{var h=(x*{a}+y)|0,t=[{words}];"
                f"for(var k=0;k<{c};k++){{h=(h^(h>>>{c}))*{b}+t[k%3].length|0}}"
                f"return h>>>0}};S.push(M.f{i});\n")
        parts.append(part)
        size += len(part)
        i += 1
    parts.append("var s=0;for(var j=0;j<S.length;j++){s=S[j](j,s)}"
                 "window.__tsWeight={checksum:s,functions:S.length};})();\n")
    return "".join(parts).encode("utf-8")


@lru_cache(maxsize=2048)
def noisy_png(token: str, size: int) -> bytes:
    """A valid RGB PNG of about ``size`` bytes: noise (which does not compress) in a gradient-free square."""
    side = max(4, int(math.sqrt(max(0, size - 120) / 3)))
    rnd = random.Random(f"png {token}")
    raw = b"".join(b"\x00" + rnd.randbytes(side * 3) for _ in range(side))
    header = struct.pack(">IIBBBBB", side, side, 8, 2, 0, 0, 0)
    idat = _chunk(b"IDAT", zlib.compress(raw, 1))
    return b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", header) + idat + _chunk(b"IEND", b"")


def _chunk(tag: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + tag + data + struct.pack(">I", zlib.crc32(tag + data))


@lru_cache(maxsize=16)
def ttf_font(name: str, size: int = 20_000) -> bytes:
    """A valid TrueType font of about ``size`` bytes with blobby outlines for printable ASCII.

    Made here (no font tools): the ten tables a browser's font sanitizer wants, long ``loca``, simple glyphs.
    """
    rnd = random.Random(f"font {name}")
    units, first, last = 1000, 0x20, 0x7E
    chars = last - first + 1
    # points per glyph so that the glyphs add up to about ``size`` (5 bytes a point; tables ~1 KB)
    points = max(8, (size - 1200) // (chars - 1) // 5 - 3)
    contours = max(1, points // 12)
    glyphs: list[bytes] = [b""]  # .notdef: empty
    metrics: list[tuple[int, int]] = [(500, 0)]
    boxes: list[tuple[int, int, int, int]] = []
    max_points = max_contours = 0
    for code in range(first, last + 1):
        advance = 420 + rnd.randrange(260)
        if code == 0x20:
            glyphs.append(b"")
            metrics.append((advance, 0))
            continue
        coords: list[tuple[int, int]] = []
        ends: list[int] = []
        per = [points // contours + (1 if k < points % contours else 0) for k in range(contours)]
        for k, count in enumerate(per):
            cx, cy = 60 + rnd.randrange(advance - 120), 100 + rnd.randrange(500)
            rx, ry = 40 + rnd.randrange(120), 60 + rnd.randrange(200)
            for p in range(count):
                angle = 2 * math.pi * p / count
                jitter = 0.8 + rnd.random() * 0.4
                coords.append((max(0, min(advance, int(cx + rx * jitter * math.cos(angle)))),
                               max(-200, min(800, int(cy + ry * jitter * math.sin(angle))))))
            ends.append(len(coords) - 1)
        xs, ys = [x for x, _ in coords], [y for _, y in coords]
        box = (min(xs), min(ys), max(xs), max(ys))
        boxes.append(box)
        max_points, max_contours = max(max_points, len(coords)), max(max_contours, len(ends))
        data = struct.pack(">hhhhh", len(ends), *box) + struct.pack(f">{len(ends)}H", *ends) + b"\x00\x00"
        data += b"\x01" * len(coords)  # on-curve, both coordinates as int16 deltas
        previous = (0, 0)
        dx, dy = [], []
        for x, y in coords:
            dx.append(x - previous[0])
            dy.append(y - previous[1])
            previous = (x, y)
        data += struct.pack(f">{len(dx)}h", *dx) + struct.pack(f">{len(dy)}h", *dy)
        glyphs.append(data + b"\x00" * (-len(data) % 4))
        metrics.append((advance, box[0]))
    count = len(glyphs)
    x_min, y_min = min(b[0] for b in boxes), min(b[1] for b in boxes)
    x_max, y_max = max(b[2] for b in boxes), max(b[3] for b in boxes)
    offsets = [0]
    for glyph in glyphs:
        offsets.append(offsets[-1] + len(glyph))
    family = "TSW " + name.rsplit("/", 1)[-1].split(".")[0]
    names = {1: family, 2: "Regular", 3: f"{family} Regular 1.0", 4: f"{family} Regular", 5: "Version 1.000",
             6: family.replace(" ", "").replace("-", "")[:60] + "-Regular"}
    records, strings = b"", b""
    for name_id, text in names.items():
        encoded = text.encode("utf-16-be")
        records += struct.pack(">HHHHHH", 3, 1, 0x409, name_id, len(encoded), len(strings))
        strings += encoded
    advance_max = max(a for a, _ in metrics)
    tables = {
        b"OS/2": struct.pack(
            ">HhHHH10hh10s4I4sHHHhhhHH2IhhHHH",
            4, sum(a for a, _ in metrics) // count, 400, 5, 0,
            650, 600, 0, 75, 650, 600, 0, 350, 50, 250, 0, bytes(10), 1, 0, 0, 0, b"TSWF", 0x40, first, last,
            800, -200, 0, 1000, 200, 1, 0, 500, 700, 0, 0x20, 0),
        b"cmap": struct.pack(">HHHHI", 0, 1, 3, 1, 12) + struct.pack(
            ">7H2HH2H2h2H", 4, 32, 0, 4, 4, 1, 0, last, 0xFFFF, 0, first, 0xFFFF, 1 - first, 1, 0, 0),
        b"glyf": b"".join(glyphs),
        b"head": struct.pack(">IIIIHHqqhhhhHHhhh", 0x00010000, 0x00010000, 0, 0x5F0F3CF5, 0x000B, units, 0, 0,
                             x_min, y_min, x_max, y_max, 0, 8, 2, 1, 0),
        b"hhea": struct.pack(">Ihhh" + "H" + "hhhhhh" + "hhhh" + "hH", 0x00010000, 800, -200, 0, advance_max,
                             min(m[1] for m in metrics), 0, x_max, 1, 0, 0, 0, 0, 0, 0, 0, count),
        b"hmtx": b"".join(struct.pack(">Hh", a, lsb) for a, lsb in metrics),
        b"loca": struct.pack(f">{len(offsets)}I", *offsets),
        b"maxp": struct.pack(">IHHHHHHHHHHHHHH", 0x00010000, count, max_points, max_contours, 0, 0, 2, 0, 0, 0, 0,
                             0, 0, 0, 0),
        b"name": struct.pack(">HHH", 0, len(names), 6 + len(records)) + records + strings,
        b"post": struct.pack(">IIhhIIIII", 0x00030000, 0, -100, 50, 0, 0, 0, 0, 0),
    }
    return _sfnt(tables)


def _checksum(data: bytes) -> int:
    data += b"\x00" * (-len(data) % 4)
    return sum(struct.unpack(f">{len(data) // 4}I", data)) & 0xFFFFFFFF


def _sfnt(tables: dict[bytes, bytes]) -> bytes:
    tags = sorted(tables)
    count = len(tags)
    power = 1 << (count.bit_length() - 1)
    header = struct.pack(">IHHHH", 0x00010000, count, power * 16, power.bit_length() - 1, count * 16 - power * 16)
    offset = len(header) + 16 * count
    directory, body = b"", b""
    for tag in tags:
        data = tables[tag]
        directory += struct.pack(">4sIII", tag, _checksum(data), offset + len(body), len(data))
        body += data + b"\x00" * (-len(data) % 4)
    font = bytearray(header + directory + body)
    head_at = offset + sum(len(tables[t]) + (-len(tables[t]) % 4) for t in tags[: tags.index(b"head")])
    struct.pack_into(">I", font, head_at + 8, (0xB1B0AFBA - _checksum(bytes(font))) & 0xFFFFFFFF)
    return bytes(font)


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

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
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
            self._send(self._control(engine, method, path[len(CONTROL_PREFIX):], body), method)
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

    def __init__(self, address: tuple[str, int], engine: _Engine, verbose: bool) -> None:
        self.engine = engine
        self.verbose = verbose
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
    started) or a mapping engine -> port (engines missing from it get free ports). ``weight``: a
    :class:`PageWeight` to serve every engine's results pages with (None: the pages as written).
    """

    def __init__(
        self,
        engines: Iterable[str] = ("google",),
        host: str = "127.0.0.1",
        ports: int | Mapping[str, int] | None = None,
        verbose: bool = False,
        weight: PageWeight | None = None,
    ) -> None:
        names = [engines] if isinstance(engines, str) else list(engines)
        if not names:
            raise ValueError("no engines to fake")
        self.host = host
        self.verbose = verbose
        if weight is not None and not isinstance(weight, PageWeight):
            raise TypeError(f"weight: a PageWeight or None, not {weight!r}")
        self.weight = weight
        self._engines = {name: _Engine(name, load_pages(name), weight) for name in dict.fromkeys(names)}
        if ports is None:
            self._ports = {name: 0 for name in self._engines}
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
                server = _Server((self.host, self._ports[name]), engine, self.verbose)
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
                target=engine.server.serve_forever, kwargs={"poll_interval": 0.1},
                name=f"fake-{name}", daemon=True,
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

    def requests(self, engine: str) -> list[dict[str, Any]]:
        """Every request ``engine`` received (control requests excepted), oldest first."""
        return self._engine(engine).requests()

    def results_requests(self, engine: str) -> list[dict[str, Any]]:
        """The results-page requests of :meth:`requests`."""
        return [entry for entry in self.requests(engine) if entry["kind"] == "results"]

    def bytes_served(self, engine: str | None = None, since: float = 0.0) -> int:
        """Body bytes sent by ``engine`` (or all engines) for requests logged at ``time >= since``."""
        return sum(entry["bytes"] for name in ([engine] if engine else self._engines)
                   for entry in self.requests(name) if entry["time"] >= since)

    def clear_log(self, engine: str | None = None) -> None:
        for name in [engine] if engine else self._engines:
            self._engine(name).clear_log()

    def reset(self, engine: str | None = None) -> None:
        """Forget scripted steps, routes and logs (of one engine, or all)."""
        for name in [engine] if engine else self._engines:
            self._engine(name).reset()
