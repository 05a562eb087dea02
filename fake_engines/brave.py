"""Brave-News-like pages for the fake Brave (markup written for this project).

What the pages share with the real Brave News (what a Brave parser relies on, see ENGINES.md):

* results URL ``/news?q=Q&tf=pd&offset=N&source=web`` (``tf``, ``offset`` and ``source`` may be missing);
  ``offset`` is a 0-based *page index* (page 2 is ``offset=1``), :data:`PER_PAGE` = 20 results a page, so
  page N holds ``articles_from(topic, N * 20, 20)`` and a topic (16 to 30 articles) has 1 or 2 pages;
* each result a ``div.snippet[data-type="news"]`` (under ``div#results``); its link ``a.l1[href]`` is the
  publisher URL itself (never wrapped), some with tracking parameters (:data:`TRACKING_PARAMS`); title
  ``div.title`` (a ``div``, not a heading) inside the link; source the *first* ``span`` of
  ``.site-name-content`` (the second holds the host); time ``div.age-snippet`` — or, on some results, a
  ``span.age-header`` — with "35 minutes ago" / "2 hours ago" / "1 week ago"; snippet ``div.description``;
  a thumbnail ``<img>`` on some results (and a favicon ``<img>`` on every one);
* the same data in the inline SvelteKit script that calls ``kit.start(app, element, {node_ids:[…],
  data:[…, {type:"data",data:{query:{…},news:{results:[…],more_results_available:…}},uses:{…}}],
  form:null,error:null})``: a JavaScript object literal, NOT JSON — unquoted keys, strings in double
  quotes (``<`` written ``\\u003c``), ``true``/``false``/``null`` and ``void 0`` (for undefined). Each of
  ``news.results`` has ``title``, ``url`` (the same tracked URL as the HTML link), ``description``, ``age``,
  ``page_age`` (ISO UTC), ``profile.name`` (the source) and ``meta_url`` (``scheme``, ``netloc``,
  ``hostname``, ``favicon``, ``path``); ``more_results_available`` is true iff there is a next page;
* a pager ``div#pagination`` whose ``a`` with the text "Next" links ``/news?q=Q&offset=N+1…`` when there is
  a next page ("Previous" on later pages);
* past the last page: zero results and the sentence "No results found" (the ``empty`` page);
* sidebar noise outside ``#results``: related searches (``/news?q=…`` links) and a "Top stories" list of
  bare off-engine ``<li><a>`` links (:func:`sidebar_urls`) a parser must not store.

With a news world (``FakeEngines(..., world=…)``, see :mod:`fake_engines.world`) the results come from the
world's list of the topic on Brave at the request's world time instead of the catalogue's, 20 a page as above.

Page kinds of results requests: results, empty, blank, small, pow (the proof-of-work CAPTCHA: HTTP 200, a
title mentioning "PoW Captcha", a ``challengeSet`` in its ``kit.start`` data, "Confirm you're a human
being"), ratelimit (HTTP 429 "Too Many Requests"). Other paths: ``/`` (home) and ``/robots.txt``.

Consent walls in front of results (``fakes.consent("brave", …)``, English or Spanish): a privacy notice alone,
``div.privacy-notice[data-notice=consent]`` with buttons ``data-consent`` reject / accept and no results; see
:mod:`fake_engines.consent_pages`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import lru_cache
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit

from fake_engines import consent_pages as consent
from fake_engines.catalogue import (
    SOURCES,
    Article,
    all_articles,
    digest,
    number,
    with_tracking,
)
from fake_engines.engine_pages import EnginePages, Reply, RequestContext
from fake_engines.markup import esc, filler_css, token

RESULTS_PATH = "/news"
PER_PAGE = 20
"""Results a Brave News page holds (page N = catalogue articles N*20 … N*20+19)."""
INVALID_HOST = "https://cdn.search-brave.invalid"
"""The host of the page's scripts and styles: ``.invalid`` never resolves, so nothing leaves the machine."""
IMAGES_HOST = "https://imgs.search-brave.invalid"

TRACKING_PARAMS = ("utm_source", "utm_medium", "utm_campaign", "utm_content", "ncid", "cmpid")
"""Every tracking parameter the fake Brave adds to publisher URLs (a normalizer must drop them all)."""

