"""An engine's browser tab: kept from one results page to the next, kept clean, renewed, closed.

An engine spider sends its pages through scrapy-playwright in the engine's own context of the process's shared
Chromium (:mod:`topicstreams.browser.provider`), its cookies and storage kept in the engine's profile folder. It
navigates one tab from page to page, as a person would: no new renderer process for every page (see the render
benchmark). :class:`EngineTab` is that tab's lifecycle:

* :meth:`~EngineTab.meta` gives a results page's request its scrapy-playwright meta: the engine's context, the tab
  to navigate (when one is open), and the page handed back with the response;
* :meth:`~EngineTab.keep` keeps the tab a response came in for the next request, with two kinds of hygiene:

  * every ``TOPICSTREAMS_TAB_GC_PAGES`` pages it asks the tab's renderer for a garbage collection (in the
    background): a tab navigated from page to page keeps each page it left in memory until V8 collects it,
    which a renderer left alone does late (on the render benchmark's pages, four tabs took 1.9 GiB after
    120 pages each, 0.13 GiB with a collection after each page);
  * after ``TOPICSTREAMS_TAB_PAGES`` pages it closes the tab (``topicstreams/<engine>/tabs_renewed``), and the next
    request opens a fresh one: a tab keeps every request and response it has seen until it closes, in the
    browser, the driver and here;

* :meth:`~EngineTab.drop` closes a tab whose navigation failed or hung: the next request starts from a fresh one;
* :meth:`~EngineTab.leave_late` closes the tab of an answer that came after its run was given up, unless it is
  the engine's tab (the run in flight may be using it).

A tab still open when the crawl ends closes with its context.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from topicstreams.browser.chromium import route_context_options, state_path
from topicstreams.config.sections import RouteSection


class EngineTab:
    """The tab of engine ``engine`` (see the module docstring): ``context_kwargs`` make its browser context,
    ``gc_every`` and ``limit`` are its hygiene (0: never), ``stats`` (a Scrapy stats collector) counts renewals."""

    def __init__(
        self,
        engine: str,
        context_kwargs: dict[str, Any],
        *,
        gc_every: int = 0,
        limit: int = 0,
        stats: Any = None,
        context: str | None = None,
    ) -> None:
        self.engine = engine
        self.context_kwargs = context_kwargs
        self.context = context or f"{engine}-profile"
        """The name of its browser context (scrapy-playwright makes one per name): ``<engine>-profile`` without
        routes, ``<engine>@<route>`` on a route."""
        self.gc_every = gc_every
        self.limit = limit
        self.stats = stats
        self.page: Any = None
        """The Playwright page (tab) kept for the next request."""
        self.pages = 0
        """The pages it has shown."""

    @classmethod
    def from_settings(
        cls, engine: str, settings: Any, stats: Any = None, route: RouteSection | None = None
    ) -> EngineTab:
        """The tab of ``engine`` under a crawl's settings: its context's options, its state in
        ``TOPICSTREAMS_PROFILE_PATH`` and hygiene (``TOPICSTREAMS_TAB_GC_PAGES``, ``…_TAB_PAGES``).

        Without ``route`` (a configuration without ``routes``), the engine's one context:
        ``TOPICSTREAMS_CONTEXT_OPTIONS`` (set by the add-on) and the profile's own state file. On a ``route``, the
        pair's context ``ENGINE@ROUTE``: the route's proxy and persona, its state in ``<profile>/<route>/`` —
        identities never mix across routes."""
        profile = Path(settings.get("TOPICSTREAMS_PROFILE_PATH"))
        if route is None:
            options, state, context = settings.getdict("TOPICSTREAMS_CONTEXT_OPTIONS"), state_path(profile), None
        else:
            options, context = route_context_options(route), f"{engine}@{route.name}"
            state = state_path(profile / route.name)
        return cls(
            engine,
            {**options, "storage_state": str(state)},
            gc_every=settings.getint("TOPICSTREAMS_TAB_GC_PAGES"),
            limit=settings.getint("TOPICSTREAMS_TAB_PAGES"),
            stats=stats,
            context=context,
        )

    def meta(self) -> dict[str, Any]:
        """The scrapy-playwright meta of the engine's next results page."""
        tab = {"playwright_page": self.page} if self.page is not None and not self.page.is_closed() else {}
        return {
            "playwright": True,
            "playwright_context": self.context,
            "playwright_context_kwargs": self.context_kwargs,
            "playwright_page_goto_kwargs": {"wait_until": "domcontentloaded"},
            "playwright_include_page": True,
            **tab,
        }

    def keep(self, page: Any) -> None:
        """Keep ``page``, the tab a response came in, for the next request (with the hygiene above)."""
        if page is None:
            return
        if page is not self.page:
            self.page, self.pages = page, 0
        self.pages += 1
        if self.limit and self.pages >= self.limit:
            if self.stats is not None:
                self.stats.inc_value(f"topicstreams/{self.engine}/tabs_renewed")
            self.drop(page)
        elif self.gc_every and self.pages % self.gc_every == 0:
            collect_garbage(page)

    def drop(self, page: Any) -> None:
        """Close a tab (its navigation failed, or it is renewed): the next request starts from a fresh one."""
        if page is None:
            return
        if page is self.page:
            self.page = None
        close_tab(page)

    def leave_late(self, page: Any) -> None:
        """Close the tab of a late answer, unless it is the engine's tab (the run in flight may be using it)."""
        if page is not None and page is not self.page:
            close_tab(page)


def on_open_tab(page: Any, action: str) -> None:
    """Run a Playwright page's coroutine method ``action`` in the background, unless the tab is closed already (a
    tab that closes meanwhile, or an action that fails, is no matter)."""
    if not page.is_closed():
        running = asyncio.ensure_future(getattr(page, action)())
        running.add_done_callback(lambda done: done.cancelled() or done.exception())


def collect_garbage(page: Any) -> None:
    """Ask a Playwright page's renderer for a garbage collection, in the background."""
    on_open_tab(page, "request_gc")


def close_tab(page: Any) -> None:
    """Close a Playwright page in the background."""
    on_open_tab(page, "close")
