"""The feed page in a real browser (the project's Chromium, through pytest-playwright), on the app served by a real
uvicorn: the filter form, engines under a filter, paging while events land, the live "N new" notice, the keys,
and hostile text that must stay text. Every test also checks that the page loaded nothing from another host and
broke no rule of the Content-Security-Policy (which allows no inline script or style)."""

from __future__ import annotations

import os
import re
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from urllib.parse import parse_qs, urlencode, urlsplit

import pytest
from playwright.sync_api import Page, expect

from tests.support.feed_data import (
    STORIES,
    RunningApp,
    article,
    expected_stories,
    fresh_database,
    serving,
    store,
    store_stories,
    write_rows,
)
from tests.support.page_layout import PHONE, broken_words, shots_folder, sideways
from topicstreams import ENGINES
from topicstreams.storage.engine_status import mark_stopped, save_status
from topicstreams.storage.topics import add_topics

POLL_MS = 150
"""The poll interval in these tests (the page's default is 10 s)."""

FAST_POLL = f"document.addEventListener('DOMContentLoaded', () => {{ document.body.dataset.pollMs = '{POLL_MS}'; }});"
"""Runs before the page's own script starts (listeners run in the order they were added)."""

ENTRIES = """els => els.map(e => ({key: e.dataset.key, title: e.querySelector('.title').innerText,
    topic: e.querySelector('a.topic').innerText,
    engines: [...e.querySelectorAll('li.engine')].map(x => x.dataset.engine)}))"""


@pytest.fixture
def db(sqlite_url: str) -> str:
    return sqlite_url


@pytest.fixture
def filled(db) -> str:
    return store_stories(db)


class Watch:
    """What a page did that it must not: requests to other hosts, console errors (CSP violations among them),
    dialogs."""

    def __init__(self, page: Page) -> None:
        self.foreign: list[str] = []
        self.errors: list[str] = []
        self.dialogs: list[str] = []
        page.on("request", self._request)
        page.on("console", self._console)
        page.on("pageerror", lambda error: self.errors.append(str(error)))
        page.on("dialog", self._dialog)

    def _console(self, message) -> None:
        # A page answered 400 on purpose logs its status; anything else (a CSP violation...) is a fault.
        if message.type == "error" and "the server responded with a status of 400" not in message.text:
            self.errors.append(message.text)

    def _request(self, request) -> None:
        if urlsplit(request.url).hostname != "127.0.0.1":
            self.foreign.append(request.url)

    def _dialog(self, dialog) -> None:
        self.dialogs.append(dialog.message)
        dialog.dismiss()


@pytest.fixture
def watch(page: Page):
    """The page's misdeeds, checked after the test; links to articles answered locally (never the network)."""
    page.context.route(
        re.compile(r"^https?://(?!127\.0\.0\.1[:/])"),
        lambda route: route.fulfill(status=200, content_type="text/plain", body="an article"),
    )
    page.add_init_script(FAST_POLL)
    watched = Watch(page)
    yield watched
    assert not watched.errors, watched.errors
    assert not watched.dialogs, watched.dialogs


@contextmanager
def served(page: Page, database_url: str, page_size: int = 50) -> Iterator[RunningApp]:
    """The app on a real uvicorn; the page leaves it before it stops (a poll then would fail, and be logged)."""
    with serving(database_url, page_size=page_size) as app:
        try:
            yield app
        finally:
            page.goto("about:blank")


def shown(page: Page) -> list[dict]:
    return page.eval_on_selector_all("#entries > li.entry", ENTRIES)


def titles(page: Page) -> list[str]:
    return [entry["title"] for entry in shown(page)]


def expected(topics=(), engines=()) -> list[str]:
    return [f"Story {n}" for n in expected_stories(topics, engines)]


def apply(page: Page, topics=(), engines=()) -> None:
    """Set the form's checkboxes to exactly *topics* and *engines* and press Apply."""
    for box in page.locator("input[name=topic], input[name=engine]").all():
        box.set_checked(box.get_attribute("value") in (*topics, *engines))
    with page.expect_navigation():
        page.get_by_role("button", name="Apply").click()


