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

Page kinds of results requests: results, empty, sorry, captcha200, blank, small, consent, restyled, and the hostile
crowded, huge, bulky and spoofed (:mod:`~fake_engines.google.google_extremes`: 5,000 results, 30 MB, 100 KB fields,
bidirectional overrides).
``consent`` is a 302 to the consent wall on the results host (``/consent?continue=…``); the walls in front of
results (``fakes.consent("google", …)``, on ``/ml`` of the consent host) are in :mod:`fake_engines.consent_pages`.

The chrome (the footer) of every search page links Google country domains (:data:`COUNTRY_LINKS`), each with a
heading and a line of text, outside ``#rso``: a known-layout parser never reads them.

``restyled`` simulates a redesign that breaks the parser while the page loads fine: the same results page
(same articles, result items, links, titles, pager, JS-added result, about the same size), except that the
source wrapper is ``div.CEMjEf`` (not ``MgUUmf``), the time wrapper ``div.ZE0LJd`` (not ``OSrXXb``) and the
time span has no ``data-ts`` (only the visible "3 hours ago"). A parser of the normal page finds every item,
with url and title but no source and no time. Past the last page it is ``empty``, like ``results``.

The pieces: :mod:`~fake_engines.google.google_layout` (which article goes where),
:mod:`~fake_engines.google.google_serp` (the search pages' markup), :mod:`~fake_engines.google.google_walls` (the
CAPTCHA page and the consent wall), :mod:`~fake_engines.google.google_handler` (the requests); their names are
importable from here.
"""

from fake_engines.google.google_handler import PAGES, GooglePages
from fake_engines.google.google_layout import (
    CAPTCHA_SENTENCE,
    NO_RESULTS_MESSAGE,
    RESULTS_PATH,
    ROLES,
    TBS,
    TRACKING_PARAMS,
    Layout,
    Slot,
    expected_articles,
    layout,
    layout_at,
    search_path,
)
from fake_engines.google.google_serp import COUNTRY_LINKS, NORMAL, RESTYLED, Classes, render_search_page
from fake_engines.google.google_walls import (
    CONSENT_COOKIE,
    CONSENT_LANGUAGES,
    CONSENT_PATH,
    CONSENT_SAVE_PATHS,
    LEGACY_CONSENT_PATH,
    consent_location,
    render_consent,
    render_sorry,
)
from fake_engines.markup import INVALID_HOST, relative_age

__all__ = [
    "CAPTCHA_SENTENCE",
    "CONSENT_COOKIE",
    "CONSENT_LANGUAGES",
    "CONSENT_PATH",
    "CONSENT_SAVE_PATHS",
    "COUNTRY_LINKS",
    "INVALID_HOST",
    "LEGACY_CONSENT_PATH",
    "NORMAL",
    "NO_RESULTS_MESSAGE",
    "PAGES",
    "RESTYLED",
    "RESULTS_PATH",
    "ROLES",
    "TBS",
    "TRACKING_PARAMS",
    "Classes",
    "GooglePages",
    "Layout",
    "Slot",
    "consent_location",
    "expected_articles",
    "layout",
    "layout_at",
    "relative_age",
    "render_consent",
    "render_search_page",
    "render_sorry",
    "search_path",
]
