"""The fake engines' news world: its clock, its streams, what each engine shows, stale engines, the control endpoint,
the serve command's flags, and the pages of every engine with and without a world (real servers, real parsers)."""

from __future__ import annotations

import json
import math
import re
import subprocess
import sys
import threading
import urllib.request
from datetime import UTC, datetime, timedelta
from pathlib import Path
from urllib.parse import urlsplit

import pytest
import yaml
from scrapy.http import HtmlResponse

from fake_engines import FakeEngines, NewsWorld, bing, brave, catalogue, google, yahoo
from fake_engines.world import DAY, EPOCH, MIN_GAP, WINDOW
from tests.support.fakes_http import fetch
from tests.support.parsing import parsing_reader, reading_of
from topicstreams import ENGINES
from topicstreams.engines.dates import parse_result_time
from topicstreams.engines.news_urls import normalize_url

REPO = Path(__file__).resolve().parents[2]
ORIGIN = 1_767_225_600.0
"""2026-01-01T00:00:00Z: the frozen worlds' time (speed 0), so that every list here is known in advance."""
TOPICS = ("alpha", "climate summit", "Électricité 2025") + tuple(f"topic {i}" for i in range(17))
MODULES = {"google": google, "bing": bing, "yahoo": yahoo, "brave": brave}
PER_PAGE = {"google": 10, "bing": 10, "yahoo": 10, "brave": brave.PER_PAGE}


def frozen(**kwargs) -> NewsWorld:
    """A world whose clock only moves when told (speed 0), at :data:`ORIGIN`."""
    return NewsWorld(speed=0, origin=ORIGIN, **kwargs)


def urls(articles) -> list[str]:
    return [article.url for article in articles]


@pytest.fixture(scope="module")
def world_fakes():
    with FakeEngines(ENGINES, world=frozen()) as running:
        yield running


@pytest.fixture(autouse=True)
def _fresh(request):
    if "world_fakes" in request.fixturenames:
        request.getfixturevalue("world_fakes").reset()  # no engine stale (the clock goes on)
    yield


def control(fakes: FakeEngines, payload=None, engine: str = "google", raw: bytes | None = None):
    """``/__fakes__/world`` of ``engine``'s port: a GET, or a POST of ``payload`` (or of ``raw`` bytes)."""
    data = raw if raw is not None else (None if payload is None else json.dumps(payload).encode())
    status, _, body, _ = fetch(f"{fakes.base_url(engine)}/__fakes__/world", data=data)
    return status, json.loads(body)


# -- the world alone ---------------------------------------------------------------------------------------


def test_the_same_topic_gives_the_same_articles_at_the_same_times():
    one, two = frozen(), frozen()
    late = NewsWorld(origin=ORIGIN + 5000)  # another origin and a running clock: the same stream at a given time
    for topic in TOPICS[:5]:
        assert one.topic_articles(topic) == two.topic_articles(topic) == late.topic_articles(topic, ORIGIN)
        for engine in ENGINES:
            assert one.articles(engine, topic) == two.articles(engine, topic) == late.articles(engine, topic, ORIGIN)
    assert one.published("alpha", 12345) == late.published("alpha", 12345)
    assert one.topic_articles("alpha") != one.topic_articles("beta")


def test_article_urls_are_clean_publisher_urls_never_the_catalogues():
    world = frozen()
    seen: dict[str, str] = {}
    for topic in TOPICS:
        static = set(urls(catalogue.all_articles(topic)))
        for article in world.topic_articles(topic):
            parts = urlsplit(article.url)
            assert parts.scheme == "https" and parts.hostname == f"www.{article.source_slug}.example"
            assert article.url not in static and normalize_url(article.url) == article.url
            if parts.query:
                assert re.fullmatch(r"id=\d{14}", parts.query) and parts.path == "/story"
            else:
                year = datetime.fromtimestamp(world.published(topic, article.number), UTC).year
                assert parts.path == f"/{year}/{catalogue.topic_slug(topic)}-w{article.number}"
            assert seen.setdefault(article.url, topic) == topic  # one URL, one topic
            assert article.topic == topic and article.title and article.snippet
            assert article.source == next(s.name for s in catalogue.SOURCES if s.slug == article.source_slug)
    assert sum("?id=" in url for url in seen) > len(seen) // 10  # id-style sources are there too


