"""The topic-name rule (topicstreams.engines.topic_names) and the configuration's use of it: empty names, control
characters, results URLs past Scrapy's URLLENGTH_LIMIT for each engine as configured, and messages that name the topic
(shortened), the engine and the limit."""

from __future__ import annotations

import pytest
from scrapy import Request
from scrapy.settings import Settings

from topicstreams import ENGINES
from topicstreams.config.errors import ConfigError
from topicstreams.config.loading import load_config, merge
from topicstreams.config.packaged import load_defaults
from topicstreams.config.schema import validate
from topicstreams.engines import engine_class
from topicstreams.engines.topic_names import (
    DEFAULT_URL_LIMIT,
    TopicsRefused,
    check_topics,
    configured_engines,
    name_problem,
    pages_to_check,
    shown,
    topic_problem,
    url_length_limit,
    url_problem,
)

FAKE_ORIGIN = "http://127.0.0.1:54321"
LONG_ORIGIN = f"https://news-search.{'g' * 60}.example.org:8443"


def room(engine, limit: int = DEFAULT_URL_LIMIT, max_pages: int = 1) -> int:
    """How many plain letters a name may have on ``engine``: the limit less the longest URL of an empty name."""
    return limit - max(len(Request(engine.results_url("", page)).url) for page in pages_to_check(max_pages))


@pytest.mark.parametrize("name", ["", "   ", "\t \n", "\u200d", " \u200c\u200d "])
def test_an_empty_name_is_refused(name):
    assert "empty" in name_problem(name)
    assert "empty" in topic_problem(name, configured_engines(load_defaults()["engines"]))


@pytest.mark.parametrize(
    ("name", "shown_as"),
    [
        ("a\tb", "U+0009, a tab"),
        ("a\nb", "U+000A, a newline"),
        ("a\rb", "U+000D, a carriage return"),
        ("a\x00b", "U+0000, a NUL byte"),
        ("a\x7fb", "U+007F"),  # DEL
        ("a\x85b", "U+0085"),  # NEXT LINE, a C1 control
        ("a\u200bb", "U+200B, ZERO WIDTH SPACE"),
        ("\ufeffab", "U+FEFF, ZERO WIDTH NO-BREAK SPACE"),
        ("ab\u202e", "U+202E, RIGHT-TO-LEFT OVERRIDE"),
        ("a\u00adb", "U+00AD, SOFT HYPHEN"),
        ("a\u2028b", "U+2028, LINE SEPARATOR"),
        ("a\u2029b", "U+2029, PARAGRAPH SEPARATOR"),
        ("a\ud800b", "U+D800"),  # a lone surrogate: not even writable as UTF-8
    ],
)
def test_control_and_invisible_formatting_characters_are_refused(name, shown_as):
    problem = name_problem(name)
    assert problem is not None and f"({shown_as})" in problem
    assert f"position {next(i for i, c in enumerate(name, 1) if c not in 'ab')}" in problem


@pytest.mark.parametrize(
    "name",
    [
        "climate change",
        "Zürich",
        "東京 オリンピック",
        "حرب غزة",
        "می\u200cخواهم",  # ZWNJ: Persian spelling
        "👩\u200d💻 developers",  # ZWJ: one emoji
        "a\u00a0b",
        "a\u3000b",  # no-break and ideographic spaces: visible spacing
        "C++ & C#",
        "50% off?",
        "x" * 500,
    ],
)
def test_ordinary_names_pass(name):
    assert topic_problem(name, configured_engines(load_defaults()["engines"])) is None


@pytest.mark.parametrize("engine_name", ENGINES)
@pytest.mark.parametrize("origin", [FAKE_ORIGIN, LONG_ORIGIN])
def test_a_name_just_under_the_limit_passes_and_one_just_over_is_refused(engine_name, origin):
    engine = engine_class(engine_name)(origin)
    fits = room(engine)
    assert len(Request(engine.results_url("a" * fits, 0)).url) == DEFAULT_URL_LIMIT
    assert url_problem("a" * fits, engine) is None
    problem = url_problem("a" * (fits + 1), engine)
    assert problem is not None
    assert f"its {engine_name} results URL would be {DEFAULT_URL_LIMIT + 1:,} characters long" in problem
    assert f"over the {DEFAULT_URL_LIMIT:,} the crawler accepts (Scrapy's URLLENGTH_LIMIT)" in problem
    assert f"at most {fits:,} plain letters" in problem


def test_the_configured_origin_counts():
    near, far = engine_class("google")(FAKE_ORIGIN), engine_class("google")(LONG_ORIGIN)
    name = "a" * room(near)
    assert url_problem(name, near) is None
    assert url_problem(name, far) is not None  # the longer base_url leaves less room


def test_the_deepest_page_crawled_counts():
    google = engine_class("google")(FAKE_ORIGIN)
    name = "a" * room(google)
    assert url_problem(name, google, max_pages=1) is None
    problem = url_problem(name, google, max_pages=12)  # page 12's URL carries &start=110
    assert problem is not None and "(page 12)" in problem
    assert url_problem("a" * room(google, max_pages=12), google, max_pages=12) is None
    # Bing's first page has another path than the later ones: each is measured
    bing = engine_class("bing")(FAKE_ORIGIN)
    assert room(bing, max_pages=2) < room(bing, max_pages=1)
    assert url_problem("a" * room(bing), bing, max_pages=2) is not None


