"""Bing-News-like pages for the fake Bing (markup written for this project).

What the pages share with the real Bing News (what a Bing spider relies on, see ENGINES.md):

* the full results page ``/news/search?q=Q&qft=interval%3d%224%22+sortbydate%3d%221%22&form=PTFTNR`` (any
  ``qft``/``form`` is accepted and ignored) and the paging endpoint
  ``/news/infinitescrollajax?q=Q&InfiniteScroll=1&first=N*10+1&SFX=N``, which answers an HTML *fragment*
  (no ``html``/``head``/``body``) of about 10 cards; page N (0-based) is ``(first - 1) // 10``;
* each result a ``div.news-card.newsitem`` (under ``div#algocore`` on the full page) whose ``url`` and
  ``data-url`` attributes and ``a.title[href]`` hold the publisher URL itself (Bing does not wrap links), with
  Bing-ish tracking parameters (``ocid``, ``cvid``, ``msclkid``, ``utm_*``) that vary per card; title in
  ``data-title`` and as the text of ``a.title`` (no heading element); source in ``data-author`` and as the text
  of an ``a`` (an on-engine ``/news/search?q=site%3a…`` link) or a ``span`` in ``div.source``; snippet
  ``div.snippet`` (also in its ``title`` attribute); time the ``aria-label`` of
  ``div.source span[tabindex="0"]`` ("2 hours ago", visible text "2h");
* localised times: with ``Accept-Language: nl…`` (or ``setlang=nl``, or ``mkt=nl-NL``) the page is
  ``<html lang="nl">`` and the labels are Dutch ("35 minuten geleden", "2 uur geleden", visible "2u"); only
  the times and a few labels are localised — the no-results sentence stays English;
* **past the end Bing repeats its last page**: ``first`` beyond the topic's last page serves the last
  page's cards again (other tracking parameters and card ids, the same articles);
* a block is a 302 to ``/turing/captcha/challenge?q=&iid=…&vid=…&redirect=<the blocked URL>``, which serves
  a 200 challenge page (``div#turingcaptcha``, "Please solve the challenge below to continue");
* a genuine "no results" page says "There are no results for <b>Q</b>".

Every results page (full or fragment) also carries sidebar noise outside the cards: on-engine "Related
searches" links and a "Trending now" list of off-engine articles that are not in the topic's catalogue
(:func:`sidebar_urls`). A correct parser stores neither.

With a news world (``FakeEngines(..., world=…)``, see :mod:`fake_engines.world`) the cards come from the
world's list of the topic on Bing at the request's world time instead of the catalogue's, paged (and repeated past
the end) the same way.

Consent walls in front of results (``fakes.consent("bing", …)``, English or French): the cookie notice alone, a
``div#bnp_container`` with the buttons ``#bnp_btn_reject`` / ``#bnp_btn_accept`` and no cards; see
:mod:`fake_engines.consent_pages`.

Page kinds of results requests (both paths): results, empty, blank, small, captcha. On the paging endpoint
``empty`` is a fragment with zero cards carrying the same no-results sentence, ``blank`` a fragment with
zero cards and no sentence (a disguised block: the real endpoint never answers zero cards for a query that
has results, it repeats its last page), ``small`` the same tiny page as on the full path. That the real
endpoint says "There are no results for" in a fragment is unconfirmed; the fake says it so that one
classifier rule covers both paths.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from urllib.parse import parse_qsl, quote, quote_plus, urlencode, urlsplit

from fake_engines import consent_pages as consent
from fake_engines.catalogue import (
    PER_PAGE,
    SOURCES,
    Article,
    all_articles,
    digest,
    number,
    with_tracking,
)
from fake_engines.engine_pages import EnginePages, Reply, RequestContext
from fake_engines.markup import esc, filler_css, token

SEARCH_PATH = "/news/search"
SCROLL_PATH = "/news/infinitescrollajax"
RESULTS_PATHS = (SEARCH_PATH, SCROLL_PATH)
CAPTCHA_PATH = "/turing/captcha/challenge"
QFT = 'interval="4" sortbydate="1"'
"""Past hour, newest first (``qft=interval%3d%224%22+sortbydate%3d%221%22`` in a URL)."""
FORM = "PTFTNR"
INVALID_HOST = "http://assets.fake-engine.invalid"
"""A host that never resolves (``.invalid``): page weight that can never leave the machine."""

TRACKING_PARAMS = ("ocid", "cvid", "msclkid", "utm_source", "utm_medium", "utm_campaign", "utm_content")
"""Every tracking parameter the fake Bing adds to publisher URLs (a normalizer must drop them all)."""

LAST_PAGE_REPEATS = True
"""Past the last page the paging endpoint serves the last page's cards again (like the real Bing)."""

