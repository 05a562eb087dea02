"""Scraped text made inert (topicstreams/alerts/text.py): mass mentions, control characters, HTML, links."""

from __future__ import annotations

import re
import unicodedata

import pytest
from hypothesis import given
from hypothesis import strategies as st

from topicstreams.alerts.inert_text import ZWSP, html, html_link, http_link, plain, without_controls

MENTION = re.compile(r"@(everyone|here|channel|all|room)|<[!@#]", re.IGNORECASE)
"""What a chat service would act on: a mass mention, or Slack's and Discord's mention syntax."""

HOSTILE = [
    "@everyone breaking news",
    "@here",
    "@Channel please",
    "hey @ALL",
    "@room",
    "x@everyone",
    "@@everyone",
    "<!channel> <!here> <!everyone>",
    "<!subteam^S123|devs>",
    "<@U12345>",
    "<@!1234>",
    "<@&987>",
    "<#C0123>",
    "@\u200beveryone already",
    "<\u200b!channel>",
]


@pytest.mark.parametrize("text", HOSTILE)
def test_no_mention_survives_plain(text):
    assert not MENTION.search(plain(text))


@pytest.mark.parametrize(
    ("text", "inert"),
    [
        ("@everyone look", f"@{ZWSP}everyone look"),
        ("<!channel> now", f"<{ZWSP}!channel> now"),
        ("mail me at a@b.example", "mail me at a@b.example"),  # an address is no mass mention
        ("5 < 6 and 7 > 3 & more", "5 < 6 and 7 > 3 & more"),  # plain text is not HTML
    ],
)
def test_plain_changes_only_what_would_ping(text, inert):
    assert plain(text) == inert


def test_plain_keeps_newlines_and_tabs_and_drops_other_controls():
    hostile = "line one\r\nline two\rline three\ttabbed\x00\x07\x1b[31mred\x1b[0m\x7f\x85\u202egnp.exe\u2066x"
    assert plain(hostile) == "line one\nline two\nline three\ttabbed[31mred[0mgnp.exex"


@given(st.text())
def test_plain_leaves_no_mention_and_no_control_character(text):
    out = plain(text)
    assert not MENTION.search(out)
    assert all(char in "\n\t" or unicodedata.category(char) != "Cc" for char in out)
    assert "\u202e" not in out and "\r" not in out


@given(st.text())
def test_plain_is_idempotent_and_only_adds_zero_width_spaces(text):
    out = plain(text)
    assert plain(out) == out
    assert out.replace(ZWSP, "") == without_controls(text).replace(ZWSP, "")


@given(st.text(alphabet=st.sampled_from(list("@<!#&everyonhcaltm \n")), max_size=40))
def test_plain_of_mention_like_text(text):
    assert not MENTION.search(plain(text))


@pytest.mark.parametrize(
    ("text", "escaped"),
    [
        ('<script>alert("x")</script>', "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;"),
        ("Tom & Jerry's", "Tom &amp; Jerry&#x27;s"),
        ('"><img src=x onerror=alert(1)>', "&quot;&gt;&lt;img src=x onerror=alert(1)&gt;"),
        ("a\x00b\x1bc", "abc"),
    ],
)
def test_html_escapes_everything_that_is_markup(text, escaped):
    assert html(text) == escaped


@given(st.text())
def test_html_leaves_no_markup(text):
    out = html(text)
    assert not set(out) & set("<>\"'")
    assert "&" not in out.replace("&amp;", "").replace("&lt;", "").replace("&gt;", "").replace("&quot;", "").replace(
        "&#x27;", ""
    )


@pytest.mark.parametrize(
    "url",
    [
        "https://news.example/a?b=c#d",
        "http://127.0.0.1:8080/x",
        "HTTPS://News.Example/",
        "http://[::1]/a",
    ],
)
def test_http_and_https_urls_are_links(url):
    assert http_link(url) == url


@pytest.mark.parametrize(
    "url",
    [
        "javascript:alert(1)",
        "JaVaScRiPt:alert(1)",
        " javascript:alert(1)",
        "data:text/html,<script>x</script>",
        "vbscript:msgbox",
        "file:///etc/passwd",
        "ftp://files.example/x",
        "mailto:a@b.example",
        "//news.example/a",
        "/relative/path",
        "https://",
        "http:///path-only",
        "https://news.example/a b",
        "https://news.example/\nx",
        'https://news.example/"><script>',
        "https://news.example/\u202e",
        "http://[::1/",
        "http://host:99999999/",
        "https://good.example\\@evil.example/",
        "https://news.example/`x`",
        "",
        "   ",
        None,
        42,
    ],
)
def test_anything_else_is_no_link(url):
    assert http_link(url) is None


@given(st.text())
def test_a_link_is_always_http_or_https_with_a_host(text):
    link = http_link(text)
    if link is not None:
        assert link.lower().startswith(("http://", "https://"))
        assert not any(char.isspace() for char in link)


def test_html_link_escapes_the_label_and_refuses_other_schemes():
    assert html_link("https://news.example/?a=1&b=2", "<b>Big</b> news") == (
        '<a href="https://news.example/?a=1&amp;b=2">&lt;b&gt;Big&lt;/b&gt; news</a>'
    )
    shown = html_link("javascript:alert(1)", "click")
    assert "<a" not in shown and shown == "click (javascript:alert(1))"
    assert html_link("", "no link") == "no link"
