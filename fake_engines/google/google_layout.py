"""Which article goes where on the fake Google's results pages: URLs, roles, tracking parameters, doc ids.

See :mod:`fake_engines.google` for what the pages share with the real News tab and what the roles are.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from urllib.parse import quote, quote_plus

from fake_engines.catalogue import (
    PER_PAGE,
    Article,
    all_articles,
    digest,
    number,
    with_tracking,
)
from fake_engines.markup import token

RESULTS_PATH = "/search"
TBS = "qdr:h,sbd:1"

ROLES = ("js", "duplicate", "wrapped_q", "wrapped_url", "no_ts")
TRACKING_PARAMS = ("utm_source", "utm_medium", "utm_campaign", "utm_content", "utm_term", "gclid", "ved")
"""Every tracking parameter the fake Google adds to publisher URLs (a normalizer must drop them all)."""

NO_RESULTS_MESSAGE = "did not match any news results."
CAPTCHA_SENTENCE = "Our systems have detected unusual traffic from your computer network"


def search_path(topic: str, start: int = 0) -> str:
    """The relative URL of a News-tab results page, as the real pager links it."""
    return f"{RESULTS_PATH}?q={quote_plus(topic)}&tbm=nws&tbs={TBS}&start={start}"


# -- layout: which article goes where -------------------------------------------------------------------


@dataclass(frozen=True)
class Slot:
    """One ``div[data-news-doc-id]`` of a results page."""

    article: Article
    role: str
    """plain, js, wrapped_q, wrapped_url, duplicate (first copy), duplicate_again (second copy) or no_ts."""
    rank: int
    """1-based position in ``#rso`` once the script ran (the JS result is last)."""
    doc_id: str
    ved: str
    target: str
    """The publisher URL with this slot's tracking parameters."""
    href: str
    """The link's ``href``: ``target``, or a relative ``/url?…`` wrapper of it."""
    ping: str
    thumb: str | None
    has_ts: bool


@dataclass(frozen=True)
class Layout:
    topic: str
    start: int
    total: int
    """How many articles the topic has over all its pages."""
    slots: tuple[Slot, ...]
    """In ``#rso`` order after the script ran; the JS slot is last. Empty past the last page."""

    @property
    def has_next(self) -> bool:
        return self.start + PER_PAGE < self.total

    @property
    def roles(self) -> dict[str, Article]:
        """Role name (see :data:`ROLES`) -> article."""
        return {slot.role: slot.article for slot in self.slots if slot.role in ROLES}

    @property
    def html_slots(self) -> tuple[Slot, ...]:
        return tuple(slot for slot in self.slots if slot.role != "js")

    @property
    def js_slot(self) -> Slot | None:
        return next((slot for slot in self.slots if slot.role == "js"), None)


def _tracking(seed: str, rank: int) -> list[tuple[str, str]]:
    variants = (
        [("utm_source", "google"), ("utm_medium", "news"), ("utm_campaign", f"feed-{number('c', seed) % 900 + 100}")],
        [("gclid", "Cj0KCQ" + token("gclid", seed))],
        [("utm_source", "googlenews"), ("utm_medium", "referral"), ("ved", "2ahUKEw" + token("v", seed, length=20))],
        [("ved", "0ahUKEw" + token("v2", seed, length=18)), ("utm_content", f"r{rank}")],
        [("utm_source", "google"), ("utm_medium", "organic"), ("utm_term", "news"), ("gclid", token("g2", seed))],
    )
    return variants[number("variant", seed) % len(variants)]


def layout(topic: str, page: int, articles: Sequence[Article] | None = None) -> Layout:
    """The layout of ``topic``'s 0-based ``page`` (``start = page * 10``).

    ``articles``: the topic's whole list to lay out (a news world's, see :mod:`fake_engines.world`); None,
    the default: the catalogue's."""
    return layout_at(topic, page * PER_PAGE, articles)


def layout_at(topic: str, start: int, articles: Sequence[Article] | None = None) -> Layout:
    """The layout of the results page of ``topic`` at offset ``start`` (of ``articles``, default the catalogue's)."""
    if articles is None:
        return _catalogue_layout_at(topic, start)
    return _layout_at(topic, start, tuple(articles))


@lru_cache(maxsize=256)
def _catalogue_layout_at(topic: str, start: int) -> Layout:
    return _layout_at(topic, start, tuple(all_articles(topic)))


def _layout_at(topic: str, start: int, everything: tuple[Article, ...]) -> Layout:
    articles = everything[start : start + PER_PAGE] if start >= 0 else ()
    if not articles:
        return Layout(topic, start, len(everything), ())
    order = sorted(range(len(articles)), key=lambda i: digest("role", topic, start, i))
    # every role on a page of 6 or more (every catalogue page); a shorter page (a news world's last one) keeps
    # at least one plain result, so a page of one article has it in its HTML
    roles = ROLES[: min(len(ROLES), len(articles) - 1)]
    role_of = {order[k]: role for k, role in enumerate(roles)}

    # #rso order: the HTML results (catalogue order, the duplicate's second copy 3 places after the first),
    # then the JS result.
    placed: list[tuple[Article, str]] = [
        (a, role_of.get(i, "plain")) for i, a in enumerate(articles) if role_of.get(i) != "js"
    ]
    first = next((k for k, (_, role) in enumerate(placed) if role == "duplicate"), None)
    if first is not None:
        placed.insert(min(first + 4, len(placed)), (placed[first][0], "duplicate_again"))
    js_index = next((i for i, role in role_of.items() if role == "js"), None)
    if js_index is not None:
        placed.append((articles[js_index], "js"))

    slots = []
    for rank, (article, role) in enumerate(placed, start=1):
        seed = digest("slot", topic, start, rank, article.url)
        ved = "2ahUKEw" + token("ved", seed, length=30)
        usg = "AOvVaw" + token("usg", seed, length=22)
        target = with_tracking(article.url, _tracking(seed, rank), seed)
        encoded = quote(target, safe="")
        if role == "wrapped_q":
            href = f"/url?q={encoded}&sa=U&ved={ved}&usg={usg}"
        elif role == "wrapped_url":
            href = f"/url?sa=t&url={encoded}&ved={ved}&usg={usg}"
        else:
            href = target
        ping = f"/url?sa=t&source=web&rct=j&opi=89978449&url={encoded}&ved={ved}"
        doc_id = token("doc", seed, length=14)
        thumb = f"/thumbs/{doc_id}.png" if rank <= 4 and role != "js" else None
        slots.append(Slot(article, role, rank, doc_id, ved, target, href, ping, thumb, role != "no_ts"))
    return Layout(topic, start, len(everything), tuple(slots))


def expected_articles(topic: str, page: int, articles: Sequence[Article] | None = None) -> list[str]:
    """The clean publisher URLs a correct parser + normalizer stores for ``topic``'s 0-based ``page``.

    In ``#rso`` order (the JS result last), each once; ``[]`` past the last page. The same set as the
    catalogue's ``articles_for(topic, page)`` (or as ``articles[page * 10 : page * 10 + 10]`` when given).
    """
    seen: dict[str, None] = {}
    for slot in layout(topic, page, articles).slots:
        seen.setdefault(slot.article.url, None)
    return list(seen)
