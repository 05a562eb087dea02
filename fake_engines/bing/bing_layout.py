"""Which article goes where on the fake Bing's results pages: URLs, localised times, cards, the sidebar's links.

See :mod:`fake_engines.bing` for what the pages share with the real Bing News.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from urllib.parse import quote_plus

from fake_engines.catalogue import PER_PAGE, SOURCES, Article, all_articles, digest, number, with_tracking
from fake_engines.engine_pages import RequestContext
from fake_engines.markup import token

SEARCH_PATH = "/news/search"
SCROLL_PATH = "/news/infinitescrollajax"
RESULTS_PATHS = (SEARCH_PATH, SCROLL_PATH)
QFT = 'interval="4" sortbydate="1"'
"""Past hour, newest first (``qft=interval%3d%224%22+sortbydate%3d%221%22`` in a URL)."""
FORM = "PTFTNR"

TRACKING_PARAMS = ("ocid", "cvid", "msclkid", "utm_source", "utm_medium", "utm_campaign", "utm_content")
"""Every tracking parameter the fake Bing adds to publisher URLs (a normalizer must drop them all)."""

LAST_PAGE_REPEATS = True
"""Past the last page the paging endpoint serves the last page's cards again (like the real Bing)."""

TRENDING_PER_PAGE = 4
"""Off-engine "Trending now" links on a full page (fragments carry 3)."""


# -- times ----------------------------------------------------------------------------------------------

_UNITS = {
    # lang: ((singular, plural) for minute, hour, day), "ago" template, compact letters (m, h, d)
    "en": ((("minute", "minutes"), ("hour", "hours"), ("day", "days")), "{n} {unit} ago", ("m", "h", "d")),
    "nl": ((("minuut", "minuten"), ("uur", "uur"), ("dag", "dagen")), "{n} {unit} geleden", ("m", "u", "d")),
}


