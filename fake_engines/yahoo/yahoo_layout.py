"""Which article goes where on the fake Yahoo's results pages: URLs, redirector and direct links, the sidebar's
links.

See :mod:`fake_engines.yahoo` for what the pages share with the real news search.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from urllib.parse import quote, quote_plus, urlsplit, urlunsplit

from fake_engines.catalogue import PER_PAGE, Article, all_articles, digest, number, with_tracking
from fake_engines.markup import relative_age, token

RESULTS_PATH = "/search"
REDIRECT_HOST = "r.search.yahoo.com"
"""The redirector's real host, kept as is: a browser never follows result links, the normalizer unwraps them."""

TRACKING_PARAMS = (
    "utm_source",
    "utm_medium",
    "utm_campaign",
    "utm_content",
    "guccounter",
    "guce_referrer",
    "guce_referrer_sig",
    "soc_src",
    "soc_trk",
    "ncid",
)
"""Every tracking query parameter the fake Yahoo adds to publisher URLs (a normalizer must drop them all)."""
PATH_PARAMS = ("_ylt", "_ylu")
"""Yahoo's path parameters (``/path;_ylt=…;_ylu=…``) on the direct links."""

VIA_SUFFIX = " · via Yahoo News"
TIME_SUFFIX = " · "


def search_path(topic: str, b: int = 1, btf: str | None = "d") -> str:
    """The relative URL of a results page, as the pager links it (``b`` is the 1-based offset)."""
    path = f"{RESULTS_PATH}?p={quote_plus(topic)}&b={b}&pz={PER_PAGE}"
    return path + (f"&btf={quote_plus(btf)}" if btf else "")


def page_of(b: object) -> int:
    """The 0-based page of a ``b`` parameter (missing or bad: page 0)."""
    try:
        offset = int(str(b))
    except ValueError:
        return 0
    return max(0, offset - 1) // PER_PAGE


def _ylu(rank: int, section: str = "sr") -> str:
    """A ``_ylu`` value shaped like Yahoo's (base64 of ``colo^Cbf1^Dpos^C<rank>…``, '=' as '-')."""
    raw = f"colo\x03bf1\x04pos\x03{rank}\x04vtid\x03\x04sec\x03{section}".encode()
    return base64.urlsafe_b64encode(raw).decode("ascii").replace("=", "-")


# -- layout: which article goes where -------------------------------------------------------------------


@dataclass(frozen=True)
class Slot:
    """One ``div.NewsArticle`` of a results page."""

    article: Article
    rank: int
    """1-based position on the page."""
    direct: bool
    """Whether the link goes straight to the publisher (with ``;_ylt=…;_ylu=…``) instead of the redirector."""
    target: str
    """Redirected items: the publisher URL with tracking parameters. Direct items: the direct href."""
    ylt: str
    ylu: str
    rs: str
    bid: str
    thumb: str | None
    via: bool
    """Whether the source text ends with " · via Yahoo News"."""

    def href(self, now: float) -> str:
        """The link's ``href`` on a page rendered at ``now`` (``RE=`` is an expiry time)."""
        if self.direct:
            return self.target
        encoded = quote(self.target, safe="")
        encoded = _lower_escapes(encoded)  # Yahoo writes https%3a%2f%2f…
        expires = int(now) + 86400
        return (
            f"https://{REDIRECT_HOST}/_ylt={self.ylt};_ylu={self.ylu}/RV=2/RE={expires}/RO=10"
            f"/RU={encoded}/RK=2/RS={self.rs}-"
        )

    @property
    def source_text(self) -> str:
        return self.article.source + (VIA_SUFFIX if self.via else "")

    @property
    def time_text(self) -> str:
        return relative_age(self.article.age_seconds) + TIME_SUFFIX


