"""The feeds for readers (/feed.atom, /feed.rss, /feed.json) through the test client, on a real SQLite file and a
real PostgreSQL database filled by the real store pipeline; Atom and RSS read back with feedparser and lxml."""

from __future__ import annotations

import html
import json
import time
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime, parsedate_to_datetime
from urllib.parse import quote

import feedparser
import pytest
from lxml import etree

from tests.support.feed_data import article, client, nid, store, write_rows
from topicstreams.storage.feed_reads import FeedEvent, Sighting
from topicstreams.web.feeds import RENDERERS, FeedSpec, render_json

KINDS = ("atom", "rss", "json")
XML_KINDS = ("atom", "rss")
TYPES = {"atom": "application/atom+xml", "rss": "application/rss+xml", "json": "application/feed+json"}

XSS = ["<img src=x onerror=window.__x=1>", "</script><script>window.__x=1</script>", '"><svg onload=window.__x=1>']
CONTROLS = "\x00\x07\x1b\x0b\x0c\ufffe\uffff"


def entry_id(n: int | str, topic: str = "climate") -> str:
    return f"urn:topicstreams:news:{nid(n)}:topic:{quote(topic, safe='')}"


def batches(url: str, *groups: list) -> None:
    """Each group one batch (one first_seen_at), a little apart in time."""
    for group in groups:
        store(url, group)
        time.sleep(0.002)


def fetch(api, kind: str, **params):
    answer = api.get(f"/feed.{kind}", params=params)
    assert answer.status_code == 200, answer.text
    assert answer.headers["content-type"].split(";")[0] == TYPES[kind]
    return answer


def entries(answer, kind: str) -> list[dict]:
    """The entries as {id, title, link, engines, topic}, read back the way a reader would."""
    if kind == "json":
        return [
            {
                "id": item["id"],
                "title": item["title"],
                "link": item.get("url"),
                "engines": [each["engine"] for each in item["_topicstreams"]["engines"]],
                "topic": item["_topicstreams"]["topic"],
            }
            for item in answer.json()["items"]
        ]
    etree.fromstring(answer.content)  # well-formed XML, or this raises
    parsed = feedparser.parse(answer.content)
    assert parsed.bozo == 0, parsed.get("bozo_exception")
    assert parsed.version == ("atom10" if kind == "atom" else "rss20")
    found = []
    for entry in parsed.entries:
        tags = entry.get("tags", [])
        links = [each["href"] for each in entry.get("links", []) if each.get("rel") == "alternate"]
        found.append(
            {
                "id": entry.id,
                "title": entry.title,
                "link": links[0] if links else None,
                "engines": [tag["term"] for tag in tags if tag["scheme"] == "urn:topicstreams:engine"],
                "topic": [tag["term"] for tag in tags if tag["scheme"] == "urn:topicstreams:topic"][0],
            }
        )
    return found


def ids(answer, kind: str) -> list[str]:
    return [entry["id"] for entry in entries(answer, kind)]


# -- content ---------------------------------------------------------------------------------------------------