NO_RESULTS_MESSAGE = "No results found"
POW_TITLES = ("PoW Captcha", "Brave Search - PoW Captcha")
"""The proof-of-work page's title, one of these per topic."""
POW_MESSAGE = "Confirm you're a human being"
RATELIMIT_TITLE = "Too Many Requests"

CONSENT_PATH = "/privacy-notice"
"""The privacy notice on the consent host: ``/privacy-notice?redirect=<results URL>&lang=…``."""
CONSENT_SAVE_PATH = "/privacy-notice/save"
CONSENT_COOKIE = "brave_consent"
CONSENT_LANGUAGES = ("en", "es")


def search_path(topic: str, page: int = 0, tf: str | None = "pd") -> str:
    """The relative URL of a results page, as the real pager links it."""
    query: list[tuple[str, str]] = [("q", topic)]
    if tf:
        query.append(("tf", tf))
    query += [("offset", str(page)), ("source", "web")]
    return f"{RESULTS_PATH}?{urlencode(query)}"


def brave_age(seconds: int) -> str:
    """What Brave shows for an age: "1 minute ago", "35 minutes ago", "2 hours ago", "1 week ago"…"""
    minutes = max(1, seconds // 60)
    for size, unit in (
        (60 * 24 * 365, "year"),
        (60 * 24 * 30, "month"),
        (60 * 24 * 7, "week"),
        (60 * 24, "day"),
        (60, "hour"),
        (1, "minute"),
    ):
        if minutes >= size:
            count = minutes // size
            return f"{count} {unit} ago" if count == 1 else f"{count} {unit}s ago"
    return "1 minute ago"  # pragma: no cover - minutes >= 1 always matches


# -- layout: which article goes where -------------------------------------------------------------------


@dataclass(frozen=True)
class Result:
    """One ``div.snippet[data-type=news]`` of a results page."""

    article: Article
    rank: int
    """1-based position on the page (``data-pos`` is ``rank - 1``)."""
    url: str
    """The link: the publisher URL, with this result's tracking parameters (if any)."""
    host: str
    breadcrumb: str
    """``meta_url.path``: Brave's "› 2025 › slug" rendering of the path."""
    thumb: str | None
    favicon: str
    age_header: bool
    """Whether the time is a ``span.age-header`` (else a ``div.age-snippet``)."""

    @property
    def tracked(self) -> bool:
        return self.url != self.article.url


@dataclass(frozen=True)
class Layout:
    topic: str
    page: int
    total: int
    results: tuple[Result, ...]
    """Empty past the last page."""

    @property
    def has_next(self) -> bool:
        return bool(self.results) and (self.page + 1) * PER_PAGE < self.total


def _tracking(seed: str, rank: int) -> list[tuple[str, str]]:
    variants: tuple[list[tuple[str, str]], ...] = (
        [("utm_source", "brave"), ("utm_medium", "news")],
        [],
        [("utm_source", "brave"), ("utm_medium", "news"), ("utm_campaign", f"search-{number('c', seed) % 90 + 10}")],
        [],
        [("ncid", "brave-news-" + token("ncid", seed, length=8))],
        [("cmpid", f"bsn{number('cmp', seed) % 9000 + 1000}"), ("utm_content", f"r{rank}")],
    )
    if rank == 1:
        return variants[0]
    return variants[number("variant", seed) % len(variants)]


def _breadcrumb(url: str) -> str:
    parts = urlsplit(url)
    segments = [s for s in parts.path.split("/") if s]
    return "".join(f" › {s}" for s in segments).strip()


def layout(topic: str, page: int, articles: Sequence[Article] | None = None) -> Layout:
    """The layout of ``topic``'s 0-based ``page`` (``offset=page``).

    ``articles``: the topic's whole list to lay out (a news world's, see :mod:`fake_engines.world`); None,
    the default: the catalogue's."""
    if articles is None:
        return _catalogue_layout(topic, page)
    return _layout(topic, page, tuple(articles))


@lru_cache(maxsize=256)
def _catalogue_layout(topic: str, page: int) -> Layout:
    return _layout(topic, page, tuple(all_articles(topic)))


def _layout(topic: str, page: int, everything: tuple[Article, ...]) -> Layout:
    articles = everything[page * PER_PAGE : (page + 1) * PER_PAGE] if page >= 0 and topic.strip() else ()
    results = []
    for rank, article in enumerate(articles, start=1):
        seed = digest("brave", topic, page, rank, article.url)
        host = urlsplit(article.url).hostname or ""
        thumb = f"/thumbs/b{token('thumb', seed, length=12)}.png" if rank <= 2 or number("th", seed) % 3 == 0 else None
        results.append(
            Result(
                article=article,
                rank=rank,
                url=with_tracking(article.url, _tracking(seed, rank), seed),
                host=host,
                breadcrumb=_breadcrumb(article.url),
                thumb=thumb,
                favicon=f"/thumbs/fav-{article.source_slug}.png",
                age_header=rank == 2 or number("agecls", seed) % 4 == 0,
            )
        )
    return Layout(topic, page, len(everything), tuple(results))


def expected_articles(topic: str, page: int, articles: Sequence[Article] | None = None) -> list[str]:
    """The clean publisher URLs a correct parser + normalizer stores for ``topic``'s 0-based ``page``.

    In page order, each once; ``[]`` past the last page: ``articles_from(topic, page * 20, 20)`` (or
    ``articles[page * 20 : page * 20 + 20]`` when given: a news world's list).
    """
    return [result.article.url for result in layout(topic, page, articles).results]


def more_results_available(topic: str, page: int) -> bool:
    """The ``more_results_available`` of the page's data: whether a next page has results."""
    return layout(topic, page).has_next


_TRENDING = (
    "Markets close higher after a quiet week",
    "Storm warning issued for the coast",
    "Local team wins in overtime",
    "New rail line opens to passengers",
    "Museum unveils restored paintings",
    "Heatwave expected to ease by Friday",
    "City council approves new park",
    "Researchers map a distant galaxy",
)


def _sidebar(topic: str, page: int) -> tuple[tuple[str, str], ...]:
    """The "Top stories" of the catalogue's page (none past its last page)."""
    return _stories(topic, page) if layout(topic, page).results else ()


@lru_cache(maxsize=256)
def _stories(topic: str, page: int) -> tuple[tuple[str, str], ...]:
    """The "Top stories" of a page with results: (url, headline) × 4."""
    out = []
    for i in range(4):
        source = SOURCES[number("side-src", topic, page, i) % len(SOURCES)]
        headline = _TRENDING[(number("side-title", topic, page) + i) % len(_TRENDING)]
        slug = token("side", topic, page, i, length=10)
        out.append((f"https://www.{source.slug}.example/trending/{slug}", headline))
    return tuple(out)


def sidebar_urls(topic: str, page: int) -> list[str]:
    """The off-engine "Top stories" links of the page (not articles of the topic: never to be stored)."""
    return [url for url, _ in _sidebar(topic, page)]


def related_searches(topic: str) -> list[str]:
    """The related queries of the sidebar (on-engine ``/news?q=…`` links)."""
    return [f"{topic} {suffix}" for suffix in ("today", "latest news", "live updates", "explained")]


# -- a JavaScript object literal (what SvelteKit's devalue writes) --------------------------------------


class _Undefined:
    """Written as ``void 0``."""


UNDEFINED = _Undefined()
_IDENT = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*")


def js_literal(value: Any) -> str:
    """``value`` as a JavaScript literal: unquoted identifier keys, ``void 0`` for :data:`UNDEFINED`."""
    if value is UNDEFINED:
        return "void 0"
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        text = json.dumps(value, ensure_ascii=False)
        return text.replace("<", "\\u003c").replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(js_literal(item) for item in value) + "]"
    if isinstance(value, dict):
        items = []
        for key, item in value.items():
            name = key if _IDENT.fullmatch(key) else js_literal(key)
            items.append(f"{name}:{js_literal(item)}")
        return "{" + ",".join(items) + "}"
    raise TypeError(f"no JavaScript literal for {value!r}")


def _iso(seconds: float) -> str:
    return datetime.fromtimestamp(int(seconds), UTC).strftime("%Y-%m-%dT%H:%M:%S")


def _result_data(result: Result, now: float) -> dict[str, Any]:
    a = result.article
    data: dict[str, Any] = {
        "title": a.title,
        "url": result.url,
        "is_source_local": False,
        "is_source_both": False,
        "description": a.snippet,
        "page_age": _iso(a.published_at(now)),
        "profile": {
            "name": a.source,
            "url": f"https://{result.host}/",
            "long_name": result.host,
            "img": f"{IMAGES_HOST}/{token('fav', result.host, length=16)}/favicon",
        },
        "family_friendly": True,
        "meta_url": {
            "scheme": "https",
            "netloc": result.host,
            "hostname": result.host,
            "favicon": f"{IMAGES_HOST}/{token('fav', result.host, length=16)}/favicon",
            "path": result.breadcrumb,
        },
        "age": brave_age(a.age_seconds),
        "extra_snippets": UNDEFINED,
    }
    if result.thumb:
        data["thumbnail"] = {"src": result.thumb, "original": UNDEFINED, "logo": False}
    return data


def _query_data(topic: str, page: int) -> dict[str, Any]:
    return {
        "original": topic,
        "show_strict_warning": False,
        "is_navigational": False,
        "is_news_breaking": False,
        "spellcheck_off": True,
        "country": "us",
        "bad_results": False,
        "should_fallback": False,
        "postal_code": "",
        "city": "",
        "header_country": "",
        "state": "",
        "summary_key": UNDEFINED,
        "offset": page,
    }


def _kit_script(nonce: str, page_data: dict[str, Any], node: int) -> str:
    payload = js_literal(
        {
            "node_ids": [0, 2, node],
            "data": [
                {
                    "type": "data",
                    "data": {
                        "country": "us",
                        "useLocation": False,
                        "theme": "system",
                        "safesearch": "moderate",
                        "ui_lang": "en-us",
                    },
                    "uses": {},
                },
                None,
                {"type": "data", "data": page_data, "uses": {"search_params": ["q", "offset", "tf", "source"]}},
            ],
            "form": None,
            "error": None,
        }
    )
    return f"""\
<script nonce="{nonce}">
  {{
    __sveltekit_{nonce[:6].lower().replace("-", "x").replace("_", "y")} = {{
      base: new URL(".", location).pathname.slice(0, -1),
      assets: "{INVALID_HOST}/serp/v2"
    }};
    const element = document.currentScript.parentElement;
    Promise.all([
      import("{INVALID_HOST}/serp/v2/_app/immutable/entry/start.{nonce[:8]}.js"),
      import("{INVALID_HOST}/serp/v2/_app/immutable/entry/app.{nonce[:8]}.js")
    ]).then(([kit, app]) => {{
      kit.start(app, element, {payload});
    }});
  }}
</script>
"""


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
    stories = "".join(f'    <li><a href="{esc(url)}">{esc(text)}</a></li>\n' for url, text in _stories(topic, page))
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
        "results": [_result_data(result, now) for result in results],
        "mutated_by_goggles": False,
        "more_results_available": bool(results) and lay is not None and lay.has_next,
    }
    body.append(_kit_script(nonce, {"query": _query_data(topic, page), "news": news}, 7))
    body.append("</div>\n</body>\n</html>\n")
    return head + "".join(body), kind