def test_the_form_filters_by_topics_and_engines_and_shows_every_engine(filled, page: Page, watch):
    with served(page, filled) as app:
        page.goto(app.url + "/")
        assert titles(page) == expected()
        for topics, engines in [
            (("climate", "energy"), ("bing", "brave")),
            (("climate",), ("google",)),
            ((), ("yahoo",)),
            (("space", "energy"), ()),
            (("space",), ("google",)),
        ]:
            apply(page, topics, engines)
            query = parse_qs(urlsplit(page.url).query)
            assert query.get("topic", []) == sorted(topics)  # in the form's order: topics by name,
            assert query.get("engine", []) == [name for name in ENGINES if name in engines]  # engines as listed
            assert titles(page) == expected(topics, engines), (topics, engines)
            for entry in shown(page):
                story = entry["title"].removeprefix("Story ")
                assert set(entry["engines"]) == STORIES[story][1]  # an engine filter hides no engine
            if not expected(topics, engines):
                expect(page.locator("#empty")).to_contain_text("Nothing matches these filters")
        # The search box, and the active filters named on the page.
        apply(page, ("climate",), ("google", "brave"))
        page.fill("#q", "c1")
        with page.expect_navigation():
            page.keyboard.press("Enter")
        assert titles(page) == ["Story c1"]
        assert [e["engines"] for e in shown(page)] == [["google", "bing", "brave"]]
        expect(page.locator(".active-filter .value")).to_have_text(["climate", "google", "brave", "c1"])
        assert page.get_attribute("a.subscribe", "href") == "/feed.atom?topic=climate&engine=google&engine=brave&q=c1"
        # A topic link narrows to that topic.
        with page.expect_navigation():
            page.locator("a.topic").first.click()
        assert parse_qs(urlsplit(page.url).query) == {"topic": ["climate"]}
    assert not watch.foreign, watch.foreign


def test_older_pages_while_new_events_land_show_each_event_once(db, page: Page, watch):
    for n in range(10):
        store(db, [article(n, "climate", "google"), article(f"other{n}", "energy", "bing")])
    with served(page, db, page_size=3) as app:
        page.goto(app.url + "/?topic=climate")
        seen, loads = [], 0
        while True:
            seen += titles(page)
            loads += 1
            store(db, [article(f"late{loads}", "climate", "google")])  # lands between two page loads
            older = page.locator("a.older")
            if not older.count():
                break
            with page.expect_navigation():
                older.click()
            assert parse_qs(urlsplit(page.url).query)["topic"] == ["climate"]
            expect(page.locator("a.newest")).to_be_visible()
        assert seen == [f"Story {n}" for n in range(9, -1, -1)]
        assert loads == 4
        with page.expect_navigation():
            page.locator("a.newest").click()
        assert titles(page)[:3] == ["Story late4", "Story late3", "Story late2"]
    assert not watch.foreign


def test_a_new_event_is_announced_and_inserted_once_on_request(filled, page: Page, watch):
    with served(page, filled) as app:
        page.goto(app.url + "/?topic=climate")
        before = shown(page)
        notice = page.locator("#fresh-notice")
        page.wait_for_timeout(POLL_MS * 4)  # a few polls: the overlap returns entries already shown
        expect(notice).to_be_hidden()
        top = page.locator("#entries > li.entry").first.bounding_box()
        store(filled, [article("new", "climate", "bing", title="Fresh story"), article("other", "energy", "bing")])
        expect(notice).to_have_text("1 new")
        page.wait_for_timeout(POLL_MS * 3)
        # Nothing moved before the click.
        assert shown(page) == before
        assert page.locator("#entries > li.entry").first.bounding_box() == top
        expect(notice).to_have_text("1 new")
        notice.click()
        expect(notice).to_be_hidden()
        entries = shown(page)
        assert entries[0]["title"] == "Fresh story" and entries[0]["engines"] == ["bing"]
        assert entries[1:] == before
        page.wait_for_timeout(POLL_MS * 4)
        expect(notice).to_be_hidden()
        assert shown(page) == entries  # nothing inserted twice
        # Another one; the first stays where it is, once.
        store(filled, [article("newer", "climate", "yahoo", title="Fresher story")])
        expect(notice).to_have_text("1 new")
        notice.click()
        assert titles(page)[:2] == ["Fresher story", "Fresh story"]
        assert max(Counter(entry["key"] for entry in shown(page)).values()) == 1
    assert not watch.foreign


