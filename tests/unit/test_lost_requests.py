"""A request that never comes back cannot stall the topic loop: the deadline rule on an injected clock, and the
spider's loop (the real Google spider, its real settings, real Scrapy requests and responses; no browser)."""

from __future__ import annotations

import asyncio
import logging
import time

import pytest
from scrapy.exceptions import CloseSpider
from scrapy.http import HtmlResponse
from scrapy.settings import Settings

from fake_engines.google import expected_articles, render_search_page
from tests.support.crawler import project_crawler
from tests.support.parsing import reading_of
from topicstreams.config.route_table import DEFAULT_ROUTE
from topicstreams.crawl import meta as keys
from topicstreams.crawl.deadline import LOST, PageDeadline, response_budget
from topicstreams.crawl.engine_state import CooldownPolicy, EngineState, RouteLane
from topicstreams.crawl.spider import TOPICS_REFUSED
from topicstreams.engines.classify import ResponseClass, Verdict
from topicstreams.engines.news_urls import normalize_url


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def engine_state(clock: Clock) -> RouteLane:
    """The one lane of an engine without routes."""
    return EngineState("google", floor=2.0, jitter_ratio=0.0, cooldown=CooldownPolicy(60, 2, 3600), clock=clock).lane(
        DEFAULT_ROUTE
    )


class Asked:
    """A request as the deadline sees it: its meta."""

    def __init__(self) -> None:
        self.meta: dict = {}


def test_the_budget_is_the_navigation_timeout_plus_the_margin():
    assert (
        response_budget(
            Settings({"PLAYWRIGHT_DEFAULT_NAVIGATION_TIMEOUT": 3000, "TOPICSTREAMS_RESPONSE_MARGIN": 2}), "none"
        )
        == 5
    )
    # unset, or 0 (Playwright: no timeout at all), counts as Playwright's 30 s: the loop never waits forever
    assert response_budget(Settings({"TOPICSTREAMS_RESPONSE_MARGIN": 1}), "none") == 31
    assert (
        response_budget(
            Settings({"PLAYWRIGHT_DEFAULT_NAVIGATION_TIMEOUT": 0, "TOPICSTREAMS_RESPONSE_MARGIN": 1}), "none"
        )
        == 31
    )
    from topicstreams import settings as project

    assert (
        response_budget(
            Settings(
                {
                    name: getattr(project, name)
                    for name in ("PLAYWRIGHT_DEFAULT_NAVIGATION_TIMEOUT", "TOPICSTREAMS_RESPONSE_MARGIN")
                }
            ),
            "none",
        )
        == 60
    )
    # where browser.consent answers walls, the answer and the page loaded again get one more navigation timeout
    for choice, budget in (("reject", 5 + 3), ("accept", 5 + 3), ("none", 5)):
        assert (
            response_budget(
                Settings({"PLAYWRIGHT_DEFAULT_NAVIGATION_TIMEOUT": 3000, "TOPICSTREAMS_RESPONSE_MARGIN": 2}), choice
            )
            == budget
        )


def test_a_request_never_let_go_is_lost_one_budget_after_the_engine_was_free():
    clock, request = Clock(), Asked()
    deadline = PageDeadline(request, 5, engine_state(clock), asked_at=clock.now, clock=clock)
    assert deadline.remaining() == 5 and not deadline.let_go
    clock.now += 5
    assert deadline.remaining() == 0  # dropped before pacing ever saw it


def test_the_time_pacing_holds_a_request_does_not_count():
    clock, request = Clock(), Asked()
    state = engine_state(clock)
    state.start_request()  # the previous request just went: the floor holds this one 2 s
    deadline = PageDeadline(request, 5, state, clock=clock)
    assert deadline.remaining() == pytest.approx(7)
    state.record(ResponseClass.HARD_BLOCK)  # and now a bench of 60 s
    clock.now += 6
    assert deadline.remaining() == pytest.approx(60 + 5 - 6 + 0)  # the bench's end, plus the budget
    clock.now += 59
    request.meta[keys.SENT_AT] = clock.now  # pacing lets it go at the bench's end
    assert deadline.let_go and deadline.remaining() == pytest.approx(5)
    request.meta[keys.SENT_AT] = clock.now + 1.5  # the browser reports it sent 1.5 s later
    assert deadline.remaining() == pytest.approx(6.5)


def test_a_probe_whose_outcome_never_comes_is_forgotten():
    clock = Clock()
    state = engine_state(clock)
    state.record(ResponseClass.CHALLENGE)
    clock.now += 60
    assert state.start_request() is True and state.wait_time() is None  # the probe is out: nothing else goes
    state.forget_probe()
    assert state.wait_time() is not None and state.start_request() is True  # the next request is the probe


# ---- the spider's loop --------------------------------------------------------------------------------------

BUDGET = 0.4