def _age_parts(age_seconds: int) -> tuple[int, int]:
    """(count, unit index 0=minutes 1=hours 2=days) of an age, at least one minute."""
    minutes = max(1, int(age_seconds) // 60)
    if minutes < 60:
        return minutes, 0
    hours = minutes // 60
    if hours < 24:
        return hours, 1
    return hours // 24, 2


def _lang_key(lang: str) -> str:
    return "nl" if lang.strip().lower().startswith("nl") else "en"


def aria_label(age_seconds: int, lang: str = "en") -> str:
    """The full relative phrase of a card's time: "35 minutes ago", "1 hour ago" / "2 uur geleden"."""
    names, template, _ = _UNITS[_lang_key(lang)]
    n, unit = _age_parts(age_seconds)
    return template.format(n=n, unit=names[unit][0 if n == 1 else 1])


def compact_age(age_seconds: int, lang: str = "en") -> str:
    """The visible text of a card's time: "35m", "2h", "1d" (Dutch: "35m", "2u", "1d")."""
    _, _, letters = _UNITS[_lang_key(lang)]
    n, unit = _age_parts(age_seconds)
    return f"{n}{letters[unit]}"


def page_lang(ctx: RequestContext) -> str:
    """ "nl" when the request asks for Dutch (Accept-Language, ``setlang`` or ``mkt``), else "en"."""
    if ctx.headers.get("accept-language", "").strip().lower().startswith("nl"):
        return "nl"
    if ctx.query.get("setlang", "").strip().lower().startswith("nl"):
        return "nl"
    if ctx.query.get("mkt", "").strip().lower().startswith("nl"):
        return "nl"
    return "en"


# -- URLs -----------------------------------------------------------------------------------------------


def search_path(topic: str) -> str:
    """The relative URL of the full results page (past hour, newest first)."""
    return f"{SEARCH_PATH}?q={quote_plus(topic)}&qft={quote_plus(QFT, safe='')}&form={FORM}"


def scroll_path(topic: str, page: int) -> str:
    """The relative URL of the paging endpoint for 0-based ``page`` (>= 1 in practice)."""
    return (
        f"{SCROLL_PATH}?q={quote_plus(topic)}&InfiniteScroll=1&first={page * PER_PAGE + 1}&SFX={page}"
        f"&qft={quote_plus(QFT, safe='')}&form={FORM}"
    )


def requested_page(ctx: RequestContext) -> int:
    """The 0-based page a results request asks for: ``(first - 1) // 10``, 0 when absent or bad."""
    try:
        first = int(ctx.query.get("first") or 1)
    except ValueError:
        return 0
    return max(0, (first - 1) // PER_PAGE)


# -- layout: which article goes where -------------------------------------------------------------------


@dataclass(frozen=True)
class Card:
    """One ``div.news-card.newsitem``."""

    article: Article
    rank: int
    """1-based position among the page's cards."""
    card_id: str
    href: str
    """The publisher URL with this card's tracking parameters (``url``, ``data-url``, ``a.title[href]``)."""
    thumb: str | None
    source_link: bool
    """Whether the source name is an on-engine ``a`` (else a ``span``)."""


@dataclass(frozen=True)
class Layout:
    topic: str
    page: int
    """The 0-based page asked for."""
    shown_page: int
    """The catalogue page shown: ``page``, or the last page past the end (-1 when nothing is shown)."""
    cards: tuple[Card, ...]

    @property
    def repeated(self) -> bool:
        """Whether this is the last page served again past the end."""
        return self.shown_page != self.page and bool(self.cards)


def _tracking(seed: str, rank: int) -> list[tuple[str, str]]:
    hex_a = digest("cvid", seed)[:32].upper()
    hex_b = digest("msclkid", seed)[:32]
    variants = (
        [("ocid", "BingNewsSearch")],
        [("ocid", "BingNewsVerp"), ("cvid", hex_a)],
        [("cvid", hex_a), ("msclkid", hex_b)],
        [("utm_source", "bing"), ("utm_medium", "referral"), ("ocid", "BingNewsSearch")],
        [("msclkid", hex_b), ("utm_source", "bing"), ("utm_medium", "cpc"), ("utm_campaign", "news")],
        [("utm_source", "bing"), ("utm_content", f"card{rank}"), ("cvid", hex_a)],
    )
    return variants[number("variant", seed) % len(variants)]


def layout(topic: str, page: int, articles: Sequence[Article] | None = None) -> Layout:
    """The cards of ``topic``'s 0-based ``page``; past the last page, the last page's articles again.

    Tracking parameters, card ids and thumbnails are seeded by the page *asked for*, so a repeated last
    page has other tracking parameters than the original (the same clean URLs). ``articles``: the topic's whole
    list to lay out (a news world's, see :mod:`fake_engines.world`); None, the default: the catalogue's.
    """
    if articles is None:
        return _catalogue_layout(topic, page)
    return _layout(topic, page, tuple(articles))


@lru_cache(maxsize=256)
def _catalogue_layout(topic: str, page: int) -> Layout:
    return _layout(topic, page, tuple(all_articles(topic)) if page >= 0 and topic.strip() else ())


def _layout(topic: str, page: int, everything: tuple[Article, ...]) -> Layout:
    if page < 0 or not topic.strip() or not everything:
        return Layout(topic, page, -1, ())
    shown = min(page, -(-len(everything) // PER_PAGE) - 1)
    articles = everything[shown * PER_PAGE : (shown + 1) * PER_PAGE]
    cards = []
    for rank, article in enumerate(articles, start=1):
        seed = digest("bing-card", topic, page, rank, article.url)
        href = with_tracking(article.url, _tracking(seed, rank), seed)
        card_id = token("bing-id", seed, length=16)
        # thumbnails on about half the cards, always on the first
        thumb = f"/thumbs/{digest('bing-th', seed)[:16]}.png" if rank == 1 or number("thumb", seed) % 2 else None
        source_link = number("srclink", seed) % 3 != 0
        cards.append(Card(article, rank, card_id, href, thumb, source_link))
    return Layout(topic, page, shown, tuple(cards))


def expected_articles(topic: str, page: int, articles: Sequence[Article] | None = None) -> list[str]:
    """The clean publisher URLs a correct parser + normalizer stores for ``topic``'s 0-based ``page``.

    Page 0 is the full page (``/news/search``), page N >= 1 the fragment of ``first=N*10+1``. In card order,
    each once. Past the last page this is **the last page's articles** (what the engine shows there: Bing
    repeats its last page), so a spider must stop on repetition, not on an empty page. ``[]`` for a negative
    page or a blank topic. ``articles``: the topic's whole list (a news world's); None: the catalogue's.
    """
    seen: dict[str, None] = {}
    for card in layout(topic, page, articles).cards:
        seen.setdefault(card.article.url, None)
    return list(seen)


# -- sidebar noise ----------------------------------------------------------------------------------------

_TRENDING_HEADLINES = (
    "Storm front moves across the northern coast",
    "Central bank holds rates steady for a third month",
    "City council approves new transit plan",
    "Championship final goes to extra time",
    "Museum reopens after two-year renovation",
    "Quieter electric buses start service downtown",
    "Rail strike talks resume on Thursday",
    "Heatwave record broken in the south",
    "Harvest festival draws record crowds",
    "New bridge opens to cyclists and walkers",
)

_RELATED_SUFFIXES = ("news", "today", "latest", "live updates", "explained", "reactions", "timeline", "analysis")


@dataclass(frozen=True)
class TrendingItem:
    url: str
    headline: str


def trending(topic: str, page: int) -> tuple[TrendingItem, ...]:
    """The off-engine "Trending now" links of a results page (4 on the full page, 3 on a fragment)."""
    count = TRENDING_PER_PAGE if page <= 0 else 3
    items = []
    for i in range(count):
        seed = digest("bing-trend", topic, page, i)
        source = SOURCES[number("src", seed) % len(SOURCES)]
        url = f"https://www.{source.slug}.example/trending/{digest('path', seed)[:12]}"
        headline = _TRENDING_HEADLINES[(number("head", topic, page) + i) % len(_TRENDING_HEADLINES)]
        items.append(TrendingItem(url, headline))
    return tuple(items)


def sidebar_urls(topic: str, page: int) -> list[str]:
    """The off-engine sidebar URLs of ``topic``'s 0-based results ``page``; a parser must never store them."""
    return [item.url for item in trending(topic, page)]


def related_searches(topic: str, page: int) -> list[str]:
    """The queries of the on-engine "Related searches" links."""
    start = number("bing-rel", topic, page) % len(_RELATED_SUFFIXES)
    count = 5 if page <= 0 else 3
    return [f"{topic} {_RELATED_SUFFIXES[(start + i) % len(_RELATED_SUFFIXES)]}" for i in range(count)]
