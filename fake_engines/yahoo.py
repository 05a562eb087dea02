"""Yahoo-News-search-like pages for the fake Yahoo (markup written for this project).

What the pages share with the real news search (``news.search.yahoo.com``), per ENGINES.md:

* results URL ``/search?p=Q&b=1|11|21…&pz=10&btf=d`` (``b`` a 1-based offset, 10 results a page;
  ``b``, ``pz`` and ``btf`` may be missing); ``/search;_ylt=…?p=Q`` is accepted too;
* each result a ``div.NewsArticle`` inside an ``li`` of ``<div id="web"><ol class="… searchCenterMiddle">``;
  title and link ``h4.s-title > a``; source ``span.s-source`` ("Harbor Times · via Yahoo News", on some
  items just "Harbor Times"); time ``span.s-time`` ("9 minutes ago · ", with the trailing middle dot);
  snippet ``p.s-desc``; a thumbnail anchor with an ``<img>`` on some items;
* links go through Yahoo's redirector ``https://r.search.yahoo.com/_ylt=…;_ylu=…/RV=2/RE=<unix>/RO=10/
  RU=<percent-encoded target>/RK=2/RS=…-`` (the target carries tracking parameters, see
  :data:`TRACKING_PARAMS`); one or two items a page link directly to the publisher with Yahoo's
  ``;_ylt=…;_ylu=…`` path parameters after the path (before ``?id=`` on id-style URLs);
* the result items' own ``li`` carry class ``ov-a`` like the "Trending Now" items of the right column, so
  ``li.ov-a`` alone is a wrong selector: use ``#web ol.searchCenterMiddle div.NewsArticle``;
* pager ``div.compPagination`` with numbered links and ``a.next`` while there is a next page;
* no results: "We did not find results for: <strong>Q</strong>" and "Check spelling or type a new query.";
  past the last page of a topic the same page is served (a normal page, zero results);
* the consent interstitial: a 302 to ``/v2/collectConsent?sessionId=…`` (the real host is
  ``consent.yahoo.com``), or, older, a 302 to ``/consent?brandType=nonEu&gcrumb=…`` (``guce.yahoo.com``);
  the walls in front of results (``fakes.consent("yahoo", …)``, English or Italian) are described in
  :mod:`fake_engines.consent_pages`.

The chrome (the footer) of every search page links Yahoo country sites (:data:`COUNTRY_LINKS`), each with a
heading and a line of text, outside ``#web``: a known-layout parser never reads them.

Every results page also has sidebar noise in ``div#right``: "Trending Now" searches (``li.ov-a`` linking to
``/search?p=…``) and "Top stories", bare off-engine links to articles outside the catalogue
(:func:`sidebar_urls`). :func:`expected_articles` gives the clean URLs a correct scraper stores.

With a news world (``FakeEngines(..., world=…)``, see :mod:`fake_engines.world`) the items come from the
world's list of the topic on Yahoo at the request's world time instead of the catalogue's, 10 a page as above.

Page kinds of results requests: results, empty, blank, small, consent, guce.
Other paths: ``/``, ``/robots.txt``, ``/v2/collectConsent`` (GET page, POST answer), ``/consent`` (same).
"""

from __future__ import annotations

import base64
import re
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from urllib.parse import parse_qsl, quote, quote_plus, urlsplit, urlunsplit

from fake_engines import consent_pages as consent
from fake_engines.catalogue import (
    PER_PAGE,
    Article,
    all_articles,
    digest,
    number,
    with_tracking,
)
from fake_engines.engine_pages import EnginePages, Reply, RequestContext
from fake_engines.markup import (
    INVALID_HOST,
    esc,
    filler_css,
    relative_age,
    token,
)

RESULTS_PATH = "/search"
REDIRECT_HOST = "r.search.yahoo.com"
"""The redirector's real host, kept as is: a browser never follows result links, the normalizer unwraps them."""
INVALID_YAHOO = "https://search.fake-yahoo.invalid"
"""Where the other tabs (web, images…) point: a host that never resolves."""

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
NO_RESULTS_MESSAGE = "We did not find results for"
NO_RESULTS_HINT = "Check spelling or type a new query."
CONSENT_PATH = "/v2/collectConsent"
CONSENT_TITLE = "Yahoo is part of the Yahoo family of brands"
GUCE_PATH = "/consent"
GUCE_TITLE = "Yahoo is now part of Yahoo Inc."
CONSENT_COOKIE = "A1"
GUCE_COOKIE = "GUC"
CONSENT_LANGUAGES = ("en", "it")