def test_non_ascii_characters_count_as_the_url_spells_them():
    google = engine_class("google")(FAKE_ORIGIN)
    fits = room(google)
    assert url_problem("é" * (fits // 6), google) is None  # é is %C3%A9 in the URL: six characters
    assert url_problem("é" * (fits // 6 + 1), google) is not None


def test_the_limit_follows_the_setting_and_zero_turns_it_off():
    google = engine_class("google")(FAKE_ORIGIN)
    assert url_problem("a" * 100, google, limit=120) is not None
    assert url_problem("a" * 5000, google, limit=0) is None
    assert url_length_limit() == DEFAULT_URL_LIMIT == 2083
    assert url_length_limit(Settings({"URLLENGTH_LIMIT": "4000"})) == 4000
    assert url_length_limit(Settings()) == 2083
    assert url_length_limit({"URLLENGTH_LIMIT": 500}) == 500 and url_length_limit({}) == 2083


def test_a_5000_character_name_is_refused_for_every_engine_with_a_short_message():
    name = "x" * 5000
    for engine in configured_engines(load_defaults()["engines"]):
        assert url_problem(name, engine) is not None
    with pytest.raises(TopicsRefused) as refused:
        check_topics(["fine", name], configured_engines(load_defaults()["engines"]))
    message = str(refused.value)
    assert refused.value.refused[0][0] == name and len(refused.value.refused) == 1
    assert message.startswith(f"topic {'x' * 40 + '…' + 'x' * 12!r} (5,000 characters) is refused: its google")
    assert "2,083" in message and "URLLENGTH_LIMIT" in message
    assert len(message) < 400 and "x" * 60 not in message


def test_every_refused_name_is_named_one_line_each():
    with pytest.raises(TopicsRefused) as refused:
        check_topics(["ok", "a\tb", "  ", "fine"], configured_engines(load_defaults()["engines"]))
    lines = str(refused.value).splitlines()
    assert lines[0].startswith("topic 'a\\tb' is refused: it holds a control character (U+0009, a tab)")
    assert lines[1].startswith("topic '  ' is refused: the name is empty")
    assert len(lines) == 2


def test_shown_keeps_short_names_whole_and_escapes_the_invisible():
    assert shown("alpha") == "'alpha'"
    assert shown("a\u200bb") == "'a\\u200bb'"
    assert shown("y" * 60) == repr("y" * 60)
    assert shown("y" * 61) == repr("y" * 40 + "…" + "y" * 12) + " (61 characters)"


# ---- the configuration's topics ---------------------------------------------------------------------------


def config_with(**data):
    return merge(load_defaults(), data)


def test_config_refuses_a_topic_whose_url_is_too_long_naming_the_entry_shortened():
    with pytest.raises(ConfigError) as error:
        validate(config_with(topics=["alpha", "x" * 5000]))
    message = str(error.value)
    assert error.value.key == "topics[1]"
    assert message.startswith(
        f"topics[1]: got {'x' * 40 + '…' + 'x' * 12!r} (5,000 characters), expected a topic "
        "name whose results URLs fit: its google results URL would be"
    )
    assert "2,083" in message and "x" * 60 not in message


def test_config_refuses_control_characters_and_empty_names():
    with pytest.raises(
        ConfigError,
        match=r"^topics\[2\]: got 'a\\nb', expected a valid topic name: it holds a "
        r"control character \(U\+000A, a newline\) at position 2",
    ):
        validate(config_with(topics=["alpha", "beta", "a\nb"]))
    with pytest.raises(ConfigError, match=r"^topics\[0\]: got '\\u200b', expected a valid topic name"):
        validate(config_with(topics=["\u200b"]))
    with pytest.raises(ConfigError, match=r"^topics\[0\]: got ' ', expected a non-empty topic name"):
        validate(config_with(topics=[" "]))


def test_config_measures_with_the_configured_engines_and_max_pages():
    at_fake = {name: {"base_url": FAKE_ORIGIN} for name in ENGINES}
    fits = min(room(engine_class(name)(FAKE_ORIGIN)) for name in ENGINES)
    name = "a" * fits
    assert validate(config_with(topics=[name], engines=at_fake))["topics"] == [name]
    with pytest.raises(ConfigError, match=r"^topics\[0\]: .*its google results URL"):
        validate(config_with(topics=[name], engines={**at_fake, "google": {"base_url": LONG_ORIGIN}}))
    # a disabled engine's URL counts too: the topics table is every engine's
    with pytest.raises(ConfigError, match=r"its google results URL"):
        validate(config_with(topics=[name], engines={**at_fake, "google": {"base_url": LONG_ORIGIN, "enabled": False}}))
    with pytest.raises(ConfigError, match=r"^topics\[0\]: .*results URL would be .* \(page 20\)"):
        validate(config_with(topics=[name], engines=at_fake, scraper={"max_pages": 20}))


def test_config_takes_the_limit_from_the_settings(tmp_path):
    path = tmp_path / "config.yml"
    path.write_text("topics: [" + "a" * 100 + "]\n")
    assert load_config({"TOPICSTREAMS_CONFIG": str(path)}, environ={}).get("topics") == ["a" * 100]
    with pytest.raises(ConfigError, match=r"over the 120 the crawler accepts"):
        load_config(Settings({"TOPICSTREAMS_CONFIG": str(path), "URLLENGTH_LIMIT": 120}), environ={})


def test_config_refuses_a_canary_query_too_long_for_its_engine():
    with pytest.raises(
        ConfigError,
        match=r"^canaries\.queries\.brave\[0\]\.query: got .* \(3,000 characters\), "
        r"expected a query whose results URL fits: its brave results URL",
    ):
        validate(config_with(canaries={"queries": {"brave": [{"query": "q" * 3000}]}}))