NO_RESULTS_MESSAGE = "There are no results for"
CAPTCHA_SENTENCE = "Please solve the challenge below to continue"

CONSENT_PATH = "/cookieconsent"
"""The cookie notice on the consent host: ``/cookieconsent?ru=<results URL>&setlang=…``."""
CONSENT_SAVE_PATH = "/cookieconsent/save"
CONSENT_COOKIE = "BCP"
CONSENT_LANGUAGES = ("en", "fr")

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


# -- markup ---------------------------------------------------------------------------------------------


_LABELS = {
    "en": {
        "related": "Related searches",
        "trending": "Trending now",
        "recent": "Most recent",
        "hour": "Past hour",
        "news": "News",
        "all": "All",
        "images": "Images",
        "videos": "Videos",
        "people": "People also search for",
        "title": "Bing News",
    },
    "nl": {
        "related": "Gerelateerde zoekopdrachten",
        "trending": "Populair nu",
        "recent": "Meest recent",
        "hour": "Afgelopen uur",
        "news": "Nieuws",
        "all": "Alles",
        "images": "Afbeeldingen",
        "videos": "Video's",
        "people": "Mensen zoeken ook naar",
        "title": "Bing Nieuws",
    },
}


_STYLE = """\
@font-face{font-family:'Fake Segoe';font-style:normal;font-weight:400;font-display:swap;
  src:url(/fonts/fakesegoe-regular.woff2) format('woff2');}
body{margin:0;font-family:'Fake Segoe',Arial,Helvetica,sans-serif;font-size:14px;color:#444}
#b_header{display:flex;align-items:center;gap:20px;padding:16px 24px;border-bottom:1px solid #ececec}
#sb_form input{width:520px;height:38px;border:1px solid #ddd;border-radius:20px;padding:0 16px}
.b_scopebar a,.b_scopebar span{margin-right:18px;color:#666;text-decoration:none}
.main-container{display:flex;gap:40px;padding:20px 24px 20px 160px}
#algocore{width:680px}
.news-card{display:flex;margin-bottom:22px;border-bottom:1px solid #f2f2f2;padding-bottom:14px}
.news-card .image img{width:100px;height:100px;border-radius:6px;margin-right:14px}
.news-card a.title{font-size:18px;line-height:24px;color:#001ba0;text-decoration:none}
.news-card .snippet{margin:6px 0;color:#444;line-height:20px}
.news-card .source{font-size:12px;color:#767676}
.news-card .source a{color:#767676;text-decoration:none}
.b_sidebar{width:300px;font-size:13px}
.b_secttl{font-size:16px;font-weight:600;margin:0 0 8px}
.b_sidebar ul{list-style:none;margin:0 0 24px;padding:0}
.b_sidebar li{margin:0 0 8px}
.b_no{padding:12px 0 40px}
"""

_HEAD = """\
<!DOCTYPE html>
<html lang="{lang}" dir="ltr" xmlns="http://www.w3.org/1999/xhtml">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="origin-when-cross-origin">
<title>{title}</title>
<script type="text/javascript" nonce="{nonce}">//<![CDATA[
_G={{Region:"{region}",Lang:"{lang}-{region}",ST:(typeof si_ST!=="undefined"?si_ST:new Date),IG:"{ig}",V:"news"}};
//]]></script>
<style type="text/css">
{style}
</style>
<style type="text/css">
{boilerplate}
</style>
<link rel="stylesheet" href="{invalid}/rp/news-sr.css" type="text/css">
<link rel="icon" href="/favicon.ico">
</head>
"""

