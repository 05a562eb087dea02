"""Tests of topicstreams.pipelines.normalize: normalize_url, news_id and NormalizePipeline."""

from __future__ import annotations

import warnings
from urllib.parse import parse_qsl, quote, urlencode, urlsplit

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scrapy.exceptions import DropItem
from scrapy.utils.test import get_crawler

from topicstreams.config.packaged import load_defaults
from topicstreams.engines.items import NewsItem
from topicstreams.engines.news_urls import (
    TRACKING_PARAMS,
    engine_hosts,
    is_tracking_param,
    news_id,
    normalize_url,
)
from topicstreams.engines.results import REQUIRED_RESULT_FIELDS, REQUIRED_TO_KEEP, REQUIRED_TO_STORE
from topicstreams.pipelines.normalize import NormalizePipeline
from topicstreams.storage.writer import item_problem

# --- examples, one rule at a time ----------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        # scheme and host lowercased, path case kept
        ("HTTP://Example.COM/Path/To", "http://example.com/Path/To"),
        ("HtTpS://WWW.Example.com/A", "https://www.example.com/A"),
        # default ports dropped, others kept
        ("http://example.com:80/a", "http://example.com/a"),
        ("https://example.com:443/a", "https://example.com/a"),
        ("http://example.com:443/a", "http://example.com:443/a"),
        ("https://example.com:80/a", "https://example.com:80/a"),
        ("http://example.com:8080/a", "http://example.com:8080/a"),
        ("http://127.0.0.1:8123/article/1", "http://127.0.0.1:8123/article/1"),
        # fragment dropped
        ("https://example.com/a#comments", "https://example.com/a"),
        ("https://example.com/a?id=1#top", "https://example.com/a?id=1"),
        # empty path becomes "/", trailing slashes kept as they are
        ("http://a.com", "http://a.com/"),
        ("http://a.com?id=1", "http://a.com/?id=1"),
        ("http://a.com/news/", "http://a.com/news/"),
        ("http://a.com/news", "http://a.com/news"),
        # query sorted, meaningful parameters kept, an empty query dropped
        ("https://a.com/s?p=2&id=7&article=x", "https://a.com/s?article=x&id=7&p=2"),
        ("https://a.com/s?", "https://a.com/s"),
        ("https://a.com/s?id=", "https://a.com/s?id="),
        # percent-encoding normalized, IDNA host
        ("https://a.com/caf%c3%a9?q=a%20b", "https://a.com/caf%C3%A9?q=a+b"),
        ("https://a.com/café", "https://a.com/caf%C3%A9"),
        ("https://Bücher.example/", "https://xn--bcher-kva.example/"),
        # surrounding whitespace ignored
        ("  https://a.com/x \n", "https://a.com/x"),
    ],
)
def test_normalize_examples(url: str, expected: str) -> None:
    assert normalize_url(url) == expected


@pytest.mark.parametrize(
    "param",
    sorted(TRACKING_PARAMS) + ["utm_source", "utm_medium", "utm_campaign", "utm_term", "utm_content", "utm_whatever"],
)
def test_tracking_parameter_dropped(param: str) -> None:
    url = f"https://a.com/story?{param}=x&id=5"
    assert normalize_url(url) == "https://a.com/story?id=5"
    assert normalize_url(f"https://a.com/story?{param.upper()}=x&id=5") == "https://a.com/story?id=5"


def test_tracking_parameters_listed_in_brief() -> None:
    for name in [
        "gclid",
        "dclid",
        "gbraid",
        "wbraid",
        "fbclid",
        "msclkid",
        "mc_cid",
        "mc_eid",
        "ved",
        "usg",
        "sa",
        "ei",
        "oq",
        "_hsenc",
        "_hsmi",
        "igshid",
        "yclid",
        "ocid",
        "cvid",
        "ncid",
        "guccounter",
        "_ylt",
        "_ylu",
        "cmpid",
        "soc_src",
        "soc_trk",
        "UTM_Source",
    ]:
        assert is_tracking_param(name), name
    for name in ("id", "p", "article", "q", "page", "story", "utm", "s"):
        assert not is_tracking_param(name), name


def test_all_tracking_removed_leaves_no_query() -> None:
    url = "https://a.com/x?utm_source=tw&utm_medium=social&fbclid=abc&gclid=1"
    assert normalize_url(url) == "https://a.com/x"


