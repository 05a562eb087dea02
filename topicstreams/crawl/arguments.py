"""The spider arguments every engine takes (``-a topics=a,b``, ``-a once=1``), read the same way everywhere."""

from __future__ import annotations

from collections.abc import Sequence

from topicstreams.engines.base import Engine
from topicstreams.engines.topic_names import TopicsRefused, check_topics

TRUE_WORDS = frozenset({"1", "true", "yes", "on"})


def split_names(value: str) -> list[str]:
    """A comma-separated argument (``topics``, ``engines``): each trimmed, blanks and repeats dropped."""
    seen: dict[str, None] = {}
    for name in value.split(","):
        if name.strip():
            seen.setdefault(name.strip(), None)
    return list(seen)


def is_true(value: str | bool) -> bool:
    """A yes/no argument (``once=1``, ``true``, ``yes``, ``on``)."""
    return value is True or str(value).strip().lower() in TRUE_WORDS


def topics_refusal(topics: Sequence[str] | None, engine: Engine, *, limit: int, max_pages: int) -> str | None:
    """Why ``-a topics=`` (``topics``, split; None when not given) cannot be crawled by ``engine`` (it names no
    topic, or a name that breaks the topic-name rule of :mod:`topicstreams.engines.topic_names` under the
    crawl's URL ``limit`` and ``max_pages``), or None when it can."""
    if topics is None:
        return None
    if not topics:
        return (
            "-a topics= names no topic: give at least one (-a topics=a,b), or leave the argument out to "
            "crawl the active topics of the table"
        )
    try:
        check_topics(topics, [engine], limit=limit, max_pages=max_pages)
    except TopicsRefused as exc:
        return f"-a topics: {exc}"
    return None
