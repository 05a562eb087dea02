"""The engine contract: what one search engine is, as plain data and pure functions of a page.

An engine (one module per engine in this package, a subclass of :class:`Engine`) knows:

* :meth:`~Engine.results_url` — its results URL for a topic: newest first, the freshness window, page N;
* :attr:`~Engine.layouts` — the CSS selector of its result items in each known layout, newest first
  (:meth:`~Engine.result_nodes` takes the first that matches);
* :meth:`~Engine.parse_result` — one item's fields; :meth:`~Engine.clean` — its own tidying of them;
* :meth:`~Engine.has_next_page` — whether a page follows;
* :attr:`~Engine.markers` — what its challenge, block and "no results" pages look like;
* :attr:`~Engine.consent_walls` — its consent walls (:mod:`topicstreams.engines.consent_walls`);
* :attr:`~Engine.domains` — its own domains, :meth:`~Engine.owns_host` (links to them are not results);
* :attr:`~Engine.time_languages` — the languages of its result times.

Engines know nothing of Scrapy's crawl: they read a :class:`parsel.Selector` of the page (a Scrapy response's
``.selector`` is one), so they are tested on HTML alone. :mod:`topicstreams.engines.reader` reads a whole page
with them.
"""

from __future__ import annotations

from typing import ClassVar

from parsel import Selector, SelectorList

from topicstreams.engines.classify import EngineMarkers
from topicstreams.engines.consent_walls import ConsentWall, find_wall
from topicstreams.engines.domains import DomainRule
from topicstreams.engines.results import ParsedResult

FRESHNESS_WINDOWS = ("hour", "day", "week", "month", "any")
"""The values of ``engines.<name>.freshness``; each engine maps them to its own filter."""


class Engine:
    """One search engine at one origin (``base_url``), searching one freshness window."""

    name: ClassVar[str] = ""
    results_per_page: ClassVar[int] = 10
    layouts: ClassVar[dict[str, str]] = {}
    """Known layouts, newest first: a name and the CSS selector of its result items."""
    markers: ClassVar[EngineMarkers] = EngineMarkers()
    consent_walls: ClassVar[tuple[ConsentWall, ...]] = ()
    """Its consent walls, by language-independent markers (:mod:`topicstreams.engines.consent_walls`)."""
    domains: ClassVar[DomainRule] = DomainRule()
    """The engine's own domains (its rule in :data:`~topicstreams.engines.domains.RULES`): links to them (and to the
    page's own host) are not results for the fallback."""
    time_languages: ClassVar[tuple[str, ...] | None] = None
    """Languages of the result times; None: the page's ``<html lang>``, then English."""

    def __init__(self, base_url: str, freshness: str = "hour") -> None:
        if freshness not in FRESHNESS_WINDOWS:
            raise ValueError(f"freshness must be one of {', '.join(FRESHNESS_WINDOWS)}, got {freshness!r}")
        self.base_url = base_url.rstrip("/")
        self.freshness = freshness

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.base_url} freshness={self.freshness}>"

    @classmethod
    def owns_host(cls, host: str) -> bool:
        """Whether ``host`` is one of the engine's own domains (see :attr:`domains`)."""
        return cls.domains.owns(host)

    def results_url(self, topic: str, page: int) -> str:
        """The results URL for ``topic``, newest first, in the freshness window, page ``page`` (0-based)."""
        raise NotImplementedError

    def result_nodes(self, page: Selector) -> SelectorList[Selector]:
        """The result items of a rendered results page: those of the first known layout that has any."""
        for selector in self.layouts.values():
            nodes = page.css(selector)
            if nodes:
                return nodes
        return SelectorList()

    def parse_result(self, node: Selector, page: Selector) -> ParsedResult:
        """One result item's fields."""
        raise NotImplementedError

    def has_next_page(self, page: Selector, number: int) -> bool:
        """Whether the engine offers a page after page ``number``."""
        return True

    def consent_wall(self, url: str, html: str, selector: Selector | None = None) -> ConsentWall | None:
        """The consent wall the page at ``url`` is (:func:`topicstreams.engines.consent_walls.find_wall`), or None."""
        return find_wall(
            self.consent_walls,
            url=url,
            html=html,
            owns_host=self.owns_host,
            has_results=lambda page: bool(self.result_nodes(page)),
            selector=selector,
        )

    def clean(self, parsed: ParsedResult) -> ParsedResult:
        """Engine-specific tidying of a result's fields, whichever parser read them."""
        return parsed


def text_of(selection: SelectorList[Selector] | Selector | None) -> str | None:
    """The whitespace-collapsed text of a selection, or None when empty."""
    if selection is None:
        return None
    joined = " ".join(" ".join(part.split()) for part in selection.xpath("string()").getall())
    return " ".join(joined.split()) or None
