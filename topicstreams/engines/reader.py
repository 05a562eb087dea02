"""Reading one results page of an engine: its class, its results, whether a page follows. Pure.

:meth:`PageReader.read` takes a rendered :class:`Page` (URL, status, HTML, headers) and gives a
:class:`Reading`:

1. the page's result items by the engine's known layouts (:meth:`Engine.result_nodes`);
2. the class: a consent wall of the engine (:meth:`Engine.consent_wall`) is a ``challenge`` with reason ``consent``,
   read no further; any other page is classified by :func:`~topicstreams.engines.classify.classify_response` (the
   engine's markers and the walls); a page without result items that is neither ``ok`` (a "no results" page) nor a
   challenge already, but holds someone else's wall (:func:`~topicstreams.engines.foreign_walls.find_foreign_wall`:
   another engine's or site's consent form, a login form, a network's portal) is a ``challenge`` too, with reason
   ``consent`` or ``wall``, read no further;
3. an ``ok`` page: each item's fields (:meth:`Engine.parse_result`, then :meth:`Engine.clean`);
4. a page that is only an unexplained empty list: the structural fallback
   (:mod:`topicstreams.engines.fallback`); when it finds results the page is ``ok`` and the reading says it
   came from the fallback (the engine's page has probably changed);
5. a parser that raises makes the page an ``error`` (``parse error: …``), never an exception.

The reader holds the bounds on what a page brings (:class:`~topicstreams.engines.page_limits.PageLimits`,
``scraper.limits``) and applies them all: :meth:`PageReader.oversized` judges a page by its size before anyone
reads it; of an ``ok`` page only the first ``items_per_page`` items are read (the reading counts the others in
``items_over_limit``), and their titles, sources and snippets are cut at their limits (``fields_cut``).

:meth:`PageReader.items` turns a reading's results into :class:`~topicstreams.engines.items.NewsItem` s of a topic.
Nothing here knows Scrapy's crawl: it is tested on HTML alone.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import TypeVar
from urllib.parse import urljoin

from parsel import Selector, SelectorList
from w3lib.html import get_base_url

from topicstreams.engines import REGISTRY, engine_class
from topicstreams.engines.base import Engine
from topicstreams.engines.classify import (
    CONSENT_WALL,
    EMPTY_LIST,
    ResponseClass,
    Verdict,
    classify_response,
    oversized_verdict,
    parse_error,
)
from topicstreams.engines.dates import parse_result_time
from topicstreams.engines.fallback import structural_results
from topicstreams.engines.foreign_walls import EngineWalls, find_foreign_wall
from topicstreams.engines.items import NewsItem
from topicstreams.engines.news_urls import engine_hosts, normalize_url
from topicstreams.engines.page_limits import PageLimits
from topicstreams.engines.results import ParsedResult

logger = logging.getLogger(__name__)

X = TypeVar("X")


@dataclass(frozen=True)
class Page:
    """A rendered results page, as the browser gave it."""

    url: str
    status: int
    html: str
    headers: Mapping[str, str] = field(default_factory=dict)
    number: int = 0
    """The page of the topic's results (0: the first)."""


@dataclass(frozen=True)
class Reading:
    """What one page said: plain data, so it can ride with the request to the spider's callback."""

    verdict: Verdict
    results: tuple[ParsedResult, ...] = ()
    fetched_at: datetime = field(default_factory=lambda: datetime.now(UTC))
    languages: tuple[str, ...] | None = None
    """The languages its result times are read in."""
    fallback: bool = False
    """Whether the structural fallback found the results (no known layout matched)."""
    has_next: bool = False
    """Whether the engine offers a page after this one."""
    base_url: str = ""
    """What the page's relative links resolve against (its ``<base href>``, else its URL)."""
    items_over_limit: int = 0
    """The page's result items beyond ``scraper.limits.items_per_page``: left out, never read."""
    fields_cut: int = 0
    """The titles, sources and snippets of its results cut at their limits."""


@dataclass
class ItemsOfPage:
    items: list[NewsItem]
    unparsed_times: list[tuple[str | None, str | None]]
    """The ``(time_text, timestamp)`` of results whose time could not be read."""


