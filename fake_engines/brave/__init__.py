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

The pieces: :mod:`~fake_engines.brave.brave_layout` (URLs, which article goes where, the sidebar's links),
:mod:`~fake_engines.brave.brave_kit` (the page data of the inline SvelteKit script),
:mod:`~fake_engines.brave.brave_serp` (the news page's markup), :mod:`~fake_engines.brave.brave_walls` (the
proof-of-work and rate-limit pages, the privacy notice), :mod:`~fake_engines.brave.brave_handler` (the requests);
their names are importable from here.
"""

from fake_engines.brave.brave_handler import PAGES, BravePages
from fake_engines.brave.brave_kit import UNDEFINED, js_literal
from fake_engines.brave.brave_layout import (
    IMAGES_HOST,
    INVALID_HOST,
    PER_PAGE,
    RESULTS_PATH,
    TRACKING_PARAMS,
    Layout,
    Result,
    brave_age,
    expected_articles,
    layout,
    more_results_available,
    related_searches,
    search_path,
    sidebar_urls,
)
from fake_engines.brave.brave_serp import NO_RESULTS_MESSAGE, render_news_page
from fake_engines.brave.brave_walls import (
    CONSENT_COOKIE,
    CONSENT_LANGUAGES,
    CONSENT_PATH,
    CONSENT_SAVE_PATH,
    POW_MESSAGE,
    POW_TITLES,
    RATELIMIT_TITLE,
    render_consent,
    render_pow,
)

__all__ = [
    "BravePages",
    "CONSENT_COOKIE",
    "CONSENT_LANGUAGES",
    "CONSENT_PATH",
    "CONSENT_SAVE_PATH",
    "IMAGES_HOST",
    "INVALID_HOST",
    "Layout",
    "NO_RESULTS_MESSAGE",
    "PAGES",
    "PER_PAGE",
    "POW_MESSAGE",
    "POW_TITLES",
    "RATELIMIT_TITLE",
    "RESULTS_PATH",
    "Result",
    "TRACKING_PARAMS",
    "UNDEFINED",
    "brave_age",
    "expected_articles",
    "js_literal",
    "layout",
    "more_results_available",
    "related_searches",
    "render_consent",
    "render_news_page",
    "render_pow",
    "search_path",
    "sidebar_urls",
]