def test_the_first_events_replace_the_empty_state(db, page: Page, watch):
    with served(page, db) as app:
        page.goto(app.url + "/")
        expect(page.locator("#empty")).to_contain_text("No topics yet")
        store(db, [article(1, "climate", "google")])
        page.locator("#fresh-notice").click()
        expect(page.locator("#empty")).to_have_count(0)
        assert titles(page) == ["Story 1"]


def test_the_empty_feed_says_whether_anyone_is_crawling_on_a_phone(db, page: Page, watch, databases, tmp_path):
    """At 390 px: with no crawl running the empty state says how to start one; once an engine's crawl writes its row,
    the next page says it is crawling (never "start it" then). No sideways scrolling; screenshots into
    $TOPICSTREAMS_SHOTS (else the test's folder)."""
    status = databases.of(db)
    add_topics(status, ["climate change"])
    save_status(status, "google", "node-a", state="running", updated_at=datetime.now(UTC) - timedelta(minutes=30))
    mark_stopped(status, "google", "node-a", datetime.now(UTC) - timedelta(minutes=29))
    shots = shots_folder(tmp_path)
    with served(page, db) as app:
        page.set_viewport_size({"width": PHONE, "height": 800})
        page.goto(app.url + "/")
        expect(page.locator("#crawl-status")).to_have_attribute("data-crawl", "idle")
        expect(page.locator("#crawl-status")).to_contain_text("No crawl running: the last one stopped at")
        expect(page.locator("#empty")).to_contain_text("Start it with scrapy crawlall (or make run")
        assert sideways(page) == 0
        page.screenshot(path=shots / f"feed-empty-idle-{PHONE}.png", full_page=True)

        for engine in ("google", "bing"):
            save_status(status, engine, "node-a", state="running", score=95, band="ok")
        page.goto(app.url + "/")
        expect(page.locator("#crawl-status")).to_have_attribute("data-crawl", "crawling")
        expect(page.locator("#crawl-status")).to_contain_text("Crawl running · Both engines healthy on 1 node")
        expect(page.locator("#empty h2")).to_have_text("Crawling: nothing stored yet")
        expect(page.locator("#empty")).not_to_contain_text("scrapy crawlall")
        assert sideways(page) == 0 and broken_words(page, "#crawl-status, #empty") == []
        page.screenshot(path=shots / f"feed-empty-crawling-{PHONE}.png", full_page=True)


def test_keys_move_the_current_entry_open_it_search_and_help(filled, page: Page, watch):
    with served(page, filled) as app:
        page.goto(app.url + "/")
        current = page.locator("#entries > li.entry.is-current")
        expect(current).to_have_count(0)
        page.keyboard.press("j")
        expect(current).to_have_attribute("data-key", shown(page)[0]["key"])
        page.keyboard.press("j")
        page.keyboard.press("j")
        expect(current).to_contain_text("Story e2")
        page.keyboard.press("k")
        expect(current).to_contain_text("Story s1")
        expect(page.locator("[aria-current=true]")).to_have_count(1)
        for _ in range(10):
            page.keyboard.press("j")
        expect(current).to_contain_text("Story c1")  # stays on the last
        assert page.evaluate(
            "() => { const r = document.querySelector('li.is-current').getBoundingClientRect();"
            " return r.top >= 0 && r.bottom <= window.innerHeight; }"
        )
        with page.context.expect_page() as opened:
            page.keyboard.press("o")
        article_page = opened.value
        article_page.wait_for_load_state()
        assert article_page.url == "https://news.example/c1"
        article_page.close()
        # "/" goes to the search box; keys typed there are text.
        page.keyboard.press("/")
        expect(page.locator("#q")).to_be_focused()
        page.keyboard.type("jk")
        expect(page.locator("#q")).to_have_value("jk")
        expect(current).to_contain_text("Story c1")
        page.keyboard.press("Escape")
        expect(page.locator("#q")).not_to_be_focused()
        help_box = page.locator("#help")
        expect(help_box).to_be_hidden()
        page.keyboard.press("?")
        expect(help_box).to_be_visible()
        expect(help_box).to_contain_text("next entry")
        page.keyboard.press("?")
        expect(help_box).to_be_hidden()


HOSTILE = [
    "<img src=x onerror=window.__x=1>",
    "</script><script>window.__x=1</script>",
    '"><svg onload=window.__x=1>',
    "<img src=x onerror=alert(1)>",
]


