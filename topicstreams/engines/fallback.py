"""The structural fallback parser: results found by the shape of a page, not by its class names.

Engines rename their minified classes every year or two; when none of an engine's known layouts matches a
page that is neither a block nor a "no results" page, this finds the results the way a person would:

* a result is an anchor linking **off the engine** (after unwrapping redirectors): to neither the page's host nor a
  host of the engine's own domains (:mod:`topicstreams.engines.domains`), and never to a site's home page
  (:func:`is_home_page`: an article is never a site's front page; a wall's "back to the site" link is);
* a page with fewer than two such links has no results: a page of results has several, and a page whose only link
  leaves it (a notice, a portal, someone else's wall in the engine's place) is not one;
* its *block* is the largest element around the anchor that links to no other off-engine target;
* the block is a result when it has a heading (``h2``–``h4`` or ``role=heading``) or carries more text than
  its link (a source, a time, a snippet) — a bare list of links (a "top stories" sidebar) is not;
* title: the heading nearest the link, else the link's line (innermost block) of most words; time: the first
  ``data-ts``, ``aria-label`` or short text that reads as a time; snippet: the longest other text;
  source: the first other short text.

Pure: it takes the parsed HTML tree (lxml) and plain values, and knows no engine.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import cast
from urllib.parse import parse_qsl, urljoin, urlsplit

from lxml import etree

from topicstreams.engines.news_urls import normalize_url
from topicstreams.engines.results import ParsedResult

HEADING = "self::h2 or self::h3 or self::h4 or @role='heading'"
TEXTS = ".//text()[normalize-space()][not(ancestor::script or ancestor::style or ancestor::noscript)]"
SHORT_TEXT = 60
"""Texts up to this many characters may be a source or a time."""
SNIPPET_TEXT = 40
"""Texts from this many characters on may be a snippet."""
PAGE_ELEMENTS = frozenset({"html", "body"})
BLOCK_TAGS = frozenset(
    {
        "div",
        "p",
        "h1",
        "h2",
        "h3",
        "h4",
        "h5",
        "h6",
        "li",
        "section",
        "article",
        "header",
        "footer",
        "figure",
        "figcaption",
        "blockquote",
    }
)


LOCALE_SEGMENT = re.compile(r"[a-z]{2}(?:[-_][a-z]{2,4})?")
"""A path segment that names a language or a country (``de``, ``en-gb``, ``pt_BR``): the root of a site's edition."""
INDEX_PAGES = frozenset({"index.html", "index.htm", "index.php", "index.asp", "default.aspx", "home"})
"""Path segments that are a site's front page under another name."""
LOCALE_KEYS = frozenset({"hl", "gl", "lang", "language", "setlang", "cc", "mkt", "locale", "region", "country", "ref"})
"""Query keys that choose a front page's language or edition, not a page of its own."""
MIN_TARGETS = 2
"""A page whose links leave it for fewer distinct targets than this has no results."""


def is_home_page(url: str) -> bool:
    """Whether ``url`` is a site's home page: its root, an index page or the root of a language's edition (``/de/``),
    with no query but one choosing a language or an edition."""
    try:
        parts = urlsplit(url)
        keys = {key.lower() for key, _ in parse_qsl(parts.query, keep_blank_values=True)}
    except ValueError:
        return False
    segments = [segment.lower() for segment in parts.path.split("/") if segment]
    if len(segments) > 1 or not keys <= LOCALE_KEYS:
        return False
    return not segments or segments[0] in INDEX_PAGES or LOCALE_SEGMENT.fullmatch(segments[0]) is not None


def _squash(text: str | None) -> str:
    return " ".join((text or "").split())


def _owns_nothing(host: str) -> bool:
    return False


def off_engine_target(
    href: str | None,
    page_url: str,
    *,
    own_hosts: frozenset[str],
    owns_host: Callable[[str], bool] = _owns_nothing,
    redirector_hosts: Iterable[str] = (),
) -> str | None:
    """The normalized target of a link that leaves the engine, or None (on-engine, a site's home page, not http,
    unparsable).

    On-engine: its host is one of ``own_hosts`` or one ``owns_host`` says is the engine's.
    """
    if not href or href.startswith(("#", "javascript:", "mailto:")):
        return None
    try:
        target = normalize_url(urljoin(page_url, href.strip()), redirector_hosts)
    except ValueError:
        return None
    host = (urlsplit(target).hostname or "").lower()
    if not host or host in own_hosts or owns_host(host) or is_home_page(target):
        return None
    return target


