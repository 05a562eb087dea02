"""The engines' own domains: country and regional sites are the engine's, a publisher named like it is not."""

from __future__ import annotations

import socket

import pytest

from topicstreams import ENGINES
from topicstreams.engines import domains, engine_class
from topicstreams.engines.domains import (
    RULES,
    DomainRule,
    any_engine_owns,
    owns,
    registered_domain,
)
from topicstreams.engines.news_urls import normalize_url

OWNED = {
    "google": [
        "google.com",
        "www.google.com",
        "google.com.ng",
        "www.google.com.ng",
        "www.google.de",
        "news.google.co.uk",
        "www.google.cat",
        "images.google.com.au",
        "www.gstatic.com",
        "lh3.googleusercontent.com",
        "g.co",
        "about.google",
        "blog.google",
    ],
    "bing": ["bing.com", "www.bing.com", "cn.bing.com", "th.bing.com", "r.bing.net"],
    "yahoo": [
        "yahoo.com",
        "it.yahoo.com",
        "uk.news.yahoo.com",
        "r.search.yahoo.com",
        "news.search.yahoo.com",
        "yahoo.co.jp",
        "news.yahoo.co.jp",
        "yahoo.it",
        "s.yimg.com",
    ],
    "brave": ["brave.com", "search.brave.com", "imgs.search.brave.com"],
}
"""Each engine's hosts: each one owned by that engine and no other."""

NOBODYS = [
    # publishers whose names merely hold an engine's
    "googleblog.example",
    "notgoogle.com",
    "google-news.example",
    "google.com.evil.org",
    "notyahoo.com",
    "yahoo-finance-fans.example",
    "bravenewworld.example",
    "bingo.com",
    # a private-section suffix: a blog on blogspot.com, whatever its name
    "google.blogspot.com",
    "yahoo.blogspot.com",
    # other publishers, Microsoft's news site among them
    "msn.com",
    "www.msn.com",
    "news.example.co.uk",
    "duckduckgo.com",
    # no public suffix, an IP address, a bare suffix
    "127.0.0.1",
    "localhost",
    "engine.example",
    "[::1]",
    "::1",
    "co.uk",
    "com",
    # not host names at all
    "",
    " ",
    ".",
    "www.google.com:443",
    "https://www.google.com/",
    "google..com",
    "www google.com",
]


@pytest.mark.parametrize(("engine", "host"), [(engine, host) for engine, hosts in OWNED.items() for host in hosts])
def test_each_engines_hosts_are_its_own_and_no_other_engines(engine, host):
    assert RULES[engine].owns(host)
    assert owns(engine, host)
    assert {name for name in RULES if owns(name, host)} == {engine}
    assert any_engine_owns(host)


@pytest.mark.parametrize("host", NOBODYS)
def test_publishers_and_garbage_are_no_engines(host):
    assert [name for name in RULES if owns(name, host)] == []
    assert not any_engine_owns(host)


def test_hosts_are_compared_in_any_case_and_with_a_trailing_dot():
    assert owns("google", "WWW.Google.DE.")
    assert owns("yahoo", "UK.News.Yahoo.COM")
    assert owns("bing", " cn.bing.com. ")
    assert not owns("google", "www.google.de..")


@pytest.mark.parametrize("garbage", [None, 42, b"www.google.com", ["google.com"]])
def test_what_is_not_a_string_is_nobodys(garbage):
    assert registered_domain(garbage) == ("", "")
    assert not owns("google", garbage)
    assert not any_engine_owns(garbage)


def test_an_engine_without_a_rule_owns_nothing():
    assert not owns("duckduckgo", "duckduckgo.com")
    assert not owns("", "www.google.com")
    assert not DomainRule().owns("www.google.com")


