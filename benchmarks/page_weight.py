"""The render benchmark's page weight: what makes a fake results page weigh what a real one does.

``FakeEngines(engines, extensions=[PageWeight()])`` (see :class:`fake_engines.server.Extension`) serves
every engine's results pages with the weight of a real one, added alike for every engine: a render-blocking
stylesheet and script in ``<head>``, web fonts the text uses, a strip of thumbnails, all same-host (the
engine's own loopback port) and each asset answered after ``asset_delay``. Only ``benchmarks/render.py``
asks for it; the fake engines in the package know nothing of it.
"""

from __future__ import annotations

import hashlib
import math
import random
import re
import struct
import time
import zlib
from dataclasses import dataclass
from functools import lru_cache

from fake_engines.server import Extension, Reply, RequestContext


@dataclass(frozen=True)
class PageWeight(Extension):
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
            raise ValueError(
                f"PageWeight.thumbnail_bytes: expected (low, high) with 200 <= low <= high, got "
                f"{self.thumbnail_bytes!r}"
            )

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

    # -- the hooks of the fake servers (Extension) -----------------------------------------------------

    asset_prefixes = ("/static/",)
    """The stylesheet and the script; fonts and thumbnails are under the servers' own asset prefixes."""

    def asset(self, ctx: RequestContext) -> Reply | None:
        """Every asset request waits ``asset_delay``; then the weight's own assets, None for the engine's."""
        if self.asset_delay:
            time.sleep(self.asset_delay)
            ctx.now = time.time()
        return weighted_asset(self, ctx.path)

    def results(self, reply: Reply, ctx: RequestContext) -> Reply:
        """The weight added to a results reply (see :func:`add_weight`), its thumbnails seeded by the page."""
        return add_weight(self, reply, f"{ctx.engine} {ctx.raw_target}")


_FONT_ROLES = (
    ("text", "body, input, button"),
    ("display", "[role=heading], h1, h2, h3, h4, b, strong"),
    ("mono", "code, kbd, pre, time"),
    ("caption", "small, cite, figcaption"),
)
"""Weighted fonts, in the order they are added: the family role and the selectors that use it."""


# -- the weight's pages and assets -----------------------------------------------------------------------

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
        tags = (
            f'<link rel="stylesheet" href="{weight.stylesheet_path}">\n<script src="{weight.script_path}"></script>\n'
        ).encode()
        body = body[: head.start()] + tags + body[head.start() :]
    ends = list(_BODY_END.finditer(body))
    at = ends[-1].start() if ends else len(body)
    reply.body = body[:at] + thumbs + body[at:]
    return reply


