"""Which article goes where on the fake Brave's news pages: URLs, ages, tracking parameters, the sidebar's links.

See :mod:`fake_engines.brave` for what the pages share with the real Brave News.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from urllib.parse import urlencode, urlsplit

from fake_engines.catalogue import SOURCES, Article, all_articles, digest, number, with_tracking
from fake_engines.markup import token

RESULTS_PATH = "/news"
PER_PAGE = 20
"""Results a Brave News page holds (page N = catalogue articles N*20 … N*20+19)."""
INVALID_HOST = "https://cdn.search-brave.invalid"
"""The host of the page's scripts and styles: ``.invalid`` never resolves, so nothing leaves the machine."""
IMAGES_HOST = "https://imgs.search-brave.invalid"

TRACKING_PARAMS = ("utm_source", "utm_medium", "utm_campaign", "utm_content", "ncid", "cmpid")
"""Every tracking parameter the fake Brave adds to publisher URLs (a normalizer must drop them all)."""


def search_path(topic: str, page: int = 0, tf: str | None = "pd") -> str:
    """The relative URL of a results page, as the real pager links it."""
    query: list[tuple[str, str]] = [("q", topic)]
    if tf:
        query.append(("tf", tf))
    query += [("offset", str(page)), ("source", "web")]
    return f"{RESULTS_PATH}?{urlencode(query)}"


def brave_age(seconds: int) -> str:
    """What Brave shows for an age: "1 minute ago", "35 minutes ago", "2 hours ago", "1 week ago"…"""
    minutes = max(1, seconds // 60)
    for size, unit in (
        (60 * 24 * 365, "year"),
        (60 * 24 * 30, "month"),
        (60 * 24 * 7, "week"),
        (60 * 24, "day"),
        (60, "hour"),
        (1, "minute"),
    ):
        if minutes >= size:
            count = minutes // size
            return f"{count} {unit} ago" if count == 1 else f"{count} {unit}s ago"
    return "1 minute ago"  # pragma: no cover - minutes >= 1 always matches


# -- layout: which article goes where -------------------------------------------------------------------


@dataclass(frozen=True)
class Result:
    """One ``div.snippet[data-type=news]`` of a results page."""

    article: Article
    rank: int
    """1-based position on the page (``data-pos`` is ``rank - 1``)."""
    url: str
    """The link: the publisher URL, with this result's tracking parameters (if any)."""
    host: str
    breadcrumb: str
    """``meta_url.path``: Brave's "› 2025 › slug" rendering of the path."""
    thumb: str | None
    favicon: str
    age_header: bool
    """Whether the time is a ``span.age-header`` (else a ``div.age-snippet``)."""

    @property
    def tracked(self) -> bool:
        return self.url != self.article.url


@dataclass(frozen=True)
class Layout:
    topic: str
    page: int
    total: int
    results: tuple[Result, ...]
    """Empty past the last page."""

    @property
    def has_next(self) -> bool:
        return bool(self.results) and (self.page + 1) * PER_PAGE < self.total


def _tracking(seed: str, rank: int) -> list[tuple[str, str]]:
    variants: tuple[list[tuple[str, str]], ...] = (
        [("utm_source", "brave"), ("utm_medium", "news")],
        [],
        [("utm_source", "brave"), ("utm_medium", "news"), ("utm_campaign", f"search-{number('c', seed) % 90 + 10}")],
        [],
        [("ncid", "brave-news-" + token("ncid", seed, length=8))],
        [("cmpid", f"bsn{number('cmp', seed) % 9000 + 1000}"), ("utm_content", f"r{rank}")],
    )
    if rank == 1:
        return variants[0]
    return variants[number("variant", seed) % len(variants)]


def _breadcrumb(url: str) -> str:
    parts = urlsplit(url)
    segments = [s for s in parts.path.split("/") if s]
    return "".join(f" › {s}" for s in segments).strip()


def layout(topic: str, page: int, articles: Sequence[Article] | None = None) -> Layout:
    """The layout of ``topic``'s 0-based ``page`` (``offset=page``).

    ``articles``: the topic's whole list to lay out (a news world's, see :mod:`fake_engines.world`); None,
    the default: the catalogue's."""
    if articles is None:
        return _catalogue_layout(topic, page)
    return _layout(topic, page, tuple(articles))


@lru_cache(maxsize=256)
def _catalogue_layout(topic: str, page: int) -> Layout:
    return _layout(topic, page, tuple(all_articles(topic)))


def _layout(topic: str, page: int, everything: tuple[Article, ...]) -> Layout:
    articles = everything[page * PER_PAGE : (page + 1) * PER_PAGE] if page >= 0 and topic.strip() else ()
    results = []
    for rank, article in enumerate(articles, start=1):
        seed = digest("brave", topic, page, rank, article.url)
        host = urlsplit(article.url).hostname or ""
        thumb = f"/thumbs/b{token('thumb', seed, length=12)}.png" if rank <= 2 or number("th", seed) % 3 == 0 else None
        results.append(
            Result(
                article=article,
                rank=rank,
                url=with_tracking(article.url, _tracking(seed, rank), seed),
                host=host,
                breadcrumb=_breadcrumb(article.url),
                thumb=thumb,
                favicon=f"/thumbs/fav-{article.source_slug}.png",
                age_header=rank == 2 or number("agecls", seed) % 4 == 0,
            )
        )
    return Layout(topic, page, len(everything), tuple(results))


def expected_articles(topic: str, page: int, articles: Sequence[Article] | None = None) -> list[str]:
    """The clean publisher URLs a correct parser + normalizer stores for ``topic``'s 0-based ``page``.

    In page order, each once; ``[]`` past the last page: ``articles_from(topic, page * 20, 20)`` (or
    ``articles[page * 20 : page * 20 + 20]`` when given: a news world's list).
    """
    return [result.article.url for result in layout(topic, page, articles).results]


def more_results_available(topic: str, page: int) -> bool:
    """The ``more_results_available`` of the page's data: whether a next page has results."""
    return layout(topic, page).has_next


_TRENDING = (
    "Markets close higher after a quiet week",
    "Storm warning issued for the coast",
    "Local team wins in overtime",
    "New rail line opens to passengers",
    "Museum unveils restored paintings",
    "Heatwave expected to ease by Friday",
    "City council approves new park",
    "Researchers map a distant galaxy",
)


def _sidebar(topic: str, page: int) -> tuple[tuple[str, str], ...]:
    """The "Top stories" of the catalogue's page (none past its last page)."""
    return top_stories(topic, page) if layout(topic, page).results else ()


@lru_cache(maxsize=256)
def top_stories(topic: str, page: int) -> tuple[tuple[str, str], ...]:
    """The "Top stories" of a page with results: (url, headline) × 4."""
    out = []
    for i in range(4):
        source = SOURCES[number("side-src", topic, page, i) % len(SOURCES)]
        headline = _TRENDING[(number("side-title", topic, page) + i) % len(_TRENDING)]
        slug = token("side", topic, page, i, length=10)
        out.append((f"https://www.{source.slug}.example/trending/{slug}", headline))
    return tuple(out)


def sidebar_urls(topic: str, page: int) -> list[str]:
    """The off-engine "Top stories" links of the page (not articles of the topic: never to be stored)."""
    return [url for url, _ in _sidebar(topic, page)]


def related_searches(topic: str) -> list[str]:
    """The related queries of the sidebar (on-engine ``/news?q=…`` links)."""
    return [f"{topic} {suffix}" for suffix in ("today", "latest news", "live updates", "explained")]
