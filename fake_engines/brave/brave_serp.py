"""The fake Brave's news page markup: results, pager, sidebar, and the no-results page."""

# ruff: noqa: E501 - the page templates keep their lines as a page writes them

from __future__ import annotations

from collections.abc import Sequence
from urllib.parse import urlencode

from fake_engines.brave.brave_kit import kit_script, query_data, result_data
from fake_engines.brave.brave_layout import (
    INVALID_HOST,
    Layout,
    Result,
    brave_age,
    layout,
    related_searches,
    search_path,
    top_stories,
)
from fake_engines.catalogue import Article
from fake_engines.markup import esc, filler_css, token

NO_RESULTS_MESSAGE = "No results found"


# -- markup ---------------------------------------------------------------------------------------------


def _svelte(name: str) -> str:
    return "svelte-" + token("svelte", name, length=7).lower().replace("-", "q").replace("_", "z")


S_SNIPPET, S_LINK, S_RESULTS, S_SIDE = (_svelte(n) for n in ("snippet", "link", "results", "side"))


_STYLE = """\
@font-face{font-family:'Fake Inter';font-style:normal;font-weight:400;font-display:swap;
  src:url(/fonts/fakeinter-regular.woff2) format('woff2');}
:root{--color-primary:#1a1a1f;--color-secondary:#6b6e79;--color-link:#3f39e8}
body{margin:0;font-family:'Fake Inter',system-ui,sans-serif;font-size:15px;color:var(--color-primary)}
#header{display:flex;align-items:center;gap:20px;padding:16px 32px}
#search-tabs{display:flex;gap:18px;padding:0 32px 8px;border-bottom:1px solid #e7e8ee}
#main{display:grid;grid-template-columns:minmax(0,680px) 320px;gap:48px;padding:16px 32px}
.snippet{display:flex;justify-content:space-between;gap:16px;margin:0 0 24px}
.l1{display:block;text-decoration:none;color:inherit}
.site-name-content span{font-size:13px}
.title{font-size:17px;font-weight:600;color:var(--color-link)}
.description{color:var(--color-secondary);margin-top:4px}
.age-snippet,.age-header{color:var(--color-secondary);font-size:13px}
.thumbnail img{width:112px;height:74px;object-fit:cover;border-radius:8px}
.sidebar-label{font-weight:600;margin:0 0 8px}
#pagination{display:flex;gap:12px;margin:24px 0}
"""

_HEAD = """\
<!DOCTYPE html>
<html lang="en" data-theme="light">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="strict-origin-when-cross-origin">
<title>{title}</title>
<link rel="search" type="application/opensearchdescription+xml" title="Brave Search" href="/opensearch.xml">
<link rel="modulepreload" href="{invalid}/serp/v2/_app/immutable/entry/start.{build}.js">
<link rel="stylesheet" href="{invalid}/serp/v2/_app/immutable/assets/0.{build}.css">
<style>
{style}
</style>
<style>
{boilerplate}
</style>
</head>
"""

_HEADER = """\
<body>
<div style="display: contents">
<div id="app" class="layout {s_results}">
<header id="header" class="{s_results}">
  <a href="/" class="logo" aria-label="Brave Search home"><img src="/thumbs/brave-logo.png" alt="Brave Search" width="104" height="28"></a>
  <form id="searchform" action="/news" method="get" role="search">
    <input id="searchbox" name="q" type="text" value="{q}" aria-label="Search" autocomplete="off" spellcheck="false">
    <input type="hidden" name="source" value="web">
    <button type="submit" aria-label="Submit search">Search</button>
  </form>
</header>
<nav id="search-tabs" aria-label="Search type">
  <a href="/search?q={q_url}&amp;source=web">All</a>
  <a href="/images?q={q_url}&amp;source=web">Images</a>
  <a href="/news?q={q_url}&amp;source=web" class="active" aria-current="page">News</a>
  <a href="/videos?q={q_url}&amp;source=web">Videos</a>
</nav>
<div id="filters" class="{s_results}">
  <span class="filter-label">Any time</span>
  <a href="/news?q={q_url}&amp;tf=pd&amp;source=web" class="filter{pd}">Past day</a>
  <a href="/news?q={q_url}&amp;tf=pw&amp;source=web" class="filter{pw}">Past week</a>
  <a href="/news?q={q_url}&amp;tf=pm&amp;source=web" class="filter{pm}">Past month</a>
  <a href="/news?q={q_url}&amp;tf=py&amp;source=web" class="filter{py}">Past year</a>
</div>
"""