class PageReader:
    """Reads the pages of one engine. ``redirector_hosts``: hosts whose redirect links are unwrapped (the engines'
    own hosts, see :func:`~topicstreams.engines.news_urls.normalize_url`); ``limits``: the bounds on what a page
    brings (None: none, for a test's pages)."""

    def __init__(self, engine: Engine, redirector_hosts: Iterable[str] = (), limits: PageLimits | None = None) -> None:
        self.engine = engine
        self.redirector_hosts = frozenset(redirector_hosts)
        self.limits = limits
        self.engine_walls: tuple[EngineWalls, ...] = tuple(
            (cls.consent_walls, cls.owns_host) for cls in REGISTRY.values()
        )
        """Every engine's consent walls and host rule: another engine's wall at this engine's URL is a wall too."""

    def oversized(self, body_bytes: int) -> Verdict | None:
        """The verdict on a page whose body has ``body_bytes``, when that is above ``scraper.limits.page_bytes``
        (a soft block, reason ``oversized``: the page is not to be read at all); else None."""
        return None if self.limits is None else oversized_verdict(body_bytes, self.limits.page_bytes)

    def read(self, page: Page, fetched_at: datetime | None = None) -> Reading:
        """The page's reading; a parser failure is an ``error`` reading, logged with its traceback."""
        fetched_at = fetched_at or datetime.now(UTC)
        try:
            return replace(self._read(page, fetched_at), base_url=get_base_url(page.html[:4096], page.url))
        except Exception as exc:
            logger.exception("could not parse %s", page.url)
            return Reading(parse_error(exc), fetched_at=fetched_at, base_url=page.url)

    def _read(self, page: Page, fetched_at: datetime) -> Reading:
        engine = self.engine
        selector = Selector(text=page.html or "<html></html>")
        nodes = engine.result_nodes(selector) if page.status == 200 else SelectorList()
        languages = self.languages(selector)
        if engine.consent_wall(page.url, page.html, selector) is not None:
            return Reading(CONSENT_WALL, (), fetched_at, languages)
        verdict = classify_response(
            engine.markers,
            status=page.status,
            url=page.url,
            html=page.html,
            item_count=len(nodes),
            headers=dict(page.headers),
        )
        if not nodes and verdict.cls not in (ResponseClass.OK, ResponseClass.CHALLENGE):
            wall = find_foreign_wall(
                selector, url=page.url, html=page.html, status=page.status, engines=self.engine_walls
            )
            if wall is not None:
                logger.debug("%s holds %s, not results: a challenge (reason %s)", page.url, wall.what, wall.reason)
                return Reading(Verdict(ResponseClass.CHALLENGE, wall.reason), (), fetched_at, languages)
        if verdict.cls is ResponseClass.OK:
            kept, over = self._kept(nodes)
            results = tuple(engine.clean(engine.parse_result(node, selector)) for node in kept)
            has_next = bool(results) and engine.has_next_page(selector, page.number)
            return self._bounded(Reading(verdict, results, fetched_at, languages, has_next=has_next), over)
        if verdict.reason != EMPTY_LIST:
            return Reading(verdict, (), fetched_at, languages)
        found = structural_results(
            selector.root,
            page.url,
            owns_host=engine.owns_host,
            redirector_hosts=self.redirector_hosts,
            reads_as_time=lambda text: parse_result_time(text, fetched_at, languages=languages) is not None,
        )
        if not found:
            return Reading(verdict, (), fetched_at, languages)
        kept_found, over = self._kept(found)
        reading = Reading(
            Verdict(ResponseClass.OK, f"{len(found)} results (structural fallback)"),
            tuple(engine.clean(result) for result in kept_found),
            fetched_at,
            languages,
            fallback=True,
            has_next=engine.has_next_page(selector, page.number),
        )
        return self._bounded(reading, over)

    def _kept(self, found: Sequence[X]) -> tuple[Sequence[X], int]:
        """The first ``items_per_page`` of a page's ``found`` items, and how many more it has."""
        if self.limits is None or len(found) <= self.limits.items_per_page:
            return found, 0
        limit = self.limits.items_per_page
        return found[:limit], len(found) - limit

    def _bounded(self, reading: Reading, over: int) -> Reading:
        """``reading`` with its results' fields cut at their limits, counting them and the ``over`` items left
        out."""
        limits = self.limits
        if limits is None:
            return reading
        cut = sum(limits.cut_fields(result) for result in reading.results)
        if not cut and not over:
            return reading
        results = tuple(limits.bounded(result) for result in reading.results)
        return replace(reading, results=results, items_over_limit=over, fields_cut=cut)

    def languages(self, page: Selector) -> tuple[str, ...] | None:
        """The languages to read result times in: the engine's, else the page's ``<html lang>`` and English."""
        if self.engine.time_languages is not None:
            return self.engine.time_languages
        lang = (page.xpath("/html/@lang").get() or "").strip().lower().replace("_", "-").split("-")[0]
        if not lang.isalpha():
            return None
        return (lang,) if lang == "en" else (lang, "en")

    def items(self, reading: Reading, *, topic: str, number: int = 0) -> ItemsOfPage:
        """The reading's results as items of ``topic``, ranked from ``number`` × the engine's page size + 1."""
        items, unparsed = [], []
        first = number * self.engine.results_per_page
        for rank, parsed in enumerate(reading.results, start=first + 1):
            published = parse_result_time(
                parsed.time_text, reading.fetched_at, timestamp=parsed.timestamp, languages=reading.languages
            )
            if published is None and (parsed.time_text or parsed.timestamp):
                unparsed.append((parsed.time_text, parsed.timestamp))
            items.append(
                NewsItem(
                    url=urljoin(reading.base_url, parsed.url) if parsed.url else None,
                    title=parsed.title,
                    source=parsed.source,
                    snippet=parsed.snippet,
                    published_at=published,
                    topic=topic,
                    engine=self.engine.name,
                    rank=rank,
                    fetched_at=reading.fetched_at,
                )
            )
        return ItemsOfPage(items, unparsed)

    def identity(self, url: str | None) -> str | None:
        """The normalized form of a result URL (as the store will know it); the URL itself when it does not parse."""
        try:
            return normalize_url(url, self.redirector_hosts) if url else None
        except ValueError:
            return url


def engine_reader(
    name: str, base_url: str, freshness: str, base_urls: Mapping[str, str], limits: PageLimits | None = None
) -> PageReader:
    """The reader of engine ``name`` at ``base_url`` with ``freshness`` (its ``engines.<name>`` configuration),
    with the host of every engine's base URL (``base_urls``, by engine) as a redirector host, bounded by
    ``limits`` (``scraper.limits``)."""
    return PageReader(engine_class(name)(base_url, freshness), engine_hosts(base_urls), limits)