def test_each_feed_gives_the_newest_events_with_their_fields(feed_url: str) -> None:
    batches(feed_url, [article(1, "climate", "google", snippet="Ice melts.", source="Daily Planet")])
    write_rows(
        feed_url,
        [
            {
                "news_id": nid(2),
                "url": "https://news.example/2",
                "topic": "energy",
                "engine": "bing",
                "title": "Story 2",
                "source": None,
                "snippet": None,
                "published_at": None,
            }
        ],
    )
    time.sleep(0.002)
    batches(feed_url, [article(1, "climate", "yahoo")])
    api = client(feed_url)
    json_items = fetch(api, "json").json()["items"]
    first_seen = datetime.fromisoformat(json_items[1]["_topicstreams"]["first_seen_at"])
    changed = datetime.fromisoformat(json_items[1]["date_modified"])
    assert changed > first_seen  # the yahoo sighting is the event's last change

    for kind in KINDS:
        answer = fetch(api, kind)
        found = entries(answer, kind)
        assert [(each["id"], each["title"], each["link"], each["topic"]) for each in found] == [
            (entry_id(2, "energy"), "Story 2", "https://news.example/2", "energy"),
            (entry_id(1), "Story 1", "https://news.example/1", "climate"),
        ]  # newest first; yahoo made no new one
        assert found[1]["engines"] == ["google", "yahoo"] and found[0]["engines"] == ["bing"]
        if kind == "json":
            continue
        parsed = feedparser.parse(answer.content)
        one, two = parsed.entries[1], parsed.entries[0]
        assert one.author == "Daily Planet" and "author" not in two
        assert html.unescape(one.summary) == "Ice melts."
        published = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
        assert parsedate_or_iso(one.published) == published
        if kind == "atom":
            assert "published" not in two  # not known: not invented
            assert abs(parsedate_or_iso(one.updated) - changed) < timedelta(milliseconds=1)
            assert abs(parsedate_or_iso(parsed.feed.updated) - changed) < timedelta(milliseconds=1)
        else:
            assert abs(parsedate_or_iso(two.published) - first_seen) < timedelta(days=1)  # pubDate: first seen
            assert one.guidislink is False

    document = fetch(api, "json").json()
    assert document["version"] == "https://jsonfeed.org/version/1.1"
    one, two = document["items"][1], document["items"][0]
    assert one["content_text"] == "Ice melts." and "content_html" not in one
    assert one["authors"] == [{"name": "Daily Planet"}] and "authors" not in two
    assert one["date_published"] == "2026-11-30T12:00:00.000Z" and "date_published" not in two
    assert one["date_modified"] == json_items[1]["date_modified"]
    assert one["_topicstreams"]["topic"] == "climate" and one["_topicstreams"]["news_id"] == nid(1)
    sightings = one["_topicstreams"]["engines"]
    assert [each["engine"] for each in sightings] == ["google", "yahoo"]
    assert sightings[0]["first_seen_at"] == one["_topicstreams"]["first_seen_at"]
    assert sightings[1]["first_seen_at"] == one["date_modified"]
    assert two["content_text"] == ""


def parsedate_or_iso(value: str) -> datetime:
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return parsedate_to_datetime(value)


def test_feed_title_and_links_name_the_filters_on_the_requests_base_url(feed_url: str) -> None:
    batches(feed_url, [article(1, "climate", "google"), article(2, "energy", "bing")])
    api = client(feed_url)
    for kind in KINDS:
        answer = api.get(
            f"/feed.{kind}",
            params={"topic": ["climate", " ", "climate"], "engine": "Google", "q": " story "},
            headers={"host": "localhost:8080"},
        )
        assert answer.status_code == 200, answer.text
        query = "?topic=climate&engine=google&q=story"
        title = "topicstreams — climate · google · “story”"
        if kind == "json":
            document = answer.json()
            assert document["title"] == title
            assert document["feed_url"] == f"http://localhost:8080/feed.json{query}"
            assert document["home_page_url"] == f"http://localhost:8080/{query}"
            continue
        feed = feedparser.parse(answer.content).feed
        assert feed.title == title
        links = {link["rel"]: link["href"] for link in feed.links}
        assert links == {
            "self": f"http://localhost:8080/feed.{kind}{query}",
            "alternate": f"http://localhost:8080/{query}",
        }
        unfiltered = feedparser.parse(api.get(f"/feed.{kind}").content).feed
        assert unfiltered.title == "topicstreams"
        assert {link["rel"]: link["href"] for link in unfiltered.links} == {
            "self": f"http://127.0.0.1/feed.{kind}",
            "alternate": "http://127.0.0.1/",
        }


def test_ids_stay_the_same_across_requests_and_after_new_events_land(feed_url: str) -> None:
    batches(feed_url, [article(1, "climate"), article(1, "climate, energy & more", "bing")])
    api = client(feed_url)
    before = {kind: ids(fetch(api, kind), kind) for kind in KINDS}
    assert sorted(before["atom"]) == sorted([entry_id(1), entry_id(1, "climate, energy & more")])
    assert all(before[kind] == before["atom"] for kind in KINDS)  # one id per event in every format
    assert {kind: ids(fetch(api, kind), kind) for kind in KINDS} == before

    batches(feed_url, [article(2, "climate"), article(1, "climate", "brave")])
    after = {kind: ids(fetch(api, kind), kind) for kind in KINDS}
    for kind in KINDS:
        assert after[kind][0] == entry_id(2) and after[kind][1:] == before[kind]
    assert ids(fetch(client(feed_url), "atom"), "atom") == after["atom"]  # another app on the same database