_FOOTER = """\
<footer id="footer" class="{s_results}">
  <span>Fake results for local tests. Nothing here comes from a real search engine.</span>
  <a href="/help/privacy">Privacy</a> <a href="/settings">Settings</a> <a href="/help">Help</a>
  <img src="{invalid}/serp/v2/pixel.gif" alt="" width="1" height="1">
</footer>
</div>
"""

_RESULT = """\
<div class="snippet {s} " data-type="news" data-pos="{pos}">
  <div class="result-wrapper {s}">
    <div class="result-content {s}">
      <a href="{url}" target="_self" class="{l} l1" data-pos="{pos}">
        <div class="site-name-wrapper {l}">
          <div class="favicon-wrapper {l}"><img class="favicon {l}" src="{favicon}" alt="" width="16" height="16" loading="lazy"></div>
          <div class="site-name-content line-clamp-1 {l}"><span class="desktop-small-semibold t-primary {l}">{source}</span><span class="desktop-small-regular t-secondary netloc {l}">{host}</span></div>
        </div>
        <div class="title search-snippet-title line-clamp-2 t-primary {l}" title="{title}">{title}</div>
      </a>
{age_header}      <div class="snippet-content {s}">
{age_snippet}        <div class="description desktop-default-regular t-secondary line-clamp-2 {s}">{snippet}</div>
      </div>
    </div>
{thumb}  </div>
</div>
"""

_THUMB = """\
    <a href="{url}" class="thumbnail {s}" tabindex="-1" aria-hidden="true"><img src="{src}" alt="" loading="lazy" class="thumb {s}"></a>
"""

_AGE_HEADER = '      <span class="age-header t-secondary {s}">{age}</span>\n'
_AGE_SNIPPET = '        <div class="age-snippet t-secondary {s}">{age}</div>\n'

_EMPTY = """\
<div id="no-results" class="no-results {s}">
  <div class="no-results-heading">{message}</div>
  <p class="no-results-suggestion">Try different or fewer keywords, or a wider time range:
    <a href="{wider}">{q} in the past year</a>.</p>
</div>
"""


def _result_html(result: Result) -> str:
    a = result.article
    age = esc(brave_age(a.age_seconds))
    return _RESULT.format(
        s=S_SNIPPET,
        l=S_LINK,
        pos=result.rank - 1,
        url=esc(result.url),
        favicon=esc(result.favicon),
        source=esc(a.source),
        host=esc(result.host),
        title=esc(a.title),
        snippet=esc(a.snippet),
        age_header=_AGE_HEADER.format(s=S_SNIPPET, age=age) if result.age_header else "",
        age_snippet="" if result.age_header else _AGE_SNIPPET.format(s=S_SNIPPET, age=age),
        thumb=_THUMB.format(url=esc(result.url), src=esc(result.thumb), s=S_SNIPPET) if result.thumb else "",
    )


