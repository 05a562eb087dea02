"""The feed page ``/`` as HTML (through the test client, on a real SQLite file filled by the real pipelines):
filters, engines, paging by cursor, empty states, bad parameters, escaping, the fragment the page polls for."""

from __future__ import annotations

import itertools
import re
from datetime import UTC, datetime, timedelta
from urllib.parse import parse_qs, urlsplit

import pytest
from parsel import Selector

from tests.support.feed_data import (
    STORIES,
    article,
    client,
    expected_stories,
    store,
    store_stories,
    write_rows,
)
from topicstreams.storage.engine_status import mark_stopped, save_status
from topicstreams.storage.topics import add_topics


@pytest.fixture
def db(sqlite_url: str) -> str:
    return sqlite_url


@pytest.fixture
def filled(db) -> str:
    return store_stories(db)


def entries(html: str) -> list[dict]:
    """The entries of a page (or fragment), in order."""
    return [
        {
            "key": li.attrib["data-key"],
            "seen": li.attrib["data-seen"],
            "title": li.css(".title ::text").get("").strip(),
            "href": li.css("a.title-link::attr(href)").get(),
            "topic": li.css("a.topic::text").get(),
            "source": li.css(".source::text").get(),
            "snippet": li.css(".snippet::text").get(),
            "engines": [engine.attrib["data-engine"] for engine in li.css("li.engine")],
        }
        for li in Selector(text=html).css("#entries > li.entry, #fresh > li.entry")
    ]


def titles(html: str) -> list[str]:
    return [entry["title"] for entry in entries(html)]


def test_topic_and_engine_filters_combine_and_every_engine_of_an_event_is_shown(filled):
    web = client(filled)
    topic_sets = [(), ("climate",), ("climate", "energy"), ("space",), ("nowhere",)]
    engine_sets = [(), ("google",), ("bing", "brave"), ("yahoo",), ("google", "bing", "yahoo", "brave")]
    for topics, engines in itertools.product(topic_sets, engine_sets):
        answer = web.get("/", params=[("topic", name) for name in topics] + [("engine", name) for name in engines])
        assert answer.status_code == 200 and answer.headers["content-type"].startswith("text/html")
        expected = expected_stories(topics, engines)
        shown = entries(answer.text)
        assert [entry["title"] for entry in shown] == [f"Story {n}" for n in expected], (topics, engines)
        for entry in shown:
            story = entry["title"].removeprefix("Story ")
            assert entry["topic"] == STORIES[story][0]
            assert set(entry["engines"]) == STORIES[story][1], (topics, engines, story)  # never hidden by a filter
        page = Selector(text=answer.text)
        # The form keeps the filters; the active ones are named, each with a link that drops it.
        assert page.css("input[name=topic][checked]::attr(value)").getall() == list(topics)
        assert page.css("input[name=engine][checked]::attr(value)").getall() == [
            name for name in ("google", "bing", "yahoo", "brave") if name in engines
        ]
        assert page.css(".active-filter .value::text").getall() == [*topics, *engines]


def test_an_entry_shows_its_link_source_times_topic_engines_and_snippet(filled):
    web = client(filled)
    page = Selector(text=web.get("/", params={"engine": "bing"}).text)
    c1 = next(li for li in page.css("#entries > li.entry") if li.css(".title ::text").get() == "Story c1")
    link = c1.css("a.title-link")
    assert link.attrib["href"] == "https://news.example/c1"
    assert link.attrib["rel"] == "noopener noreferrer" and link.attrib["target"] == "_blank"
    assert c1.css(".source::text").get() == "Example News"
    assert c1.css(".snippet::text").get() == "Something happened."
    published = c1.css(".published time")
    assert published.attrib["datetime"] == "2026-11-30T12:00:00.000000Z"
    assert published.attrib["title"] == "2026-11-30 12:00 UTC"
    assert re.fullmatch(r"(\d+ (hour|day|month|year)s?|\d+ minutes?) ago|in .+", published.css("::text").get())
    assert c1.css("a.topic::attr(href)").get() == "/?topic=climate"
    # Every engine, earliest first, each with its own first-seen time.
    sightings = [(li.attrib["data-engine"], li.css("time::attr(datetime)").get()) for li in c1.css("li.engine")]
    assert [name for name, _ in sightings] == ["google", "bing", "brave"]
    assert [seen for _, seen in sightings] == sorted(seen for _, seen in sightings)
    assert len({seen for _, seen in sightings}) == 3
    assert all(li.css("time.rel::text").get() == "just now" for li in c1.css("li.engine"))
    # Subscribe (and the head's alternate) carry the current filters.
    feed = page.css('link[rel=alternate][type="application/atom+xml"]::attr(href)').get()
    assert feed == page.css("a.subscribe::attr(href)").get() == "/feed.atom?engine=bing"