COUNTRY_LINKS = (
    ("https://it.yahoo.com/", "Yahoo Italia", "Notizie, meteo, sport e finanza dall'Italia."),
    ("https://uk.news.yahoo.com/", "Yahoo News UK", "The latest headlines from Britain and around the world."),
)
"""Links of the page's chrome (its footer) to Yahoo country sites, each with a heading and a line of text:
never results (outside ``#web``, not in :func:`expected_articles`)."""


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


def _top_stories(topic: str, page: int) -> list[tuple[str, str]]:
    stories = []
    for k in range(4):
        slug = _TOP_SOURCES[number("yahoo-top-src", topic, page, k) % len(_TOP_SOURCES)]
        headline = _TOP_HEADLINES[(number("yahoo-top", topic, page) + k) % len(_TOP_HEADLINES)]
        url = f"https://www.{slug}.example/trending/{token('yahoo-top', topic, page, k, length=12)}"
        stories.append((url, headline))
    return stories


def sidebar_urls(topic: str, page: int) -> list[str]:
    """The off-engine "Top stories" URLs of a results page: never in the catalogue, never to be stored."""
    return [url for url, _ in _top_stories(topic, page)]


# -- markup ---------------------------------------------------------------------------------------------

_STYLE = """\
@font-face{font-family:'Fake Yahoo Sans';font-style:normal;font-weight:400;font-display:swap;
  src:url(/fonts/fakeyahoosans-regular.woff2) format('woff2');}
body{margin:0;font-family:'Fake Yahoo Sans',Helvetica,Arial,sans-serif;font-size:14px;color:#232a31}
#header{display:flex;align-items:center;gap:24px;padding:16px 24px;border-bottom:1px solid #e0e4e9}
#sf input[name=p]{width:560px;height:38px;border:1px solid #e0e4e9;border-radius:20px;padding:0 16px}
#horizontal-bar{padding:0 0 0 196px;border-bottom:1px solid #e0e4e9}
#results{display:flex;gap:48px;margin-left:196px}
#web{width:640px}
ol.searchCenterMiddle{list-style:none;margin:0;padding:0}
ol.searchCenterMiddle>li{margin:0 0 28px}
.NewsArticle{display:flex;gap:16px}
.NewsArticle .thmb img{border-radius:8px}
h4.s-title{font-size:18px;line-height:22px;margin:0 0 4px}
h4.s-title a{color:#1a0dab;text-decoration:none}
.s-source{color:#26282a;font-size:13px;margin-right:5px}
.s-time{color:#6e7780;font-size:13px}
.s-desc{color:#5b636a;margin:4px 0 0}
#right{width:300px}
#right li.ov-a a{color:#232a31;text-decoration:none}
.compPagination a,.compPagination strong{display:inline-block;padding:4px 9px}
.compPagination a.next{font-weight:bold}
"""

_HEAD = """\
<!DOCTYPE html>
<html lang="en" class="ltr">
<head>
<meta charset="UTF-8">
<meta name="referrer" content="origin-when-cross-origin">
<title>{title}</title>
<script>(function(){{window.YAHOO=window.YAHOO||{{}};YAHOO.SERP={{ylt:'{ylt}',spaceId:'2144413637',vertical:'news'}};}})();</script>
<style>
{style}
</style>
<style>
{boilerplate}
</style>
<link rel="stylesheet" href="{invalid}/ss/yahoo-news-serp.css">
</head>
"""

_HEADER = """\
<body class="news">
<div id="doc">
<div id="header" role="banner">
  <a id="logo" href="/" title="Yahoo News Search"><img src="/thumbs/logo-yahoo.png" alt="Yahoo News" width="90" height="26"></a>
  <form id="sf" name="s" action="/search" method="get" role="search">
    <input type="text" name="p" id="yschsp" value="{q}" aria-label="Search query" autocomplete="off">
    <input type="hidden" name="fr" value="uh3_news_vert_gs">
    <input type="hidden" name="fr2" value="sb-top">
    <button type="submit" class="sbb" aria-label="Search">Search</button>
  </form>
</div>
<div id="horizontal-bar" role="navigation">
  <ul class="tabs">
    <li><a href="{invalid_yahoo}/search?p={q_url}">All</a></li>
    <li><a href="{invalid_yahoo}/search/images?p={q_url}">Images</a></li>
    <li><a href="{invalid_yahoo}/search/video?p={q_url}">Videos</a></li>
    <li class="active"><span>News</span></li>
    <li><a href="{invalid_yahoo}/local/s?p={q_url}">Local</a></li>
  </ul>
  <div class="filters"><span class="active">Past day</span> <span>Sort by relevance</span></div>
</div>
<div id="results">
"""