_POW = """\
<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex, nofollow">
<title>{title}</title>
<style>
body{{margin:0;font-family:system-ui,sans-serif;background:#f3f4f8;color:#1a1a1f}}
.captcha-page{{max-width:420px;margin:12vh auto;padding:32px;background:#fff;border-radius:16px;text-align:center}}
.captcha-box{{display:flex;align-items:center;gap:12px;justify-content:center;margin:24px 0}}
</style>
</head>
<body>
<div style="display: contents">
<main class="captcha-page">
  <img src="/thumbs/brave-logo.png" alt="Brave Search" width="104" height="28">
  <h1 class="captcha-title">{message}</h1>
  <p>We detected unusual activity from your network. Your browser solves a small puzzle to continue to your search.</p>
  <div id="pow-captcha" class="captcha-box">
    <button id="pow-start" type="button" disabled>I'm not a robot</button>
    <span class="captcha-status" aria-live="polite">Verifying your browser…</span>
  </div>
  <noscript>Please enable JavaScript to continue.</noscript>
</main>
{script}</div>
</body>
</html>
"""

_RATELIMIT = """\
<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Too Many Requests</title></head>
<body><h1>Too Many Requests</h1><p>You have sent too many requests. Please wait a moment and try again.</p></body>
</html>
"""

