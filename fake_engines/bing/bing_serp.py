"""The fake Bing's results markup: the full page (``/news/search``) and the paging endpoint's fragment."""

# ruff: noqa: E501 - the page templates keep their lines as a page writes them

from __future__ import annotations

from collections.abc import Sequence
from urllib.parse import quote_plus, urlsplit

from fake_engines.bing.bing_layout import (
    SEARCH_PATH,
    Card,
    aria_label,
    compact_age,
    layout,
    related_searches,
    scroll_path,
    trending,
)
from fake_engines.catalogue import PER_PAGE, Article, digest, number
from fake_engines.markup import INVALID_HOST, esc, filler_css, token

NO_RESULTS_MESSAGE = "There are no results for"


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
