"""The fake Yahoo's search page markup: results, pager, right column, footer, and the no-results page."""

# ruff: noqa: E501 - the page templates keep their lines as a page writes them

from __future__ import annotations

from collections.abc import Sequence
from urllib.parse import quote_plus

from fake_engines.catalogue import PER_PAGE, Article
from fake_engines.markup import INVALID_HOST, esc, filler_css, token
from fake_engines.yahoo.yahoo_layout import Layout, Slot, layout, search_path, top_stories, trending_terms

INVALID_YAHOO = "https://search.fake-yahoo.invalid"
"""Where the other tabs (web, images…) point: a host that never resolves."""

NO_RESULTS_MESSAGE = "We did not find results for"
NO_RESULTS_HINT = "Check spelling or type a new query."

COUNTRY_LINKS = (
    ("https://it.yahoo.com/", "Yahoo Italia", "Notizie, meteo, sport e finanza dall'Italia."),
    ("https://uk.news.yahoo.com/", "Yahoo News UK", "The latest headlines from Britain and around the world."),
)
"""Links of the page's chrome (its footer) to Yahoo country sites, each with a heading and a line of text:
never results (outside ``#web``, not in :func:`expected_articles`)."""


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
            f'    <li><a href="{esc(url)}">{esc(text)}</a></li>\n' for url, text in top_stories(topic, page)
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
