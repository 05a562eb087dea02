"""The spider arguments every engine takes (``-a topics=a,b``, ``-a once=1``), read the same way everywhere.

:func:`spider_arguments` reads them and refuses what it does not understand (:class:`ArgumentRefused`, whose
message names the argument, what was given and what is accepted): an unknown name (``-a onec=1``) or a ``once`` that
is not one of CONTRACT.md's words. The spider reads its arguments through it (so that every way of running it,
Scrapyd's jobs included, refuses the same), and the ``crawl`` and ``crawlall`` commands call it first, to refuse in
one line with exit 2 before any crawler or browser starts.

Names beginning with ``_`` are a scheduler's own and are let through: Scrapyd passes ``_job`` (and ``_version``) to
every job as spider arguments.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from topicstreams.engines.base import Engine
from topicstreams.engines.topic_names import TopicsRefused, check_topics

YES_NO = {"1": True, "true": True, "yes": True, "0": False, "false": False, "no": False}
"""The words of a yes/no argument (``once``), case aside (CONTRACT.md, "Truth")."""

TOPICS, ONCE = "topics", "once"
SPIDER_ARGUMENTS = (TOPICS, ONCE)
"""The arguments every engine spider takes."""

NO_TOPICS = (
    "-a topics= names no topic: give at least one (-a topics=a,b), or leave the argument out to crawl the active "
    "topics of the table"
)


class ArgumentRefused(ValueError):
    """A spider or command argument that is not understood: the message names it, what was given, what is accepted."""


def split_names(value: str) -> list[str]:
    """A comma-separated argument (``topics``, ``engines``): each trimmed, blanks and repeats dropped."""
    seen: dict[str, None] = {}
    for name in value.split(","):
        if name.strip():
            seen.setdefault(name.strip(), None)
    return list(seen)


def listed(words: Sequence[str], last: str = "or") -> str:
    """``a, b or c``."""
    return f"{', '.join(words[:-1])} {last} {words[-1]}" if len(words) > 1 else "".join(words)


def yes_or_no(name: str, value: str | bool) -> bool:
    """A yes/no spider argument: ``1``, ``true``, ``yes`` (True) or ``0``, ``false``, ``no`` (False), case and
    surrounding blanks aside; anything else is refused naming ``-a NAME``."""
    if isinstance(value, bool):  # given by a program (``from_crawler(crawler, once=True)``), not a command line
        return value
    word = str(value).strip().lower()
    if word not in YES_NO:
        raise ArgumentRefused(f"-a {name}: got {str(value)!r}, expected {listed(list(YES_NO))}")
    return YES_NO[word]


def refuse_unknown(names: Iterable[str], accepted: Sequence[str]) -> None:
    """Refuse the first of ``names`` (``-a`` names) that is not ``accepted`` (a scheduler's ``_…`` names aside)."""
    for name in names:
        if name in accepted or name.startswith("_"):
            continue
        guess = difflib.get_close_matches(name.lower(), accepted, n=1)
        hint = f" (did you mean {guess[0]}?)" if guess else ""
        raise ArgumentRefused(f"-a {name}: not an argument of this crawl: expected {listed(list(accepted))}{hint}")


@dataclass(frozen=True)
class SpiderArguments:
    """The engine spiders' arguments, read: ``topics`` split (None when not given), ``once`` a bool."""

    topics: list[str] | None = None
    once: bool = False


def spider_arguments(given: Mapping[str, Any], accepted: Sequence[str] = SPIDER_ARGUMENTS) -> SpiderArguments:
    """The spider arguments ``given`` (``-a NAME=VALUE`` as a mapping), read; :class:`ArgumentRefused` for a name
    that is not ``accepted`` or a value that is not understood. The topic-name rule is :func:`topics_refusal`'s
    (it needs the crawl's settings)."""
    refuse_unknown(given, accepted)
    topics = given.get(TOPICS)
    return SpiderArguments(
        topics=split_names(str(topics)) if topics is not None else None,
        once=yes_or_no(ONCE, given[ONCE]) if ONCE in given else False,
    )


def topics_refusal(topics: Sequence[str] | None, engine: Engine, *, limit: int, max_pages: int) -> str | None:
    """Why ``-a topics=`` (``topics``, split; None when not given) cannot be crawled by ``engine`` (it names no
    topic, or a name that breaks the topic-name rule of :mod:`topicstreams.engines.topic_names` under the
    crawl's URL ``limit`` and ``max_pages``), or None when it can."""
    if topics is None:
        return None
    if not topics:
        return NO_TOPICS
    try:
        check_topics(topics, [engine], limit=limit, max_pages=max_pages)
    except TopicsRefused as exc:
        return f"-a topics: {exc}"
    return None