_WEB = """\
<div id="cols" class="cols"><div id="main" role="main">
<div id="web">
<h2 class="off-left">Search results</h2>
<ol class="mb-15 reg searchCenterMiddle">
{items}</ol>
</div>
{pager}
</div></div>
"""

_ITEM = """\
<li class="ov-a{first}">
<div class="dd NewsArticle" data-bid="{bid}">
{thumb}  <div class="compTitle options-toggle">
    <h4 class="s-title fz-16 lh-20"><a href="{href}" target="_blank" referrerpolicy="unsafe-url" data-matarget="algo">{title}</a></h4>
    <div class="s-meta"><span class="s-source mr-5 cite-co">{source}</span><span class="fc-2nd s-time mr-8">{time}</span></div>
  </div>
  <p class="s-desc fz-14 lh-20">{snippet}</p>
</div>
</li>
"""

_THUMB = """\
  <a class="thmb" href="{href}" target="_blank" referrerpolicy="unsafe-url" aria-hidden="true" tabindex="-1"><img src="{src}" class="s-img" width="143" height="86" alt=""></a>
"""

_EMPTY = """\
<li class="first last">
<div class="dd zrp">
  <p class="fz-20 lh-24 mb-10">We did not find results for: <strong>{q}</strong></p>
  <p class="fz-14">Check spelling or type a new query.</p>
</div>
</li>
"""

_RIGHT = """\
<div id="right" role="complementary">
<div class="dd TrendingNow">
  <div class="fw-b fz-16 mb-10">Trending Now</div>
  <ol class="trending-list">
{trending}  </ol>
</div>
{top}</div>
"""

_TOP = """\
<div class="dd TopStories">
  <div class="fw-b fz-16 mb-10">Top stories</div>
  <ul class="top-list">
{items}  </ul>
</div>
"""

_FOOTER = """\
</div>
<div id="footer" role="contentinfo">
  <ul class="yahoo-sites" aria-label="Yahoo around the world">
{country_links}  </ul>
  <span>Fake results for local tests. Nothing here comes from a real search engine.</span>
  <a href="{invalid_yahoo}/privacy">Privacy</a> <a href="{invalid_yahoo}/terms">Terms</a>
  <img src="{invalid}/b?s=2144413637&amp;t=serp" alt="" width="1" height="1">
</div>
</div>
</body>
</html>
"""

_COUNTRY_LINK = """\
    <li class="site"><a href="{href}"><h4 class="site-name">{heading}</h4></a><p class="site-desc">{text}</p></li>
"""

_SMALL = "<!DOCTYPE html><html><head><title>Yahoo Search</title></head><body></body></html>\n"


def _item_html(slot: Slot, now: float) -> str:
    href = esc(slot.href(now))
    a = slot.article
    return _ITEM.format(
        first=" fst" if slot.rank == 1 else "",
        bid=esc(slot.bid),
        href=href,
        title=esc(a.title),
        source=esc(slot.source_text),
        time=esc(slot.time_text),
        snippet=esc(a.snippet),
        thumb=_THUMB.format(href=href, src=esc(slot.thumb)) if slot.thumb else "",
    )


def _pager_html(lay: Layout, btf: str | None) -> str:
    if not lay.slots:
        return ""
    links = []
    if lay.page > 0:
        prev = esc(search_path(lay.topic, (lay.page - 1) * PER_PAGE + 1, btf))
        links.append(f'<a class="prev" href="{prev}">Prev</a>')
    for page in range(lay.pages):
        if page == lay.page:
            links.append(f"<strong>{page + 1}</strong>")
        else:
            links.append(f'<a href="{esc(search_path(lay.topic, page * PER_PAGE + 1, btf))}">{page + 1}</a>')
    if lay.has_next:
        nxt = esc(search_path(lay.topic, (lay.page + 1) * PER_PAGE + 1, btf))
        links.append(f'<a class="next" href="{nxt}">Next</a>')
    inner = "\n  ".join(links)
    return (
        f'<div class="dd compPagination"><span class="off-left">Pagination</span>\n  {inner}\n'
        f'  <span class="fz-13 fc-2nd">{lay.total} results</span>\n</div>'
    )


