"""Google-News-tab-like pages for the fake Google (markup written for this project).

What the pages share with the real News tab (what the Google spider relies on):

* results URL ``/search?q=Q&tbm=nws&tbs=qdr:h,sbd:1&start=0|10|20…`` (10 results a page, ``start`` = offset);
* an inline script setting ``google.sn='newssearch'``;
* each result a ``div[data-news-doc-id]`` under ``div#rso``; its link ``a.WlydOe[jsname=YKoRaf]`` whose
  ``href`` is the publisher URL (the ``/url?…&url=`` form only in its ``ping``); title ``div[role=heading]``;
  source ``div.MgUUmf span``; snippet ``div.UqSP2b``; time ``div.OSrXXb span[data-ts]`` (Unix seconds,
  visible text "3 hours ago");
* ``a#pnnext`` when there is a next page.

A results page for a topic (see :func:`layout`) holds the catalogue's articles for that page, each link
with tracking parameters, and on every page:

* ``js`` — one article that is not in the HTML: an inline script at the end of ``<body>`` appends it to
  ``#rso`` while the page parses (present at DOMContentLoaded); its data is base64 in the script, so even
  its URL is absent from the HTML source;
* ``wrapped_q`` — one link as ``/url?q=<percent-encoded target>&sa=U&ved=…&usg=…`` (relative);
* ``wrapped_url`` — one link as ``/url?sa=t&url=<percent-encoded target>&ved=…&usg=…`` (relative);
* ``duplicate`` — one article shown twice (three results between the copies, fewer on a short last page;
  the second copy with other tracking parameters and another doc id);
* ``no_ts`` — one result with only a relative time text ("2 hours ago"), no ``data-ts``.

These five roles are five different articles, chosen per (topic, page) from a hash. The wrapped targets
carry tracking parameters too. :func:`expected_articles` gives the clean URLs a correct scraper stores.

With a news world (``FakeEngines(..., world=…)``, see :mod:`fake_engines.world`) the pages lay out the world's
list of the topic on Google at the request's world time instead of the catalogue's, 10 a page as above; a page of
fewer than six articles (a short last page) carries fewer roles (none on a page of one), at least one plain result.

Page kinds of results requests: results, empty, sorry, captcha200, blank, small, consent, restyled.
``consent`` is a 302 to the consent wall on the results host (``/consent?continue=…``); the walls in front of
results (``fakes.consent("google", …)``, on ``/ml`` of the consent host) are in :mod:`fake_engines.consent_pages`.

The chrome (the footer) of every search page links Google country domains (:data:`COUNTRY_LINKS`), each with a
heading and a line of text, outside ``#rso``: a known-layout parser never reads them.

``restyled`` simulates a redesign that breaks the parser while the page loads fine: the same results page
(same articles, result items, links, titles, pager, JS-added result, about the same size), except that the
source wrapper is ``div.CEMjEf`` (not ``MgUUmf``), the time wrapper ``div.ZE0LJd`` (not ``OSrXXb``) and the
time span has no ``data-ts`` (only the visible "3 hours ago"). A parser of the normal page finds every item,
with url and title but no source and no time. Past the last page it is ``empty``, like ``results``.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import lru_cache
from urllib.parse import parse_qsl, quote, quote_plus, urlencode

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
from fake_engines.markup import esc, filler_css, token

RESULTS_PATH = "/search"
TBS = "qdr:h,sbd:1"
INVALID_HOST = "http://assets.fake-engine.invalid"
"""A host that never resolves (``.invalid``): page weight that can never leave the machine."""

ROLES = ("js", "duplicate", "wrapped_q", "wrapped_url", "no_ts")
TRACKING_PARAMS = ("utm_source", "utm_medium", "utm_campaign", "utm_content", "utm_term", "gclid", "ved")
"""Every tracking parameter the fake Google adds to publisher URLs (a normalizer must drop them all)."""

NO_RESULTS_MESSAGE = "did not match any news results."
CAPTCHA_SENTENCE = "Our systems have detected unusual traffic from your computer network"


def search_path(topic: str, start: int = 0) -> str:
    """The relative URL of a News-tab results page, as the real pager links it."""
    return f"{RESULTS_PATH}?q={quote_plus(topic)}&tbm=nws&tbs={TBS}&start={start}"


def relative_age(seconds: int) -> str:
    """What Google shows for an age: "1 minute ago", "14 minutes ago", "1 hour ago", "5 hours ago"."""
    minutes = max(1, seconds // 60)
    if minutes < 60:
        return "1 minute ago" if minutes == 1 else f"{minutes} minutes ago"
    hours = minutes // 60
    if hours < 24:
        return "1 hour ago" if hours == 1 else f"{hours} hours ago"
    days = hours // 24
    return "1 day ago" if days == 1 else f"{days} days ago"


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


# -- markup ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Classes:
    """The class names that differ between the normal markup and the ``restyled`` one."""

    source: str
    """The source wrapper (``div.<source> span``)."""
    time: str
    """The time wrapper (``div.<time> span``)."""
    ts: bool
    """Whether the time span carries ``data-ts``."""


NORMAL = Classes(source="MgUUmf", time="OSrXXb", ts=True)
RESTYLED = Classes(source="CEMjEf", time="ZE0LJd", ts=False)
"""The redesign of the ``restyled`` page kind: renamed source and time wrappers, no ``data-ts``."""


_STYLE = """\
@font-face{font-family:'Fake Sans Text';font-style:normal;font-weight:400;font-display:swap;
  src:url(/fonts/fakesanstext-regular.woff2) format('woff2');}