def test_yahoo_path_parameters_cut() -> None:
    url = "https://news.yahoo.com/story-123.html;_ylt=AwrXn;_ylu=X3oDMTE?id=1"
    assert normalize_url(url) == "https://news.yahoo.com/story-123.html?id=1"
    assert normalize_url("https://a.com/x;_YLT=1;keep=2") == "https://a.com/x;keep=2"
    # cutting can expose a dot segment: still a fixed point
    assert normalize_url("http://a.com/a/..;_ylt=x/b") == "http://a.com/b"


# --- redirectors ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        (
            "https://www.google.com/url?q=https://www.example.com/news/1&sa=U&ved=2ahUKE&usg=AOvVaw",
            "https://www.example.com/news/1",
        ),
        (
            "https://www.google.com/url?sa=t&rct=j&url=https%3A%2F%2Fexample.com%2Fa%3Fid%3D5%26utm_source%3Dg%23frag&ved=1",
            "https://example.com/a?id=5",
        ),
        ("https://google.de/url?q=http://Example.com:80/x", "http://example.com/x"),
        ("https://news.google.co.uk/url?q=https://a.com/", "https://a.com/"),
        ("https://www.google.com.au/url?url=https://a.com/b", "https://a.com/b"),
        # url= preferred over q=
        ("https://www.google.com/url?q=https://a.com/q&url=https://a.com/u", "https://a.com/u"),
        (
            "https://r.search.yahoo.com/_ylt=AwrFA;_ylu=Y29sbwNiZjEE/RV=2/RE=1700000000/RO=10"
            "/RU=https%3a%2f%2fwww.reuters.com%2fworld%2fstory-2026%2f%3fid%3d7%26utm_medium%3dx"
            "/RK=2/RS=ZxXv-",
            "https://www.reuters.com/world/story-2026/?id=7",
        ),
        (
            "https://r.search.yahoo.com/RU=https%3a%2f%2fa.com%2fx.html%3b_ylt%3dabc",
            "https://a.com/x.html",
        ),
    ],
)
def test_redirectors_unwrap(url: str, expected: str) -> None:
    assert normalize_url(url) == expected


def test_nested_redirectors_unwrap() -> None:
    inner = "https://a.com/story?id=3&utm_campaign=c"
    yahoo = f"https://r.search.yahoo.com/_ylt=A/RU={quote(inner, safe='')}/RK=2/RS=x-"
    google = "https://www.google.com/url?" + urlencode({"q": yahoo, "sa": "U"})
    assert normalize_url(google) == "https://a.com/story?id=3"
    twice = "https://www.google.com/url?" + urlencode({"url": google})
    assert normalize_url(twice) == "https://a.com/story?id=3"


def test_redirector_hosts() -> None:
    google_shape = "http://127.0.0.1:8123/url?q=https://a.com/x&sa=U"
    yahoo_shape = "https://news.search.yahoo.com/_ylt=A/RU=https%3a%2f%2fa.com%2fy/RK=2/RS=z"
    # not unwrapped on unknown hosts
    assert normalize_url(google_shape) == "http://127.0.0.1:8123/url?q=https%3A%2F%2Fa.com%2Fx"
    assert normalize_url(yahoo_shape).startswith("https://news.search.yahoo.com/")
    # unwrapped on the given hosts (case-insensitive, any port)
    hosts = ["127.0.0.1", "News.Search.Yahoo.com"]
    assert normalize_url(google_shape, hosts) == "https://a.com/x"
    assert normalize_url(yahoo_shape, hosts) == "https://a.com/y"
    assert normalize_url(yahoo_shape, iter(hosts)) == "https://a.com/y"


def test_not_a_google_host() -> None:
    assert normalize_url("https://notgoogle.com/url?q=https://a.com/") == (
        "https://notgoogle.com/url?q=https%3A%2F%2Fa.com%2F"
    )
    assert normalize_url("https://google.com.evil.org/url?q=https://a.com/").startswith(
        "https://google.com.evil.org/url"
    )


def test_redirector_without_target_is_kept() -> None:
    assert normalize_url("https://www.google.com/url?q=hello+world&sa=U") == (
        "https://www.google.com/url?q=hello+world"
    )
    assert normalize_url("https://www.google.com/url?q=javascript:alert(1)").startswith("https://www.google.com/url?q=")


