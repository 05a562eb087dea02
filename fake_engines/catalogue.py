"""The articles the fake engines show: deterministic, shared by every engine.

Every topic has a fixed list of articles (newest first), cut into pages. The same topic gives the same
articles on every run and machine (everything derives from SHA-256 of the topic, never from ``hash()``),
so an engine's pages can add their own tracking parameters and wrappers around the *same* publisher
URLs, and a test can compute what a correct scraper must store.

Pages are **0-based**, like the spiders' ``page`` (page 0 is the first page, ``start=0`` on Google).
With the default ``per_page`` of 10 a topic has 2 or 3 pages; the last one holds 6 to 10 articles.
Past the last page :func:`articles_for` returns ``[]``.

Article URLs are clean publisher URLs on ``.example`` hosts (reserved, never resolve), either
``https://www.<source-slug>.example/<yyyy>/<topic-slug>-<n>`` or, for the sources that use ids,
``https://www.<source-slug>.example/story?id=<digits>`` — there the ``id`` parameter is meaningful
and a normalizer must keep it.

This is the static world every engine serves by default. :mod:`fake_engines.world` is the evolving one
(``FakeEngines(..., world=NewsWorld())``): the same :class:`Article` objects, sources and ``.example`` hosts, other
URLs, a stream of new articles per topic and a part of it per engine.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

PER_PAGE = 10
"""Articles per page on every fake engine."""

YEAR = 2025
"""The year in the path of the path-style article URLs (a constant, so URLs never change)."""


@dataclass(frozen=True)
class Source:
    name: str
    slug: str
    id_urls: bool = False
    """Whether this publisher's URLs are ``/story?id=<digits>`` rather than ``/<yyyy>/<slug>-<n>``."""


SOURCES: tuple[Source, ...] = (
    Source("The Daily Ledger", "dailyledger"),
    Source("Harbor Times", "harbortimes"),
    Source("Northwind Gazette", "northwindgazette"),
    Source("Civic Wire", "civicwire", id_urls=True),
    Source("Meridian Post", "meridianpost"),
    Source("Lantern Herald", "lanternherald"),
    Source("Summit Chronicle", "summitchronicle"),
    Source("Riverbend Courier", "riverbendcourier", id_urls=True),
    Source("Atlas Report", "atlasreport"),
    Source("Pinecrest Tribune", "pinecresttribune"),
    Source("Granite Observer", "graniteobserver"),
    Source("Beacon Dispatch", "beacondispatch", id_urls=True),
    Source("Quayside News", "quaysidenews"),
    Source("Orchard Review", "orchardreview"),
)

_TITLES = (
    "{topic}: what we know so far",
    "Officials respond as {topic} story develops",
    "Live updates: {topic}",
    "Why {topic} matters this week",
    "{topic} draws reactions from across the region",
    "Analysis: the numbers behind {topic}",
    "Five questions about {topic}, answered",
    "{topic} latest: new details emerge",
    "Experts weigh in on {topic}",
    "What {topic} means for you",
    "Inside the debate over {topic}",
    "{topic}: a timeline of events",
)

_SNIPPETS = (
    "Reporters at {source} follow the latest developments on {topic} as they happen.",
    "New information about {topic} surfaced on Monday, according to people familiar with the matter.",
    "The discussion around {topic} continued today, with several groups issuing statements.",
    "Here is a short guide to {topic} and the questions readers have asked us most often.",
    "Local residents shared their views on {topic} in interviews with {source}.",
    "Figures released this morning shed new light on {topic}.",
)


@dataclass(frozen=True)
class Article:
    """One article of a topic. ``age_seconds`` is how old it is relative to *now* (whenever now is)."""

    url: str
    title: str
    source: str
    snippet: str
    age_seconds: int
    topic: str
    number: int
    """1-based position in the topic's whole list (``n`` in path-style URLs); in a news world
    (:mod:`fake_engines.world`), the article's ``k`` in its topic's endless stream."""
    source_slug: str

    def published_at(self, now: float) -> int:
        """The publication time as Unix seconds, for a page rendered at ``now``."""
        return int(now) - self.age_seconds


def digest(*parts: object) -> str:
    """A stable hex digest of ``parts`` (SHA-256): the seed of everything fake."""
    text = "\x1f".join(str(part) for part in parts)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def number(*parts: object) -> int:
    """A stable non-negative integer from ``parts``."""
    return int(digest(*parts)[:15], 16)


def with_tracking(url: str, params: list[tuple[str, str]], seed: str) -> str:
    """``url`` with the tracking ``params`` added to its query; where it has a meaningful parameter (``id``),
    the first tracking one goes before it on half the seeds."""
    if not params:
        return url
    parts = urlsplit(url)
    existing = parse_qsl(parts.query, keep_blank_values=True)
    pairs = params[:1] + existing + params[1:] if existing and number("order", seed) % 2 else existing + params
    return urlunsplit(parts._replace(query=urlencode(pairs)))


def topic_slug(topic: str) -> str:
    """ASCII slug of a topic for URL paths ("Climate Summit 2025" → "climate-summit-2025")."""
    ascii_text = unicodedata.normalize("NFKD", topic).encode("ascii", "ignore").decode("ascii")
    slug = re.sub(r"[^a-z0-9]+", "-", ascii_text.lower()).strip("-")[:60].strip("-")
    return slug or "topic-" + digest("slug", topic)[:8]


def page_count(topic: str, per_page: int = PER_PAGE) -> int:
    """How many pages ``topic`` has at ``per_page`` results a page (2 or 3 at the default 10)."""
    total = len(_all_articles(topic))
    return -(-total // per_page)


def all_articles(topic: str) -> list[Article]:
    """Every article of ``topic``, newest first."""
    return list(_all_articles(topic))


def articles_for(topic: str, page: int, per_page: int = PER_PAGE) -> list[Article]:
    """The articles of ``topic`` on 0-based ``page``, newest first; ``[]`` past the last page."""
    if page < 0 or per_page <= 0:
        return []
    return list(_all_articles(topic)[page * per_page : (page + 1) * per_page])


def articles_from(topic: str, offset: int, count: int = PER_PAGE) -> list[Article]:
    """``count`` articles of ``topic`` starting at ``offset`` (Google's ``start``)."""
    if offset < 0 or count <= 0:
        return []
    return list(_all_articles(topic)[offset : offset + count])


@lru_cache(maxsize=512)
def _all_articles(topic: str) -> tuple[Article, ...]:
    pages = 2 + number("pages", topic) % 2
    last_page = 6 + number("last", topic) % 5
    total = (pages - 1) * PER_PAGE + last_page
    slug = topic_slug(topic)
    id_base = 1000 + number("ids", topic) % 9000
    age = 120 + number("age0", topic) % 480  # the newest: 2 to 10 minutes old
    articles = []
    for n in range(1, total + 1):
        source = SOURCES[number("source", topic, n) % len(SOURCES)]
        if source.id_urls:
            url = f"https://www.{source.slug}.example/story?id={id_base * 100 + n}"
        else:
            url = f"https://www.{source.slug}.example/{YEAR}/{slug}-{n}"
        title = _TITLES[number("title", topic, n) % len(_TITLES)].format(topic=topic)
        snippet = _SNIPPETS[number("snippet", topic, n) % len(_SNIPPETS)].format(topic=topic, source=source.name)
        articles.append(Article(url, title, source.name, snippet, age, topic, n, source.slug))
        age += 240 + number("step", topic, n) % 720  # 4 to 16 minutes older than the previous one
    return tuple(articles)