@pytest.mark.parametrize(
    ("host", "expected"),
    [
        ("www.google.com.ng", ("google", "com.ng")),
        ("news.google.co.uk", ("google", "co.uk")),
        ("uk.news.yahoo.com", ("yahoo", "com")),
        ("google.blogspot.com", ("blogspot", "com")),  # ICANN suffixes only
        ("about.google", ("about", "google")),
        ("Example.COM.", ("example", "com")),
        ("localhost", ("", "")),
        ("127.0.0.1", ("", "")),
        ("engine.example", ("", "")),
        ("co.uk", ("", "")),
    ],
)
def test_the_registrable_domain(host, expected):
    assert registered_domain(host) == expected


def test_every_fixed_domain_of_a_rule_is_a_registrable_domain():
    # a subdomain there ("search.brave.com") would never match anything
    fixed = [domain for rule in RULES.values() for domain in rule.domains]
    assert fixed and all(".".join(registered_domain(domain)) == domain for domain in fixed)
    suffixes = [suffix for rule in RULES.values() for suffix in rule.tlds]
    assert suffixes and all(registered_domain(f"www.{suffix}") == ("www", suffix) for suffix in suffixes)


def test_every_engine_has_its_rule():
    assert set(RULES) == set(ENGINES)
    for name in ENGINES:
        cls = engine_class(name)
        assert cls.domains is RULES[name]
        assert cls.owns_host(OWNED[name][0]) and not cls.owns_host("googleblog.example")
        assert cls("https://engine.example").owns_host(OWNED[name][-1])


def test_the_suffix_list_is_the_bundled_snapshot_never_fetched(monkeypatch):
    def no_network(*args, **kwargs):
        raise AssertionError("tldextract tried the network")

    monkeypatch.setenv("TLDEXTRACT_PUBLIC_SUFFIX_LIST_URLS", "https://publicsuffix.invalid/list.dat")
    monkeypatch.setattr(socket, "create_connection", no_network)
    monkeypatch.setattr(socket.socket, "connect", no_network)
    monkeypatch.setattr(domains, "_extractor", domains._extractor.__wrapped__)  # a fresh extractor each call
    domains._registered.cache_clear()
    try:
        assert registered_domain("www.google.com.ng") == ("google", "com.ng")
        assert owns("yahoo", "yahoo.co.jp")
    finally:
        domains._registered.cache_clear()


# --- the redirectors on the engines' hosts -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("https://www.google.com.ng/url?q=https://news.example/ng/story&sa=U&ved=1", "https://news.example/ng/story"),
        ("https://www.google.cat/url?url=https%3A%2F%2Fnews.example%2Fa%3Futm_source%3Dg", "https://news.example/a"),
        ("https://images.google.com.au/url?q=https://news.example/b", "https://news.example/b"),
        ("https://r.search.yahoo.com/_ylt=A/RU=https%3a%2f%2fnews.example%2fc/RK=2/RS=x-", "https://news.example/c"),
        ("https://r.search.yahoo.co.jp/_ylt=A/RU=https%3a%2f%2fnews.example%2fd/RK=2/RS=x-", "https://news.example/d"),
    ],
)
def test_redirectors_unwrap_on_every_country_host(url, expected):
    assert normalize_url(url) == expected
    assert normalize_url(expected) == expected


@pytest.mark.parametrize(
    "url",
    [
        "https://google.blogspot.com/url?q=https%3A%2F%2Fnews.example%2F",
        "https://googleblog.example/url?q=https%3A%2F%2Fnews.example%2F",
        "https://www.gstatic.com.evil.example/url?q=https%3A%2F%2Fnews.example%2F",
        "https://r.search.notyahoo.com/_ylt=A/RU=https:%2F%2Fnews.example%2F/RK=2/RS=x-",
        "https://it.yahoo.com/_ylt=A/RU=https:%2F%2Fnews.example%2F/RK=2/RS=x-",  # Yahoo's, but not r.search
    ],
)
def test_redirectors_are_not_unwrapped_off_the_engines_redirector_hosts(url):
    assert normalize_url(url) == url