def weighted_asset(weight: PageWeight, path: str) -> Reply | None:
    """A weighted server's asset at ``path``; None for the engine's own assets (the fake servers answer those)."""
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
    families = [
        (f"TSW {role.title()}", path, selectors)
        for (role, selectors), path in zip(_FONT_ROLES, weight.font_paths(), strict=False)
    ]
    parts = [
        f"@font-face{{font-family:'{family}';font-style:normal;font-weight:400;font-display:swap;"
        f"src:url({path}) format('truetype')}}\n"
        for family, path, _ in families
    ]
    parts += [f"{selectors}{{font-family:'{family}',arial,sans-serif}}\n" for family, _, selectors in families]
    parts.append(
        ".tsw-strip{display:flex;flex-wrap:wrap;gap:8px;margin:24px 0 0 180px;max-width:652px}\n"
        ".tsw-strip img{border-radius:8px;object-fit:cover;background:#f1f3f4}\n"
    )
    rnd = random.Random(f"css {weight.version}")
    size = sum(len(part) for part in parts)
    i = 0
    while size < weight.stylesheet_bytes:
        n = rnd.getrandbits(32)
        rule = (
            f".tsw-{i:04x}{{margin:{n % 17}px {n % 11}px;padding:{n % 7}px {n % 5}px;"
            f"color:#{n % 0xFFFFFF:06x};line-height:{16 + n % 9}px;border-radius:{n % 13}px}}\n"
        )
        if n % 4 == 0:
            rule += (
                f"@media (max-width:{600 + n % 700}px){{.tsw-{i:04x}>a{{display:block;font-size:{12 + n % 6}px}}}}\n"
            )
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
        part = (
            f"M.f{i}=function(x,y){{var h=(x*{a}+y)|0,t=[{words}];"
            f"for(var k=0;k<{c};k++){{h=(h^(h>>>{c}))*{b}+t[k%3].length|0}}"
            f"return h>>>0}};S.push(M.f{i});\n"
        )
        parts.append(part)
        size += len(part)
        i += 1
    parts.append(
        "var s=0;for(var j=0;j<S.length;j++){s=S[j](j,s)}window.__tsWeight={checksum:s,functions:S.length};})();\n"
    )
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
        for count in per:
            cx, cy = 60 + rnd.randrange(advance - 120), 100 + rnd.randrange(500)
            rx, ry = 40 + rnd.randrange(120), 60 + rnd.randrange(200)
            for p in range(count):
                angle = 2 * math.pi * p / count
                jitter = 0.8 + rnd.random() * 0.4
                coords.append(
                    (
                        max(0, min(advance, int(cx + rx * jitter * math.cos(angle)))),
                        max(-200, min(800, int(cy + ry * jitter * math.sin(angle)))),
                    )
                )
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
    names = {
        1: family,
        2: "Regular",
        3: f"{family} Regular 1.0",
        4: f"{family} Regular",
        5: "Version 1.000",
        6: family.replace(" ", "").replace("-", "")[:60] + "-Regular",
    }
    records, strings = b"", b""
    for name_id, text in names.items():
        encoded = text.encode("utf-16-be")
        records += struct.pack(">HHHHHH", 3, 1, 0x409, name_id, len(encoded), len(strings))
        strings += encoded
    advance_max = max(a for a, _ in metrics)
    tables = {
        b"OS/2": struct.pack(
            ">HhHHH10hh10s4I4sHHHhhhHH2IhhHHH",
            4,
            sum(a for a, _ in metrics) // count,
            400,
            5,
            0,
            650,
            600,
            0,
            75,
            650,
            600,
            0,
            350,
            50,
            250,
            0,
            bytes(10),
            1,
            0,
            0,
            0,
            b"TSWF",
            0x40,
            first,
            last,
            800,
            -200,
            0,
            1000,
            200,
            1,
            0,
            500,
            700,
            0,
            0x20,
            0,
        ),
        b"cmap": struct.pack(">HHHHI", 0, 1, 3, 1, 12)
        + struct.pack(">7H2HH2H2h2H", 4, 32, 0, 4, 4, 1, 0, last, 0xFFFF, 0, first, 0xFFFF, 1 - first, 1, 0, 0),
        b"glyf": b"".join(glyphs),
        b"head": struct.pack(
            ">IIIIHHqqhhhhHHhhh",
            0x00010000,
            0x00010000,
            0,
            0x5F0F3CF5,
            0x000B,
            units,
            0,
            0,
            x_min,
            y_min,
            x_max,
            y_max,
            0,
            8,
            2,
            1,
            0,
        ),
        b"hhea": struct.pack(
            ">Ihhh" + "H" + "hhhhhh" + "hhhh" + "hH",
            0x00010000,
            800,
            -200,
            0,
            advance_max,
            min(m[1] for m in metrics),
            0,
            x_max,
            1,
            0,
            0,
            0,
            0,
            0,
            0,
            0,
            count,
        ),
        b"hmtx": b"".join(struct.pack(">Hh", a, lsb) for a, lsb in metrics),
        b"loca": struct.pack(f">{len(offsets)}I", *offsets),
        b"maxp": struct.pack(
            ">IHHHHHHHHHHHHHH", 0x00010000, count, max_points, max_contours, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0
        ),
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
