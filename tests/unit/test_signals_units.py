"""The pure parts of the "Signals" issue: parser health, cost per record, canary answers, the window's parse
outcome, the parser band of an engine, and the ``canaries.*`` configuration."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from topicstreams.config.errors import ConfigError
from topicstreams.config.loading import floor_for, load_config
from topicstreams.config.packaged import load_defaults
from topicstreams.config.schema import validate
from topicstreams.config.sections import CanariesSection, CanaryQuerySection, build_section
from topicstreams.crawl.canaries import answer_problem, canaries_for, on_domain
from topicstreams.engines.classify import ResponseClass
from topicstreams.engines.parser_health import parser_score
from topicstreams.engines.results import REQUIRED_RESULT_FIELDS
from topicstreams.health.band import EngineHealth, HealthSettings, ParserAssessment
from topicstreams.health.cost import COST_KEYS, cost_drift, per_record
from topicstreams.health.score import DEFAULT_WEIGHTS
from topicstreams.health.window import Sample, WindowStats

OK, ERROR, HARD = ResponseClass.OK, ResponseClass.ERROR, ResponseClass.HARD_BLOCK


# ---- parser_score ---------------------------------------------------------------------------------------


def test_no_result_page_means_no_parser_score():
    assert parser_score(0, 0, 0, 0, 0) == (None, [])
    assert parser_score(0, 0, 0, 0, 0, {"source": 3}) == (None, [])


def test_every_page_yielding_valid_items_scores_100_without_reasons():
    assert parser_score(4, 4, 0, 40, 40) == (100, [])
    assert parser_score(4, 4, 0, 40, 40, {}) == (100, [])
    assert parser_score(4, 4, 0, 40, 40, {"source": 0}) == (100, [])  # a zero count is no reason


def test_half_the_items_missing_source_is_50():
    assert parser_score(2, 2, 0, 20, 10, {"source": 10}) == (50, ["missing source"])


def test_pages_without_items():
    assert parser_score(4, 3, 0, 30, 30) == (75, ["pages without items"])
    assert parser_score(3, 0, 0, 0, 0) == (0, ["pages without items"])


def test_a_parse_error_is_its_own_reason_and_not_a_page_without_items():
    # One of four result pages failed to parse: it yielded nothing, but the reason says why.
    assert parser_score(4, 3, 1, 30, 30) == (75, ["parse error"])
    # A parse error and another page that yielded nothing: both reasons, the error first.
    assert parser_score(4, 2, 1, 20, 20) == (50, ["parse error", "pages without items"])
    assert parser_score(1, 0, 1, 0, 0) == (0, ["parse error"])


def test_the_score_is_the_product_of_the_page_share_and_the_item_share():
    # 3 of 4 pages yielded, 8 of 10 items valid: 0.75 × 0.8 = 0.6.
    assert parser_score(4, 3, 0, 10, 8, {"title": 2}) == (60, ["pages without items", "missing title"])
    # 2 of 3 pages, 2 of 3 items: 44.4 rounds to 44.
    assert parser_score(3, 2, 0, 3, 2, {"url": 1})[0] == 44


def test_missing_reasons_follow_the_required_fields_order_whatever_the_mapping_order():
    assert REQUIRED_RESULT_FIELDS == ("url", "title", "source", "published_at")
    missing = {"published_at": 1, "source": 2, "title": 3, "url": 4, "snippet": 9}
    score, reasons = parser_score(1, 1, 0, 10, 5, missing)
    assert score == 50
    assert reasons == ["missing url", "missing title", "missing source", "missing published_at"]
    # Every reason together: the parse error, the empty pages, then the fields.
    assert parser_score(3, 1, 1, 10, 5, {"published_at": 5, "title": 1})[1] == [
        "parse error",
        "pages without items",
        "missing title",
        "missing published_at",
    ]


def test_shares_never_exceed_one():
    assert parser_score(2, 5, 0, 10, 20) == (100, [])


# ---- cost -----------------------------------------------------------------------------------------------


def test_no_cost_per_record_without_a_valid_item():
    assert per_record(10, 500_000, 3.0, 0) is None
    assert per_record(0, 0, 0.0, 0) is None


def test_cost_per_record_is_rounded_to_three_decimals():
    assert per_record(10, 1_000_000, 3.0, 3) == {"attempts": 3.333, "bytes": 333333.333, "browser_seconds": 1.0}
    assert per_record(12, 600_000, 2.5, 10) == {"attempts": 1.2, "bytes": 60000.0, "browser_seconds": 0.25}
    assert tuple(per_record(1, 1, 1.0, 1)) == COST_KEYS


def test_cost_drift_is_the_ratio_of_the_window_to_the_baseline():
    window = {"attempts": 2.0, "bytes": 30_000.0, "browser_seconds": 0.5}
    baseline = {"attempts": 1.0, "bytes": 60_000.0, "browser_seconds": 0.3}
    assert cost_drift(window, baseline) == {
        "window": window,
        "baseline": baseline,
        "drift": {"attempts": 2.0, "bytes": 0.5, "browser_seconds": 1.667},
    }


def test_a_zero_baseline_cost_has_no_drift_for_that_key_only():
    window = {"attempts": 2.0, "bytes": 30_000.0, "browser_seconds": 0.5}
    baseline = {"attempts": 1.0, "bytes": 0.0, "browser_seconds": 0.0}
    assert cost_drift(window, baseline)["drift"] == {"attempts": 2.0, "bytes": None, "browser_seconds": None}


def test_no_drift_without_a_window_or_a_baseline():
    cost = {"attempts": 1.0, "bytes": 1.0, "browser_seconds": 1.0}
    assert cost_drift(None, cost) == {"window": None, "baseline": cost, "drift": None}
    assert cost_drift(cost, None) == {"window": cost, "baseline": None, "drift": None}
    assert cost_drift(None, None) == {"window": None, "baseline": None, "drift": None}


# ---- canaries -------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("https://example.org/news/1", True),
        ("https://www.example.org/news/1", True),
        ("https://a.b.example.org/", True),
        ("https://notexample.org/news", False),  # a suffix, not a subdomain
        ("https://example.org.evil.net/", False),
        ("https://example.com/", False),
        ("https://example.org:8443/x", True),  # the port is not part of the host
        ("https://user:pw@example.org/x", True),
        ("HTTPS://WWW.Example.ORG/News", True),  # host names are case-insensitive
        ("https://example.org./x", True),  # a fully qualified name's trailing dot
        ("http://[::1/broken", False),  # unparsable: no host
        ("not a url", False),
        ("", False),
        (None, False),
    ],
)
def test_on_domain(url, expected):
    assert on_domain(url, "example.org") is expected


def test_a_right_answer_has_no_problem():
    canary = CanaryQuerySection("python", min_results=2, expect_domain="python.org")
    assert answer_problem(canary, ["https://docs.python.org/3/", "https://example.com/a"]) is None
    assert answer_problem(CanaryQuerySection("any", 1, ""), ["https://example.com/a"]) is None


def test_too_few_results():
    canary = CanaryQuerySection("python", min_results=3, expect_domain="")
    assert answer_problem(canary, ["https://a.example/", "https://b.example/"]) == "2 results, expected at least 3"
    assert answer_problem(canary, []) == "0 results, expected at least 3"


def test_no_result_from_the_expected_domain_lists_the_hosts_seen():
    canary = CanaryQuerySection("python", min_results=1, expect_domain="python.org")
    problem = answer_problem(canary, ["https://b.example/1", "https://A.example/2", "https://b.example/3"])
    assert problem == "no result from python.org (hosts: a.example, b.example)"
    assert answer_problem(canary, ["https://notpython.org/"]) == "no result from python.org (hosts: notpython.org)"


def test_the_hosts_listed_are_at_most_five():
    canary = CanaryQuerySection("python", min_results=1, expect_domain="python.org")
    urls = [f"https://h{i}.example/" for i in range(7)]
    assert answer_problem(canary, urls) == (
        "no result from python.org (hosts: h0.example, h1.example, h2.example, h3.example, h4.example, …)"
    )


def test_both_problems_are_joined():
    canary = CanaryQuerySection("python", min_results=2, expect_domain="python.org")
    assert answer_problem(canary, ["https://x.example/"]) == (
        "1 results, expected at least 2; no result from python.org (hosts: x.example)"
    )
    assert answer_problem(canary, []) == "0 results, expected at least 2; no result from python.org"


def test_missing_urls_are_ignored():
    canary = CanaryQuerySection("python", min_results=2, expect_domain="python.org")
    assert answer_problem(canary, [None, "https://www.python.org/", None, ""]) == "1 results, expected at least 2"
    assert answer_problem(canary, [None, "https://www.python.org/", "https://x.example/"]) is None


def test_an_unparsable_url_does_not_break_the_answer_check():
    # The spider's _identity hands a URL it cannot normalize over as it is, so a malformed one can arrive.
    canary = CanaryQuerySection("python", min_results=1, expect_domain="python.org")
    problem = answer_problem(canary, ["http://[::1/broken", "https://x.example/"])
    assert problem is not None and problem.startswith("no result from python.org (hosts: ")
    assert "x.example" in problem


def test_canaries_for_an_engine():
    # the typed section: each entry's packaged defaults already filled in (as the configuration loads them)
    canaries = build_section(
        CanariesSection,
        {
            "interval": 60,
            "queries": {
                "google": [
                    {"query": "a", "min_results": 1, "expect_domain": ""},
                    {"query": "b", "min_results": 5, "expect_domain": "b.org"},
                ],
                "bing": [{"query": "c", "min_results": 1, "expect_domain": ""}],
                "brave": [],
            },
        },
    )
    assert canaries_for(canaries, "google") == [CanaryQuerySection("a", 1, ""), CanaryQuerySection("b", 5, "b.org")]
    assert canaries_for(canaries, "bing") == [CanaryQuerySection("c", 1, "")]
    assert canaries_for(canaries, "brave") == []
    assert canaries_for(canaries, "yahoo") == []


# ---- the window's parse outcome -------------------------------------------------------------------------


def sample(
    at: float,
    cls: ResponseClass = OK,
    latency: float | None = 0.5,
    bytes_: int = 1000,
    items: int = 0,
    valid: int = 0,
    parse_error: bool = False,
    result_page: bool = False,
    missing: dict | None = None,
) -> Sample:
    return Sample(
        at=at,
        cls=cls,
        latency=latency,
        bytes=bytes_,
        items=items,
        valid_items=valid,
        parse_error=parse_error,
        result_page=result_page,
        missing=missing or {},
    )


def test_a_sample_has_no_parse_outcome_until_it_is_filled_in():
    fresh = Sample(at=1.0, cls=OK, latency=None)
    assert (fresh.items, fresh.valid_items, fresh.parse_error, fresh.result_page, fresh.missing) == (
        0,
        0,
        False,
        False,
        {},
    )
    assert Sample(at=1.0, cls=OK, latency=None).missing is not fresh.missing  # not shared


def test_window_stats_sum_result_pages_yielding_pages_and_missing_fields():
    samples = [
        sample(1, items=10, valid=10, result_page=True),
        sample(2, items=10, valid=6, result_page=True, missing={"source": 4, "published_at": 2}),
        sample(3, items=0, result_page=True),  # a result page that yielded nothing
        sample(4, cls=ERROR, parse_error=True, result_page=True),
        sample(5, items=0),  # a "no results" page: not a result page
        sample(6, cls=HARD, latency=None, bytes_=0),
        sample(7, items=3, valid=3, result_page=False, missing={"title": 0, "published_at": 1}),
    ]
    stats = WindowStats.of(samples)
    assert (stats.requests, stats.ok, stats.errors, stats.hard_blocks) == (7, 5, 1, 1)
    assert (stats.items, stats.valid_items, stats.parse_errors) == (23, 19, 1)
    assert (stats.result_pages, stats.yielding_pages) == (4, 2)
    assert stats.missing_fields == {"source": 4, "published_at": 3}  # zero counts dropped
    assert stats.bytes == 6000
    assert stats.browser_seconds == pytest.approx(3.0)
    counts = stats.counts()
    assert (counts["result_pages"], counts["yielding_pages"], counts["missing_fields"]) == (
        4,
        2,
        {"source": 4, "published_at": 3},
    )


def test_the_window_parser_score_and_cost():
    samples = [
        sample(1, items=10, valid=5, result_page=True, latency=1.0, bytes_=100_000, missing={"source": 5}),
        sample(2, items=10, valid=5, result_page=True, latency=1.0, bytes_=100_000, missing={"source": 5}),
        sample(3, cls=HARD, latency=None, bytes_=0),
    ]
    stats = WindowStats.of(samples)
    assert stats.parser() == (50, ["missing source"])
    assert stats.parser() == parser_score(2, 2, 0, 20, 10, {"source": 10})
    # 3 attempts, 200 000 bytes and 2 browser seconds for 10 valid records.
    assert stats.cost() == {"attempts": 0.3, "bytes": 20000.0, "browser_seconds": 0.2}


def test_an_empty_window_has_no_parser_score_and_no_cost():
    stats = WindowStats.of([])
    assert stats.parser() == (None, [])
    assert stats.cost() is None
    assert (stats.result_pages, stats.yielding_pages, stats.missing_fields) == (0, 0, {})
    blocks_only = WindowStats.of([sample(1, cls=HARD), sample(2, cls=HARD)])
    assert blocks_only.parser() == (None, [])
    assert blocks_only.cost() is None


# ---- the engine's parser band ---------------------------------------------------------------------------


def engine_health() -> EngineHealth:
    return EngineHealth(
        HealthSettings(
            weights=dict(DEFAULT_WEIGHTS), min_requests=1, window=600, smoothing=1, degrade_factor=2, baseline_days=14
        )
    )


def parsed(valid: int, items: int = 10) -> WindowStats:
    return WindowStats(
        result_pages=1,
        yielding_pages=1 if items else 0,
        items=items,
        valid_items=valid,
        missing_fields={"source": items - valid} if items - valid else {},
    )


def test_the_parser_band_changes_only_between_known_bands():
    health = engine_health()
    assert health.parser_band == "unknown"
    fell = health.assess_parser(parsed(6))
    assert fell == ParserAssessment(60, "degraded", ["missing source"], True)
    assert health.parser_band == "degraded"
    assert health.assess_parser(parsed(7)) == ParserAssessment(70, "degraded", ["missing source"], False)
    assert health.assess_parser(parsed(2)) == ParserAssessment(20, "critical", ["missing source"], True)
    # No result page: unknown, which is no change and leaves the last known band as it is.
    assert health.assess_parser(WindowStats()) == ParserAssessment(None, "unknown", [], False)
    assert health.parser_band == "critical"
    assert health.assess_parser(parsed(3)).changed is False
    assert health.assess_parser(parsed(10)) == ParserAssessment(100, "ok", [], True)
    assert health.parser_band == "ok"
    assert health.assess_parser(parsed(9)).changed is False  # 90: still ok
    assert health.assess_parser(WindowStats()).changed is False
    assert health.assess_parser(parsed(0, items=0)) == ParserAssessment(0, "critical", ["pages without items"], True)


def test_a_first_good_parser_window_is_no_change_but_is_remembered():
    health = engine_health()
    assert health.assess_parser(parsed(10)) == ParserAssessment(100, "ok", [], False)
    assert health.parser_band == "ok"
    assert health.assess_parser(parsed(5)).changed is True


def test_a_first_bad_parser_window_is_a_change():
    health = engine_health()
    assert health.assess_parser(parsed(0)) == ParserAssessment(0, "critical", ["missing source"], True)


def test_the_parser_band_acts_on_nothing():
    health = engine_health()
    health.assess_parser(parsed(0))
    assert (health.in_force, health.paused) == ("ok", False)


# ---- the canaries.* configuration -----------------------------------------------------------------------


def load(tmp_path: Path, data: dict):
    path = tmp_path / "config.yml"
    path.write_text(yaml.safe_dump(data))
    return load_config({"TOPICSTREAMS_CONFIG": str(path)}, environ={})


def test_canary_defaults():
    checked = validate(load_defaults())
    assert checked["canaries"] == {"interval": 3600, "queries": {"google": [], "bing": [], "yahoo": [], "brave": []}}


def test_good_canaries_are_normalized(tmp_path):
    config = load(
        tmp_path,
        {
            "canaries": {
                "interval": 0.5,
                "queries": {
                    "google": [
                        {"query": "  python  "},
                        {"query": "rust", "min_results": 5, "expect_domain": " WWW.Rust-Lang.ORG. "},
                        {"query": "go", "expect_domain": None},
                        {"query": "zig", "expect_domain": ""},
                    ],
                    "brave": [{"query": "python", "min_results": 1, "expect_domain": "127.0.0.1"}],
                },
            }
        },
    )
    canaries = config.get("canaries")
    assert canaries["interval"] == 0.5
    assert canaries["queries"]["google"] == [
        {"query": "python", "min_results": 1, "expect_domain": ""},
        {"query": "rust", "min_results": 5, "expect_domain": "www.rust-lang.org"},
        {"query": "go", "min_results": 1, "expect_domain": ""},
        {"query": "zig", "min_results": 1, "expect_domain": ""},
    ]
    assert canaries["queries"]["brave"] == [{"query": "python", "min_results": 1, "expect_domain": "127.0.0.1"}]
    assert canaries["queries"]["bing"] == [] and canaries["queries"]["yahoo"] == []  # the defaults merged in
    assert canaries_for(config.sections.canaries, "google")[1] == CanaryQuerySection("rust", 5, "www.rust-lang.org")


def test_a_null_canaries_section_keeps_the_defaults(tmp_path):
    assert load(tmp_path, {"canaries": None}).get("canaries.interval") == 3600
    assert load(tmp_path, {"canaries": {"queries": {"google": None}}}).get("canaries.queries.google") == []


def entry_config(entry) -> dict:
    return {"canaries": {"queries": {"google": [{"query": "ok"}, entry]}}}


@pytest.mark.parametrize(
    ("data", "key"),
    [
        ({"canaries": {"interval": 0}}, "canaries.interval"),
        ({"canaries": {"interval": -5}}, "canaries.interval"),
        ({"canaries": {"interval": "hourly"}}, "canaries.interval"),
        ({"canaries": {"interval": True}}, "canaries.interval"),
        ({"canaries": {"frequency": 10}}, "canaries.frequency"),
        ({"canaries": {"queries": {"duckduckgo": []}}}, "canaries.queries.duckduckgo"),
        ({"canaries": {"queries": ["google"]}}, "canaries.queries"),
        ({"canaries": {"queries": {"google": {"query": "q"}}}}, "canaries.queries.google"),
        ({"canaries": {"queries": {"google": "python"}}}, "canaries.queries.google"),
        (entry_config("python"), "canaries.queries.google[1]"),
        (entry_config({"min_results": 2}), "canaries.queries.google[1]"),  # no query
        (entry_config({"query": "q", "max_results": 2}), "canaries.queries.google[1]"),  # an unknown key
        (entry_config({"query": ""}), "canaries.queries.google[1].query"),
        (entry_config({"query": "   "}), "canaries.queries.google[1].query"),
        (entry_config({"query": 42}), "canaries.queries.google[1].query"),
        (entry_config({"query": None}), "canaries.queries.google[1].query"),
        (entry_config({"query": "q", "min_results": 0}), "canaries.queries.google[1].min_results"),
        (entry_config({"query": "q", "min_results": -1}), "canaries.queries.google[1].min_results"),
        (entry_config({"query": "q", "min_results": 2.5}), "canaries.queries.google[1].min_results"),
        (entry_config({"query": "q", "min_results": "3"}), "canaries.queries.google[1].min_results"),
        (entry_config({"query": "q", "min_results": True}), "canaries.queries.google[1].min_results"),
        (
            entry_config({"query": "q", "expect_domain": "https://example.org/"}),
            "canaries.queries.google[1].expect_domain",
        ),
        (entry_config({"query": "q", "expect_domain": "example.org/news"}), "canaries.queries.google[1].expect_domain"),
        (entry_config({"query": "q", "expect_domain": "exa mple.org"}), "canaries.queries.google[1].expect_domain"),
        (entry_config({"query": "q", "expect_domain": "-bad-.org"}), "canaries.queries.google[1].expect_domain"),
        (entry_config({"query": "q", "expect_domain": "a..b"}), "canaries.queries.google[1].expect_domain"),
        (entry_config({"query": "q", "expect_domain": 42}), "canaries.queries.google[1].expect_domain"),
        (entry_config({"query": "q", "expect_domain": ["example.org"]}), "canaries.queries.google[1].expect_domain"),
        (entry_config({"query": "ok"}), "canaries.queries.google[1].query"),  # a duplicate
        (entry_config({"query": " ok "}), "canaries.queries.google[1].query"),  # a duplicate once stripped
    ],
)
def test_bad_canaries_are_refused_naming_the_key(tmp_path, data, key):
    with pytest.raises(ConfigError) as raised:
        load(tmp_path, data)
    assert raised.value.key == key
    assert str(raised.value).startswith(f"{key}: got ")
    assert ", expected " in str(raised.value)


def test_the_error_message_shows_the_value_and_what_was_expected(tmp_path):
    with pytest.raises(ConfigError) as raised:
        load(tmp_path, entry_config({"query": "q", "min_results": 0}))
    assert str(raised.value) == "canaries.queries.google[1].min_results: got 0, expected an integer >= 1"
    with pytest.raises(ConfigError) as raised:
        load(tmp_path, entry_config({"query": "ok"}))
    assert str(raised.value) == (
        "canaries.queries.google[1].query: got 'ok', expected a query not already listed for the engine"
    )


def test_the_same_query_may_serve_two_engines(tmp_path):
    config = load(tmp_path, {"canaries": {"queries": {"google": [{"query": "q"}], "bing": [{"query": "q"}]}}})
    assert config.get("canaries.queries.bing") == [{"query": "q", "min_results": 1, "expect_domain": ""}]


@pytest.mark.parametrize("domain", [False, 0, []])
def test_a_falsy_non_string_expect_domain_is_refused(tmp_path, domain):
    with pytest.raises(ConfigError) as raised:
        load(tmp_path, entry_config({"query": "q", "expect_domain": domain}))
    assert raised.value.key == "canaries.queries.google[1].expect_domain"


def test_floor_for():
    pacing = {"default_min_interval": 10, "per_engine": {"google": 30, "bing": 0}}
    assert floor_for(pacing, "google") == 30.0
    assert floor_for(pacing, "bing") == 0.0  # its own, even when zero
    assert floor_for(pacing, "brave") == 10.0
    assert floor_for({"default_min_interval": 4}, "google") == 4.0
    assert floor_for({"default_min_interval": 4, "per_engine": None}, "google") == 4.0
    assert isinstance(floor_for(pacing, "google"), float)