def _right_html(topic: str, page: int, with_top: bool) -> str:
    trending = "".join(
        f'    <li class="ov-a"><a href="{esc(search_path(term, 1, None))}&amp;fr2=trendingnow">'
        f'<span class="rank">{k}</span> {esc(term)}</a></li>\n'
        for k, term in enumerate(trending_terms(topic, page), start=1)
    )
    top = ""
    if with_top:
        items = "".join(
            f'    <li><a href="{esc(url)}">{esc(text)}</a></li>\n' for url, text in _top_stories(topic, page)
        )
        top = _TOP.format(items=items)
    return _RIGHT.format(trending=trending, top=top)


def render_search_page(
    topic: str,
    page: int,
    now: float,
    kind: str = "results",
    btf: str | None = "d",
    articles: Sequence[Article] | None = None,
) -> tuple[str, str]:
    """The HTML of a search page and the kind actually served ("results" past the last page is "empty").

    ``articles``: the topic's whole list (a news world's); None: the catalogue's."""
    lay = layout(topic, page, articles) if kind == "results" and topic.strip() else None
    if kind == "results" and (lay is None or not lay.slots):
        kind = "empty"
    head = _HEAD.format(
        title=esc(f"{topic} - Yahoo News Search Results"),
        ylt="Awr" + token("page-ylt", topic, page, length=24),
        style=_STYLE,
        boilerplate=filler_css("yahoo", 450, "y"),
        invalid=INVALID_HOST,
    )
    parts = [head, _HEADER.format(q=esc(topic), q_url=esc(quote_plus(topic)), invalid_yahoo=INVALID_YAHOO)]
    items = pager = ""
    if kind == "results" and lay is not None:
        items = "".join(_item_html(slot, now) for slot in lay.slots)
        pager = _pager_html(lay, btf)
    elif kind == "empty":
        items = _EMPTY.format(q=esc(topic))
    parts.append(_WEB.format(items=items, pager=pager))
    parts.append(_right_html(topic, page, with_top=kind == "results"))
    country_links = "".join(
        _COUNTRY_LINK.format(href=esc(href), heading=esc(heading), text=esc(text))
        for href, heading, text in COUNTRY_LINKS
    )
    parts.append(_FOOTER.format(invalid=INVALID_HOST, invalid_yahoo=INVALID_YAHOO, country_links=country_links))
    return "".join(parts), kind


# -- consent interstitials ------------------------------------------------------------------------------

_CONSENT_TEXTS = {
    "en": {
        "lang": "en-US",
        "title": CONSENT_TITLE,
        "brands": "The sites and apps that we own and operate, including Yahoo and AOL, and our digital advertising "
        "service, Yahoo Advertising. Yahoo family of brands.",
        "cookies": "When you use our sites and apps, we use cookies to provide our sites and apps to you, "
        "authenticate users, apply security measures, and prevent spam and abuse, and measure your use of "
        "our sites and apps.",
        "choices": "If you click '<strong>Accept all</strong>', we and our partners will store and/or access "
        "information on a device and use precise geolocation data and other personal data. If you click "
        "'<strong>Reject all</strong>', we and our partners will not use cookies and personal data for "
        "these additional purposes.",
        "reject": "Reject all",
        "accept": "Accept all",
        "manage": "Manage privacy settings",
        "family": "Yahoo family of brands",
    },
    "it": {
        "lang": "it-IT",
        "title": "Yahoo fa parte della famiglia di brand Yahoo",
        "brands": "I siti e le app che possediamo e gestiamo, tra cui Yahoo e AOL, e il nostro servizio di "
        "pubblicità digitale, Yahoo Advertising, formano la famiglia di brand Yahoo.",
        "cookies": "Quando usi i nostri siti e le nostre app, usiamo i cookie per fornirteli, per riconoscere gli "
        "utenti, per proteggerli, per prevenire spam e abusi e per capire come li usi.",
        "choices": "Se fai clic su '<strong>Accetta tutto</strong>', noi e i nostri partner memorizzeremo "
        "informazioni sul tuo dispositivo e/o vi accederemo, e useremo dati di geolocalizzazione precisi "
        "e altri dati personali. Se fai clic su '<strong>Rifiuta tutto</strong>', noi e i nostri partner "
        "non useremo cookie e dati personali per questi scopi ulteriori.",
        "reject": "Rifiuta tutto",
        "accept": "Accetta tutto",
        "manage": "Gestisci le impostazioni della privacy",
        "family": "Famiglia di brand Yahoo",
    },
}
"""The visible texts of the collectConsent wall; ``choices`` is markup, every other entry plain text."""