def test_too_deeply_nested_redirectors() -> None:
    url = "https://a.com/"
    for _ in range(12):
        url = "https://www.google.com/url?" + urlencode({"q": url})
    with pytest.raises(ValueError, match="google"):
        normalize_url(url)


# --- bad input -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "url",
    [
        "",
        "   ",
        "example.com/a",
        "/relative/path",
        "//a.com/x",
        "ftp://a.com/x",
        "mailto:someone@a.com",
        "javascript:void(0)",
        "http://",
        "http:///path",
        "https://a.com:99999/",
        "https://a.com:port/",
        "http://[::1/",
        "http://a b.com/",
    ],
)
def test_bad_urls_raise_value_error(url: str) -> None:
    with pytest.raises(ValueError) as info:
        normalize_url(url)
    assert repr(url) in str(info.value)


def test_non_string_raises_value_error() -> None:
    with pytest.raises(ValueError):
        normalize_url(None)  # type: ignore[arg-type]


def test_news_id() -> None:
    url = normalize_url("https://A.com/x?utm_source=1")
    assert news_id(url) == news_id("https://a.com/x")
    assert len(news_id(url)) == 32
    assert int(news_id(url), 16) >= 0
    assert news_id("https://a.com/x") != news_id("https://a.com/y")


# --- properties ----------------------------------------------------------------------------

_label = st.text("abcdefghijklmnopqrstuvwxyz0123456789", min_size=1, max_size=8)
_hosts = st.one_of(
    st.builds(
        lambda parts, tld: ".".join([*parts, tld]),
        st.lists(_label, min_size=1, max_size=3),
        st.sampled_from(["com", "org", "de", "co.uk", "NET"]),
    ),
    st.sampled_from(["127.0.0.1", "localhost", "News.Yahoo.com", "[::1]", "bücher.example"]),
)
_ports = st.sampled_from(["", ":80", ":443", ":8080", ":8123"])
_segment = st.one_of(
    st.text(st.characters(codec="utf-8", exclude_characters="/?#\x00"), max_size=8),
    st.sampled_from([".", "..", "a;_ylt=x", "b;_ylu=y;_ylt=z", "%41%2f", "%7e", "x%3b_ylt=1", "é"]),
)
_paths = st.lists(_segment, max_size=4).map(lambda segs: "".join("/" + s for s in segs))
_tracking_names = st.sampled_from(sorted(TRACKING_PARAMS) + ["utm_source", "UTM_Medium", "utm_x", "FBCLID", "Gclid"])
_meaningful_names = st.sampled_from(["id", "p", "article", "page", "story", "q", "Ref"])
_values = st.text(st.characters(codec="utf-8", exclude_characters="\x00"), max_size=6)
_fragments = st.sampled_from(["", "#", "#top", "#a?b=c"])


@st.composite
def urls(draw: st.DrawFn) -> tuple[str, list[tuple[str, str]], list[tuple[str, str]]]:
    """A URL with its meaningful and tracking query parameters."""
    scheme = draw(st.sampled_from(["http", "https", "HTTP", "Https"]))
    meaningful = draw(st.lists(st.tuples(_meaningful_names, _values), max_size=3))
    tracking = draw(st.lists(st.tuples(_tracking_names, _values), max_size=3))
    params = draw(st.permutations(meaningful + tracking))
    query = ("?" + urlencode(params)) if params or draw(st.booleans()) else ""
    url = f"{scheme}://{draw(_hosts)}{draw(_ports)}{draw(_paths)}{query}{draw(_fragments)}"
    return url, meaningful, tracking


def _query_names(url: str) -> list[str]:
    return [k for k, _ in parse_qsl(urlsplit(url).query, keep_blank_values=True)]


_quick = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@_quick
@given(urls())
def test_idempotent(case: tuple[str, list, list]) -> None:
    url, _, _ = case
    once = normalize_url(url)
    assert normalize_url(once) == once


@_quick
@given(urls())
def test_tracking_parameters_never_survive(case: tuple[str, list, list]) -> None:
    url, _, _ = case
    assert not [name for name in _query_names(normalize_url(url)) if is_tracking_param(name)]


@_quick
@given(urls())
def test_meaningful_parameters_survive(case: tuple[str, list, list]) -> None:
    url, meaningful, _ = case
    kept = parse_qsl(urlsplit(normalize_url(url)).query, keep_blank_values=True)
    assert sorted(kept) == sorted(meaningful)