def _pager_html(lay: Layout, tf: str | None) -> str:
    links = []
    if lay.page > 0:
        links.append(
            f'<a href="{esc(search_path(lay.topic, lay.page - 1, tf))}" class="btn button prev {S_RESULTS}">'
            f'<svg class="icon" aria-hidden="true" viewBox="0 0 16 16"><path d="M10 3 5 8l5 5"/></svg>'
            f"Previous</a>"
        )
    links.append(f'<span class="page-number {S_RESULTS}" aria-current="page">{lay.page + 1}</span>')
    if lay.has_next:
        links.append(
            f'<a href="{esc(search_path(lay.topic, lay.page + 1, tf))}" class="btn button next {S_RESULTS}" '
            f'role="button">Next<svg class="icon" aria-hidden="true" viewBox="0 0 16 16">'
            f'<path d="m6 3 5 5-5 5"/></svg></a>'
        )
    return f'<div id="pagination" class="{S_RESULTS}">\n  ' + "\n  ".join(links) + "\n</div>\n"


def _sidebar_html(topic: str, page: int) -> str:
    """The sidebar of a page with results."""
    related = "".join(
        f'    <li><a href="{esc(search_path(q, 0, None))}" class="related-query">{esc(q)}</a></li>\n'
        for q in related_searches(topic)
    )
    stories = "".join(f'    <li><a href="{esc(url)}">{esc(text)}</a></li>\n' for url, text in top_stories(topic, page))
    return (
        f'<aside id="side-right" class="sidebar {S_SIDE}">\n'
        f'<section class="related-queries {S_SIDE}">\n  <div class="sidebar-label">People also search for</div>\n'
        f"  <ul>\n{related}  </ul>\n</section>\n"
        f'<section class="top-stories {S_SIDE}">\n  <div class="sidebar-label">Top stories</div>\n'
        f"  <ul>\n{stories}  </ul>\n</section>\n"
        "</aside>\n"
    )


def render_news_page(
    topic: str,
    page: int,
    now: float,
    kind: str = "results",
    tf: str | None = "pd",
    articles: Sequence[Article] | None = None,
) -> tuple[str, str]:
    """The HTML of a news page and the kind actually served ("results" past the last page is "empty").

    ``articles``: the topic's whole list (a news world's); None: the catalogue's."""
    lay = layout(topic, page, articles) if kind == "results" else None
    if kind == "results" and (lay is None or not lay.results):
        kind = "empty"
    nonce = token("nonce", topic, page, int(now), length=16)
    head = _HEAD.format(
        title=esc(f"{topic} - Brave Search"),
        invalid=INVALID_HOST,
        build=nonce[:8].lower(),
        style=_STYLE,
        boilerplate=filler_css("brave", 320, "svelte-"),
    )
    q_url = esc(urlencode({"q": topic})[2:])
    flags = {key: (" active" if tf == key else "") for key in ("pd", "pw", "pm", "py")}
    body = [_HEADER.format(q=esc(topic), q_url=q_url, s_results=S_RESULTS, **flags)]
    body.append(f'<main id="main" class="{S_RESULTS}">\n<div id="results-column">\n')
    results: list[Result] = list(lay.results) if lay is not None and kind == "results" else []
    body.append(f'<div id="results" class="results {S_RESULTS}">\n')
    body.extend(_result_html(result) for result in results)
    body.append("</div>\n")
    if kind == "empty":
        wider = search_path(topic, 0, "py")
        body.append(_EMPTY.format(s=S_RESULTS, message=NO_RESULTS_MESSAGE, wider=esc(wider), q=esc(topic)))
    if results and lay is not None:
        body.append(_pager_html(lay, tf))
    body.append("</div>\n")
    if results:
        body.append(_sidebar_html(topic, page))
    body.append("</main>\n")
    body.append(_FOOTER.format(s_results=S_RESULTS, invalid=INVALID_HOST))
    news = {
        "type": "news",
        "results": [result_data(result, now) for result in results],
        "mutated_by_goggles": False,
        "more_results_available": bool(results) and lay is not None and lay.has_next,
    }
    body.append(kit_script(nonce, {"query": query_data(topic, page), "news": news}, 7))
    body.append("</div>\n</body>\n</html>\n")
    return head + "".join(body), kind