def test_publication_times_increase_at_least_a_minute_apart_and_latest_inverts_them():
    world = frozen()
    for topic in TOPICS[:4]:
        assert EPOCH <= world.phase(topic) < EPOCH + world.every
        times = [world.published(topic, k) for k in range(1, 3001)]
        gaps = [later - earlier for earlier, later in zip(times, times[1:], strict=False)]
        assert min(gaps) >= MIN_GAP and max(gaps) < 2 * world.every - MIN_GAP
        assert abs(sum(gaps) / len(gaps) - world.every) < 10  # every five minutes, on average
        for k in (1, 2, 17, 2999):
            t = world.published(topic, k)
            assert world.latest(topic, t) == k
            assert world.latest(topic, t - 0.001) == k - 1
            assert world.latest(topic, (t + world.published(topic, k + 1)) / 2) == k
        assert world.latest(topic, EPOCH) == 0 and world.topic_articles(topic, EPOCH) == []
        now = world.now()
        newest = world.latest(topic, now)  # in O(1), at any time: no walk from article 1
        assert world.published(topic, newest) <= now < world.published(topic, newest + 1)


def test_a_topic_shows_its_newest_window_newest_first_with_ages_from_world_time():
    world = frozen()
    now = world.now()
    assert now == ORIGIN
    for topic in TOPICS[:5]:
        listed = world.topic_articles(topic)
        assert len(listed) == WINDOW
        numbers = [article.number for article in listed]
        assert numbers == list(range(numbers[0], numbers[0] - WINDOW, -1))
        assert numbers[0] == world.latest(topic, now)
        assert [a.age_seconds for a in listed] == [int(now - world.published(topic, k)) for k in numbers]
        assert listed[0].age_seconds < 2 * world.every and listed[-1].age_seconds < (WINDOW + 2) * world.every


def test_advancing_the_clock_an_hour_brings_several_new_articles_to_every_topic():
    world = frozen()
    before = {topic: world.topic_articles(topic) for topic in TOPICS}
    assert world.advance(3600) == ORIGIN + 3600 == world.now()
    for topic in TOPICS:
        after = world.topic_articles(topic)
        old = {a.number: a for a in before[topic]}
        new = [a for a in after if a.number not in old]
        assert 6 <= len(new) <= 20, topic  # ~12: one every five minutes
        assert after[: len(new)] == new  # the new ones on top, newest first
        assert all(a.age_seconds < 3600 for a in new)
        for article in after[len(new) :]:  # the ones still listed are an hour older
            assert article.age_seconds == old[article.number].age_seconds + 3600
            assert article.url == old[article.number].url
    with pytest.raises(ValueError):
        world.advance(-1)
    with pytest.raises(ValueError):
        world.advance(math.nan)


def test_the_clock_runs_at_its_speed_from_its_origin():
    world = NewsWorld(speed=60, origin=ORIGIN)
    real = world.started + 10  # ten real seconds after it was made
    assert world.at(real) == pytest.approx(ORIGIN + 600)
    world.advance(100)
    assert world.at(real) == pytest.approx(ORIGIN + 700)
    assert NewsWorld().now() == pytest.approx(datetime.now(UTC).timestamp(), abs=5)  # default: the real time