_HEADER = """\
<body class="b_news" id="b_news_body">
<header id="b_header" role="banner">
  <a id="bLogo" href="/" title="Fake Bing"><img src="/thumbs/bing-logo.png" alt="Fake Bing" width="60" height="24"></a>
  <form action="/news/search" id="sb_form" role="search" method="get">
    <input id="sb_form_q" class="b_searchbox" name="q" type="search" value="{q}" aria-label="Enter your search term" maxlength="1000" autocomplete="off">
    <input type="hidden" name="FORM" value="HDRSC6">
    <button type="submit" id="sb_form_go" aria-label="Search">Search</button>
  </form>
</header>
<nav class="b_scopebar" role="navigation" aria-label="Search filter">
  <a href="/search?q={q_url}&amp;FORM=HDRSC1">{all}</a>
  <a href="/images/search?q={q_url}&amp;FORM=HDRSC2">{images}</a>
  <a href="/videos/search?q={q_url}&amp;FORM=HDRSC3">{videos}</a>
  <span class="b_active" aria-current="page">{news}</span>
  <span class="fs_label" id="ns_sortby">{recent}</span> <span class="fs_label" id="ns_interval">{hour}</span>
</nav>
"""

_MAIN = """\
<div id="contentid" class="main-container" role="main">
<div class="news-container">
{notice}<div class="content-refresh-container">
<div id="algocore" class="algocore">
{cards}</div>
</div>
{sentinel}</div>
{sidebar}</div>
"""

_FOOTER = """\
<footer id="b_footer" role="contentinfo">
  <span>Fake results for local tests. Nothing here comes from a real search engine.</span>
  <a href="/robots.txt">robots.txt</a>
  <img src="{invalid}/rp/footer-pixel.gif" alt="" width="1" height="1">
</footer>
</body>
</html>
"""

_CARD = """\
<div class="news-card newsitem cardcommon" data-id="{card_id}" url="{href}" data-author="{source}" data-title="{title}" data-url="{href}" data-eventpayload="" data-fc="" data-k="{rank}">
  <div class="news-card-body card-with-cluster">
{thumb}    <div class="caption">
      <a class="title" href="{href}" target="_blank" data-author="{source}" h="ID=news,{h}">{title}</a>
      <div class="snippet" title="{snippet}">{snippet}</div>
      <div class="source set_top">
        {source_html}
        <span tabindex="0" aria-label="{aria}">{compact}</span>
      </div>
    </div>
  </div>
</div>
"""

_THUMB = """\
    <a class="image" href="{href}" target="_blank" tabindex="-1" aria-hidden="true"><img class="rms_img" src="{src}" alt="" width="100" height="100" role="presentation"></a>
"""

_NO_RESULTS = """\
<div class="b_no" role="alert">
  <h1>There are no results for <b>{q}</b></h1>
  <ul>
    <li>Check your spelling or try different keywords</li>
    <li>Try a broader time range</li>
  </ul>
  <p>Ref A: {ref}</p>
</div>
"""


def _card_html(card: Card, lang: str) -> str:
    a = card.article
    host = urlsplit(a.url).hostname or ""
    if card.source_link:
        site = quote_plus(f"site:{host}")
        source_html = f'<a class="publabel" href="/news/search?q={esc(site)}&amp;FORM=NWBCLM">{esc(a.source)}</a>'
    else:
        source_html = f'<span class="publabel">{esc(a.source)}</span>'
    return _CARD.format(
        card_id=esc(card.card_id),
        href=esc(card.href),
        source=esc(a.source),
        title=esc(a.title),
        rank=card.rank,
        h=5000 + number("h", card.card_id) % 1000,
        snippet=esc(a.snippet),
        source_html=source_html,
        aria=esc(aria_label(a.age_seconds, lang)),
        compact=esc(compact_age(a.age_seconds, lang)),
        thumb=_THUMB.format(href=esc(card.href), src=esc(card.thumb)) if card.thumb else "",
    )


def _sidebar_html(topic: str, page: int, lang: str, tag: str = "aside") -> str:
    labels = _LABELS[lang]
    related = "\n".join(
        f'    <li><a href="{esc(SEARCH_PATH + "?q=" + quote_plus(query) + "&FORM=NWRFSH")}">{esc(query)}</a></li>'
        for query in related_searches(topic, page)
    )
    trend = "\n".join(
        f'    <li><a href="{esc(item.url)}" target="_blank">{esc(item.headline)}</a></li>'
        for item in trending(topic, page)
    )
    title = labels["related"] if page <= 0 else labels["people"]
    return (
        f'<{tag} class="b_sidebar" aria-label="{esc(title)}">\n'
        f'  <div id="relatedSearches" class="b_rs"><div class="b_secttl">{esc(title)}</div>\n  <ul>\n{related}\n  </ul></div>\n'
        f'  <div class="ns_trending"><div class="b_secttl">{esc(labels["trending"])}</div>\n  <ul>\n{trend}\n  </ul></div>\n'
        f"</{tag}>\n"
    )


