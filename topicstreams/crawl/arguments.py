"""The spider arguments every engine takes (``-a topics=a,b``, ``-a once=1``), read the same way everywhere."""

from __future__ import annotations

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