def test_every_engine_of_an_event_is_listed_also_under_an_engine_filter(feed_url: str) -> None:
    batches(
        feed_url,
        [article(1, "climate", "google")],
        [article(1, "climate", "bing")],
        [article(1, "climate", "brave"), article(2, "climate", "yahoo")],
    )
    api = client(feed_url)
    for kind in KINDS:
        found = entries(fetch(api, kind, engine="bing"), kind)
        assert [(each["id"], each["engines"]) for each in found] == [(entry_id(1), ["google", "bing", "brave"])]
        assert [each["engines"] for each in entries(fetch(api, kind), kind)] == [["yahoo"], ["google", "bing", "brave"]]


def test_topic_engine_and_search_filters_combine(feed_url: str) -> None:
    batches(
        feed_url,
        [
            article(1, "climate", "google", title="Glaciers retreat"),
            article(2, "climate", "bing", title="Solar farms grow"),
            article(3, "energy", "google", title="Solar prices fall"),
            article(4, "energy", "yahoo", title="Wind power record"),
            article(5, "sport", "brave", title="Solar-powered stadium"),
        ],
    )
    api = client(feed_url)
    by_id = {
        entry_id(n, topic): n
        for n, topic in [(1, "climate"), (2, "climate"), (3, "energy"), (4, "energy"), (5, "sport")]
    }

    for kind in KINDS:

        def found(**params) -> set[int]:
            return {by_id[each] for each in ids(fetch(api, kind, **params), kind)}  # noqa: B023

        assert found() == {1, 2, 3, 4, 5}
        assert found(topic="climate") == {1, 2}
        assert found(topic=["climate", "sport"]) == {1, 2, 5}
        assert found(engine="google") == {1, 3}
        assert found(engine=["bing", "yahoo"]) == {2, 4}
        assert found(q="solar") == {2, 3, 5}
        assert found(topic="energy", engine="google") == {3}
        assert found(topic=["climate", "energy"], q="solar") == {2, 3}
        assert found(engine="google", q="solar") == {3}
        assert found(topic=["climate", "energy"], engine=["google", "bing"], q="solar") == {2, 3}
        assert found(topic="nowhere") == set()  # an unknown topic matches nothing, and is no error
        assert found(topic="", engine="", q="") == found()  # empty form fields are no filters


def test_a_feed_holds_the_newest_page_size_events(feed_url: str) -> None:
    batches(feed_url, *[[article(n)] for n in range(1, 6)])
    api = client(feed_url, page_size=3)
    for kind in KINDS:
        assert ids(fetch(api, kind), kind) == [entry_id(5), entry_id(4), entry_id(3)]
        assert ids(fetch(api, kind, topic="climate", q="story"), kind) == [entry_id(5), entry_id(4), entry_id(3)]


def test_an_empty_feed_is_a_valid_feed(feed_url: str) -> None:
    api = client(feed_url)
    for kind in KINDS:
        answer = fetch(api, kind, topic="nowhere")
        assert entries(answer, kind) == []
        assert answer.headers["etag"] and answer.headers["last-modified"]
    assert fetch(api, "json").json()["items"] == []


# -- hostile text ----------------------------------------------------------------------------------------------


