"""The rule for a topic name, wherever a name enters (``scrapy topics add``, the config's ``topics``, ``-a topics=``).

A name (trimmed first, as every entry point trims it) is refused when

* it is **empty**: nothing but spaces (or the invisible joiners below);
* it holds a **control or invisible formatting character**: Unicode categories ``Cc`` (tab, newline, NUL, the C1
  controls…), ``Cf`` (zero-width space, byte-order mark, soft hyphen, the direction marks and overrides that
  reorder a log line…), ``Zl`` / ``Zp`` (line and paragraph separators) and ``Cs`` (a lone surrogate, which
  cannot even be written as UTF-8). Two ``Cf`` characters are allowed: the zero-width non-joiner and joiner
  (U+200C, U+200D), which Persian and Indic spellings and emoji sequences need. Spaces of every kind (``Zs``:
  the no-break space, the ideographic space) are visible, and allowed inside a name;
* its **results URL would be longer than the crawler accepts**: Scrapy's ``URLLENGTH_LIMIT`` (2083 by default;
  0 turns the limit off), for the engine's results URL at its configured ``base_url``, on the longest of the pages
  the crawler asks for (``scraper.max_pages``). Scrapy's ``UrlLengthMiddleware`` would drop such a request with
  an INFO line.

:func:`name_problem` / :func:`url_problem` / :func:`topic_problem` say what is wrong with one name (None when
nothing is); :func:`check_topics` raises :class:`TopicsRefused` naming each refused topic (shortened by
:func:`shown`: a 5,000-character name is never printed whole), the engine and the limit.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from scrapy import Request
from scrapy.settings import default_settings

from topicstreams.engines import Engine, make_engine

DEFAULT_URL_LIMIT: int = default_settings.URLLENGTH_LIMIT
"""Scrapy's default ``URLLENGTH_LIMIT``, where no crawler's settings are at hand."""

REFUSED_CATEGORIES = frozenset({"Cc", "Cf", "Zl", "Zp", "Cs"})
ALLOWED_FORMAT = frozenset({"\u200c", "\u200d"})
"""Zero-width non-joiner and joiner: spelling, not noise."""

CHARACTER_NAMES = {"\t": "a tab", "\n": "a newline", "\r": "a carriage return", "\x00": "a NUL byte"}

SHOWN_HEAD, SHOWN_TAIL = 40, 12
"""How much of a long name a message shows: its first and last characters."""


def shown(name: str, longest: int = 60) -> str:
    """The name for a message: quoted with its invisible characters escaped; past ``longest`` characters, its
    first and last ones and its length."""
    if len(name) <= max(longest, SHOWN_HEAD + SHOWN_TAIL):
        return repr(name)
    return f"{name[:SHOWN_HEAD] + '…' + name[-SHOWN_TAIL:]!r} ({len(name):,} characters)"


def describe(char: str) -> str:
    code = f"U+{ord(char):04X}"
    name = CHARACTER_NAMES.get(char) or unicodedata.name(char, None)
    return f"{code}, {name}" if name else code


def name_problem(name: str) -> str | None:
    """What is wrong with ``name`` itself (empty, a control character), or None."""
    if not name.strip().strip("".join(ALLOWED_FORMAT)).strip():
        return "the name is empty: a topic needs at least one visible character"
    for position, char in enumerate(name, 1):
        category = unicodedata.category(char)
        if category in REFUSED_CATEGORIES and char not in ALLOWED_FORMAT:
            kind = "a control character" if category == "Cc" else "an invisible formatting character"
            return (
                f"it holds {kind} ({describe(char)}) at position {position}: tabs, newlines and other control "
                "or invisible formatting characters are not allowed in a topic name"
            )
    return None


def pages_to_check(max_pages: int) -> list[int]:
    """The pages whose URLs can be the longest: the first (some engines give it another path), the second and
    the last (a page's URL grows with the digits of its number)."""
    return sorted({0, 1, max_pages - 1} & set(range(max(1, max_pages))))


def results_url_length(engine: Engine, topic: str, page: int) -> int:
    """The length of the URL Scrapy requests for ``topic``'s page ``page`` (after Scrapy's own escaping)."""
    return len(Request(engine.results_url(topic, page)).url)


def url_problem(name: str, engine: Engine, *, limit: int = DEFAULT_URL_LIMIT, max_pages: int = 1) -> str | None:
    """Whether ``name``'s results URL on ``engine`` passes ``limit`` on any page the crawler asks for, or None."""
    if limit <= 0:  # URLLENGTH_LIMIT = 0: Scrapy's UrlLengthMiddleware is off
        return None
    pages = pages_to_check(max_pages)
    length, page = max((results_url_length(engine, name, page), page) for page in pages)
    if length <= limit:
        return None
    room = limit - max(results_url_length(engine, "", page) for page in pages)
    return (
        f"its {engine.name} results URL would be {length:,} characters long (page {page + 1}), over the "
        f"{limit:,} the crawler accepts (Scrapy's URLLENGTH_LIMIT): the name may have at most {max(0, room):,} "
        "plain letters or digits (any other character takes up to 12 in the URL)"
    )


def topic_problem(
    name: str, engines: Iterable[Engine] = (), *, limit: int = DEFAULT_URL_LIMIT, max_pages: int = 1
) -> str | None:
    """What is wrong with ``name`` as a topic of ``engines`` (the first problem found), or None."""
    problem = name_problem(name)
    if problem is not None:
        return problem
    for engine in engines:
        problem = url_problem(name, engine, limit=limit, max_pages=max_pages)
        if problem is not None:
            return problem
    return None


class TopicsRefused(ValueError):
    """Topic names that break the rule: ``refused`` is a list of (name, problem)."""

    def __init__(self, refused: Sequence[tuple[str, str]]) -> None:
        self.refused = list(refused)
        super().__init__("\n".join(refusal(name, problem) for name, problem in self.refused))


def refusal(name: str, problem: str) -> str:
    return f"topic {shown(name)} is refused: {problem}"


def check_topics(
    names: Iterable[str], engines: Iterable[Engine] = (), *, limit: int = DEFAULT_URL_LIMIT, max_pages: int = 1
) -> None:
    """Raise :class:`TopicsRefused` naming every name of ``names`` that breaks the rule."""
    engines = list(engines)
    refused = [
        (name, problem)
        for name in names
        if (problem := topic_problem(name, engines, limit=limit, max_pages=max_pages)) is not None
    ]
    if refused:
        raise TopicsRefused(refused)


def configured_engines(engines: Mapping[str, Any], names: Iterable[str] | None = None) -> list[Engine]:
    """The engines of the ``engines`` configuration mapping (``TOPICSTREAMS_ENGINES``) as configured (their
    ``base_url`` and ``freshness``): the named ones, or all of them."""
    return [make_engine(name, engines) for name in (engines if names is None else names) if name in engines]


def url_length_limit(settings: Any = None) -> int:
    """``URLLENGTH_LIMIT`` of ``settings`` (Scrapy settings or a plain mapping), else Scrapy's default."""
    if settings is None:
        return DEFAULT_URL_LIMIT
    getint: Callable[[str, int], int] | None = getattr(settings, "getint", None)
    if getint is not None:
        return getint("URLLENGTH_LIMIT", DEFAULT_URL_LIMIT)
    value = settings.get("URLLENGTH_LIMIT")
    return DEFAULT_URL_LIMIT if value is None else int(value)