_SMALL = "<!DOCTYPE html><html><head><title>Brave Search</title></head><body></body></html>\n"

_HOME = """\
<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Brave Search</title></head>
<body><main id="home"><img src="/thumbs/brave-logo.png" alt="Brave Search" width="208" height="56">
<form action="/news" method="get" role="search"><input name="q" aria-label="Search" autocomplete="off">
<input type="hidden" name="source" value="web"><button type="submit">Search</button></form></main></body></html>
"""

_ROBOTS = """\
User-agent: *
Disallow: /search
Disallow: /news
Disallow: /images
Disallow: /videos
Disallow: /api/
Allow: /help
"""


_CONSENT_TEXTS = {
    "en": {
        "title": "Brave Search - Privacy notice",
        "heading": "Your privacy on Brave Search",
        "text": "Brave Search does not track you or build a profile of you. A few cookies keep your settings, and "
        "optional ones help us count, anonymously, how the service is used.",
        "choose": "Accept them all, or reject the optional ones: you can change your mind at any time in Settings.",
        "reject": "Reject all",
        "accept": "Accept all",
        "privacy": "Privacy policy",
        "settings": "Settings",
    },
    "es": {
        "title": "Brave Search - Aviso de privacidad",
        "heading": "Tu privacidad en Brave Search",
        "text": "Brave Search no te rastrea ni crea un perfil sobre ti. Algunas cookies guardan tus ajustes, y otras "
        "opcionales nos ayudan a contar, de forma anónima, cómo se usa el servicio.",
        "choose": "Acéptalas todas o rechaza las opcionales: puedes cambiar de opinión en cualquier momento en "
        "Ajustes.",
        "reject": "Rechazar todo",
        "accept": "Aceptar todo",
        "privacy": "Política de privacidad",
        "settings": "Ajustes",
    },
}

