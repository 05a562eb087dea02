"""The render benchmark's page weight (``benchmarks/page_weight.py``, an extension of the fake engines) and the
request log's ``bytes``."""

from __future__ import annotations

import os
import re
import struct
import time
import urllib.error
import urllib.request
import zlib
from urllib.parse import urlencode

import pytest
from parsel import Selector

from benchmarks.page_weight import PageWeight, add_weight, noisy_png, ttf_font
from fake_engines import FakeEngines
from fake_engines.server import Reply
from tests.support.fakes_http import bytes_served

CHROMIUM = "/usr/lib/chromium/chromium-headless-shell"
TOPIC = "climate summit"
WEIGHT = PageWeight(thumbnails=20, fonts=2, asset_delay=0.05)


def fetch(url: str, method: str = "GET") -> tuple[int, dict, bytes]:
    request = urllib.request.Request(url, method=method)
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), error.read()


def search_url(fakes: FakeEngines, topic: str = TOPIC, start: int = 0) -> str:
    query = {"q": topic, "tbm": "nws", "tbs": "qdr:h,sbd:1", "start": start}
    return f"{fakes.base_url('google')}/search?{urlencode(query)}"


@pytest.fixture(scope="module")
def weighted():
    with FakeEngines(("google",), extensions=[WEIGHT]) as running:
        yield running


@pytest.fixture(scope="module")
def plain():
    with FakeEngines(("google",)) as running:
        yield running


@pytest.fixture(autouse=True)
def _clean(request):
    for name in ("weighted", "plain"):
        if name in request.fixturenames:
            request.getfixturevalue(name).reset()
    yield


# -- the log's bytes --------------------------------------------------------------------------------------


def test_every_log_entry_counts_the_body_bytes_sent(plain):
    base = plain.base_url("google")
    _, _, page = fetch(search_url(plain))
    _, _, thumb = fetch(base + "/thumbs/x.png")
    status, _, missing = fetch(base + "/nowhere")
    assert status == 404
    assert fetch(search_url(plain), method="HEAD")[0] == 200
    log = plain.requests("google")
    assert [e["bytes"] for e in log] == [len(page), len(thumb), len(missing), 0]
    assert bytes_served(plain, "google") == len(page) + len(thumb) + len(missing)
    assert bytes_served(plain) == bytes_served(plain, "google")
    assert bytes_served(plain, since=log[1]["time"]) == len(thumb) + len(missing)


def test_without_a_weight_pages_and_paths_are_as_written(plain):
    _, _, page = fetch(search_url(plain))
    assert b"/static/" not in page and b"/thumbs/w-" not in page
    assert fetch(plain.base_url("google") + "/static/site-x.css")[0] == 404
    assert plain.extensions == ()


# -- the weight ---------------------------------------------------------------------------------------------


def test_a_weighted_results_page_gets_stylesheet_script_and_thumbnails(weighted, plain):
    status, headers, body = fetch(search_url(weighted))
    _, _, bare = fetch(search_url(plain))
    assert status == 200 and headers["Content-Type"].startswith("text/html")
    text = body.decode()
    head, _, rest = text.partition("</head>")
    assert f'<link rel="stylesheet" href="{WEIGHT.stylesheet_path}">' in head
    assert f'<script src="{WEIGHT.script_path}"></script>' in head  # synchronous: render-blocking
    assert head.index(WEIGHT.stylesheet_path) < head.index(WEIGHT.script_path)
    thumbs = re.findall(r'<img src="(/thumbs/w-[0-9a-f]+\.png)" alt="" width="\d+" height="\d+">', rest)
    assert len(thumbs) == 20 and len(set(thumbs)) == 20
    assert rest.index(thumbs[-1]) < rest.rindex("</body>")
    # the engine's own page is untouched otherwise: the same results, still parsable
    sel, bare_sel = Selector(text=text), Selector(text=bare.decode())
    assert len(sel.css("#rso div[data-news-doc-id]")) == len(bare_sel.css("#rso div[data-news-doc-id]")) == 10
    # (the same links and headings: the times are relative to each fetch, which may straddle a second)
    for query in ("#rso a::attr(href)", "#rso div[role=heading]::text"):
        assert sel.css(query).getall() == bare_sel.css(query).getall()
    # thumbnails are stable for a page and differ between pages
    again = fetch(search_url(weighted))[2].decode()
    other = fetch(search_url(weighted, start=10))[2].decode()
    assert re.findall(r"/thumbs/w-[0-9a-f]+\.png", again) == thumbs
    assert not set(re.findall(r"/thumbs/w-[0-9a-f]+\.png", other)) & set(thumbs)


