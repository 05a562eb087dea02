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

The pieces: :mod:`~fake_engines.yahoo.yahoo_layout` (URLs, which article goes where and how it links, the sidebar's
links), :mod:`~fake_engines.yahoo.yahoo_serp` (the search page's markup), :mod:`~fake_engines.yahoo.yahoo_walls`
(the consent interstitials), :mod:`~fake_engines.yahoo.yahoo_handler` (the requests); their names are importable
from here.
"""

from fake_engines.markup import INVALID_HOST, relative_age
from fake_engines.yahoo.yahoo_handler import PAGES, YahooPages
from fake_engines.yahoo.yahoo_layout import (
    PATH_PARAMS,
    REDIRECT_HOST,
    RESULTS_PATH,
    TIME_SUFFIX,
    TRACKING_PARAMS,
    VIA_SUFFIX,
    Layout,
    Slot,
    expected_articles,
    layout,
    page_of,
    search_path,
    sidebar_urls,
    trending_terms,
)
from fake_engines.yahoo.yahoo_serp import (
    COUNTRY_LINKS,
    INVALID_YAHOO,
    NO_RESULTS_HINT,
    NO_RESULTS_MESSAGE,
    render_search_page,
)
from fake_engines.yahoo.yahoo_walls import (
    CONSENT_COOKIE,
    CONSENT_LANGUAGES,
    CONSENT_PATH,
    CONSENT_TITLE,
    GUCE_COOKIE,
    GUCE_PATH,
    GUCE_TITLE,
    render_consent,
    render_guce,
)

__all__ = [
    "CONSENT_COOKIE",
    "CONSENT_LANGUAGES",
    "CONSENT_PATH",
    "CONSENT_TITLE",
    "COUNTRY_LINKS",
    "GUCE_COOKIE",
    "GUCE_PATH",
    "GUCE_TITLE",
    "INVALID_HOST",
    "INVALID_YAHOO",
    "Layout",
    "NO_RESULTS_HINT",
    "NO_RESULTS_MESSAGE",
    "PAGES",
    "PATH_PARAMS",
    "REDIRECT_HOST",
    "RESULTS_PATH",
    "Slot",
    "TIME_SUFFIX",
    "TRACKING_PARAMS",
    "VIA_SUFFIX",
    "YahooPages",
    "expected_articles",
    "layout",
    "page_of",
    "relative_age",
    "render_consent",
    "render_guce",
    "render_search_page",
    "search_path",
    "sidebar_urls",
    "trending_terms",
]
