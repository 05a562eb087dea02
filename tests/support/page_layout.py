"""What the browser tests measure of a page's layout, in the page itself: sideways scrolling, words broken inside,
and the size chart text is drawn at on the screen."""

from __future__ import annotations

import os
from pathlib import Path

from playwright.sync_api import Page

PHONE, LAPTOP = 390, 1280
"""The widths the pages are checked at: a phone held upright, a laptop."""

BROKEN_WORDS = """(selector) => {
  const broken = [];
  for (const root of document.querySelectorAll(selector)) {
    const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
    while (walker.nextNode()) {
      const node = walker.currentNode;
      if (!node.parentElement || !node.parentElement.checkVisibility()) continue;
      for (const match of node.data.matchAll(/\\S+/g)) {
        const range = document.createRange();
        range.setStart(node, match.index);
        range.setEnd(node, match.index + match[0].length);
        const rects = Array.from(range.getClientRects()).filter((r) => r.width > 0);
        const lines = new Set(rects.map((r) => Math.round(r.top)));
        if (lines.size > 1) broken.push(match[0]);
      }
    }
  }
  return broken;
}"""
"""The words under ``selector`` laid out on more than one line ("unknow" / "n")."""

CHART_TEXT_PX = """() => Array.from(document.querySelectorAll("figure.chart svg")).flatMap((svg) => {
  const scale = svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
  return Array.from(svg.querySelectorAll("text")).map((text) => parseFloat(getComputedStyle(text).fontSize) * scale);
})"""
"""The size, in CSS pixels on the screen, of every text of every chart (its font size times the drawing's scale)."""


def sideways(page: Page) -> int:
    """How far the page is wider than its window (0: no sideways scrolling)."""
    return page.evaluate("() => document.documentElement.scrollWidth - document.documentElement.clientWidth")


def broken_words(page: Page, selector: str) -> list[str]:
    return page.evaluate(BROKEN_WORDS, selector)


def chart_text_px(page: Page) -> list[float]:
    return page.evaluate(CHART_TEXT_PX)


def shots_folder(default: Path) -> Path:
    """Where the screenshots go: ``$TOPICSTREAMS_SHOTS`` (for a person to look at), else ``default``."""
    folder = Path(os.environ.get("TOPICSTREAMS_SHOTS") or default)
    folder.mkdir(parents=True, exist_ok=True)
    return folder
