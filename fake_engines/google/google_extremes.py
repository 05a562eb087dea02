"""The fake Google's hostile results pages, for the bounds a crawl puts on what a page brings (``scraper.limits``) and
on text that could spoof what a reader sees. Each is a page kind of results requests:

* ``crowded`` — :data:`CROWDED_ITEMS` plain results on one page (no engine shows that many);
* ``huge`` — the topic's first results page with :data:`HUGE_PADDING` characters of padding (an HTML comment in
  the results list): a page of more than 30 MB;
* ``bulky`` — ten results whose title, source and snippet each have :data:`BULKY_CHARS` characters;
* ``spoofed`` — the titles, sources and snippets of :data:`SPOOFED`: text with the Unicode bidirectional
  overrides and isolates (U+202A–U+202E, U+2066–U+2069) that make it read other than it is.

Every page is Google's results markup (:func:`~fake_engines.google.google_serp.render_slots_page`), no pager, no
JS-added result; every result a plain link to a clean ``.example`` URL. :func:`extreme_articles` gives a page's
articles in page order, each URL as a correct scraper stores it.
"""

from __future__ import annotations

from fake_engines.catalogue import SOURCES, Article, digest, topic_slug
from fake_engines.google.google_layout import Slot
from fake_engines.google.google_serp import render_slots_page
from fake_engines.markup import token

CROWDED_ITEMS = 5000
"""Results on a ``crowded`` page."""

HUGE_PADDING = 30 * 1024 * 1024
"""Characters of padding on a ``huge`` page (ASCII: as many bytes)."""

BULKY_CHARS = 100_000
"""Characters of each title, source and snippet of a ``bulky`` page."""

SPOOFED = (
    ("Harmless \u202egpj.exe", "Daily \u202eTrusted\u202c News", "Open \u2067the\u2069 attachment \u202dnow\u202c"),
    ("Invoice \u2066final\u2069 \u202bdraft\u202c", "\u2068Harbor\u2069 Times", "Read \u202athis\u202c first"),
)
"""(title, source, snippet) of a ``spoofed`` page's results, in page order."""

KINDS = frozenset({"crowded", "huge", "bulky", "spoofed"})


def _long(text: str, chars: int) -> str:
    """``text`` repeated, words apart, to exactly ``chars`` characters."""
    unit = text.rstrip() + " "
    return (unit * (chars // len(unit) + 1))[:chars]


def extreme_articles(kind: str, topic: str) -> list[Article]:
    """The articles of the ``kind`` page for ``topic``, in page order (``huge``: none read, but the page holds the
    topic's first articles as ``results`` does)."""
    slug = topic_slug(topic)
    count = {"crowded": CROWDED_ITEMS, "bulky": 10, "spoofed": len(SPOOFED), "huge": 10}[kind]
    articles = []
    for n in range(1, count + 1):
        source = SOURCES[n % len(SOURCES)]
        title, name, snippet = f"{topic}: {kind} result {n}", source.name, f"Result {n} of a {kind} page."
        if kind == "bulky":
            title, name, snippet = (_long(f"{part} {n}", BULKY_CHARS) for part in (title, name, snippet))
        elif kind == "spoofed":
            title, name, snippet = SPOOFED[n - 1]
        url = f"https://www.{source.slug}.example/{kind}/{slug}-{n}"
        articles.append(Article(url, title, name, snippet, 600 + 60 * n, topic, n, source.slug))
    return articles


def render_extreme(kind: str, topic: str, now: float) -> str:
    """The HTML of the ``kind`` page for ``topic`` (see the module docstring)."""
    slots = [
        Slot(
            article,
            "plain",
            rank,
            token("doc", kind, topic, rank, length=14),
            "2ahUKEw" + token("ved", kind, topic, rank, length=30),
            article.url,
            article.url,
            "",
            None,
            True,
        )
        for rank, article in enumerate(extreme_articles(kind, topic), start=1)
    ]
    padding = f"<!-- {digest('huge', topic)[:8]} {'x' * HUGE_PADDING} -->\n" if kind == "huge" else ""
    return render_slots_page(topic, 0, now, slots, padding=padding)