def test_the_page_has_no_inline_script_or_style(filled):
    html = client(filled).get("/", params={"topic": "climate", "q": "story"}).text
    page = Selector(text=html)
    assert page.css("script::attr(src)").getall() and all(
        not script.css("::text").get("").strip() for script in page.css("script")
    )
    assert not page.css("style") and not page.css("[style]")
    assert not re.search(r"\son[a-z]+=", html)  # no event handler attributes
    assert page.css("body::attr(data-poll-ms)").get() == "10000"
    assert page.css("link[rel=stylesheet]::attr(href)").get().startswith("/static/feed.css")


def test_older_pages_by_cursor_and_every_event_is_seen_once_while_new_ones_land(db):
    for n in range(11):
        store(db, [article(n, "climate", "google"), article(f"x{n}", "energy", "bing")])
    web = client(db, page_size=4)
    seen, url, pages = [], "/?topic=climate&engine=google", 0
    while url:
        answer = web.get(url)
        assert answer.status_code == 200
        page = Selector(text=answer.text)
        seen += titles(answer.text)
        pages += 1
        older = page.css("a.older::attr(href)").get()
        if pages > 1:
            assert page.css("a.newest::attr(href)").get() == "/?topic=climate&engine=google"
        else:
            assert not page.css("a.newest")
        if older:
            query = parse_qs(urlsplit(older).query)
            assert query["topic"] == ["climate"] and query["engine"] == ["google"] and len(query["before"]) == 1
            assert "offset" not in older
        store(db, [article(f"new{pages}", "climate", "google")])  # newer than every page: never on an older one
        url = older
    assert pages == 3
    assert seen == [f"Story {n}" for n in range(10, -1, -1)]
    # The cursor of the oldest event: nothing older, and the page says so.
    cursor = web.get("/api/feed", params={"topic": "climate", "limit": 200}).json()["items"][-1]["cursor"]
    end = web.get("/", params={"topic": "climate", "before": cursor})
    assert end.status_code == 200 and not entries(end.text)
    assert "No older events" in end.text and 'href="/?topic=climate"' in end.text


def test_empty_states_say_why(db, databases):
    web = client(db)
    none = Selector(text=web.get("/").text)
    assert none.css("#empty::attr(data-empty)").get() == "no-topics"
    assert 'scrapy topics add "climate change"' in none.css("#empty pre ::text").get()

    add_topics(databases.of(db), ["climate"])
    nothing = Selector(text=web.get("/").text)
    assert nothing.css("#empty::attr(data-empty)").get() == "no-events"
    assert "The crawler has stored nothing yet" in "".join(nothing.css("#empty ::text").getall())
    assert "scrapy crawlall" in nothing.css("#empty code::text").getall()
    assert nothing.css("input[name=topic]::attr(value)").getall() == ["climate"]

    store(db, [article(1, "climate", "google"), article(2, "energy", "bing")])
    assert titles(web.get("/").text) == ["Story 2", "Story 1"]  # one batch: ties go by topic, newest first
    unmatched = Selector(text=web.get("/", params=[("topic", "climate"), ("engine", "bing"), ("q", "story")]).text)
    assert unmatched.css("#empty::attr(data-empty)").get() == "no-match"
    text = " ".join(" ".join(unmatched.css("#empty ::text").getall()).split())
    assert "No event of the topic “climate” found by “bing” matches the search “story”." in text
    drops = dict(
        zip(unmatched.css(".loosen a::text").getall(), unmatched.css(".loosen a::attr(href)").getall(), strict=True)
    )
    assert drops == {
        "drop the topic “climate”": "/?engine=bing&q=story",
        "drop the engine “bing”": "/?topic=climate&q=story",
        "drop the search “story”": "/?topic=climate&engine=bing",
        "clear every filter": "/",
    }
    unknown = Selector(text=web.get("/", params={"topic": "nowhere"}).text)
    assert "There is no topic named “nowhere”." in " ".join(unknown.css("#empty p::text").getall())
    assert unknown.css("input[name=topic][checked]::attr(value)").getall() == ["nowhere"]