_CONSENT = """\
<!DOCTYPE html>
<html lang="{lang}" data-theme="light">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex, nofollow">
<title>{title}</title>
<style>
body{{margin:0;font-family:system-ui,sans-serif;background:#f3f4f8;color:#1a1a1f}}
.privacy-notice{{max-width:480px;margin:12vh auto;padding:32px;background:#fff;border-radius:16px}}
.notice-actions{{display:flex;gap:12px;margin:24px 0 8px}}
.notice-actions button{{flex:1;height:40px;border-radius:20px;border:1px solid #3f39e8;background:#fff}}
.notice-actions button[data-consent=accept]{{background:#3f39e8;color:#fff}}
</style>
</head>
<body>
<div style="display: contents">
<main id="notice">
<div class="privacy-notice" data-notice="consent" role="dialog" aria-modal="true" aria-labelledby="notice-title">
  <img src="/thumbs/brave-logo.png" alt="Brave Search" width="104" height="28">
  <h1 id="notice-title" class="notice-title">{heading}</h1>
  <p>{text}</p>
  <p>{choose}</p>
  <form method="post" action="{action}">
    <input type="hidden" name="redirect" value="{redirect}">
    <input type="hidden" name="lang" value="{lang}">
    <div class="notice-actions">
      <button type="submit" name="choice" value="reject" data-consent="reject">{reject}</button>
      <button type="submit" name="choice" value="accept" data-consent="accept">{accept}</button>
    </div>
  </form>
  <p class="notice-links"><a href="/help/privacy">{privacy}</a> <a href="/settings">{settings}</a></p>
</div>
</main>
</div>
</body>
</html>
"""