def test_hostile_text_stays_text_and_the_xml_well_formed(feed_url: str) -> None:
    items = [
        article(f"x{n}", title=text, snippet=f"snippet {text}", source=f"source {text}") for n, text in enumerate(XSS)
    ]
    # PostgreSQL text cannot hold NUL at all (the writer's batch would fail): there every other control character
    controls = CONTROLS.replace("\x00", "") if feed_url.startswith("postgresql") else CONTROLS
    items.append(article("ctl", title=f"bell{controls}end", snippet=f"a{controls}b\x1fc", source=f"s{controls}"))
    batches(feed_url, items)
    write_rows(
        feed_url,
        [
            {
                "news_id": "f" * 32,
                "url": "javascript:window.__x=1",
                "topic": "climate",
                "engine": "google",
                "title": "Click me",
                "source": None,
                "snippet": None,
                "published_at": None,
            },
            {
                "news_id": "e" * 32,
                "url": " JavaScript:window.__x=1//https://x.example/",
                "topic": "climate",
                "engine": "bing",
                "title": "",
                "source": "",
                "snippet": "",
            },
        ],
    )
    api = client(feed_url)
    expected = {
        **{entry_id(f"x{n}"): text for n, text in enumerate(XSS)},
        entry_id("ctl"): "bellend",
        f"urn:topicstreams:news:{'f' * 32}:topic:climate": "Click me",
        f"urn:topicstreams:news:{'e' * 32}:topic:climate": "(untitled)",
    }
    for kind in KINDS:
        answer = fetch(api, kind)
        assert b"javascript:" not in answer.content.lower()
        found = entries(answer, kind)  # XML: lxml parses it, feedparser without bozo
        assert {each["id"]: each["title"] for each in found} == expected  # titles verbatim (controls dropped)
        links = {each["id"]: each["link"] for each in found}
        assert links[entry_id("x0")] == "https://news.example/x0"
        assert links[f"urn:topicstreams:news:{'f' * 32}:topic:climate"] is None
        assert links[f"urn:topicstreams:news:{'e' * 32}:topic:climate"] is None
        if kind == "json":
            by_id = {item["id"]: item for item in answer.json()["items"]}
            item = by_id[entry_id("x1")]
            assert item["content_text"] == f"snippet {XSS[1]}" and item["authors"] == [{"name": f"source {XSS[1]}"}]
            assert "content_html" not in item
            assert by_id[entry_id("ctl")]["content_text"] == "abc"
            continue
        root = etree.fromstring(answer.content)
        names = {etree.QName(element).localname for element in root.iter() if isinstance(element.tag, str)}
        assert not names & {"img", "script", "svg"}  # markup stayed text: no elements of it
        parsed = feedparser.parse(answer.content)
        by_id = {entry.id: entry for entry in parsed.entries}
        for n, text in enumerate(XSS):
            entry = by_id[entry_id(f"x{n}")]
            assert entry.author == f"source {text}"
            assert html.unescape(entry.summary) == f"snippet {text}"
            if kind == "rss":  # the description is HTML: the markup is escaped in it, so a reader shows it as text
                description = root.xpath("//item[guid=$id]/description/text()", id=entry.id)[0]
                assert description == html.escape(f"snippet {text}", quote=False) and "<" not in description
        assert html.unescape(by_id[entry_id("ctl")].summary) == "abc"
        assert not any(
            link.get("href", "").lower().startswith("javascript")
            for entry in parsed.entries
            for link in entry.get("links", [])
        )


def test_lone_surrogates_and_noncharacters_are_dropped_by_every_renderer() -> None:
    # No database stores a lone surrogate (the writer cannot encode it): the renderers are given one directly.
    now = datetime(2026, 12, 1, 9, 30, tzinfo=UTC)
    event = FeedEvent(
        topic="clim\ud800ate",
        topic_id=1,
        news_id="a" * 32,
        url="https://news.example/\ud800",
        title=f"T\ud800i{CONTROLS}tle",
        source="S\udfff",
        snippet="x\ud800y",
        published_at=None,
        first_seen_at=now,
        engines=[Sighting("google", now)],
    )
    spec = FeedSpec(
        kind="atom",
        title="topicstreams — clim\ud800ate",
        feed_id="urn:topicstreams:feed",
        self_url="http://127.0.0.1/feed.atom",
        page_url="http://127.0.0.1/",
        events=[event],
    )
    for kind, render in RENDERERS.items():
        body = render(replace(spec, kind=kind))
        if kind == "json":
            item = json.loads(body.decode("utf-8"))["items"][0]
        else:
            etree.fromstring(body)
            parsed = feedparser.parse(body)
            assert parsed.bozo == 0
            item = parsed.entries[0]
            assert "link" not in item or not item["link"].startswith("https://news.example/")
        assert item["title"] == "Title"
        assert item["id"] == f"urn:topicstreams:news:{'a' * 32}:topic:clim%ED%A0%80ate"
    assert "url" not in json.loads(render_json(spec))["items"][0]  # a URL XML cannot hold is no link


def test_control_characters_in_the_filters_do_not_break_the_feed(feed_url: str) -> None:
    batches(feed_url, [article(1, "climate")])
    api = client(feed_url)
    for kind in KINDS:
        answer = fetch(api, kind, topic=["climate", "a\x07b\x1b<i>\uffff"], q="story\x00\x07")
        found = entries(answer, kind)
        assert [each["id"] for each in found] == [entry_id(1)]
        title = answer.json()["title"] if kind == "json" else feedparser.parse(answer.content).feed.title
        assert title == "topicstreams — climate, ab<i> · “story”"