def test_readers_and_writers_may_share_a_world_across_threads():
    world = NewsWorld(speed=50, origin=ORIGIN)
    problems: list[BaseException] = []

    def read() -> None:
        try:
            last = 0.0
            for i in range(150):
                now = world.now()
                assert now >= last
                last = now
                listed = world.articles(ENGINES[i % 4], TOPICS[i % 5])
                assert [a.number for a in listed] == sorted((a.number for a in listed), reverse=True)
        except BaseException as exc:  # handed to the test's thread
            problems.append(exc)

    readers = [threading.Thread(target=read) for _ in range(6)]
    for thread in readers:
        thread.start()
    for i in range(100):
        world.advance(60)
        world.set_stale("bing", i % 2 == 0)
    for thread in readers:
        thread.join(timeout=30)
    assert not problems, problems
    assert world.state()["advanced"] == 6000 and world.stale_engines() == ()


def test_engines_overlap_heavily_but_none_shows_every_article():
    world = frozen()
    shown = dict.fromkeys(ENGINES, 0)
    pairs: dict[tuple[str, str], list[float]] = {}
    total = 0
    for topic in TOPICS:
        everything = set(urls(world.topic_articles(topic)))
        total += len(everything)
        sets = {engine: set(urls(world.articles(engine, topic))) for engine in ENGINES}
        for engine, found in sets.items():
            assert found < everything, (engine, topic)  # a part, never all of it
            assert urls(world.articles(engine, topic)) == [u for u in urls(world.topic_articles(topic)) if u in found]
            shown[engine] += len(found)
        for a in ENGINES:
            for b in ENGINES[ENGINES.index(a) + 1 :]:
                assert sets[a] & sets[b] and sets[a] != sets[b], (a, b, topic)
                pairs.setdefault((a, b), []).append(len(sets[a] & sets[b]) / len(sets[a] | sets[b]))
        assert set().union(*sets.values()) <= everything
    for engine, count in shown.items():
        assert 0.65 < count / total < 0.85, engine  # share 0.75
    for pair, overlaps in pairs.items():
        assert 0.45 < sum(overlaps) / len(overlaps) < 0.75, pair  # 0.75² / (1 - 0.25²) = 0.6


def test_the_share_sets_how_much_each_engine_sees():
    assert all(len(frozen(share=1).articles(e, "alpha")) == WINDOW for e in ENGINES)
    few = sum(len(frozen(share=0.2).articles(e, t)) for e in ENGINES for t in TOPICS)
    assert 0.1 < few / (len(ENGINES) * len(TOPICS) * WINDOW) < 0.3


def test_a_stale_engine_shows_yesterdays_articles_with_their_real_ages():
    world = frozen()
    now = world.now()
    today = {topic: world.articles("bing", topic) for topic in TOPICS}
    world.set_stale("bing")
    assert world.is_stale("bing") and world.stale_engines() == ("bing",)
    for topic in TOPICS:
        stale = world.articles("bing", topic)
        everything_today = set(urls(world.topic_articles(topic)))
        assert stale and not set(urls(stale)) & everything_today  # nothing the others find
        assert all(article.age_seconds >= DAY for article in stale)  # at least a day old
        assert all(article.age_seconds == int(now - world.published(topic, article.number)) for article in stale)
        yesterday = {a.number: a.url for a in world.topic_articles(topic, now - DAY)}
        assert [a.number for a in stale] == [k for k in yesterday if world.visible("bing", topic, k)]
        assert world.articles("google", topic) == world.articles("google", topic, now)  # the others: today
        assert set(urls(world.articles("google", topic))) <= everything_today
    world.set_stale("bing", False)
    assert world.stale_engines() == () and {t: world.articles("bing", t) for t in TOPICS} == today
    with pytest.raises(ValueError, match="unknown engine"):
        world.set_stale("altavista")


def test_state_is_json():
    world = frozen(share=0.5, every=120)
    world.set_stale("yahoo")
    world.set_stale("google")
    world.advance(30)
    state = json.loads(json.dumps(world.state()))
    assert state == {
        "now": ORIGIN + 30,
        "now_iso": "2026-01-01T00:00:30Z",
        "origin": ORIGIN,
        "speed": 0.0,
        "advanced": 30.0,
        "every": 120.0,
        "share": 0.5,
        "window": WINDOW,
        "stale": ["google", "yahoo"],
    }


