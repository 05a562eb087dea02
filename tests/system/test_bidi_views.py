"""Text that cannot spoof, in a real browser: the feed page and its search (the project's Chromium through
pytest-playwright, on the app served by a real uvicorn) show a title stored with a right-to-left override as it reads
("Harmless gpj.exe", laid out left to right, not "Harmless exe.jpg"), each scraped text isolated (``dir="auto"``,
computed ``unicode-bidi: isolate``); the Atom, RSS and JSON feeds carry no control. Screenshots at desktop and phone
width go to $FEED_SHOTS, else the test's folder."""

from __future__ import annotations

import json
import os
import urllib.request
from pathlib import Path

import feedparser
from playwright.sync_api import Page

from tests.support.feed_data import serving
from tests.support.spoofing import CONTROLS, SHOWN, store_spoofed

SHOWN_ENTRIES = """els => els.map(e => {
  const parts = [e.querySelector('.title a, .title span'), e.querySelector('.source'), e.querySelector('.snippet'),
                 e.querySelector('a.topic')];
  return {
    texts: parts.map(p => p.innerText),
    dirs: parts.map(p => p.getAttribute('dir')),
    bidi: parts.map(p => getComputedStyle(p).unicodeBidi),
  };
})"""
"""Each entry's title, source, snippet and topic: their text, ``dir`` and computed ``unicode-bidi``."""

LAID_OUT = """title => {
  // where the browser draws the "g" of "gpj" and the "e" of "exe" in the title: left to right as stored, or swapped
  const text = [...title.childNodes].find(node => node.nodeType === Node.TEXT_NODE);
  const at = index => { const r = document.createRange(); r.setStart(text, index); r.setEnd(text, index + 1);
                        return r.getBoundingClientRect().left; };
  return {g: at(text.data.indexOf('gpj')), e: at(text.data.indexOf('exe'))};
}"""


def feed(url: str) -> str:
    with urllib.request.urlopen(url, timeout=10) as answer:
        return answer.read().decode("utf-8")


def test_every_view_shows_the_text_as_it_reads_and_isolates_it(sqlite_url, page: Page, tmp_path):
    shots = Path(os.environ.get("FEED_SHOTS") or tmp_path)
    shots.mkdir(parents=True, exist_ok=True)
    store_spoofed(sqlite_url)
    with serving(sqlite_url) as app:
        try:
            for view in ("/", "/?q=harmless", "/?topic=climate&engine=google"):
                page.goto(app.url + view)
                entries = page.eval_on_selector_all("#entries > li.entry", SHOWN_ENTRIES)
                assert [tuple(entry["texts"][:3]) for entry in entries] == SHOWN, view
                for entry in entries:
                    assert entry["texts"][3] == "climate"
                    assert entry["dirs"] == ["auto"] * 4 and entry["bidi"] == ["isolate"] * 4, (view, entry)
                for title in page.locator("#entries .title-link").all():
                    drawn = title.evaluate(LAID_OUT)
                    assert drawn["g"] < drawn["e"], (view, drawn)  # "gpj.exe" left to right, as it reads
                assert not set(page.content()) & set(CONTROLS)
            page.set_viewport_size({"width": 1280, "height": 800})
            page.goto(app.url + "/")
            page.screenshot(path=shots / "bidi-desktop.png", full_page=True)
            page.set_viewport_size({"width": 390, "height": 844})
            page.goto(app.url + "/")
            assert page.evaluate("() => document.documentElement.scrollWidth") <= 390
            page.screenshot(path=shots / "bidi-phone.png", full_page=True)
            for kind in ("atom", "rss", "json"):
                body = feed(f"{app.url}/feed.{kind}")
                assert not set(body) & set(CONTROLS), kind
                if kind == "json":
                    items = json.loads(body)["items"]
                    found = [(item["title"], item["authors"][0]["name"], item["content_text"]) for item in items]
                else:
                    found = [(e.title, e.author, e.summary) for e in feedparser.parse(body).entries]
                assert found == SHOWN, kind
        finally:
            page.goto("about:blank")
    assert (shots / "bidi-desktop.png").stat().st_size and (shots / "bidi-phone.png").stat().st_size