def render_consent(redirect: str, lang: str = "en") -> str:
    """The privacy notice alone (no results): back to ``redirect`` once answered, in ``lang`` (en, es)."""
    return _CONSENT.format(
        lang=lang,
        action=CONSENT_SAVE_PATH,
        redirect=esc(redirect),
        **{key: esc(value) for key, value in _CONSENT_TEXTS[lang].items()},
    )


def render_pow(continue_path: str, topic: str, now: float) -> str:
    """The proof-of-work CAPTCHA page for a blocked ``continue_path``."""
    seed = digest("pow", continue_path, int(now))
    challenges = [
        {
            "salt": token("salt", seed, i, length=24),
            "target": "0000" + token("target", seed, i, length=12),
            "nonce_len": 8,
        }
        for i in range(3)
    ]
    data = {
        "challengeSet": {
            "id": token("pow-id", seed, length=22),
            "algorithm": "SHA-256",
            "difficulty": 16,
            "issued_at": int(now),
            "expires_at": int(now) + 300,
            "challenges": challenges,
            "signature": token("sig", seed, length=43),
        },
        "redirect": continue_path,
        "error": UNDEFINED,
    }
    nonce = token("nonce", seed, length=16)
    title = POW_TITLES[number("pow-title", topic) % len(POW_TITLES)]
    return _POW.format(title=esc(title), message=esc(POW_MESSAGE), script=_kit_script(nonce, data, 9))


def _page_of(ctx: RequestContext) -> int:
    try:
        return max(0, int(ctx.query.get("offset") or 0))
    except ValueError:
        return 0


class BravePages(EnginePages):
    name = "brave"
    page_kinds = frozenset({"results", "empty", "blank", "small", "pow", "ratelimit"})
    query_param = "q"

    def is_results(self, ctx: RequestContext) -> bool:
        return ctx.path == RESULTS_PATH

    def render(self, kind: str, ctx: RequestContext) -> Reply:
        topic = ctx.query.get("q", "")
        tf = ctx.query.get("tf") or None
        if kind in ("results", "empty", "blank"):
            articles = ctx.articles_of(topic) if kind == "results" and topic.strip() else None
            page, served = render_news_page(topic, _page_of(ctx), ctx.now, kind, tf, articles)
            return Reply(200, page, served=served)
        if kind == "small":
            return Reply(200, _SMALL, served="small")
        if kind == "pow":
            return Reply(200, render_pow(ctx.raw_target, topic, ctx.now), served="pow")
        if kind == "ratelimit":
            return Reply(429, _RATELIMIT, served="ratelimit")
        raise ValueError(f"unknown page kind {kind!r}")

    def other(self, ctx: RequestContext) -> Reply | None:
        if ctx.path == "/":
            return Reply(200, _HOME, served="home")
        if ctx.path == "/robots.txt":
            return Reply(200, _ROBOTS, "text/plain", served="robots")
        if ctx.path == CONSENT_PATH and ctx.method in ("GET", "HEAD"):
            lang = consent.wall_language(self, ctx, ctx.query.get("lang"))
            body = render_consent(consent.safe_continue(ctx.query.get("redirect", ""), ctx), lang)
            return consent.wall_reply(body, lang)
        if ctx.path == CONSENT_SAVE_PATH and ctx.method == "POST":
            form = dict(parse_qsl(ctx.body.decode("utf-8", "replace"), keep_blank_values=True))
            return consent.save_reply(self, ctx, consent.parse_choice(form.get("choice")), form.get("redirect", "/"))
        return None

    # -- consent walls ------------------------------------------------------------------------------

    consent_languages = CONSENT_LANGUAGES
    consent_cookies = (CONSENT_COOKIE,)

    def consent_cookie_value(self, choice: str, ctx: RequestContext) -> str:
        return f"v1.{choice}.{token('brave-consent', choice, ctx.now, length=16)}"

    def consent_wall(self, ctx: RequestContext) -> Reply:
        lang = ctx.consent_language
        return consent.wall_reply(render_consent(ctx.url, lang), lang)

    def consent_redirect(self, ctx: RequestContext) -> Reply:
        query = urlencode({"redirect": ctx.url, "lang": ctx.consent_language})
        return consent.redirect(f"{ctx.consent_base_url}{CONSENT_PATH}?{query}", "consent_redirect")


PAGES = BravePages()