def test_weighted_assets_are_realistic_and_delayed(weighted):
    base = weighted.base_url("google")
    text = fetch(search_url(weighted))[2].decode()
    css_status, css_headers, css = fetch(base + WEIGHT.stylesheet_path)
    assert css_status == 200 and css_headers["Content-Type"].startswith("text/css")
    assert 30_000 <= len(css) < 31_000
    fonts = re.findall(r"@font-face\{font-family:'([^']+)'[^}]*src:url\((/fonts/[^)]+)\)", css.decode())
    assert [path for _, path in fonts] == WEIGHT.font_paths() and len(fonts) == 2
    for family, _ in fonts:  # the text uses every font
        assert re.search(r"\{font-family:'" + re.escape(family) + "'", css.decode())
    js_status, js_headers, js = fetch(base + WEIGHT.script_path)
    assert js_status == 200 and "javascript" in js_headers["Content-Type"] and 60_000 <= len(js) < 61_000
    for path in WEIGHT.font_paths():
        status, headers, font = fetch(base + path)
        assert status == 200 and headers["Content-Type"] == "font/ttf"
        assert_valid_sfnt(font)
        assert 15_000 <= len(font) <= 25_000
    thumbs = re.findall(r"/thumbs/w-[0-9a-f]+\.png", text)
    sizes = []
    for path in thumbs[:5]:
        started = time.monotonic()
        status, headers, png = fetch(base + path)
        assert time.monotonic() - started >= WEIGHT.asset_delay
        assert status == 200 and headers["Content-Type"] == "image/png"
        assert_valid_png(png)
        sizes.append(len(png))
    assert all(4_500 <= size <= 10_000 for size in sizes) and len(set(sizes)) > 1
    # the engine's own assets are delayed too; unknown static paths are 404s
    started = time.monotonic()
    assert fetch(base + "/thumbs/logo.png")[0] == 200
    assert time.monotonic() - started >= WEIGHT.asset_delay
    assert fetch(base + "/static/nothing.js")[0] == 404
    log = weighted.requests("google")
    assert [e["kind"] for e in log] == ["results"] + ["asset"] * (len(log) - 1)
    assert all(e["bytes"] > 0 for e in log)
    assert sum(e["bytes"] for e in log) == bytes_served(weighted, "google")


def test_the_results_page_itself_is_not_delayed(weighted):
    started = time.monotonic()
    fetch(search_url(weighted))
    fetch(search_url(weighted))
    assert time.monotonic() - started < 2 * WEIGHT.asset_delay


def test_only_200_html_results_get_the_weight(weighted):
    weighted.script(
        "google",
        [
            {"page": "results", "status": 503},
            "sorry",
            {"body": "<div id=more><p>more results</p></div>"},
            {"body": "<html><body><p>no head</p></body></html>"},
        ],
    )
    status, _, body = fetch(search_url(weighted))
    assert status == 503 and b"/static/" not in body and b"/thumbs/w-" not in body
    status, _, body = fetch(search_url(weighted))  # the redirect's target is a 429 page, not a results request
    assert status == 429 and b"/static/" not in body
    _, _, fragment = fetch(search_url(weighted))
    text = fragment.decode()
    assert text.startswith("<div id=more><p>more results</p></div>")
    assert "/static/" not in text and len(re.findall(r"/thumbs/w-", text)) == 20
    _, _, page = fetch(search_url(weighted))
    text = page.decode()
    assert "/static/" not in text and text.endswith("</body></html>") and len(re.findall(r"/thumbs/w-", text)) == 20
    # not HTML, or not UTF-8: left alone
    json_reply = Reply(200, b'{"a": 1}', "application/json")
    assert add_weight(WEIGHT, json_reply, "x").body == b'{"a": 1}'
    latin = Reply(200, "<html><head></head><body>\xe9</body></html>".encode("latin-1"))
    assert add_weight(WEIGHT, latin, "x").body == "<html><head></head><body>\xe9</body></html>".encode("latin-1")