@pytest.fixture
def spider(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the defaults' relative paths (database, profiles) land here, untouched
    crawler = project_crawler(
        tmp_path, PLAYWRIGHT_DEFAULT_NAVIGATION_TIMEOUT=100, TOPICSTREAMS_RESPONSE_MARGIN=BUDGET - 0.2
    )
    made = crawler.spidercls.from_crawler(crawler, once="1")
    made._configure()
    # browser.consent (reject by default) answers walls: one more navigation timeout for the answer
    assert made.response_budget == pytest.approx(BUDGET)
    return made


def answer(spider, request, topic: str) -> HtmlResponse:
    """The fake Google's first results page for ``topic``, as the response to ``request`` (read as the blocks
    middleware reads it)."""
    html, _ = render_search_page(topic, 0, time.time())
    response = HtmlResponse(request.url, body=html.encode("utf-8"), encoding="utf-8", request=request)
    request.meta[keys.READING] = reading_of(spider.reader, response)
    return response


def test_a_lost_request_resolves_its_topic_as_an_error_and_its_late_answer_finishes_nothing(spider, caplog):
    caplog.set_level(logging.INFO)

    async def scenario():
        lane = spider.lanes[0]
        lost_request = spider.begin(lane, "alpha")
        lost = lane.run
        started = time.monotonic()
        verdict = await spider.outcome(lost)
        waited = time.monotonic() - started
        assert verdict == LOST == Verdict(ResponseClass.ERROR, "no response") and lost.lost
        assert BUDGET <= waited < BUDGET + 0.5

        current_request = spider.begin(lane, "beta")
        current = lane.run
        # alpha's answer comes after all: its items are kept (for alpha), nothing follows, beta's run goes on
        late = list(spider.parse_results(answer(spider, lost_request, "alpha"), **lost_request.cb_kwargs))
        assert late and all(not isinstance(each, type(lost_request)) for each in late)
        assert {item["topic"] for item in late} == {"alpha"}
        assert {normalize_url(item["url"]) for item in late} <= {
            normalize_url(url) for url in expected_articles("alpha", 0)
        }
        assert not current.done.done() and lane.run is current
        done = list(spider.parse_results(answer(spider, current_request, "beta"), **current_request.cb_kwargs))
        assert {item["topic"] for item in done} == {"beta"}
        assert (await spider.outcome(current)).cls is ResponseClass.OK
        return late, done

    late, done = asyncio.run(scenario())
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING and r.name == "google"]
    assert warnings == [
        (
            f"topic 'alpha', page 1: its request never came back within {BUDGET:g} s: dropped by a "
            "middleware, or lost by the browser; counted as an error"
        )
    ]
    assert any(
        f"topic 'alpha', page 1: a late answer, after its run timed out: its {len(late)} item(s) are kept"
        in r.getMessage()
        for r in caplog.records
    )
    stats = spider.crawler.stats
    assert stats.get_value("topicstreams/google/requests_lost") == 1
    assert stats.get_value("topicstreams/google/items_scraped") == len(late) + len(done)


def test_a_request_held_by_a_bench_is_not_lost_while_it_lasts(spider):
    async def scenario():
        held = spider.lanes[0].state
        held.record(ResponseClass.HARD_BLOCK)
        held.benched_until = held.clock() + 0.5  # a short bench holds the request in pacing
        lane = spider.lanes[0]
        request = spider.begin(lane, "alpha")
        run = lane.run
        waiting = asyncio.ensure_future(spider.outcome(run))
        await asyncio.sleep(BUDGET + 0.3)  # past the budget, not past the bench plus the budget
        assert not waiting.done()
        list(spider.parse_results(answer(spider, request, "alpha"), **request.cb_kwargs))
        return await waiting

    assert asyncio.run(scenario()).cls is ResponseClass.OK
    assert not spider.crawler.stats.get_value("topicstreams/google/requests_lost")


@pytest.mark.parametrize("topics", ["", " , ", "ok,a\tb", "x" * 5000])
def test_a_spider_refuses_a_bad_topics_argument_with_one_error(tmp_path, monkeypatch, caplog, topics):
    monkeypatch.chdir(tmp_path)
    crawler = project_crawler(tmp_path)
    made = crawler.spidercls.from_crawler(crawler, topics=topics, once="1")
    made._configure()
    with pytest.raises(CloseSpider) as closed:
        made.refuse_topics_arg()
    assert closed.value.reason == TOPICS_REFUSED
    errors = [r for r in caplog.records if r.levelno == logging.ERROR]
    assert len(errors) == 1 and errors[0].exc_info is None
    assert errors[0].getMessage().startswith("-a topics")
    assert "x" * 60 not in errors[0].getMessage()


def test_the_spider_gives_its_topic_supply_the_rule_of_its_engine(spider):
    takes = spider.supply.takes.problem_of
    assert takes("alpha") is None
    assert "its google results URL" in takes("x" * 5000)
    assert "control character" in takes("a\tb")
    # the crawler's own URLLENGTH_LIMIT and max pages
    assert spider.url_limit == 2083 and spider.max_pages == 1