@_quick
@given(urls())
def test_shape(case: tuple[str, list, list]) -> None:
    url, _, _ = case
    out = urlsplit(normalize_url(url))
    assert out.scheme in ("http", "https")
    assert out.hostname == out.hostname.lower()
    assert out.port not in ({"http": 80, "https": 443}[out.scheme],)
    assert out.fragment == ""
    assert out.path.startswith("/")
    assert ";_ylt=" not in out.path and ";_ylu=" not in out.path


@_quick
@given(urls(), st.sampled_from(["google", "google-url", "yahoo", "engine"]), st.integers(1, 3))
def test_redirectors_always_unwrap(case: tuple[str, list, list], kind: str, depth: int) -> None:
    url, _, _ = case
    wrapped = url
    for _ in range(depth):
        if kind == "google":
            wrapped = "https://www.google.com/url?" + urlencode({"q": wrapped, "sa": "U"})
        elif kind == "google-url":
            wrapped = "https://www.google.co.uk/url?" + urlencode({"sa": "t", "url": wrapped})
        elif kind == "yahoo":
            wrapped = (
                "https://r.search.yahoo.com/_ylt=Awr;_ylu=Y29s/RV=2/RE=1/RO=10/RU="
                + quote(wrapped, safe="")
                + "/RK=2/RS=abc-"
            )
        else:
            wrapped = "http://127.0.0.1:8123/url?" + urlencode({"q": wrapped})
    assert normalize_url(wrapped, ["127.0.0.1"]) == normalize_url(url)


# --- the pipeline --------------------------------------------------------------------------

ENGINES = {
    "google": {"enabled": True, "base_url": "http://127.0.0.1:8123", "freshness": "hour"},
    "yahoo": {"enabled": False, "base_url": "https://News.Search.Yahoo.com", "freshness": "hour"},
    "broken": {"enabled": True},
}
CONFIGURED = {name: ENGINES[name] for name in ("google", "yahoo")}
"""The engines of ``ENGINES`` a configuration can have (a crawl's settings are validated as the configuration)."""


def _pipeline(engines: dict | None = CONFIGURED) -> tuple[NormalizePipeline, object]:
    settings_dict = {} if engines is None else {"TOPICSTREAMS_ENGINES": engines}
    crawler = get_crawler(settings_dict=settings_dict)
    return NormalizePipeline.from_crawler(crawler), crawler.stats


def _item(**fields: object) -> NewsItem:
    base = {
        "url": "https://www.example.com/a?id=1&utm_source=x#f",
        "title": "  A title \n",
        "source": " Example ",
        "snippet": "\tSome text. ",
        "engine": "google",
        "topic": "t",
        "rank": 1,
    }
    base.update(fields)
    return NewsItem(**{k: v for k, v in base.items() if v is not ...})


def test_engine_hosts() -> None:
    assert engine_hosts(ENGINES) == {"127.0.0.1", "news.search.yahoo.com"}
    assert engine_hosts({}) == set()


def test_pipeline_normalizes_item() -> None:
    pipeline, stats = _pipeline()
    item = pipeline.process_item(_item())
    assert item["url"] == "https://www.example.com/a?id=1"
    assert item["news_id"] == news_id("https://www.example.com/a?id=1")
    assert (item["title"], item["source"], item["snippet"]) == ("A title", "Example", "Some text.")
    assert stats.get_value("topicstreams/google/items_dropped") is None
    assert stats.get_value("topicstreams/google/items_scraped") is None


def test_pipeline_drops_characters_no_text_means() -> None:
    pipeline, _ = _pipeline()
    item = pipeline.process_item(
        _item(title=" A\x00 ti\x07tle\x1b[0m ", source="Ex\ud800ample\uffff", snippet="Line one\nline two\ttabbed\x7f")
    )
    assert (item["title"], item["source"], item["snippet"]) == ("A title[0m", "Example", "Line one\nline two\ttabbed")


def test_pipeline_unwraps_engine_redirectors() -> None:
    pipeline, _ = _pipeline()
    item = pipeline.process_item(_item(url="http://127.0.0.1:8123/url?q=https://a.com/x&sa=U"))
    assert item["url"] == "https://a.com/x"
    item = pipeline.process_item(_item(url="https://news.search.yahoo.com/_ylt=A/RU=https%3a%2f%2fb.com%2f/RK=2/RS=x"))
    assert item["url"] == "https://b.com/"