def crawl_line(page: Selector) -> tuple[str | None, str]:
    """The feed header's crawl line: its case and its words."""
    return page.css("#crawl-status::attr(data-crawl)").get(), " ".join(
        "".join(page.css("#crawl-status .crawl-text ::text").getall()).split()
    )


def empty_text(page: Selector) -> str:
    return " ".join("".join(page.css("#empty ::text").getall()).split())


def test_the_feed_says_whether_anyone_is_crawling(db, databases):
    status_db = databases.of(db)
    add_topics(status_db, ["climate"])
    web = client(db)
    now = datetime.now(UTC)

    nobody = Selector(text=web.get("/").text)
    assert crawl_line(nobody) == ("idle", "No crawl running: no crawl has run on this database yet")
    assert nobody.css("#empty::attr(data-crawl)").get() == "idle"
    assert {"scrapy crawlall", "make run"} <= set(nobody.css("#empty code::text").getall())

    save_status(status_db, "google", "n1", state="running", score=95, band="ok")
    save_status(status_db, "bing", "n1", state="cooling", cooling_until=now + timedelta(minutes=5), score=90, band="ok")
    crawling = Selector(text=web.get("/").text)
    until = (now + timedelta(minutes=5)).strftime("%H:%M UTC")
    assert crawl_line(crawling) == ("crawling", f"Crawl running · bing cooling on n1 until {until}")
    assert crawling.css("#empty h2::text").get() == "Crawling: nothing stored yet"
    assert "The crawl is running (google running and bing cooling)" in empty_text(crawling)
    assert "scrapy crawlall" not in empty_text(crawling)  # never "start it" while it runs

    since = (now - timedelta(minutes=2)).replace(microsecond=0)
    for engine in ("google", "bing"):
        save_status(status_db, engine, "n1", state=None, connection_failures_since=since)
    down = Selector(text=web.get("/").text)
    assert crawl_line(down) == ("network-down", f"Network down on n1 since {since:%H:%M} UTC — no engine reachable")
    assert down.css("#crawl-status::attr(role)").get() == "alert"
    assert down.css("#empty h2::text").get() == "Nothing stored yet: the network is down"
    assert "fails to connect or to resolve its host name" in empty_text(down)

    for engine in ("google", "bing"):
        mark_stopped(status_db, engine, "n1", now - timedelta(minutes=1))
    stopped = Selector(text=web.get("/").text)
    assert crawl_line(stopped) == (
        "idle",
        f"No crawl running: the last one stopped at {(now - timedelta(minutes=1)):%H:%M} UTC",
    )
    assert "no crawl is running" in empty_text(stopped) and "scrapy crawlall" in empty_text(stopped)

    store(db, [article(1, "climate", "google")])
    stored = Selector(text=web.get("/").text)
    assert stored.css("#empty").get() is None and crawl_line(stored)[0] == "idle"  # the line stays, the page is full


def test_a_database_without_the_schema_answers_an_html_page_naming_the_upgrade(tmp_path):
    answer = client(f"sqlite:///{tmp_path / 'none.db'}").get("/")
    assert answer.status_code == 503 and answer.headers["content-type"].startswith("text/html")
    assert Selector(text=answer.text).css(".message code::text").get() == "scrapy db upgrade"


@pytest.mark.parametrize(
    ("query", "parameter"),
    [
        ({"engine": "duckduckgo"}, "engine"),
        ({"before": "not-a-cursor"}, "before"),
        ({"before": "WyJ4Il0"}, "before"),  # base64 of a JSON array, but not a cursor
        ({"q": "!!! ... ???"}, "q"),
        ({"q": "x" * 501}, "q"),
        ({"partial": "1", "since": "yesterday"}, "since"),
    ],
)
def test_bad_parameters_answer_400_html_naming_the_parameter(filled, query, parameter):
    answer = client(filled).get("/", params=query)
    assert answer.status_code == 400 and answer.headers["content-type"].startswith("text/html")
    message = Selector(text=answer.text).css(".message::text").get()
    assert message.startswith(f"{parameter}: ")