body{margin:0;font-family:'Fake Sans Text',arial,sans-serif;font-size:14px;color:#202124}
#searchform{display:flex;align-items:center;gap:24px;padding:20px 28px}
#hdtb{padding:0 180px;border-bottom:1px solid #ebebeb}
#center_col{margin-left:180px;max-width:652px}
.SoaBEf{margin:0 0 30px}
.WlydOe{display:block;text-decoration:none;color:inherit}
.@SOURCE@ span{font-size:12px;color:#202124}
.n0jPhd{font-size:18px;line-height:24px;color:#1a0dab}
.UqSP2b{color:#4d5156;margin-top:4px}
.@TIME@{color:#70757a;font-size:12px;margin-top:8px}
.gpjNTe img{border-radius:8px}
.AaVjTc td{padding:0 8px}
"""

_HEAD = """\
<!DOCTYPE html>
<html lang="en" itemscope itemtype="http://schema.org/SearchResultsPage">
<head>
<meta charset="UTF-8">
<meta name="referrer" content="origin">
<title>{title}</title>
<script nonce="{nonce}">(function(){{window.google={{kEI:'{kei}',kEXPI:'31',kBL:'fake',kOPI:89978449}};google.sn='newssearch';google.kHL='en';google.timers={{}};}})();</script>
<style>
{style}
</style>
<style>
{boilerplate}
</style>
<link rel="stylesheet" href="{invalid}/xjs/_/ss/k=news.css">
</head>
"""

_HEADER = """\
<div class="L3eUgb">
<header id="searchform" role="banner">
  <a href="/" id="logo" title="Go to the fake Google home page"><img src="/thumbs/logo.png" alt="Fake Google" width="92" height="30"></a>
  <form action="/search" method="GET" role="search" id="tsf">
    <input class="gLFyf" name="q" value="{q}" aria-label="Search" autocomplete="off" maxlength="2048">
    <input type="hidden" name="tbm" value="nws">
    <button type="submit" aria-label="Search">Search</button>
  </form>
</header>
<div id="hdtb" role="navigation">
  <a href="/search?q={q_url}">All</a>
  <span aria-current="page" class="YmvwI">News</span>
  <a href="/search?q={q_url}&amp;tbm=isch">Images</a>
  <a href="/search?q={q_url}&amp;tbm=vid">Videos</a>
  <div id="hdtbMenus"><span class="KTBKoe">Past hour</span> <span class="KTBKoe">Sorted by date</span></div>
</div>
"""

_MAIN = """\
<div id="main"><div id="cnt"><div id="center_col">
<div id="res" role="main">
<div id="topstuff">{topstuff}</div>
<div id="search"><div data-async-context="query:{q}">
<div id="rso">
{results}</div>
</div></div>
</div>
<div id="botstuff">{pager}</div>
</div></div></div>
"""

COUNTRY_LINKS = (
    (
        "https://www.google.com.ng/intl/en/about/products",
        "Google apps and products",
        "Everything Google makes, from Search and Maps to Android, in one place.",
    ),
    ("https://www.google.de/", "Google Deutschland", "Search the web in German, with results and news from Germany."),
    (
        "https://policies.google.co.uk/privacy",
        "Privacy Policy (United Kingdom)",
        "How Google collects, uses and protects your information in the UK.",
    ),
)
"""Links of the page's chrome (its footer) to Google country domains, each with a heading and a line of text:
never results (nothing of the known layout, not in :func:`expected_articles`)."""

_FOOTER = """\
<div id="footcnt"><footer>
  <div id="fbar" class="fbar" role="navigation" aria-label="Google around the world">
{country_links}  </div>
  <span>Fake results for local tests. Nothing here comes from a real search engine.</span>
  <img src="{invalid}/images/footer/pixel.png" alt="" width="1" height="1">
</footer></div>
</div>
"""

_COUNTRY_LINK = """\
    <div class="b0KoTc"><a class="pHiOh" href="{href}"><h3 class="EY24We">{heading}</h3></a><span class="Fx4vi">{text}</span></div>
"""


def _country_links_html() -> str:
    return "".join(
        _COUNTRY_LINK.format(href=esc(href), heading=esc(heading), text=esc(text))
        for href, heading, text in COUNTRY_LINKS
    )


_RESULT = """\
<div class="SoaBEf" data-news-doc-id="{doc_id}" data-hveid="{hveid}">
  <div>
    <a class="WlydOe" jsname="YKoRaf" href="{href}" ping="{ping}" data-ved="{ved}">
      <div class="Ljs0mb">
        <div class="SoAPf">
          <div class="{source_class} NUnG9d"><span>{source}</span></div>
          <div class="n0jPhd ynAwRc MBeuO nDgy9d" role="heading" aria-level="3">{title}</div>
          <div class="GI74Re nDgy9d UqSP2b">{snippet}</div>
          <div class="{time_class} rbYSKb LfVVr">{time}</div>
        </div>
{thumb}      </div>
    </a>
  </div>
</div>
"""

_THUMB = """\
        <div class="gpjNTe"><div class="uhHOwf BYbUcd"><img src="{src}" alt="" width="92" height="92"></div></div>
"""

# The JS-added result: same markup as _RESULT, built with the DOM API from a base64 JSON payload.
# @SOURCE@, @TIME@ and @TIME_ATTRS@ follow the page's Classes (see _js_result_html).
_JS_RESULT = """\
<script nonce="{nonce}">
(function () {
  var bytes = Uint8Array.from(atob("@PAYLOAD@"), function (c) { return c.charCodeAt(0); });
  var r = JSON.parse(new TextDecoder().decode(bytes));
  function el(tag, attrs, children) {
    var node = document.createElement(tag);
    Object.keys(attrs).forEach(function (name) { node.setAttribute(name, attrs[name]); });
    children.forEach(function (child) {
      node.appendChild(typeof child === "string" ? document.createTextNode(child) : child);
    });
    return node;
  }
  var result = el("div", {"class": "SoaBEf", "data-news-doc-id": r.docId, "data-hveid": r.hveid}, [
    el("div", {}, [
      el("a", {"class": "WlydOe", "jsname": "YKoRaf", "href": r.href, "ping": r.ping, "data-ved": r.ved}, [
        el("div", {"class": "Ljs0mb"}, [
          el("div", {"class": "SoAPf"}, [
            el("div", {"class": "@SOURCE@ NUnG9d"}, [el("span", {}, [r.source])]),
            el("div", {"class": "n0jPhd ynAwRc MBeuO nDgy9d", "role": "heading", "aria-level": "3"}, [r.title]),
            el("div", {"class": "GI74Re nDgy9d UqSP2b"}, [r.snippet]),
            el("div", {"class": "@TIME@ rbYSKb LfVVr"}, [el("span", @TIME_ATTRS@, [r.age])])
          ])
        ])
      ])
    ])
  ]);
  document.getElementById("rso").appendChild(result);
})();
</script>
"""

_EMPTY = """\
<div class="card-section">
  <p role="heading" aria-level="3" style="padding-top:.33em">Your search - <b>{q}</b> - did not match any news results.</p>
  <p style="margin-top:1em">Suggestions:</p>
  <ul style="margin-left:1.3em;margin-bottom:2em">
    <li>Make sure that all words are spelled correctly.</li>
    <li>Try different keywords.</li>
    <li>Try more general keywords.</li>
    <li>Try fewer keywords.</li>
  </ul>
</div>
"""


def _style(classes: Classes) -> str:
    return _STYLE.replace("@SOURCE@", classes.source).replace("@TIME@", classes.time)


def _time_html(slot: Slot, now: float, classes: Classes = NORMAL) -> str:
    age = relative_age(slot.article.age_seconds)
    if not (slot.has_ts and classes.ts):
        return f"<span>{esc(age)}</span>"
    return f'<span data-ts="{slot.article.published_at(now)}">{esc(age)}</span>'


def _result_html(slot: Slot, now: float, classes: Classes = NORMAL) -> str:
    a = slot.article
    return _RESULT.format(
        doc_id=esc(slot.doc_id),
        hveid=esc("CA" + slot.doc_id[:6]),
        href=esc(slot.href),
        ping=esc(slot.ping),
        ved=esc(slot.ved),
        source=esc(a.source),
        title=esc(a.title),
        snippet=esc(a.snippet),
        time=_time_html(slot, now, classes),
        source_class=classes.source,
        time_class=classes.time,
        thumb=_THUMB.format(src=esc(slot.thumb)) if slot.thumb else "",
    )


def _js_result_html(slot: Slot, now: float, nonce: str, classes: Classes = NORMAL) -> str:
    a = slot.article
    data = {
        "docId": slot.doc_id,
        "hveid": "CA" + slot.doc_id[:6],
        "href": slot.href,
        "ping": slot.ping,
        "ved": slot.ved,
        "source": a.source,
        "title": a.title,
        "snippet": a.snippet,
        "ts": a.published_at(now),
        "age": relative_age(a.age_seconds),
    }
    if not classes.ts:
        del data["ts"]
    payload = base64.b64encode(json.dumps(data).encode("utf-8")).decode("ascii")
    time_attrs = '{"data-ts": String(r.ts)}' if classes.ts else "{}"
    return (
        _JS_RESULT.replace("{nonce}", nonce)
        .replace("@SOURCE@", classes.source)
        .replace("@TIME@", classes.time)
        .replace("@TIME_ATTRS@", time_attrs)
        .replace("@PAYLOAD@", payload)
    )


def _pager_html(lay: Layout) -> str:
    if not lay.slots:
        return ""
    pages = -(-lay.total // PER_PAGE)
    current = lay.start // PER_PAGE
    cells = []
    if lay.start > 0:
        prev = esc(search_path(lay.topic, max(0, lay.start - PER_PAGE)))
        cells.append(f'<td class="d6cvqb"><a href="{prev}" id="pnprev"><span>Previous</span></a></td>')
    for page in range(pages):
        if page == current:
            cells.append(f'<td class="YyVfkd">{page + 1}</td>')
        else:
            href = esc(search_path(lay.topic, page * PER_PAGE))
            cells.append(f'<td><a aria-label="Page {page + 1}" class="fl" href="{href}">{page + 1}</a></td>')
    if lay.has_next:
        nxt = esc(search_path(lay.topic, lay.start + PER_PAGE))
        cells.append(
            f'<td class="d6cvqb BBwThe" role="heading" aria-level="3"><a href="{nxt}" id="pnnext">'
            f'<span class="oeN89d">Next</span></a></td>'
        )
    row = "\n    ".join(cells)
    return (
        '<div role="navigation"><span class="BBwThe">Page navigation</span>\n'
        f'  <table class="AaVjTc" role="presentation"><tr jsname="TeSSVd">\n    {row}\n  </tr></table>\n</div>'
    )


def render_search_page(
    topic: str, start: int, now: float, kind: str = "results", articles: Sequence[Article] | None = None
) -> tuple[str, str]:
    """The HTML of a search page and the kind actually served (results or restyled past the last page: "empty").

    ``kind`` is "results", "restyled" (the results page in the :data:`RESTYLED` markup), "empty" or "blank".
    ``articles``: the topic's whole list (a news world's); None: the catalogue's.
    """
    with_results = kind in ("results", "restyled")
    classes = RESTYLED if kind == "restyled" else NORMAL
    lay = layout_at(topic, start, articles) if with_results and topic.strip() else None
    if with_results and (lay is None or not lay.slots):
        kind = "empty"
    nonce = token("nonce", topic, start, int(now))
    head = _HEAD.format(
        title=esc(f"{topic} - Google Search"),
        nonce=nonce,
        kei=token("kei", topic, start, now),
        style=_style(classes),
        boilerplate=filler_css("google", 450, "g"),
        invalid=INVALID_HOST,
    )
    body = ['<body jsmodel="hspDDf">\n', _HEADER.format(q=esc(topic), q_url=esc(quote_plus(topic)))]
    results = pager = topstuff = ""
    if kind != "empty" and lay is not None:
        results = "".join(_result_html(slot, now, classes) for slot in lay.html_slots)
        pager = _pager_html(lay)
    elif kind == "empty":
        topstuff = _EMPTY.format(q=esc(topic))
    body.append(_MAIN.format(q=esc(topic), topstuff=topstuff, results=results, pager=pager))
    body.append(_FOOTER.format(invalid=INVALID_HOST, country_links=_country_links_html()))
    if kind != "empty" and lay is not None and lay.js_slot is not None:
        body.append(_js_result_html(lay.js_slot, now, nonce, classes))
    body.append("</body>\n</html>\n")
    return head + "".join(body), kind


_SORRY = """\
<!DOCTYPE html>
<html>
<head>
<meta http-equiv="content-type" content="text/html; charset=utf-8">
<meta name="viewport" content="initial-scale=1">
<title>{url}</title>
</head>
<body style="margin:0;font-family:arial,sans-serif">
<div style="max-width:400px;margin:20px auto;padding:0 12px">
  <form id="captcha-form" action="/sorry/index" method="post">
    <script src="{invalid}/recaptcha/api.js" async defer></script>
    <div id="recaptcha" class="g-recaptcha" data-sitekey="{sitekey}" data-callback="submitCallback" data-s="{data_s}"></div>
    <input type="hidden" name="q" value="{q}">
    <input type="hidden" name="continue" value="{url}">
  </form>
  <hr noshade size="1" style="color:#ccc;background-color:#ccc">
  <div style="font-size:13px">
    <b>About this page</b><br><br>
    Our systems have detected unusual traffic from your computer network. This page checks to see if it's
    really you sending the requests, and not a robot.
    <a href="#" onclick="document.getElementById('infoDiv').style.display='block';">Why did this happen?</a><br><br>
    <div id="infoDiv" style="display:none;background-color:#eee;padding:10px;margin:0 0 15px 0;line-height:1.4em">
      This page appears when automated requests are detected from your computer network. The block will
      expire shortly after those requests stop.
    </div>
    IP address: {ip}<br>Time: {time}<br>URL: {url}<br>
  </div>
</div>
</body>
</html>
"""

CONSENT_PATH = "/ml"
"""The wall on the consent host (``consent.google.com/ml?continue=…`` on the real one)."""
LEGACY_CONSENT_PATH = "/consent"
"""The wall on the results host, where the ``consent`` page kind sends a client."""
CONSENT_SAVE_PATHS = ("/save", "/consent/save")
"""Where the wall's forms post (``/save``; the older ``/consent/save`` still answers)."""
CONSENT_COOKIE = "SOCS"
CONSENT_LANGUAGES = ("en", "de")

_WALL_TEXTS = {
    "en": {
        "title": "Before you continue to Google",
        "lead": "Google uses cookies and data to run its services, to keep them working and to protect them and "
        "the people who use them against spam, fraud and abuse.",
        "choices": "If you choose \u201cAccept all\u201d, cookies and data are also used to build new services, to "
        "measure how ads perform and to show content and ads tailored to you. If you choose \u201cReject "
        "all\u201d, they are not used for these extra purposes.",
        "more_text": "Select \u201cMore options\u201d to read more, including how to manage your privacy settings.",
        "reject": "Reject all",
        "accept": "Accept all",
        "more": "More options",
        "privacy": "Privacy Policy",
        "terms": "Terms of Service",
        "language": "English",
    },
    "de": {
        "title": "Bevor Sie zu Google weitergehen",
        "lead": "Google verwendet Cookies und Daten, um seine Dienste zu betreiben, ihren Betrieb zu sichern und "
        "sie und ihre Nutzer vor Spam, Betrug und Missbrauch zu schützen.",
        "choices": "Wenn Sie \u201eAlle akzeptieren\u201c wählen, werden Cookies und Daten auch verwendet, um neue "
        "Dienste zu entwickeln, die Wirkung von Werbung zu messen und auf Sie zugeschnittene Inhalte und "
        "Werbung zu zeigen. Wenn Sie \u201eAlle ablehnen\u201c wählen, werden sie für diese zusätzlichen "
        "Zwecke nicht verwendet.",
        "more_text": "Unter \u201eWeitere Optionen\u201c erfahren Sie mehr, auch darüber, wie Sie Ihre "
        "Datenschutzeinstellungen verwalten.",
        "reject": "Alle ablehnen",
        "accept": "Alle akzeptieren",
        "more": "Weitere Optionen",
        "privacy": "Datenschutzerklärung",
        "terms": "Nutzungsbedingungen",
        "language": "Deutsch",
    },
}

_CONSENT = """\
<!DOCTYPE html>
<html lang="{lang}" dir="ltr">
<head>
<meta charset="UTF-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title}</title>
<script nonce="{nonce}">(function(){{window.consentBump={{host:'consent.google.com',gl:'DE',hl:'{lang}',pc:'n',
origin:'{origin_js}'}};window.WIZ_global_data={{Im6cmf:'/_/ConsentUi',cfb2h:'consent.google.com'}};}})();</script>
<style>
body{{margin:0;font-family:'Fake Sans Text',arial,sans-serif;color:#202124;background:#fff}}
.consent-bump{{max-width:600px;margin:48px auto;padding:0 24px}}
.consent-bump h1{{font-size:24px;font-weight:400;margin:16px 0 20px}}
.consent-bump p{{line-height:22px}}
.answers{{display:flex;gap:8px;margin:24px 0}}
.answers button{{min-width:140px;height:36px;border:0;border-radius:4px;background:#1a73e8;color:#fff;font-size:14px}}
.VtwTSb{{display:inline-block}}
.links a{{color:#5f6368;font-size:12px;margin-right:16px}}
</style>
</head>
<body>
<div class="consent-bump" role="dialog" aria-modal="true" aria-labelledby="consent-title">
  <img src="/thumbs/logo.png" alt="Google" width="75" height="24">
  <h1 id="consent-title">{title}</h1>
  <p>{lead}</p>
  <p>{choices}</p>
  <p>{more_text}</p>
  <div class="answers">
{forms}  </div>
  <a class="more-options" href="{more_href}">{more}</a>
  <div class="links">
    <span class="language">{language}</span>
    <a href="{invalid}/policies/privacy?hl={lang}">{privacy}</a>
    <a href="{invalid}/policies/terms?hl={lang}">{terms}</a>
  </div>
</div>
</body>
</html>
"""

_CONSENT_FORM = """\
    <form action="{action}" method="POST" class="VtwTSb">
      <input type="hidden" name="gl" value="DE">
      <input type="hidden" name="m" value="0">
      <input type="hidden" name="pc" value="n">
      <input type="hidden" name="continue" value="{cont}">
      <input type="hidden" name="hl" value="{lang}">
      <input type="hidden" name="src" value="1">
      <input type="hidden" name="cm" value="2">
      <input type="hidden" name="set_eom" value="{set_eom}">
      <button type="submit" class="tHlp8d" aria-label="{label}">{label}</button>
    </form>
"""

_HOME = """\
<!DOCTYPE html>
<html lang="en"><head><meta charset="UTF-8"><title>Google</title>
<script nonce="home">(function(){window.google={kEI:'home',kBL:'fake'};google.sn='webhp';})();</script></head>
<body><div id="main"><img src="/thumbs/logo.png" alt="Fake Google" width="272" height="92">
<form action="/search" method="GET" role="search"><input name="q" aria-label="Search" autocomplete="off">
<button type="submit">Google Search</button></form></div></body></html>
"""

_SMALL = "<!DOCTYPE html><html><head><title>Google</title></head><body></body></html>\n"

_REDIRECT_NOTICE = """\
<!DOCTYPE html>
<html><head><meta charset="UTF-8"><title>Redirect Notice</title></head>
<body><div class="fTk7vd">Redirect Notice</div>
<p>The page you were on is trying to send you to <a href="{target}">{target}</a>.</p>
<p>If you do not want to visit that page, you can <a href="/">return to the previous page</a>.</p>
</body></html>
"""


def render_sorry(continue_url: str, query: str, now: float, ip: str = "127.0.0.1") -> str:
    """The CAPTCHA ("sorry") page for a blocked ``continue_url``."""
    stamp = datetime.fromtimestamp(now, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    return _SORRY.format(
        url=esc(continue_url),
        invalid=INVALID_HOST,
        sitekey=token("sitekey", length=40),
        data_s=token("s", continue_url, length=64),
        q=esc(query),
        ip=esc(ip),
        time=stamp,
    )


def render_consent(continue_url: str, origin: str = "", lang: str = "en") -> str:
    """The "Before you continue to Google" wall: a reject form (``set_eom=true``) and an accept form
    (``set_eom=false``), both posting to ``{origin}/save``, in ``lang`` (see :data:`CONSENT_LANGUAGES`)."""
    texts = _WALL_TEXTS[lang]
    forms = "".join(
        _CONSENT_FORM.format(
            action=esc(f"{origin}/save"), cont=esc(continue_url), lang=lang, set_eom=set_eom, label=esc(texts[choice])
        )
        for choice, set_eom in (("reject", "true"), ("accept", "false"))
    )
    more = f"{CONSENT_PATH}?{urlencode({'continue': continue_url, 'gl': 'DE', 'm': 1, 'pc': 'n', 'hl': lang})}"
    return _CONSENT.format(
        lang=lang,
        nonce=token("consent-nonce", continue_url),
        origin_js=origin.replace("'", ""),
        forms=forms,
        more_href=esc(more),
        invalid=INVALID_HOST,
        **{key: esc(value) for key, value in texts.items()},
    )


def consent_location(origin: str, continue_url: str, lang: str, path: str = CONSENT_PATH) -> str:
    """Where a results request is sent to meet the wall: ``{origin}/ml?continue=…&gl=DE&m=0&pc=n&cm=2&hl=…&src=1``."""
    return f"{origin}{path}?continue={quote(continue_url, safe='')}&gl=DE&m=0&pc=n&cm=2&hl={lang}&src=1"


class GooglePages(EnginePages):
    name = "google"
    page_kinds = frozenset({"results", "empty", "sorry", "captcha200", "blank", "small", "consent", "restyled"})
    query_param = "q"

    def is_results(self, ctx: RequestContext) -> bool:
        return ctx.path == RESULTS_PATH

    def render(self, kind: str, ctx: RequestContext) -> Reply:
        topic = ctx.query.get("q", "")
        if kind in ("results", "restyled", "empty", "blank"):
            try:
                start = max(0, int(ctx.query.get("start") or 0))
            except ValueError:
                start = 0
            articles = ctx.articles_of(topic) if kind in ("results", "restyled") and topic.strip() else None
            page, served = render_search_page(topic, start, ctx.now, kind, articles)
            return Reply(200, page, served=served)
        if kind == "sorry":
            target = f"{ctx.base_url}/sorry/index?continue={quote(ctx.url, safe='')}&q={token('q', ctx.url, ctx.now)}"
            body = f'<HTML><HEAD><TITLE>302 Moved</TITLE></HEAD><BODY><H1>302 Moved</H1>The document has moved <A HREF="{esc(target)}">here</A>.</BODY></HTML>\n'
            return Reply(302, body, headers=[("Location", target)], served="sorry")
        if kind == "captcha200":
            return Reply(200, render_sorry(ctx.url, token("q", ctx.url, ctx.now), ctx.now), served="captcha200")
        if kind == "small":
            return Reply(200, _SMALL, served="small")
        if kind == "consent":
            target = consent_location(ctx.base_url, ctx.url, ctx.consent_language, LEGACY_CONSENT_PATH)
            return consent.redirect(target, "consent")
        raise ValueError(f"unknown page kind {kind!r}")

    # -- consent walls ------------------------------------------------------------------------------

    consent_languages = CONSENT_LANGUAGES
    consent_cookies = (CONSENT_COOKIE,)

    def consent_cookie_value(self, choice: str, ctx: RequestContext) -> str:
        # the real SOCS is a base64 protobuf; here its first bytes tell a rejection (CAES…) from an acceptance
        head = "CAESHAgB" if choice == "reject" else "CAISHAgC"
        return head + token("socs", choice, ctx.now, length=30)

    def consent_wall(self, ctx: RequestContext) -> Reply:
        lang = ctx.consent_language
        return consent.wall_reply(render_consent(ctx.url, ctx.origin, lang), lang)

    def consent_redirect(self, ctx: RequestContext) -> Reply:
        return consent.redirect(
            consent_location(ctx.consent_base_url, ctx.url, ctx.consent_language), "consent_redirect"
        )

    def other(self, ctx: RequestContext) -> Reply | None:
        path = ctx.path
        if path == "/":
            return Reply(200, _HOME, served="home")
        if path == "/sorry/index":
            cont = ctx.query.get("continue", "")
            if ctx.method == "POST":
                form = dict(parse_qsl(ctx.body.decode("utf-8", "replace")))
                cont = form.get("continue", cont)
            return Reply(429, render_sorry(cont, ctx.query.get("q", ""), ctx.now), served="sorry")
        if path in (CONSENT_PATH, LEGACY_CONSENT_PATH) and ctx.method in ("GET", "HEAD"):
            lang = consent.wall_language(self, ctx, ctx.query.get("hl"))
            cont = consent.safe_continue(ctx.query.get("continue", ""), ctx)
            return consent.wall_reply(render_consent(cont, ctx.origin, lang), lang)
        if path in CONSENT_SAVE_PATHS and ctx.method == "POST":
            form = dict(parse_qsl(ctx.body.decode("utf-8", "replace"), keep_blank_values=True))
            if "set_eom" in form:  # what the real forms tell their answers apart by
                choice = "reject" if form["set_eom"].strip().lower() == "true" else "accept"
            else:
                choice = consent.parse_choice(form.get("choice"))
            return consent.save_reply(self, ctx, choice, form.get("continue", "/"))
        if path == "/url":
            target = ctx.query.get("q") or ctx.query.get("url") or ""
            return Reply(200, _REDIRECT_NOTICE.format(target=esc(target)), served="redirect_notice")
        if path == "/robots.txt":
            body = "User-agent: *\nDisallow: /search\nAllow: /search/about\nDisallow: /sorry/\nDisallow: /url\n"
            return Reply(200, body, "text/plain", served="robots")
        return None


PAGES = GooglePages()