def structural_results(
    root: etree._Element,
    page_url: str,
    *,
    owns_host: Callable[[str], bool] = _owns_nothing,
    redirector_hosts: Iterable[str] = (),
    reads_as_time: Callable[[str], bool] = lambda text: False,
) -> list[ParsedResult]:
    """The results of the page ``root`` (an lxml tree of the page at ``page_url``), in page order.

    ``owns_host``: whether a host is the engine's own (:meth:`Engine.owns_host
    <topicstreams.engines.base.Engine.owns_host>`); the page's own host always counts as own.
    ``redirector_hosts``: hosts whose redirect links are unwrapped (see ``normalize_url``).
    ``reads_as_time``: whether a short text is a publication time (the caller's time parser).
    """
    own_hosts = frozenset({(urlsplit(page_url).hostname or "").lower()})
    hosts = tuple(redirector_hosts)
    targets: dict[etree._Element, str] = {}
    for anchor in root.iter("a"):
        target = off_engine_target(
            anchor.get("href"), page_url, own_hosts=own_hosts, owns_host=owns_host, redirector_hosts=hosts
        )
        if target is not None:
            targets[anchor] = target
    if len(set(targets.values())) < MIN_TARGETS:
        return []  # one link off the page (or none) is not a page of results

    # Every element that holds a candidate anchor, with the distinct targets below it.
    below: dict[etree._Element, set[str]] = {}
    for anchor, target in targets.items():
        for element in (anchor, *anchor.iterancestors()):
            below.setdefault(element, set()).add(target)

    blocks: dict[etree._Element, str] = {}
    for anchor, target in targets.items():
        block = anchor
        for ancestor in anchor.iterancestors():
            if len(below[ancestor]) > 1 or ancestor.tag in PAGE_ELEMENTS:
                break
            block = ancestor
        blocks.setdefault(block, target)

    found = []
    for block, target in blocks.items():
        result = _read_block(
            block, target, [a for a, t in targets.items() if t == target and _inside(a, block)], reads_as_time
        )
        if result is not None:
            found.append(result)
    return found


def _inside(element: etree._Element, block: etree._Element) -> bool:
    return element is block or any(ancestor is block for ancestor in element.iterancestors())


def _text(element: etree._Element) -> str:
    return _squash("".join(element.itertext()))


def _read_block(
    block: etree._Element, target: str, anchors: list[etree._Element], reads_as_time: Callable[[str], bool]
) -> ParsedResult | None:
    title_element = _nearest_heading(block, anchors)
    has_heading = title_element is not None
    if title_element is None:
        lines = [line for anchor in anchors for line in _lines(anchor) if _text(line)]
        # the title is the line of most words (not the source, the host or a time)
        title_element = max(lines, key=lambda line: (len(_text(line).split()), len(_text(line)))) if lines else None
    title = _text(title_element) if title_element is not None else None
    if not title:
        title = next(
            (_squash(a.get("title") or a.get("aria-label")) for a in anchors if a.get("title") or a.get("aria-label")),
            None,
        )
    if not title:
        return None

    others = [_squash(text) for text in block.xpath(TEXTS) if not _in_title(text, title_element)]
    if not has_heading and not others:
        return None  # a bare link: a list of headlines in a sidebar, not a result

    stamp = next((el.get("data-ts") for el in block.iter() if isinstance(el.tag, str) and el.get("data-ts")), None)
    labels = [_squash(el.get("aria-label")) for el in block.iter() if isinstance(el.tag, str) and el.get("aria-label")]
    time_text = next((text for text in [*labels, *others] if len(text) <= SHORT_TEXT and reads_as_time(text)), None)
    rest = [text for text in others if text != time_text]
    long_texts = [text for text in rest if len(text) >= SNIPPET_TEXT]
    snippet = max(long_texts, key=len) if long_texts else None
    source = next(
        (text for text in rest if len(text) <= SHORT_TEXT and text != snippet and any(ch.isalpha() for ch in text)),
        None,
    )
    return ParsedResult(url=target, title=title, source=source, snippet=snippet, time_text=time_text, timestamp=stamp)


def _nearest_heading(block: etree._Element, anchors: list[etree._Element]) -> etree._Element | None:
    """The heading nearest the links: inside one, around one, else the first found going up to the block."""
    for anchor in anchors:
        for heading in anchor.xpath(f"descendant-or-self::*[{HEADING}] | ancestor::*[{HEADING}]"):
            if _inside(heading, block) and _text(heading):
                return cast(etree._Element, heading)
    for anchor in anchors:
        if anchor is block:
            continue
        for level in anchor.iterancestors():
            for heading in level.xpath(f"descendant::*[{HEADING}]"):
                if _text(heading):
                    return cast(etree._Element, heading)
            if level is block:
                break
    return None


def _lines(anchor: etree._Element) -> list[etree._Element]:
    """The innermost block elements of a link (its visual lines: source, title…), or the link itself."""
    blocks = [el for el in anchor.iterdescendants() if isinstance(el.tag, str) and el.tag in BLOCK_TAGS]
    inner = [
        el for el in blocks if not any(isinstance(d.tag, str) and d.tag in BLOCK_TAGS for d in el.iterdescendants())
    ]
    return inner or [anchor]


def _in_title(text: etree._ElementUnicodeResult, title_element: etree._Element | None) -> bool:
    """Whether a text node of the block belongs to the title element."""
    if title_element is None:
        return False
    parent = text.getparent()
    if parent is None:
        return False
    if text.is_tail:  # a tail follows its element: it is inside the title only if the element's parent is
        if parent is title_element:
            return False
        parent = parent.getparent()
        if parent is None:
            return False
    return _inside(parent, title_element)