def test_a_bad_engine_is_escaped_on_the_error_page(filled):
    answer = client(filled).get("/", params={"engine": "<img src=x onerror=alert(1)>"})
    assert answer.status_code == 400
    assert "<img" not in answer.text and "&lt;img src=x onerror=alert(1)&gt;" in answer.text


HOSTILE = ["<img src=x onerror=window.__x=1>", "</script><script>window.__x=1</script>", '"><svg onload=window.__x=1>']


def test_hostile_text_from_the_database_and_the_url_is_escaped(db):
    write_rows(
        db,
        [
            {
                "news_id": "a" * 32,
                "url": "javascript:window.__x=1",
                "topic": "climate<b>\"x'",
                "engine": "google",
                "title": HOSTILE[0],
                "source": HOSTILE[1],
                "snippet": HOSTILE[2],
                "published_at": datetime(2026, 11, 30, tzinfo=UTC),
            },
            {
                "news_id": "b" * 32,
                "url": "java\tscript:window.__x=1",
                "topic": "climate",
                "engine": "bing",
                "title": HOSTILE[1],
                "source": None,
                "snippet": None,
                "published_at": None,
            },
            {
                "news_id": "c" * 32,
                "url": " https://ok.example/spaced",
                "topic": "climate",
                "engine": "yahoo",
                "title": "Spaced URL",
                "source": None,
                "snippet": None,
                "published_at": None,
            },
        ],
    )
    web = client(db)
    q = '<svg onload=window.__x=1> "quoted'
    for params in ({}, {"topic": "climate<b>\"x'"}, {"q": q}, {"topic": "<script>alert(1)</script>"}):
        html = web.get("/", params=params).text
        assert "<img" not in html and "<svg" not in html and "<script>window" not in html and "<b>" not in html
        assert "<script>alert" not in html
        assert not re.search(r'href="\s*j', html, re.IGNORECASE)
    shown = {entry["key"].split(":")[1][:1]: entry for entry in entries(web.get("/").text)}
    assert shown["a"]["title"] == HOSTILE[0] and shown["a"]["href"] is None
    assert shown["a"]["source"] == HOSTILE[1] and shown["a"]["snippet"] == HOSTILE[2]
    assert shown["a"]["topic"] == "climate<b>\"x'"
    assert shown["b"]["title"] == HOSTILE[1] and shown["b"]["href"] is None
    assert shown["c"]["href"] is None  # a URL a browser would first trim is no link either
    page = Selector(text=web.get("/", params={"q": q, "topic": "<script>alert(1)</script>"}).text)
    assert page.css("#q::attr(value)").get() == q
    assert "<script>alert(1)</script>" in page.css(".active-filter .value::text").getall()
    assert page.css("input[name=topic][checked]::attr(value)").getall() == ["<script>alert(1)</script>"]


def test_the_fragment_holds_the_new_entries_rendered_as_on_the_page(filled):
    web = client(filled)
    page = web.get("/", params={"topic": "climate"}).text
    newest = entries(page)[0]
    since = (datetime.fromisoformat(newest["seen"]) - timedelta(microseconds=1)).isoformat()
    store(filled, [article("c4", "climate", "google"), article("e3", "energy", "google")])
    fragment = web.get("/", params={"partial": "1", "since": since, "topic": "climate"})
    assert fragment.status_code == 200 and fragment.headers["content-type"].startswith("text/html")
    assert [entry["title"] for entry in entries(fragment.text)] == ["Story c4", "Story c3"]
    assert Selector(text=fragment.text).css("#fresh::attr(data-more)").get() == "0"
    assert "<form" not in fragment.text and "<script" not in fragment.text

    def outer(html: str, key: str) -> str:
        li = Selector(text=html).css(f'li.entry[data-key="{key}"]').get()
        return re.sub(r"(<time[^>]*>)[^<]*(</time>)", r"\1\2", li)  # relative times may have moved on

    assert outer(fragment.text, newest["key"]) == outer(page, newest["key"])  # one rendering of an entry
    everything = web.get("/", params={"partial": "1"})
    assert len(entries(everything.text)) == 8


def test_the_fragment_says_when_it_holds_only_the_newest_of_more(db):
    store(db, [article(n, "climate", "google") for n in range(201)])
    fragment = client(db).get("/", params={"partial": "1", "since": "2000-01-01T00:00:00Z"})
    assert len(entries(fragment.text)) == 200
    assert Selector(text=fragment.text).css("#fresh::attr(data-more)").get() == "1"