@pytest.mark.parametrize(
    "kwargs",
    [
        {"speed": -1},
        {"speed": math.inf},
        {"share": 0},
        {"share": 1.5},
        {"every": 60},
        {"every": True},
        {"window": 0},
        {"origin": "now"},
    ],
)
def test_bad_settings_are_refused(kwargs):
    with pytest.raises(ValueError):
        NewsWorld(**kwargs)


# -- served: pages and control -----------------------------------------------------------------------------


def results_url(fakes: FakeEngines, engine: str, topic: str, page: int) -> str:
    return parsing_reader(engine, fakes.base_url(engine)).engine.results_url(topic, page)


def get(url: str) -> HtmlResponse:
    with urllib.request.urlopen(url, timeout=10) as reply:
        return HtmlResponse(url, body=reply.read(), encoding="utf-8", status=reply.status)


@pytest.mark.parametrize("engine", ENGINES)
def test_every_engines_pages_hold_its_world_list_paginated_as_usual(world_fakes, engine):
    world = world_fakes.world
    module = MODULES[engine]
    for topic in ("alpha", "topic 3"):
        listed = world.articles(engine, topic)
        pages = -(-len(listed) // PER_PAGE[engine])
        laid = [module.expected_articles(topic, page, listed) for page in range(pages)]
        assert [url for page in laid for url in page] != [] and sorted(sum(laid, [])) == sorted(urls(listed))
        for page, expected in enumerate(laid):
            expected_slice = urls(listed[page * PER_PAGE[engine] : (page + 1) * PER_PAGE[engine]])
            assert set(expected) == set(expected_slice)
        fetched = datetime.now(UTC)
        reader = parsing_reader(engine, world_fakes.base_url(engine))
        by_url = {a.url: a for a in listed}
        for page in range(pages):
            reading = reading_of(reader, get(results_url(world_fakes, engine, topic, page)), page, fetched)
            assert reading.verdict.cls == "ok" and not reading.fallback, (engine, page, reading.verdict)
            parsed = {normalize_url(reading_url(r.url), {"127.0.0.1"}): r for r in reading.results}
            wanted = set(laid[page])
            if engine == "google":  # without a browser the JavaScript-added result is missing
                js = google.layout(topic, page, listed).js_slot
                wanted -= {js.article.url} if js else set()
            assert set(parsed) == wanted, (engine, page)
            for url, result in parsed.items():
                article = by_url[url]
                assert (result.title, result.source, result.snippet) == (article.title, article.source, article.snippet)
                published = parse_result_time(
                    result.time_text, fetched, timestamp=result.timestamp, languages=reading.languages
                )
                truth = fetched - timedelta(seconds=article.age_seconds)  # ages in world time, from the real now
                assert truth - timedelta(minutes=1) <= published <= truth + timedelta(hours=1), result.time_text
        # past the end: the engine's own way (an empty page; Bing repeats its last page)
        after = reading_of(reader, get(results_url(world_fakes, engine, topic, pages)), pages, fetched)
        if engine == "bing":
            assert {normalize_url(r.url) for r in after.results} == set(laid[-1])
        else:
            assert not after.results and after.verdict.cls == "ok", after.verdict


def reading_url(url: str) -> str:
    """A parsed link made absolute on the fake host (Google's wrapped links are relative)."""
    return url if "://" in url else "http://127.0.0.1" + url


def test_a_short_last_page_is_well_formed_on_every_engine():
    # a world whose engines see few articles (0 to 7 of a topic's 30 here): pages of one, two, three…
    world = frozen(share=0.06)
    with FakeEngines(ENGINES, world=world) as fakes:
        for engine in ENGINES:
            reader = parsing_reader(engine, fakes.base_url(engine))
            sizes = set()
            for topic in TOPICS:
                listed = world.articles(engine, topic)
                response = get(results_url(fakes, engine, topic, 0))
                reading = reading_of(reader, response, 0)
                shown = listed[: PER_PAGE[engine]]
                sizes.add(len(shown))
                found = {normalize_url(reading_url(r.url), {"127.0.0.1"}) for r in reading.results}
                assert reading.verdict.cls == "ok", (engine, topic, len(shown), reading.verdict)
                if not shown:
                    assert not found and reading.verdict.reason == "no results"
                    continue
                if engine == "google" and (js := google.layout(topic, 0, listed).js_slot):
                    found.add(js.article.url)
                assert found == set(urls(shown)), (engine, topic)
            assert {1, 2} <= sizes, (engine, sizes)


def test_a_stale_engine_still_serves_perfect_pages_of_yesterdays_articles(world_fakes):
    world = world_fakes.world
    status, state = control(world_fakes, {"stale": "bing", "on": True}, engine="yahoo")  # any engine's port
    assert status == 200 and state["stale"] == ["bing"] and world.stale_engines() == ("bing",)
    fetched = datetime.now(UTC)
    today = set(urls(world.topic_articles("alpha")))
    for engine in ("bing", "google"):
        reader = parsing_reader(engine, world_fakes.base_url(engine))
        reading = reading_of(reader, get(results_url(world_fakes, engine, "alpha", 0)), 0, fetched)
        assert reading.verdict.cls == "ok" and len(reading.results) >= 8, reading.verdict
        found = {normalize_url(reading_url(r.url), {"127.0.0.1"}) for r in reading.results}
        times = [
            parse_result_time(r.time_text, fetched, timestamp=r.timestamp, languages=reading.languages)
            for r in reading.results
        ]
        if engine == "bing":
            assert not found & today and found <= set(urls(world.articles("bing", "alpha")))
            assert all(t <= fetched - timedelta(days=1) for t in times)  # "1 day ago"
        else:
            assert found <= today and all(t > fetched - timedelta(days=1) for t in times)
    world_fakes.reset("bing")  # a reset makes the engine fresh again
    assert world.stale_engines() == ()


def test_the_control_endpoint_advances_the_clock_and_tells_the_state(world_fakes):
    world = world_fakes.world
    status, state = control(world_fakes)
    assert status == 200 and state == json.loads(json.dumps(world.state()))
    before = state["now"]
    first = world.articles("brave", "alpha")[0]
    status, state = control(world_fakes, {"advance": 3600}, engine="brave")
    assert status == 200 and state["now"] == before + 3600 and world.now() == before + 3600
    newest = get(results_url(world_fakes, "brave", "alpha", 0))
    assert first.url in newest.text and world.articles("brave", "alpha")[0].url in newest.text
    assert urls(world.articles("brave", "alpha"))[0] != first.url  # news arrived
    status, state = control(world_fakes, {"advance": 0, "stale": "brave", "on": True})
    assert status == 200 and state["stale"] == ["brave"] and state["now"] == before + 3600
    status, state = control(world_fakes, {"stale": "brave", "on": False})
    assert status == 200 and state["stale"] == []


@pytest.mark.parametrize(
    ("payload", "message"),
    [
        ({"advance": -5}, "advance is a number of seconds >= 0"),
        ({"advance": "soon"}, "advance is a number"),
        ({"advance": True}, "advance is a number"),
        ({"stale": "altavista"}, "is not served here"),
        ({"stale": "bing", "on": "yes"}, "on is true or false"),
        ({"on": False}, '"on" goes with "stale"'),
        ({"speed": 2}, "unknown keys ['speed']"),
        ([1, 2], "a JSON object"),
        (b"{not json", "Expecting property name"),
    ],
)
def test_bad_control_requests_are_400_with_a_message_and_change_nothing(world_fakes, payload, message):
    before = world_fakes.world.state()
    if isinstance(payload, bytes):
        status, body = control(world_fakes, raw=payload)
    else:
        status, body = control(world_fakes, payload)
    assert status == 400 and message in body["error"], body
    after = world_fakes.world.state()
    assert (after["now"], after["stale"]) == (before["now"], before["stale"])


def test_a_stale_engine_must_be_served_by_these_fakes():
    with FakeEngines(("google",), world=frozen()) as fakes:
        status, body = control(fakes, {"stale": "bing"})
        assert status == 400 and "served: google" in body["error"]
        assert control(fakes, {"stale": "google"})[1]["stale"] == ["google"]


# -- without a world ---------------------------------------------------------------------------------------


def test_without_a_world_the_pages_are_the_catalogues_byte_for_byte(world_fakes):
    render = {
        "google": lambda topic, now: google.render_search_page(topic, 0, now)[0],
        "bing": lambda topic, now: bing.render_full_page(topic, 0, "en", now)[0],
        "yahoo": lambda topic, now: yahoo.render_search_page(topic, 0, now)[0],
        "brave": lambda topic, now: brave.render_news_page(topic, 0, now)[0],
    }
    with FakeEngines(ENGINES) as plain:
        assert plain.world is None
        status, body = control(plain)
        assert status == 404 and "no news world" in body["error"]
        assert control(plain, {"advance": 60})[0] == 404
        for engine in ENGINES:
            url = results_url(plain, engine, "alpha", 0)
            page = get(url).text
            entry = plain.results_requests(engine)[-1]
            assert page == render[engine]("alpha", entry["time"])  # the catalogue's page, as rendered before
            assert set(MODULES[engine].expected_articles("alpha", 0)) <= {
                normalize_url(reading_url(r.url), {"127.0.0.1"})
                for r in reading_of(parsing_reader(engine, plain.base_url(engine)), get(url)).results
            } | {js.article.url for js in [google.layout("alpha", 0).js_slot] if engine == "google"}
            # the world's fakes serve other articles for the same request
            other = get(results_url(world_fakes, engine, "alpha", 0)).text
            assert "alpha-w" in other and "alpha-w" not in page
    with pytest.raises(TypeError):
        FakeEngines(("google",), world=object())


# -- the serve command ---------------------------------------------------------------------------------------


def test_serve_with_a_world_prints_the_same_snippet_and_answers_the_control_endpoint():
    with subprocess.Popen(
        [
            sys.executable,
            "-m",
            "fake_engines",
            "serve",
            "--engines",
            "google,bing",
            "--world",
            "--speed",
            "3",
            "--stale",
            "bing",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=REPO,
    ) as proc:
        try:
            lines = [proc.stdout.readline() for _ in range(5)]
            config = yaml.safe_load("".join(lines))
            assert list(config) == ["engines"] and list(config["engines"]) == ["google", "bing"]
            base = config["engines"]["bing"]["base_url"]
            assert "news world: speed 3" in proc.stderr.readline()
            status, _, body, _ = fetch(base + "/__fakes__/world")
            state = json.loads(body)
            assert status == 200 and state["speed"] == 3 and state["stale"] == ["bing"]
            page = get(base + "/news/search?q=alpha").text
            assert "1 day ago" in page and "-w" in page
        finally:
            proc.terminate()
            proc.wait(timeout=10)
    assert proc.returncode == 0


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--speed", "2"], "--speed and --stale need --world"),
        (["--world", "--stale", "yahoo"], "engine 'yahoo' is not served here"),
        (["--world", "--speed", "-1"], "speed: a number >= 0"),
    ],
)
def test_serve_refuses_bad_world_flags(args, message):
    out = subprocess.run(
        [sys.executable, "-m", "fake_engines", "serve", *args], capture_output=True, text=True, cwd=REPO, timeout=30
    )
    assert out.returncode == 2 and message in out.stderr, out.stderr