def render_full_page(
    topic: str, page: int, lang: str, now: float, kind: str = "results", articles: Sequence[Article] | None = None
) -> tuple[str, str]:
    """The HTML of a full results page and the kind served ("results" with nothing to show is "empty").

    ``articles``: the topic's whole list (a news world's); None: the catalogue's."""
    lay = layout(topic, page, articles) if kind == "results" else None
    if kind == "results" and (lay is None or not lay.cards):
        kind = "empty"
    labels = _LABELS[lang]
    region = "NL" if lang == "nl" else "US"
    nonce = token("bing-nonce", topic, page, int(now))
    head = _HEAD.format(
        lang=lang,
        region=region,
        title=esc(f"{topic} - {labels['title']}"),
        nonce=nonce,
        ig=digest("ig", topic, page, int(now))[:32].upper(),
        style=_STYLE,
        boilerplate=filler_css("bing", 420, "b_"),
        invalid=INVALID_HOST,
    )
    header = _HEADER.format(q=esc(topic), q_url=esc(quote_plus(topic)), **labels)
    cards = notice = sentinel = sidebar = ""
    if kind == "results" and lay is not None:
        cards = "".join(_card_html(card, lang) for card in lay.cards)
        sentinel = (
            f'<div id="ns_infinitescroll" class="infinitescroll-sentinel" '
            f'data-ajaxurl="{esc(scroll_path(topic, page + 1))}" aria-hidden="true"></div>\n'
        )
        sidebar = _sidebar_html(topic, page, lang)
    elif kind == "empty":
        notice = _NO_RESULTS.format(q=esc(topic), ref=digest("ref", topic, int(now))[:32].upper())
    elif kind == "blank":
        sidebar = _sidebar_html(topic, page, lang)  # looks like a normal page, just without cards
    main = _MAIN.format(notice=notice, cards=cards, sentinel=sentinel, sidebar=sidebar)
    return head + header + main + _FOOTER.format(invalid=INVALID_HOST), kind


def render_fragment(
    topic: str, page: int, lang: str, kind: str = "results", articles: Sequence[Article] | None = None
) -> tuple[str, str]:
    """The HTML fragment of the paging endpoint and the kind served (``articles`` as for :func:`render_full_page`)."""
    lay = layout(topic, page, articles) if kind == "results" else None
    if kind == "results" and (lay is None or not lay.cards):
        kind = "empty"
    first = page * PER_PAGE + 1
    if kind == "empty":
        return _NO_RESULTS.format(q=esc(topic), ref=digest("ref", topic, page)[:32].upper()), kind
    cards = "".join(_card_html(card, lang) for card in lay.cards) if kind == "results" and lay else ""
    body = f'<div class="ns_infinitescroll_page" data-first="{first}" data-sfx="{page}" lang="{lang}">\n{cards}</div>\n'
    return body + _sidebar_html(topic, page, lang, tag="div"), kind


_CAPTCHA = """\
<!DOCTYPE html>
<html lang="en" dir="ltr">
<head>
<meta charset="utf-8">
<meta name="robots" content="noindex, nofollow">
<title>Bing</title>
<script src="{invalid}/rp/turing-challenge.js" async defer></script>
</head>
<body>
<div id="b_captcha" class="captcha">
  <img src="/thumbs/bing-logo.png" alt="Bing" width="60" height="24">
  <h1 class="captcha_header">One last step</h1>
  <p class="captcha_text">Please solve the challenge below to continue</p>
  <div id="turingcaptcha" class="turing-challenge" data-iid="captcha.challenge" data-vid="{vid}"></div>
  <form id="turingcaptchaform" action="/turing/captcha/verify" method="post">
    <input type="hidden" name="iid" value="captcha.challenge">
    <input type="hidden" name="vid" value="{vid}">
    <input type="hidden" name="redirect" value="{redirect}">
    <button type="submit" id="turing_submit">Continue</button>
  </form>
</div>
</body>
</html>
"""