_CONSENT = """\
<!DOCTYPE html>
<html lang="{lang}" class="no-js">
<head><meta charset="UTF-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title}</title></head>
<body class="consent-page">
<div class="con-wizard" role="dialog" aria-labelledby="consent-title">
  <img src="/thumbs/logo-yahoo-family.png" alt="{family}" width="120" height="30">
  <h2 id="consent-title" class="title">{title}</h2>
  <p>{brands}</p>
  <p>{cookies}</p>
  <p>{choices}</p>
  <p class="host">consent.yahoo.com (fake)</p>
  <form class="consent-form" action="{action}" method="post">
    <input type="hidden" name="csrfToken" value="{csrf}">
    <input type="hidden" name="sessionId" value="{session}">
    <input type="hidden" name="originalDoneUrl" value="{done}">
    <input type="hidden" name="namespace" value="yahoo">
    <div class="actions couple">
      <button type="submit" class="btn secondary reject-all" name="reject" value="reject">{reject}</button>
      <button type="submit" class="btn primary accept-all" name="agree" value="agree">{accept}</button>
    </div>
    <a class="btn secondary manage-settings" href="{action}&amp;manage=1">{manage}</a>
  </form>
</div>
</body>
</html>
"""


def render_consent(session: str, done: str, lang: str = "en") -> str:
    """The ``collectConsent`` wall of ``session`` (back to ``done`` once answered), in ``lang`` (en, it)."""
    texts = {key: (value if key == "choices" else esc(value)) for key, value in _CONSENT_TEXTS[lang].items()}
    action = f"{CONSENT_PATH}?sessionId={quote(session, safe='')}"
    return _CONSENT.format(
        action=esc(action), csrf=esc(token("csrf", session, length=12)), session=esc(session), done=esc(done), **texts
    )


_GUCE = """\
<!DOCTYPE html>
<html lang="en-US">
<head><meta charset="UTF-8"><title>Yahoo is now part of Yahoo Inc.</title></head>
<body class="guce">
<div class="consent-container" role="dialog">
  <h1>Yahoo is now part of Yahoo Inc.</h1>
  <p>We and our partners use cookies and similar technologies on our sites and apps to provide our services,
     to understand how you use them and to personalise content and ads.</p>
  <p class="host">guce.yahoo.com (fake)</p>
  <form class="consent-form" action="{action}" method="post">
    <input type="hidden" name="gcrumb" value="{gcrumb}">
    <input type="hidden" name="done" value="{done}">
    <button type="submit" class="btn primary agree" name="agree" value="agree">I agree</button>
    <button type="submit" class="btn secondary" name="manage" value="manage">Manage options</button>
  </form>
</div>
</body>
</html>
"""

_HOME = """\
<!DOCTYPE html>
<html lang="en"><head><meta charset="UTF-8"><title>Yahoo News Search</title></head>
<body class="news home"><div id="doc"><a id="logo" href="/"><img src="/thumbs/logo-yahoo.png" alt="Yahoo News" width="180" height="52"></a>
<form id="sf" name="s" action="/search" method="get" role="search"><input type="text" name="p" aria-label="Search query" autocomplete="off">
<input type="hidden" name="fr" value="uh3_news_web_gs"><button type="submit">Search News</button></form></div></body></html>
"""

_ROBOTS = """\
User-agent: *
Disallow: /search
Disallow: /r/
Disallow: /_ylt=
Allow: /
"""


def _moved(target: str) -> str:
    return (
        f"<HTML><HEAD><TITLE>302 Found</TITLE></HEAD><BODY>The document has moved "
        f'<A HREF="{esc(target)}">here</A>.</BODY></HTML>\n'
    )


def _safe_done(done: str, ctx: RequestContext) -> str:
    """Never send a client off this machine."""
    if done.startswith(ctx.base_url + "/") or (done.startswith("/") and not done.startswith("//")):
        return done
    return ctx.base_url + "/"


def _form(ctx: RequestContext) -> dict[str, str]:
    return dict(parse_qsl(ctx.body.decode("utf-8", "replace"), keep_blank_values=True))