def test_hostile_text_stays_text(db, page: Page, watch):
    write_rows(
        db,
        [
            {
                "news_id": "a" * 32,
                "url": "javascript:window.__x=1",
                "topic": "<img src=x onerror=window.__x=1>",
                "engine": "google",
                "title": HOSTILE[0],
                "source": HOSTILE[1],
                "snippet": HOSTILE[2],
                "published_at": datetime(2026, 11, 30, tzinfo=UTC),
            },
            {
                "news_id": "b" * 32,
                "url": "JavaScript:alert(1)",
                "topic": "climate",
                "engine": "bing",
                "title": HOSTILE[1],
                "source": HOSTILE[2],
                "snippet": HOSTILE[3],
                "published_at": None,
            },
        ],
    )
    store(db, [article(1, "climate", "brave", title=HOSTILE[2], source=HOSTILE[3], snippet=HOSTILE[1])])
    with served(page, db) as app:
        page.goto(app.url + "/")
        text = page.inner_text("#entries")
        for hostile in HOSTILE:
            assert hostile in text
        assert "<img src=x onerror=window.__x=1>" in page.inner_text(".topic-choices")
        # The live path: a hostile event inserted from the polled fragment.
        store(db, [article(2, "climate", "yahoo", title=HOSTILE[3], snippet=HOSTILE[0])])
        page.locator("#fresh-notice").click()
        assert titles(page)[0] == HOSTILE[3]
        # Reflected: a search and topic names with markup.
        page.goto(
            app.url
            + "/?"
            + urlencode(
                [
                    ("q", '<svg onload=window.__x=1> "><img src=x onerror=alert(1)>'),
                    ("topic", "<img src=x onerror=window.__x=1>"),
                    ("topic", "</script><script>alert(1)</script>"),
                ]
            )
        )
        assert page.input_value("#q") == '<svg onload=window.__x=1> "><img src=x onerror=alert(1)>'
        chips = page.locator(".active-filter .value").all_inner_texts()
        assert chips[:2] == ["<img src=x onerror=window.__x=1>", "</script><script>alert(1)</script>"]
        assert "</script><script>alert(1)</script>" in page.inner_text("#empty")
        page.keyboard.press("Escape")
        for url in ("/?q=x%3Cscript%3E", "/?engine=%3Cimg%20src%3Dx%20onerror%3Dalert(1)%3E"):
            page.goto(app.url + url)
        assert "<img src=x onerror=alert(1)>" in page.inner_text(".message")  # the 400 page
        page.goto(app.url + "/?engine=google")  # only the event whose URL is javascript:
        page.keyboard.press("j")
        expect(page.locator("li.is-current .title")).to_have_text(HOSTILE[0])
        page.keyboard.press("o")  # the current entry has no link: nothing opens
        page.wait_for_timeout(200)
        assert len(page.context.pages) == 1
        assert page.evaluate("() => window.__x") is None
        assert page.locator('a[href^="javascript:" i], a[href*="script:" i]').count() == 0
        assert page.locator("img, svg, #entries script").count() == 0
    assert not watch.dialogs and not watch.foreign


def test_screenshots_and_a_narrow_screen(filled, page: Page, watch, tmp_path):
    """Screenshots for a person to look at (into $FEED_SHOTS, else the test's folder); no sideways scrolling at
    400 px."""
    shots = Path(os.environ.get("FEED_SHOTS") or tmp_path)
    shots.mkdir(parents=True, exist_ok=True)
    with served(page, filled) as app:
        page.set_viewport_size({"width": 1280, "height": 900})
        page.goto(app.url + "/?engine=google&engine=brave&engine=yahoo")
        page.keyboard.press("j")
        page.keyboard.press("j")
        page.screenshot(path=shots / "feed.png", full_page=True)
        page.goto(app.url + "/?topic=space&engine=bing&q=moon")
        page.screenshot(path=shots / "no-match.png", full_page=True)
        page.set_viewport_size({"width": 400, "height": 800})
        for url, name in (("/", "narrow.png"), ("/?topic=climate&engine=bing&q=story", "narrow-filtered.png")):
            page.goto(app.url + url)
            assert page.evaluate("() => document.documentElement.scrollWidth") <= 400
            page.screenshot(path=shots / name, full_page=True)
    with served(page, fresh_database(f"sqlite:///{tmp_path / 'empty.db'}")) as app:
        page.set_viewport_size({"width": 1280, "height": 700})
        page.goto(app.url + "/")
        page.screenshot(path=shots / "empty.png", full_page=True)