def test_a_nul_in_a_topic_is_no_database_error(feed_url: str, request: pytest.FixtureRequest) -> None:
    batches(feed_url, [article(1, "climate")])
    api = client(feed_url)
    for kind in KINDS:
        answer = api.get(f"/feed.{kind}", params={"topic": "a\x00b"})
        assert answer.status_code in (200, 400), answer.text  # no such topic (nothing), or bad input naming it
        if answer.status_code == 400:
            assert answer.json()["detail"][0]["loc"] == ["query", "topic"]
        else:
            assert entries(answer, kind) == []


# -- conditional requests --------------------------------------------------------------------------------------


def test_conditional_requests_get_304_until_the_feed_changes(feed_url: str) -> None:
    batches(feed_url, [article(1), article(2, "energy", "bing")])
    api = client(feed_url)
    first = {kind: fetch(api, kind) for kind in KINDS}
    assert len({answer.headers["etag"] for answer in first.values()}) == 3  # one per format
    for kind, answer in first.items():
        etag, modified = answer.headers["etag"], answer.headers["last-modified"]
        assert etag.startswith('"') and etag.endswith('"') and not etag.startswith("W/")
        assert fetch(api, kind).headers["etag"] == etag  # the same content, the same tag
        assert fetch(api, kind).content == answer.content

        def get(headers: dict, **params):
            return api.get(f"/feed.{kind}", params=params, headers=headers)  # noqa: B023

        for matching in (etag, f"W/{etag}", f'"stale", {etag}', "*"):
            not_modified = get({"If-None-Match": matching})
            assert not_modified.status_code == 304, matching
            assert not_modified.content == b""
            assert not_modified.headers["etag"] == etag and not_modified.headers["last-modified"] == modified
        assert get({"If-None-Match": '"stale"'}).status_code == 200
        assert get({"If-None-Match": etag}, topic="energy").status_code == 200  # another filter, another tag
        assert get({"If-Modified-Since": modified}).status_code == 304
        later = format_datetime(parsedate_to_datetime(modified) + timedelta(hours=1), usegmt=True)
        earlier = format_datetime(parsedate_to_datetime(modified) - timedelta(seconds=1), usegmt=True)
        assert get({"If-Modified-Since": later}).status_code == 304
        assert get({"If-Modified-Since": earlier}).status_code == 200
        assert get({"If-Modified-Since": "not a date"}).status_code == 200
        # If-None-Match wins over If-Modified-Since (RFC 9110 §13.2.2)
        assert get({"If-None-Match": '"stale"', "If-Modified-Since": later}).status_code == 200
        assert get({"If-None-Match": etag, "If-Modified-Since": earlier}).status_code == 304
        head = api.head(f"/feed.{kind}", headers={"If-None-Match": etag})
        assert head.status_code == 304 and head.headers["etag"] == etag

    batches(feed_url, [article(3)])  # a new event
    second = {}
    for kind, answer in first.items():
        fresh = api.get(f"/feed.{kind}", headers={"If-None-Match": answer.headers["etag"]})
        assert fresh.status_code == 200 and fresh.headers["etag"] != answer.headers["etag"]
        assert ids(fresh, kind)[0] == entry_id(3)
        assert parsedate_to_datetime(fresh.headers["last-modified"]) >= parsedate_to_datetime(
            answer.headers["last-modified"]
        )
        second[kind] = fresh.headers["etag"]

    batches(feed_url, [article(2, "energy", "brave")])  # a new engine on an event: no new entry, a new tag
    for kind in KINDS:
        fresh = api.get(f"/feed.{kind}", headers={"If-None-Match": second[kind]})
        assert fresh.status_code == 200 and fresh.headers["etag"] != second[kind]
        assert len(ids(fresh, kind)) == 3
        assert api.get(f"/feed.{kind}", headers={"If-None-Match": fresh.headers["etag"]}).status_code == 304


# -- bad input -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("params", "name"),
    [
        ({"engine": "duckduckgo"}, "engine"),
        ({"engine": ["google", "nope"]}, "engine"),
        ({"q": "!!! ..."}, "q"),
        ({"q": "x" * 501}, "q"),
        ({"topic": [f"t{n}" for n in range(201)]}, "topic"),
    ],
)
def test_bad_parameters_get_400_json_naming_them(feed_url: str, params: dict, name: str) -> None:
    api = client(feed_url)
    for kind in KINDS:
        answer = api.get(f"/feed.{kind}", params=params)
        assert answer.status_code == 400, answer.text
        assert answer.headers["content-type"].startswith("application/json")
        assert answer.json()["detail"][0]["loc"] == ["query", name]