class YahooPages(EnginePages):
    name = "yahoo"
    page_kinds = frozenset({"results", "empty", "blank", "small", "consent", "guce"})
    query_param = "p"

    def __init__(self) -> None:
        self._sessions: dict[str, tuple[str, str]] = {}  # consent sessionId -> (the URL the client wanted, language)
        self._lock = threading.Lock()

    def is_results(self, ctx: RequestContext) -> bool:
        return ctx.path == RESULTS_PATH or ctx.path.startswith(RESULTS_PATH + ";")

    def consent_session(self, url: str, lang: str = "en") -> str:
        """The ``sessionId`` of a consent redirect for ``url`` (remembered with the wall's language, to send the
        client back)."""
        session = "3_cc-session_" + token("yahoo-session", url, lang, length=22)
        with self._lock:
            if len(self._sessions) > 1000:
                self._sessions.clear()
            self._sessions[session] = (url, lang)
        return session

    # -- consent walls ------------------------------------------------------------------------------

    consent_languages = CONSENT_LANGUAGES
    consent_cookies = (CONSENT_COOKIE, GUCE_COOKIE)

    def consent_cookie_value(self, choice: str, ctx: RequestContext) -> str:
        return f"d=AQAB{token('a1', choice, ctx.now, length=30)}&S=AQAAA{token('a1s', choice, ctx.now, length=20)}"

    def consent_wall(self, ctx: RequestContext) -> Reply:
        lang = ctx.consent_language
        return consent.wall_reply(render_consent(self.consent_session(ctx.url, lang), ctx.url, lang), lang)

    def consent_redirect(self, ctx: RequestContext) -> Reply:
        session = self.consent_session(ctx.url, ctx.consent_language)
        return consent.redirect(
            f"{ctx.consent_base_url}{CONSENT_PATH}?sessionId={quote(session, safe='')}", "consent_redirect"
        )

    def render(self, kind: str, ctx: RequestContext) -> Reply:
        topic = ctx.query.get("p", "")
        if kind in ("results", "empty", "blank"):
            page = page_of(ctx.query.get("b") or 1)
            btf = ctx.query.get("btf") or None
            articles = ctx.articles_of(topic) if kind == "results" and topic.strip() else None
            body, served = render_search_page(topic, page, ctx.now, kind, btf, articles)
            return Reply(200, body, served=served)
        if kind == "small":
            return Reply(200, _SMALL, served="small")
        if kind == "consent":
            session = self.consent_session(ctx.url, ctx.consent_language)
            target = f"{ctx.base_url}{CONSENT_PATH}?sessionId={quote(session, safe='')}"
            return Reply(302, _moved(target), headers=[("Location", target)], served="consent")
        if kind == "guce":
            gcrumb = token("gcrumb", ctx.url, length=8)
            target = f"{ctx.base_url}{GUCE_PATH}?brandType=nonEu&gcrumb={gcrumb}&done={quote(ctx.url, safe='')}"
            return Reply(302, _moved(target), headers=[("Location", target)], served="guce")
        raise ValueError(f"unknown page kind {kind!r}")

    def other(self, ctx: RequestContext) -> Reply | None:
        path = ctx.path
        if path == "/":
            return Reply(200, _HOME, served="home")
        if path == "/robots.txt":
            return Reply(200, _ROBOTS, "text/plain", served="robots")
        if path == CONSENT_PATH:
            session = ctx.query.get("sessionId", "")
            with self._lock:
                done, lang = self._sessions.get(session, (ctx.base_url + "/", ""))
            if ctx.method == "POST":
                form = _form(ctx)
                choice = "accept" if "agree" in form else "reject"
                return consent.save_reply(self, ctx, choice, form.get("originalDoneUrl", done))
            lang = consent.wall_language(self, ctx, lang)
            return consent.wall_reply(render_consent(session, consent.safe_continue(done, ctx), lang), lang)
        if path == GUCE_PATH:
            done = _safe_done(ctx.query.get("done", ""), ctx)
            gcrumb = ctx.query.get("gcrumb", "")
            if ctx.method == "POST":
                form = _form(ctx)
                done = _safe_done(form.get("done", done), ctx)
                cookie = f"GUC=AQEBCAF{token('guc', gcrumb, length=24)}; Path=/; Max-Age=31557600"
                return Reply(
                    302, _moved(done), headers=[("Location", done), ("Set-Cookie", cookie)], served="guce_saved"
                )
            action = (
                f"{GUCE_PATH}?brandType={quote_plus(ctx.query.get('brandType', 'nonEu'))}&gcrumb={quote_plus(gcrumb)}"
            )
            return Reply(200, _GUCE.format(action=esc(action), gcrumb=esc(gcrumb), done=esc(done)), served="guce")
        return None


PAGES = YahooPages()
