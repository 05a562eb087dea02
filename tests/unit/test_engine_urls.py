"""Each engine's results URL on plain values: newest first where the engine can, the freshness window, page N."""

from urllib.parse import parse_qs, urlsplit

import pytest

from topicstreams.engines import Bing, Brave, Google, Yahoo


def engine(cls, freshness="hour", base="https://engine.example"):
    return cls(base, freshness)


def parts(url):
    split = urlsplit(url)
    return split.path, parse_qs(split.query)


@pytest.mark.parametrize(
    ("freshness", "qft"),
    [
        ("hour", 'interval="4" sortbydate="1"'),
        ("day", 'interval="7" sortbydate="1"'),
        ("week", 'interval="8" sortbydate="1"'),
        ("month", 'interval="9" sortbydate="1"'),
        ("any", 'sortbydate="1"'),
    ],
)
def test_bing_first_page_is_the_news_search_newest_first(freshness, qft):
    url = engine(Bing, freshness).results_url("climate change", 0)
    path, query = parts(url)
    assert path == "/news/search"
    assert query["q"] == ["climate change"] and query["qft"] == [qft]
    # Bing's filters are joined with "+" in the URL, as its own links do
    assert "qft=interval%3D%224%22+sortbydate%3D%221%22" in engine(Bing).results_url("x", 0)


@pytest.mark.parametrize("page", [1, 2, 5])
def test_bing_later_pages_come_from_the_infinite_scroll(page):
    path, query = parts(engine(Bing).results_url("x", page))
    assert path == "/news/infinitescrollajax"
    assert query["first"] == [str(page * 10 + 1)] and query["SFX"] == [str(page)]
    assert query["InfiniteScroll"] == ["1"] and query["qft"] == ['interval="4" sortbydate="1"']


@pytest.mark.parametrize(
    ("freshness", "btf"),
    [
        ("hour", ["d"]),
        ("day", ["d"]),
        ("week", ["w"]),
        ("month", ["m"]),
        ("any", None),
    ],
)
def test_yahoo_pages_by_offset_and_freshness(freshness, btf):
    path, query = parts(engine(Yahoo, freshness).results_url("x y", 0))
    assert path == "/search" and query["p"] == ["x y"] and query["b"] == ["1"] and query["pz"] == ["10"]
    assert query.get("btf") == btf
    assert parts(engine(Yahoo).results_url("x", 2))[1]["b"] == ["21"]


@pytest.mark.parametrize(
    ("freshness", "tf"),
    [
        ("hour", ["pd"]),
        ("day", ["pd"]),
        ("week", ["pw"]),
        ("month", ["pm"]),
        ("any", None),
    ],
)
def test_brave_offset_is_a_page_index(freshness, tf):
    path, query = parts(engine(Brave, freshness).results_url("x", 0))
    assert path == "/news" and query["q"] == ["x"] and "offset" not in query
    assert query.get("tf") == tf
    assert parts(engine(Brave).results_url("x", 1))[1]["offset"] == ["1"]
    assert parts(engine(Brave).results_url("x", 3))[1]["offset"] == ["3"]


@pytest.mark.parametrize("cls", [Google, Bing, Yahoo, Brave])
def test_every_engine_builds_on_its_configured_origin(cls):
    url = engine(cls, base="http://127.0.0.1:8123").results_url("x", 0)
    assert url.startswith("http://127.0.0.1:8123/")