_HOME = """\
<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Bing News</title></head>
<body class="b_news_home"><div id="b_header"><img src="/thumbs/bing-logo.png" alt="Fake Bing" width="60" height="24">
<form action="/news/search" id="sb_form" role="search" method="get"><input id="sb_form_q" name="q" aria-label="Enter your search term">
<input type="hidden" name="FORM" value="NWBHOM"><button type="submit">Search</button></form></div></body></html>
"""

_SMALL = "<!DOCTYPE html><html><head><title>Bing</title></head><body></body></html>\n"

_ROBOTS = """\
User-agent: *
Disallow: /account/
Disallow: /search
Disallow: /news/search
Disallow: /news/infinitescrollajax
Disallow: /turing/
Allow: /news$
"""


_CONSENT_TEXTS = {
    "en": {
        "title": "Bing",
        "heading": "We value your privacy",
        "text": "Microsoft and its partners use cookies and similar technologies to deliver, maintain and improve "
        "Bing, to keep it safe and, with your permission, to personalise the ads you see and measure how "
        "they perform.",
        "choose": "Choose \u201cAccept\u201d to allow these optional cookies, or \u201cReject\u201d to refuse them. "
        "You can change your choice at any time in the settings.",
        "reject": "Reject",
        "accept": "Accept",
        "privacy": "Privacy Statement",
        "manage": "Manage preferences",
    },
    "fr": {
        "title": "Bing",
        "heading": "Votre vie privée compte pour nous",
        "text": "Microsoft et ses partenaires utilisent des cookies et des technologies similaires pour fournir, "
        "maintenir et améliorer Bing, pour le sécuriser et, avec votre accord, pour personnaliser les "
        "publicités que vous voyez et en mesurer l'efficacité.",
        "choose": "Choisissez \u00ab\u00a0Accepter\u00a0\u00bb pour autoriser ces cookies facultatifs, ou "
        "\u00ab\u00a0Refuser\u00a0\u00bb pour les refuser. Vous pouvez modifier votre choix à tout "
        "moment dans les paramètres.",
        "reject": "Refuser",
        "accept": "Accepter",
        "privacy": "Déclaration de confidentialité",
        "manage": "Gérer les préférences",
    },
}

_CONSENT = """\
<!DOCTYPE html>
<html lang="{lang}" dir="ltr">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex, nofollow">
<title>{title}</title>
<style type="text/css">
body{{margin:0;font-family:'Fake Segoe',Arial,Helvetica,sans-serif;font-size:14px;color:#444;background:#f5f5f5}}
.bnp_cookie_banner{{max-width:720px;margin:10vh auto;padding:24px 28px;background:#fff;border-radius:8px}}
.bnp_title{{font-size:20px;font-weight:600;margin:12px 0}}
.bnp_btn_row{{display:flex;gap:12px;margin-top:20px}}
.bnp_btn_row button{{min-width:160px;height:36px;border:1px solid #174ae4;border-radius:18px;background:#fff}}
#bnp_btn_accept{{background:#174ae4;color:#fff}}
</style>
</head>
<body class="b_consent">
<div id="bnp_container" class="bnp_cookie_banner" role="dialog" aria-modal="true" aria-labelledby="bnp_title">
  <img src="/thumbs/bing-logo.png" alt="Bing" width="60" height="24">
  <div id="bnp_title" class="bnp_title">{heading}</div>
  <p id="bnp_text">{text}</p>
  <p>{choose} <a href="{invalid}/privacystatement">{privacy}</a></p>
  <form id="bnp_form" method="post" action="{action}">
    <input type="hidden" name="ru" value="{ru}">
    <input type="hidden" name="setlang" value="{lang}">
    <div class="bnp_btn_row">
      <button type="submit" id="bnp_btn_reject" class="bnp_btn" name="choice" value="reject">{reject}</button>
      <button type="submit" id="bnp_btn_accept" class="bnp_btn" name="choice" value="accept">{accept}</button>
    </div>
  </form>
  <a id="bnp_btn_preference" href="{manage_href}">{manage}</a>
</div>
</body>
</html>
"""


def render_consent(ru: str, lang: str = "en") -> str:
    """The cookie notice alone (no cards): back to ``ru`` once answered, in ``lang`` (en, fr)."""
    manage = f"{CONSENT_PATH}?{urlencode({'ru': ru, 'setlang': lang, 'manage': '1'})}"
    return _CONSENT.format(
        lang=lang,
        action=CONSENT_SAVE_PATH,
        ru=esc(ru),
        invalid=INVALID_HOST,
        manage_href=esc(manage),
        **{key: esc(value) for key, value in _CONSENT_TEXTS[lang].items()},
    )