def test_the_weight_is_configurable_and_checked():
    light = PageWeight(thumbnails=3, fonts=1, asset_delay=0, stylesheet_bytes=1000, script_bytes=500)
    with FakeEngines(("google",), extensions=light) as fakes:
        text = fetch(search_url(fakes))[2].decode()
        assert len(re.findall(r"/thumbs/w-", text)) == 3
        css = fetch(fakes.base_url("google") + light.stylesheet_path)[2]
        assert css.count(b"@font-face") == 1 and 1000 <= len(css) < 1300
    assert light.version != WEIGHT.version  # asset names change with the weight
    for bad in (
        {"thumbnails": -1},
        {"fonts": 9},
        {"asset_delay": -0.1},
        {"thumbnail_bytes": (10, 5)},
        {"script_bytes": 1.5},
    ):
        with pytest.raises(ValueError):
            PageWeight(**bad)
    with pytest.raises(TypeError):
        FakeEngines(("google",), extensions=[{"thumbnails": 20}])


def test_generated_images_and_fonts_are_deterministic():
    assert noisy_png("abc", 7000) == noisy_png("abc", 7000) != noisy_png("abd", 7000)
    assert ttf_font("/fonts/a.ttf") == ttf_font("/fonts/a.ttf") != ttf_font("/fonts/b.ttf")


# -- a real browser -------------------------------------------------------------------------------------


def test_chromium_decodes_the_thumbnails_and_uses_the_fonts(weighted):
    sync_api = pytest.importorskip("playwright.sync_api")
    if not os.path.exists(CHROMIUM):
        pytest.skip("no Chromium at " + CHROMIUM)
    errors = []
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True)
        try:
            page = browser.new_page()
            page.on("pageerror", lambda error: errors.append(str(error)))
            page.goto(search_url(weighted), wait_until="load")
            fonts = page.evaluate(
                "async () => { await document.fonts.ready; return [...document.fonts].map(f => [f.family, f.status]); }"
            )
            decoded = page.evaluate(
                "[...document.images].filter(i => i.src.includes('/thumbs/w-'))"
                ".map(i => i.complete && i.naturalWidth > 0)"
            )
            checksum = page.evaluate("window.__tsWeight && window.__tsWeight.functions")
        finally:
            browser.close()
    assert not errors
    assert ["TSW Text", "loaded"] in fonts and ["TSW Display", "loaded"] in fonts
    assert decoded == [True] * 20
    assert checksum and checksum > 100


# -- helpers ----------------------------------------------------------------------------------------------


def assert_valid_png(data: bytes) -> None:
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    at, chunks = 8, []
    while at < len(data):
        length, tag = struct.unpack(">I4s", data[at : at + 8])
        payload = data[at + 8 : at + 8 + length]
        (crc,) = struct.unpack(">I", data[at + 8 + length : at + 12 + length])
        assert crc == zlib.crc32(tag + payload)
        chunks.append((tag, payload))
        at += 12 + length
    assert [tag for tag, _ in chunks] == [b"IHDR", b"IDAT", b"IEND"]
    width, height, depth, colour = struct.unpack(">IIBB", chunks[0][1][:10])
    assert len(zlib.decompress(chunks[1][1])) == height * (1 + 3 * width) and (depth, colour) == (8, 2)


def assert_valid_sfnt(data: bytes) -> None:
    version, count = struct.unpack(">IH", data[:6])
    assert version == 0x00010000
    tables = {}
    for i in range(count):
        tag, _, offset, length = struct.unpack(">4sIII", data[12 + 16 * i : 28 + 16 * i])
        tables[tag] = data[offset : offset + length]
    assert set(tables) == {b"OS/2", b"cmap", b"glyf", b"head", b"hhea", b"hmtx", b"loca", b"maxp", b"name", b"post"}
    padded = data + b"\x00" * (-len(data) % 4)
    assert sum(struct.unpack(f">{len(padded) // 4}I", padded)) & 0xFFFFFFFF == 0xB1B0AFBA
    assert struct.unpack(">I", tables[b"head"][12:16])[0] == 0x5F0F3CF5
