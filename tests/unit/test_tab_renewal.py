"""An engine's tab is navigated from page to page, its renderer asked for a garbage collection every
``TOPICSTREAMS_TAB_GC_PAGES`` pages, and renewed after ``TOPICSTREAMS_TAB_PAGES`` pages (the real Google spider with the
project's settings; pages stand in for Playwright's, no browser)."""

from __future__ import annotations

import asyncio

import pytest

from tests.support.crawler import project_crawler


class Tab:
    """What the engine's tab keeper does with a Playwright page: asks whether it is closed, closes it."""

    def __init__(self) -> None:
        self.closed = False
        self.collections = 0

    async def request_gc(self) -> None:
        self.collections += 1

    def is_closed(self) -> bool:
        return self.closed

    async def close(self) -> None:
        self.closed = True


def engine_spider(tmp_path, monkeypatch, **settings):
    monkeypatch.chdir(tmp_path)
    crawler = project_crawler(tmp_path, **settings)
    spider = crawler.spidercls.from_crawler(crawler, once="1")
    spider._configure()
    return spider


def test_the_project_collects_every_five_pages_and_renews_a_tab_after_twenty(tmp_path, monkeypatch):
    spider = engine_spider(tmp_path, monkeypatch)
    assert (spider.lanes[0].tab.gc_every, spider.lanes[0].tab.limit) == (5, 20)


@pytest.mark.parametrize("every", [2, 0])
def test_the_renderer_is_asked_for_a_collection_every_so_many_pages(tmp_path, monkeypatch, every):
    spider = engine_spider(tmp_path, monkeypatch, TOPICSTREAMS_TAB_GC_PAGES=every, TOPICSTREAMS_TAB_PAGES=0)

    async def navigate(tab):
        for _ in range(7):
            spider.lanes[0].tab.keep(tab)
        await asyncio.sleep(0)  # the collections are asked in the background

    tab = Tab()
    asyncio.run(navigate(tab))
    assert tab.collections == (3 if every else 0)  # after its 2nd, 4th and 6th pages


@pytest.mark.parametrize("limit", [3, 0])
def test_a_tab_is_kept_until_it_has_shown_its_pages_then_closed_for_a_fresh_one(tmp_path, monkeypatch, limit):
    spider = engine_spider(tmp_path, monkeypatch, TOPICSTREAMS_TAB_PAGES=limit, TOPICSTREAMS_TAB_GC_PAGES=0)

    async def navigate():
        first, kept = Tab(), []
        for _ in range(3):
            spider.lanes[0].tab.keep(first)
            kept.append(spider.lanes[0].tab.page)
        await asyncio.sleep(0)  # the tab closes in the background
        return first, kept

    first, kept = asyncio.run(navigate())
    stats = spider.crawler.stats
    if limit:
        assert kept == [first, first, None] and first.closed  # its third page was its last
        assert stats.get_value("topicstreams/google/tabs_renewed") == 1
        second = Tab()
        spider.lanes[0].tab.keep(second)  # the next request's fresh tab starts its own count
        assert spider.lanes[0].tab.page is second and spider.lanes[0].tab.pages == 1
    else:  # 0: never renewed
        assert kept == [first] * 3 and not first.closed
        assert stats.get_value("topicstreams/google/tabs_renewed") is None