def render_captcha(redirect: str, vid: str) -> str:
    """The Turing challenge page (served with 200) for a blocked ``redirect`` URL."""
    return _CAPTCHA.format(invalid=INVALID_HOST, vid=esc(vid), redirect=esc(redirect))


class BingPages(EnginePages):
    name = "bing"
    page_kinds = frozenset({"results", "empty", "blank", "small", "captcha"})
    query_param = "q"

    def is_results(self, ctx: RequestContext) -> bool:
        return ctx.path in RESULTS_PATHS

    def render(self, kind: str, ctx: RequestContext) -> Reply:
        topic = ctx.query.get("q", "")
        page = requested_page(ctx)
        lang = page_lang(ctx)
        headers = [("Content-Language", "nl-NL" if lang == "nl" else "en-US")]
        if kind in ("results", "empty", "blank"):
            articles = ctx.articles_of(topic) if kind == "results" and topic.strip() else None
            if ctx.path == SCROLL_PATH:
                body, served = render_fragment(topic, page, lang, kind, articles)
            else:
                body, served = render_full_page(topic, page, lang, ctx.now, kind, articles)
            return Reply(200, body, headers=headers, served=served)
        if kind == "small":
            return Reply(200, _SMALL, served="small")
        if kind == "captcha":
            vid = digest("vid", ctx.url, int(ctx.now))[:32].upper()
            target = (
                f"{ctx.base_url}{CAPTCHA_PATH}?q=&iid=captcha.challenge&vid={vid}&redirect={quote(ctx.url, safe='')}"
            )
            body = (
                f"<html><head><title>Object moved</title></head><body>\n"
                f'<h2>Object moved to <a href="{esc(target)}">here</a>.</h2>\n</body></html>\n'
            )
            return Reply(302, body, headers=[("Location", target)], served="captcha")
        raise ValueError(f"unknown page kind {kind!r}")

    # -- consent walls ------------------------------------------------------------------------------

    consent_languages = CONSENT_LANGUAGES
    consent_cookies = (CONSENT_COOKIE,)

    def consent_cookie_value(self, choice: str, ctx: RequestContext) -> str:
        return "AD=1&AL=1&SM=1" if choice == "accept" else "AD=0&AL=0&SM=0"

    def consent_wall(self, ctx: RequestContext) -> Reply:
        lang = ctx.consent_language
        return consent.wall_reply(render_consent(ctx.url, lang), lang, [("Content-Language", _content_language(lang))])

    def consent_redirect(self, ctx: RequestContext) -> Reply:
        query = urlencode({"ru": ctx.url, "setlang": ctx.consent_language})
        return consent.redirect(f"{ctx.consent_base_url}{CONSENT_PATH}?{query}", "consent_redirect")

    def other(self, ctx: RequestContext) -> Reply | None:
        path = ctx.path
        if path in ("/", "/news"):
            return Reply(200, _HOME, served="home")
        if path == CAPTCHA_PATH:
            redirect = ctx.query.get("redirect", "")
            if ctx.method == "POST":
                form = dict(parse_qsl(ctx.body.decode("utf-8", "replace")))
                redirect = form.get("redirect", redirect)
            vid = ctx.query.get("vid") or digest("vid", redirect)[:32].upper()
            return Reply(200, render_captcha(redirect, vid), served="captcha")
        if path == "/robots.txt":
            return Reply(200, _ROBOTS, "text/plain", served="robots")
        if path == CONSENT_PATH and ctx.method in ("GET", "HEAD"):
            lang = consent.wall_language(self, ctx, ctx.query.get("setlang"))
            body = render_consent(consent.safe_continue(ctx.query.get("ru", ""), ctx), lang)
            return consent.wall_reply(body, lang, [("Content-Language", _content_language(lang))])
        if path == CONSENT_SAVE_PATH and ctx.method == "POST":
            form = dict(parse_qsl(ctx.body.decode("utf-8", "replace"), keep_blank_values=True))
            return consent.save_reply(self, ctx, consent.parse_choice(form.get("choice")), form.get("ru", "/"))
        return None


def _content_language(lang: str) -> str:
    return {"fr": "fr-FR", "nl": "nl-NL"}.get(lang, "en-US")


PAGES = BingPages()
