"""The fake Google's search pages: the News-tab results page (normal and ``restyled`` markup) and its empty page.

See :mod:`fake_engines.google` for what the pages share with the real News tab.
"""

# ruff: noqa: E501 - the page templates keep their lines as a page writes them

from __future__ import annotations

import base64
import json
from collections.abc import Sequence
from dataclasses import dataclass
from urllib.parse import quote_plus

from fake_engines.catalogue import PER_PAGE, Article
from fake_engines.google.google_layout import Layout, Slot, layout_at, search_path
from fake_engines.markup import INVALID_HOST, esc, filler_css, relative_age, token


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
    if kind != "empty" and lay is not None:
        return render_slots_page(topic, start, now, lay.html_slots, lay.js_slot, _pager_html(lay), classes), kind
    return render_slots_page(topic, start, now, (), classes=classes, empty=kind == "empty"), kind


def render_slots_page(
    topic: str,
    start: int,
    now: float,
    slots: Sequence[Slot],
    js_slot: Slot | None = None,
    pager: str = "",
    classes: Classes = NORMAL,
    *,
    empty: bool = False,
    padding: str = "",
) -> str:
    """The HTML of a search page holding ``slots`` in its HTML and ``js_slot`` added by its script (the page's
    "no results" message instead when ``empty``); ``padding``: markup after the results list (none by default)."""
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
    results = "".join(_result_html(slot, now, classes) for slot in slots)
    topstuff = _EMPTY.format(q=esc(topic)) if empty else ""
    body.append(_MAIN.format(q=esc(topic), topstuff=topstuff, results=results + padding, pager=pager))
    body.append(_FOOTER.format(invalid=INVALID_HOST, country_links=_country_links_html()))
    if js_slot is not None:
        body.append(_js_result_html(js_slot, now, nonce, classes))
    body.append("</body>\n</html>\n")
    return head + "".join(body)
