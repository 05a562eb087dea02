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

The pieces: :mod:`~fake_engines.bing.bing_layout` (URLs, times, which article goes where, the sidebar's links),
:mod:`~fake_engines.bing.bing_serp` (the full page's and the fragment's markup), :mod:`~fake_engines.bing.bing_walls`
(the challenge page and the cookie notice), :mod:`~fake_engines.bing.bing_handler` (the requests); their names are
importable from here.
"""

from fake_engines.bing.bing_handler import PAGES, BingPages
from fake_engines.bing.bing_layout import (
    FORM,
    LAST_PAGE_REPEATS,
    QFT,
    RESULTS_PATHS,
    SCROLL_PATH,
    SEARCH_PATH,
    TRACKING_PARAMS,
    TRENDING_PER_PAGE,
    Card,
    Layout,
    TrendingItem,
    aria_label,
    compact_age,
    expected_articles,
    layout,
    page_lang,
    related_searches,
    requested_page,
    scroll_path,
    search_path,
    sidebar_urls,
    trending,
)
from fake_engines.bing.bing_serp import NO_RESULTS_MESSAGE, render_fragment, render_full_page
from fake_engines.bing.bing_walls import (
    CAPTCHA_PATH,
    CAPTCHA_SENTENCE,
    CONSENT_COOKIE,
    CONSENT_LANGUAGES,
    CONSENT_PATH,
    CONSENT_SAVE_PATH,
    render_captcha,
    render_consent,
)
from fake_engines.markup import INVALID_HOST

__all__ = [
    "BingPages",
    "CAPTCHA_PATH",
    "CAPTCHA_SENTENCE",
    "CONSENT_COOKIE",
    "CONSENT_LANGUAGES",
    "CONSENT_PATH",
    "CONSENT_SAVE_PATH",
    "Card",
    "FORM",
    "INVALID_HOST",
    "LAST_PAGE_REPEATS",
    "Layout",
    "NO_RESULTS_MESSAGE",
    "PAGES",
    "QFT",
    "RESULTS_PATHS",
    "SCROLL_PATH",
    "SEARCH_PATH",
    "TRACKING_PARAMS",
    "TRENDING_PER_PAGE",
    "TrendingItem",
    "aria_label",
    "compact_age",
    "expected_articles",
    "layout",
    "page_lang",
    "related_searches",
    "render_captcha",
    "render_consent",
    "render_fragment",
    "render_full_page",
    "requested_page",
    "scroll_path",
    "search_path",
    "sidebar_urls",
    "trending",
]
