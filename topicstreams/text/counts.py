"""Counts and lengths of time as a person says them: ``1 topic``, ``2 topics``, ``1 entry``, ``1 min 56 s``."""

from __future__ import annotations

IRREGULAR = {"entry": "entries", "failure": "failures"}
"""Plurals that are not the word and an ``s``."""


def counted(count: int, word: str) -> str:
    """``count`` and ``word``, singular for one and plural otherwise: ``1 topic``, ``0 topics``, ``3 entries``."""
    return f"{count} {word if count == 1 else IRREGULAR.get(word, word + 's')}"


def elapsed(seconds: float) -> str:
    """A length of time in whole seconds: ``45 s``, ``1 min 56 s``, ``2 h 5 min``."""
    whole = max(int(round(seconds)), 0)
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours} h {minutes} min" if minutes else f"{hours} h"
    if minutes:
        return f"{minutes} min {secs} s" if secs else f"{minutes} min"
    return f"{secs} s"
