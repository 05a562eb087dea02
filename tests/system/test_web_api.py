"""The JSON API (/api/feed, /api/topics) through the test client, on a real SQLite file and a real PostgreSQL
database filled by the real store pipeline."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta

import pytest

from tests.support.feed_data import article, client, fresh_database, nid, store, write_rows


def batches(url: str, *groups: list) -> None:
    """Each group one batch (one first_seen_at), a little apart in time."""
    for group in groups:
        store(url, group)
        time.sleep(0.002)


def keys(answer: dict) -> list[tuple[str, str]]:
    return [(item["topic"], item["news_id"]) for item in answer["items"]]


def test_events_newest_first_with_every_engine_earliest_first(feed_url: str) -> None:
    batches(
        feed_url,
        [article(1, "climate", "google")],
        [article(2, "energy", "bing")],
        [article(1, "climate", "bing"), article(1, "climate", "yahoo")],
    )
    answer = client(feed_url).get("/api/feed").json()
    assert keys(answer) == [("energy", nid(2)), ("climate", nid(1))]  # a new engine is no new event
    assert answer["next"] is None
    item = answer["items"][1]
    assert set(item) == {
        "topic",
        "news_id",
        "url",
        "title",
        "source",
        "snippet",
        "published_at",
        "first_seen_at",
        "engines",
        "cursor",
    }
    assert item["url"] == "https://news.example/1" and item["title"] == "Story 1"
    assert item["source"] == "Example News" and item["snippet"] == "Something happened."
    assert item["published_at"] == "2026-11-30T12:00:00.000Z"
    assert [each["engine"] for each in item["engines"]][0] == "google"
    assert sorted(each["engine"] for each in item["engines"]) == ["bing", "google", "yahoo"]
    times = [each["first_seen_at"] for each in item["engines"]]
    assert times == sorted(times) and times[0] == item["first_seen_at"]
    assert all(value.endswith("Z") for value in [*times, item["first_seen_at"]])


def test_topic_and_engine_filters_are_independent_and_combine_by_and(feed_url: str) -> None:
    batches(
        feed_url,
        [
            article(1, "climate", "google"),
            article(2, "climate", "bing"),
            article(3, "energy", "google"),
            article(4, "energy", "yahoo"),
            article(5, "sport", "brave"),
            article(1, "energy", "bing"),
        ],
    )
    api = client(feed_url)

    def found(**params) -> set[tuple[str, int]]:
        answer = api.get("/api/feed", params=params)
        assert answer.status_code == 200, answer.text
        by_id = {nid(n): n for n in range(1, 6)}
        return {(topic, by_id[news]) for topic, news in keys(answer.json())}

    assert found(topic="climate") == {("climate", 1), ("climate", 2)}
    assert found(topic=["climate", "sport"]) == {("climate", 1), ("climate", 2), ("sport", 5)}
    assert found(engine="google") == {("climate", 1), ("energy", 3)}
    assert found(engine=["bing", "yahoo"]) == {("climate", 2), ("energy", 4), ("energy", 1)}
    assert found(topic="energy", engine="google") == {("energy", 3)}
    assert found(topic=["climate", "energy"], engine=["bing"]) == {("climate", 2), ("energy", 1)}
    assert found(topic="nowhere") == set()  # an unknown topic matches nothing, and is no error
    assert found(topic="sport", engine="google") == set()
    assert found(topic="") == found()  # an empty form field is no filter


def test_an_engine_filter_never_hides_the_events_other_engines(feed_url: str) -> None:
    batches(feed_url, [article(1, "climate", "google")], [article(1, "climate", "bing")])
    items = client(feed_url).get("/api/feed", params={"engine": "bing"}).json()["items"]
    assert [sorted(e["engine"] for e in item["engines"]) for item in items] == [["bing", "google"]]


def test_paging_by_cursor_sees_every_event_once_while_new_ones_land(feed_url: str) -> None:
    # Batches share their time: ties in first_seen_at are broken by the stable key.
    batches(feed_url, *[[article(f"{b}-{i}", f"topic-{i % 3}") for i in range(7)] for b in range(4)])
    api = client(feed_url)
    seen: list[tuple[str, str]] = []
    late = 0
    answer = api.get("/api/feed", params={"limit": 5}).json()
    newest = answer["items"][0]["cursor"]
    for round_ in range(20):
        seen += keys(answer)
        if answer["next"] is None:
            break
        store(feed_url, [article(f"late-{round_}", "topic-0")])  # lands above the reader: never on a later page
        late += 1
        answer = api.get("/api/feed", params={"limit": 5, "before": answer["next"]}).json()
    assert len(seen) == len(set(seen)) == 28
    assert all(not news.startswith("late") for _, news in seen)

    newer = api.get("/api/feed", params={"after": newest, "limit": 200}).json()
    assert newer["next"] is None
    assert late == 5 and len(newer["items"]) == late  # the late ones, newest first
    times = [item["first_seen_at"] for item in newer["items"]]
    assert times == sorted(times, reverse=True)


def test_after_gives_the_events_nearest_the_cursor_newest_first(feed_url: str) -> None:
    batches(feed_url, *[[article(n)] for n in range(10)])
    api = client(feed_url)
    everything = api.get("/api/feed").json()["items"]
    oldest = everything[-1]
    nearest = api.get("/api/feed", params={"after": oldest["cursor"], "limit": 3}).json()
    assert [item["news_id"] for item in nearest["items"]] == [item["news_id"] for item in everything[-4:-1]]
    assert nearest["next"] is None
    assert api.get("/api/feed", params={"after": everything[0]["cursor"]}).json() == {"items": [], "next": None}


def test_since_keeps_the_events_first_seen_at_or_after_it(feed_url: str) -> None:
    batches(feed_url, [article(1)])
    middle = datetime.now(UTC)
    time.sleep(0.01)
    batches(feed_url, [article(2)])
    api = client(feed_url)
    assert keys(api.get("/api/feed", params={"since": middle.isoformat()}).json()) == [("climate", nid(2))]
    naive = middle.replace(tzinfo=None).isoformat()  # no offset: UTC
    assert keys(api.get("/api/feed", params={"since": naive}).json()) == [("climate", nid(2))]
    past = (middle - timedelta(days=1)).isoformat().replace("+00:00", "Z")
    assert len(api.get("/api/feed", params={"since": past}).json()["items"]) == 2


def test_limit_defaults_to_the_page_size(feed_url: str) -> None:
    batches(feed_url, [article(n) for n in range(7)])
    answer = client(feed_url, page_size=3).get("/api/feed").json()
    assert len(answer["items"]) == 3 and answer["next"] is not None
    assert len(client(feed_url, page_size=3).get("/api/feed", params={"limit": 200}).json()["items"]) == 7


def test_search_finds_words_anded_phrases_case_and_accents_ignored(feed_url: str) -> None:
    batches(
        feed_url,
        [
            article(1, title="Heatwave grips southern Europe", snippet="Temperatures soar in Sevilla."),
            article(2, title="Café prices climb", source="Le Monde Économie"),
            article(3, title="Europe's southern heatwave ends", snippet=None),
            article(4, title="Cats OR dogs? A -1 debate", snippet="NEAR(the end) * of the day"),
        ],
    )
    api = client(feed_url)

    def titles(q: str) -> set[str]:
        answer = api.get("/api/feed", params={"q": q})
        assert answer.status_code == 200, answer.text
        return {item["title"] for item in answer.json()["items"]}

    assert titles("heatwave") == {"Heatwave grips southern Europe", "Europe's southern heatwave ends"}
    assert titles("HEATWAVE europe grips") == {"Heatwave grips southern Europe"}
    assert titles('"southern europe"') == {"Heatwave grips southern Europe"}
    assert titles('"europe southern"') == set()
    assert titles("cafe") == titles("CAFÉ") == {"Café prices climb"}
    assert titles("economie") == {"Café prices climb"}  # the source is searched too
    assert titles("sevilla") == {"Heatwave grips southern Europe"}  # and the snippet
    assert titles("cats OR dogs") == {"Cats OR dogs? A -1 debate"}  # OR is a word, and all are ANDed
    assert titles("heatwave OR cafe") == set()
    assert titles("-1 debate") == titles("debate*") == titles("NEAR(the end)") == {"Cats OR dogs? A -1 debate"}
    assert titles('heatwave "') == titles("heatwave")  # a lone quote is no syntax
    assert titles("heat") == set()  # whole words: no stemming, no prefixes


def test_search_combines_with_the_filters(feed_url: str) -> None:
    batches(
        feed_url,
        [article(1, "climate", "google", title="Storm warning"), article(2, "energy", "bing", title="Storm hits grid")],
    )
    answer = client(feed_url).get("/api/feed", params={"q": "storm", "engine": "bing"}).json()
    assert [item["title"] for item in answer["items"]] == ["Storm hits grid"]


def test_topics_lists_every_topic_with_its_events(feed_url: str, databases) -> None:
    batches(feed_url, [article(1, "climate"), article(2, "climate"), article(3, "energy")])
    from topicstreams.storage import add_topics

    add_topics(databases.of(feed_url), ["quiet"])
    topics = client(feed_url).get("/api/topics").json()
    assert [(t["name"], t["active"], t["events"]) for t in topics] == [
        ("climate", False, 2),
        ("energy", False, 1),
        ("quiet", True, 0),
    ]
    assert topics[0]["last_event_at"].endswith("Z") and topics[2]["last_event_at"] is None


@pytest.mark.parametrize(
    ("params", "parameter", "status"),
    [
        ({"engine": "duckduckgo"}, "engine", 422),
        ({"limit": "0"}, "limit", 422),
        ({"limit": "201"}, "limit", 422),
        ({"limit": "abc"}, "limit", 422),
        ({"before": "not-a-cursor"}, "before", 400),
        ({"after": "eyJ4Ijoy"}, "after", 400),
        ({"since": "yesterday"}, "since", 400),
        ({"since": "0001-01-01T00:00:00+14:00"}, "since", 400),
        ({"q": '"'}, "q", 400),
        ({"q": "*** --"}, "q", 400),
        ({"q": " ".join(f"word{n}" for n in range(40))}, "q", 400),
    ],
)
def test_bad_input_is_a_4xx_naming_the_parameter(feed_url: str, params: dict, parameter: str, status: int) -> None:
    store(feed_url, [article(1)])
    answer = client(feed_url).get("/api/feed", params=params)
    assert answer.status_code == status, answer.text
    assert answer.headers["content-type"] == "application/json"
    assert any(error["loc"][:2] == ["query", parameter] for error in answer.json()["detail"])


def test_before_and_after_together_are_bad_input(feed_url: str) -> None:
    store(feed_url, [article(1)])
    api = client(feed_url)
    cursor = api.get("/api/feed").json()["items"][0]["cursor"]
    answer = api.get("/api/feed", params={"before": cursor, "after": cursor})
    assert answer.status_code == 400
    assert answer.json()["detail"][0]["loc"] == ["query", "after"]


def test_hostile_text_comes_back_verbatim_as_json(feed_url: str) -> None:
    hostile = '</script><script>window.__x=1</script> "quoted" \\ <img src=x onerror=alert(1)>'
    write_rows(
        feed_url,
        [
            {
                "news_id": "n" * 32,
                "url": "javascript:window.__x=1",
                "topic": "<b>topic</b>",
                "engine": "google",
                "title": hostile,
                "source": hostile,
                "snippet": hostile,
            }
        ],
    )
    answer = client(feed_url).get("/api/feed")
    assert answer.headers["content-type"] == "application/json"
    item = answer.json()["items"][0]
    assert item["title"] == item["source"] == item["snippet"] == hostile and item["topic"] == "<b>topic</b>"
    assert answer.headers["x-content-type-options"] == "nosniff"


def test_security_headers_and_foreign_hosts(feed_url: str) -> None:
    api = client(feed_url)
    answer = api.get("/api/feed")
    assert answer.status_code == 200
    policy = answer.headers["content-security-policy"]
    assert "script-src 'self'" in policy and "unsafe-inline" not in policy
    assert answer.headers["referrer-policy"] == "no-referrer"
    for host in ("localhost:8080", "127.0.0.1", "[::1]:8080", "192.0.2.7:8080"):
        assert api.get("/api/feed", headers={"host": host}).status_code == 200, host
    for host in ("evil.example", "evil.example:8080", "127.0.0.1.evil.example", ""):
        refused = api.get("/api/feed", headers={"host": host})
        assert refused.status_code == 421, host
        assert "content-security-policy" in refused.headers


def test_a_named_web_host_is_the_apps_own(tmp_path) -> None:
    from fastapi.testclient import TestClient

    from topicstreams.web.app import WebSettings, create_app

    url = fresh_database(f"sqlite:///{tmp_path / 'feed.db'}")
    app = create_app(WebSettings(url, host="feed.internal"))
    api = TestClient(app, base_url="http://feed.internal:8080")
    assert api.get("/api/feed").status_code == 200
    assert api.get("/api/feed", headers={"host": "other.internal"}).status_code == 421


def test_a_database_without_the_schema_answers_503_on_every_path(tmp_path) -> None:
    import sqlite3

    empty = tmp_path / "empty.db"
    sqlite3.connect(empty).close()
    for url in (f"sqlite:///{empty}", f"sqlite:///{tmp_path / 'missing.db'}"):
        api = client(url)
        for path in ("/api/feed", "/api/topics", "/feed.atom", "/feed.json", "/"):
            answer = api.get(path)
            assert answer.status_code == 503, (url, path)
            assert "scrapy db upgrade" in answer.text
        assert not (tmp_path / "missing.db").exists()  # the app never creates or migrates a database
    assert sqlite3.connect(empty).execute("select count(*) from sqlite_master").fetchone() == (0,)


def test_the_app_never_writes(tmp_path) -> None:
    from sqlalchemy import text

    from topicstreams.web.app import WebSettings, create_app

    url = fresh_database(f"sqlite:///{tmp_path / 'feed.db'}")
    app = create_app(WebSettings(url))
    with pytest.raises(Exception, match="readonly|read-only"), app.state.reader.db.begin() as conn:
        conn.execute(text("insert into topics (name) values ('x')"))


def test_the_app_never_writes_on_postgresql(postgres_url: str) -> None:
    from sqlalchemy import text

    from topicstreams.web.app import WebSettings, create_app

    fresh_database(postgres_url)
    app = create_app(WebSettings(postgres_url))
    with pytest.raises(Exception, match="read-only"), app.state.reader.db.begin() as conn:
        conn.execute(text("insert into topics (name) values ('x')"))


def test_the_openapi_schema_documents_the_feed(feed_url: str) -> None:
    schema = client(feed_url).get("/api/openapi.json").json()
    parameters = {p["name"] for p in schema["paths"]["/api/feed"]["get"]["parameters"]}
    assert parameters == {"topic", "engine", "q", "since", "before", "after", "limit"}
    assert "/api/topics" in schema["paths"]


def test_sqlites_two_search_plans_find_the_same(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    from topicstreams.storage import search

    url = fresh_database(f"sqlite:///{tmp_path / 'feed.db'}")
    batches(
        url,
        *[
            [
                article(
                    f"{b}-{n}",
                    f"topic-{n % 3}",
                    ("google", "bing")[n % 2],
                    title=f"{'Storm' if n % 4 else 'Calm'} story {b}-{n}",
                )
                for n in range(12)
            ]
            for b in range(3)
        ],
    )
    api = client(url, page_size=5)

    def walk(q: str) -> list[tuple[str, str]]:
        seen, answer = [], api.get("/api/feed", params={"q": q}).json()
        while True:
            seen += keys(answer)
            if answer["next"] is None:
                return seen
            answer = api.get("/api/feed", params={"q": q, "before": answer["next"]}).json()

    few = {q: walk(q) for q in ("storm", "calm story", '"calm story 1"')}
    monkeypatch.setattr(search, "SQLITE_FEW_MATCHES", 0)  # every search now walks the feed's order
    assert {q: walk(q) for q in few} == few
    assert len(few["storm"]) == 27 and len(few["calm story"]) == 9