@dataclass(frozen=True)
class Layout:
    topic: str
    page: int
    total: int
    """How many articles the topic has over all its pages."""
    slots: tuple[Slot, ...]
    """Empty past the last page."""

    @property
    def pages(self) -> int:
        return -(-self.total // PER_PAGE)

    @property
    def has_next(self) -> bool:
        return (self.page + 1) * PER_PAGE < self.total


def _lower_escapes(text: str) -> str:
    return re.sub(r"%[0-9A-F]{2}", lambda match: match.group(0).lower(), text)


def _tracking(seed: str, rank: int) -> list[tuple[str, str]]:
    variants = (
        [("utm_source", "yahoo"), ("utm_medium", "referral"), ("utm_campaign", f"ynews-{number('c', seed) % 90 + 10}")],
        [
            ("guccounter", "1"),
            ("guce_referrer", "aHR0cHM6Ly9uZXdzLnNlYXJjaC55YWhvby5jb20v"),
            ("guce_referrer_sig", "AQAAA" + token("sig", seed, length=30)),
        ],
        [("soc_src", "social-sh"), ("soc_trk", "tw"), ("utm_source", "yahoo")],
        [("ncid", f"txtlnkusaolp{number('n', seed) % 10**8:08d}"), ("utm_content", f"r{rank}")],
        [("guccounter", "2"), ("utm_source", "yahoo_news"), ("utm_medium", "syndication")],
    )
    return variants[number("variant", seed) % len(variants)]


def _with_path_params(url: str, ylt: str, ylu: str) -> str:
    """``url`` with ``;_ylt=…;_ylu=…`` after its path (so before ``?id=`` on id-style URLs)."""
    parts = urlsplit(url)
    return urlunsplit(parts._replace(path=f"{parts.path};_ylt={ylt};_ylu={ylu}"))


def layout(topic: str, page: int, articles: Sequence[Article] | None = None) -> Layout:
    """The layout of ``topic``'s 0-based ``page`` (``b = page * 10 + 1``).

    ``articles``: the topic's whole list to lay out (a news world's, see :mod:`fake_engines.world`); None,
    the default: the catalogue's."""
    if articles is None:
        return _catalogue_layout(topic, max(0, page))
    return _layout(topic, max(0, page), tuple(articles))


@lru_cache(maxsize=256)
def _catalogue_layout(topic: str, page: int) -> Layout:
    return _layout(topic, page, tuple(all_articles(topic)))


def _layout(topic: str, page: int, everything: tuple[Article, ...]) -> Layout:
    total = len(everything)
    articles = everything[page * PER_PAGE : (page + 1) * PER_PAGE]
    if not articles:
        return Layout(topic, page, total, ())
    order = sorted(range(len(articles)), key=lambda i: digest("yahoo-role", topic, page, i))
    direct_count = 1 + number("yahoo-direct", topic, page) % 2
    direct = set(order[:direct_count])
    bare = set(order[direct_count : direct_count + 1])  # none when a short page (a news world's) is all direct
    if number("yahoo-bare", topic, page) % 3 == 0 and len(order) > direct_count + 1:
        bare.add(order[direct_count + 1])
    slots = []
    for i, article in enumerate(articles):
        rank = i + 1
        seed = digest("yahoo-slot", topic, page, rank, article.url)
        ylt = "Awr" + token("ylt", seed, length=24)
        ylu = _ylu(rank)
        if i in direct:
            target = _with_path_params(article.url, ylt, ylu)
        else:
            target = with_tracking(article.url, _tracking(seed, rank), seed)
        bid = token("bid", seed, length=12)
        has_thumb = rank <= 2 or number("yahoo-thumb", seed) % 3 == 0
        thumb = f"/thumbs/y{bid}.png" if has_thumb else None
        slots.append(
            Slot(article, rank, i in direct, target, ylt, ylu, token("rs", seed, length=26), bid, thumb, i not in bare)
        )
    return Layout(topic, page, total, tuple(slots))


def expected_articles(topic: str, page: int, articles: Sequence[Article] | None = None) -> list[str]:
    """The clean publisher URLs a correct parser + normalizer stores for ``topic``'s 0-based ``page``.

    In page order, each once; ``[]`` past the last page. The catalogue's ``articles_for(topic, page)`` (or
    ``articles[page * 10 : page * 10 + 10]`` when given: a news world's list).
    """
    return [slot.article.url for slot in layout(topic, page, articles).slots]


# -- sidebar noise --------------------------------------------------------------------------------------

_TRENDING_TERMS = (
    "mortgage rates",
    "weather radar",
    "stock market today",
    "nba scores",
    "gas prices",
    "solar eclipse",
    "election polls",
    "world cup qualifiers",
    "flu season",
    "tax refund status",
    "oscars nominations",
    "hurricane tracker",
    "bitcoin price",
    "school closings",
)
_TOP_SOURCES = ("eveningwire", "coastlinedaily", "metrobulletin", "frontiertimes", "capitoldigest")
"""Publishers of the "Top stories" links: none of them is a catalogue source."""
_TOP_HEADLINES = (
    "Storm system brings heavy rain to the coast",
    "Central bank holds rates steady for third month",
    "Museum reopens after two-year renovation",
    "Transit strike ends after overnight talks",
    "Researchers map a new deep-sea reef",
    "Airline adds routes ahead of holiday travel",
    "City council approves new housing plan",
    "Championship parade draws record crowds",
)


def trending_terms(topic: str, page: int) -> list[str]:
    """The "Trending Now" searches of a page (on-engine links to ``/search?p=…``)."""
    order = sorted(_TRENDING_TERMS, key=lambda term: digest("yahoo-trend", topic, page, term))
    return order[:6]


def top_stories(topic: str, page: int) -> list[tuple[str, str]]:
    stories = []
    for k in range(4):
        slug = _TOP_SOURCES[number("yahoo-top-src", topic, page, k) % len(_TOP_SOURCES)]
        headline = _TOP_HEADLINES[(number("yahoo-top", topic, page) + k) % len(_TOP_HEADLINES)]
        url = f"https://www.{slug}.example/trending/{token('yahoo-top', topic, page, k, length=12)}"
        stories.append((url, headline))
    return stories


def sidebar_urls(topic: str, page: int) -> list[str]:
    """The off-engine "Top stories" URLs of a results page: never in the catalogue, never to be stored."""
    return [url for url, _ in top_stories(topic, page)]