def test_pipeline_without_engines_setting() -> None:
    # no TOPICSTREAMS_ENGINES: the configuration's engines, the packaged ones, are the redirectors
    pipeline, _ = _pipeline(None)
    assert pipeline.redirector_hosts == engine_hosts(load_defaults()["engines"])
    assert pipeline.redirector_hosts == {"www.google.com", "www.bing.com", "news.search.yahoo.com", "search.brave.com"}
    item = pipeline.process_item(_item(url="https://www.google.com/url?q=https://a.com/x"))
    assert item["url"] == "https://a.com/x"


def test_pipeline_accepts_dicts() -> None:
    pipeline, _ = _pipeline()
    item = pipeline.process_item({"url": "HTTP://A.com", "title": "t", "engine": "bing"})
    assert item == {"url": "http://a.com/", "title": "t", "engine": "bing", "news_id": news_id("http://a.com/")}


@pytest.mark.parametrize(
    "fields",
    [
        {"url": ...},
        {"url": None},
        {"url": ""},
        {"url": "   "},
        {"title": ...},
        {"title": None},
        {"title": "  \n "},
        {"url": "/relative/link"},
        {"url": "javascript:void(0)"},
        {"url": "https://a.com:99999/"},
    ],
)
def test_pipeline_drops_and_counts(fields: dict) -> None:
    pipeline, stats = _pipeline()
    with pytest.raises(DropItem):
        pipeline.process_item(_item(engine="bing", **fields))
    assert stats.get_value("topicstreams/bing/items_dropped") == 1
    with pytest.raises(DropItem):
        pipeline.process_item(_item(engine="bing", **fields))
    assert stats.get_value("topicstreams/bing/items_dropped") == 2
    assert stats.get_value("topicstreams/google/items_dropped") is None


def test_one_list_of_required_fields_for_the_reader_the_pipeline_and_the_store() -> None:
    assert REQUIRED_RESULT_FIELDS == ("url", "title", "source", "published_at")
    assert REQUIRED_TO_KEEP == ("url", "title") and set(REQUIRED_TO_KEEP) <= set(REQUIRED_RESULT_FIELDS)
    assert REQUIRED_TO_STORE == ("news_id", "url", "topic", "engine")
    pipeline, _ = _pipeline()
    for name in REQUIRED_TO_KEEP:
        with pytest.raises(DropItem):
            pipeline.process_item(_item(**{name: ...}))
    stored = dict(pipeline.process_item(_item()))
    assert item_problem(stored) is None
    for name in REQUIRED_TO_STORE:
        assert item_problem({**stored, name: None}) == f"missing {name}"


def test_pipeline_drops_without_engine() -> None:
    pipeline, stats = _pipeline()
    with pytest.raises(DropItem):
        pipeline.process_item(_item(engine=..., url=...))
    assert stats.get_value("topicstreams/unknown/items_dropped") == 1


def test_pipeline_is_registered_without_deprecation_warnings() -> None:
    from scrapy.pipelines import ItemPipelineManager

    crawler = get_crawler(
        settings_dict={
            "ITEM_PIPELINES": {"topicstreams.pipelines.normalize.NormalizePipeline": 100},
            "TOPICSTREAMS_ENGINES": CONFIGURED,
        }
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        manager = ItemPipelineManager.from_crawler(crawler)
    assert len(manager.middlewares) == 1


_pieces = st.sampled_from(
    list("aZ0/?#&=;:%.@[]-_+ é\t")
    + [
        "http://",
        "https://",
        "%2F",
        "%3B",
        "%25",
        "_ylt=",
        "utm_a=",
        "/url?q=",
        "/RU=",
        "..",
        ":80",
        "www.google.com",
        "r.search.yahoo.com",
        "%3A%2F%2F",
    ]
)
_junk = st.lists(_pieces, max_size=25).map("".join)


@_quick
@given(
    st.one_of(
        _junk,
        st.text(max_size=30),
        st.tuples(st.sampled_from(["http://", "HTTPS://", "https://www.google.com/url?q=http://"]), _junk).map("".join),
    )
)
def test_any_string_is_value_error_or_fixed_point(url: str) -> None:
    try:
        once = normalize_url(url, ["a"])
    except ValueError:
        return
    assert normalize_url(once, ["a"]) == once
