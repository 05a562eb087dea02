"""Scraped text made inert before it goes into a message: titles, sources, snippets and links come from pages that
anyone can write, and a message is read by people and by chat services that act on what it says.

* :func:`plain` — for plain text (chat services, the JSON webhook, the text part of an e-mail, a terminal):
  control characters are dropped (newline and tab kept; ``\\r\\n`` and ``\\r`` become newlines), and so are the
  Unicode bidirectional overrides and isolates that make text read other than it is; mass mentions are
  neutralised by a zero-width space (U+200B) put right after the ``@`` of ``@everyone``, ``@here``, ``@channel``,
  ``@all``, ``@room`` (any case, also inside a word: Discord pings for ``x@everyone``), and right after the ``<`` of
  Slack's and Discord's mention syntax (``<!channel>``, ``<!here>``, ``<!everyone>``, ``<@U123>``, ``<@!123>``,
  ``<@&role>``, ``<#channel>``). What a person reads is unchanged; no service pings anyone for it. Applying it
  twice changes nothing more.
* :func:`html` — for HTML (e-mail): escaped, quotes too, with the same control characters dropped;
* :func:`http_link` — a URL that may become a link: only ``http``/``https`` with a host (never ``javascript:``,
  ``data:``, ``file:`` …), and nothing that could break out of an attribute or a line;
* :func:`html_link` — an ``<a>`` for an acceptable link, else the escaped label and the escaped URL as text;
* :func:`duration` — how long something lasted, as every message says it (``45 min``, ``7 h 30 min``, ``3 d 4 h``).
"""

from __future__ import annotations

import html as html_module
import re
import unicodedata
from urllib.parse import urlsplit

from topicstreams.text.scraped_text import BIDI_CONTROLS

ZWSP = "\u200b"
"""The zero-width space put into a mass mention: invisible to a reader, and no mention any more."""

MASS_MENTIONS = ("everyone", "here", "channel", "all", "room")
"""The words that, after an ``@``, call every member of a channel on some service (Discord, Slack, Mattermost,
Rocket.Chat, Matrix, Microsoft Teams)."""

_MASS_MENTION = re.compile("@(?=(?:" + "|".join(MASS_MENTIONS) + "))", re.IGNORECASE)
_MENTION_SYNTAX = re.compile(r"<(?=[!@#])")
"""Slack's ``<!channel>``/``<@U123>``/``<#C123>`` and Discord's ``<@123>``/``<@&role>``/``<#123>``."""

_BIDI_CONTROLS = frozenset(BIDI_CONTROLS + "\u200e\u200f\u061c")
"""The bidirectional controls no stored text carries (:data:`topicstreams.text.scraped_text.BIDI_CONTROLS`) and, in an
alert, the marks (LRM, RLM, ALM) too."""
_KEPT = frozenset("\n\t")
_NOT_IN_URLS = frozenset('"<>\\`')
"""Characters a URL never holds unencoded (RFC 3986) and that could end an attribute or start markup."""


def _dropped(char: str) -> bool:
    return (unicodedata.category(char) == "Cc" and char not in _KEPT) or char in _BIDI_CONTROLS


def without_controls(text: str) -> str:
    """``text`` with its line ends made ``\\n`` and its control characters (but newline and tab) and
    bidirectional overrides dropped."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    return "".join(char for char in text if not _dropped(char))


def plain(text: str) -> str:
    """``text`` made inert for a plain-text message (see the module docstring)."""
    text = without_controls(str(text))
    text = _MASS_MENTION.sub("@" + ZWSP, text)
    return _MENTION_SYNTAX.sub("<" + ZWSP, text)


def html(text: str) -> str:
    """``text`` as HTML text or attribute content: escaped (``&``, ``<``, ``>``, ``"``, ``'``), control
    characters dropped."""
    return html_module.escape(without_controls(str(text)), quote=True)


def http_link(url: str) -> str | None:
    """``url`` when it may be a link: scheme ``http`` or ``https``, a host, no whitespace, control or format
    character (bidirectional overrides), quote, angle bracket, backslash or backtick; else None."""
    if not isinstance(url, str):
        return None
    url = url.strip()
    if not url or any(
        char.isspace() or char in _NOT_IN_URLS or unicodedata.category(char) in ("Cc", "Cf") for char in url
    ):
        return None
    try:
        parts = urlsplit(url)
        host = parts.hostname
        _ = parts.port  # a port that is no number raises ValueError
    except ValueError:
        return None
    if parts.scheme.lower() not in ("http", "https") or not host:
        return None
    return url


def html_link(url: str, label: str) -> str:
    """An HTML link to ``url`` labelled ``label`` (both escaped) when ``url`` may be a link; else the label and
    the URL as escaped text, so that a reader still sees where it pointed."""
    link = http_link(url)
    if link is None:
        return html(label) if not url else f"{html(label)} ({html(url)})"
    return f'<a href="{html(link)}">{html(label)}</a>'


def duration(seconds: float) -> str:
    """``seconds`` for a person: ``45 min``, ``7 h``, ``7 h 30 min``, ``3 d 4 h``."""
    minutes = int(round(seconds / 60))
    if minutes < 60:
        return f"{max(minutes, 1)} min"
    hours, minutes = divmod(minutes, 60)
    if hours < 24:
        return f"{hours} h" + (f" {minutes} min" if minutes else "")
    days, hours = divmod(hours, 24)
    return f"{days} d" + (f" {hours} h" if hours else "")
