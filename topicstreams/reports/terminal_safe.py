"""Stored text made safe for a terminal line: what anyone who runs a crawl can choose (a node id) cannot garble it."""

from __future__ import annotations

import unicodedata

HIDDEN_CATEGORIES = frozenset({"Cc", "Cf", "Zl", "Zp", "Cs"})
"""Unicode categories a terminal does not print as themselves: controls (the ESC of an escape sequence, the
carriage return that rewrites a line), invisible formatting (the direction overrides that reorder it), line and
paragraph separators, lone surrogates. :func:`terminal_text` writes them as escapes."""

SHOWN_HEAD, SHOWN_TAIL = 48, 12
"""A text longer than :func:`terminal_text`'s ``longest`` shows its first and last characters."""


def terminal_text(text: str, longest: int | None = 64) -> str:
    """Stored text (a node id) for a terminal line: each character of :data:`HIDDEN_CATEGORIES` written as its Python
    escape (``\\x1b``, ``\\u202e``); past ``longest`` characters (None: no limit), cut in the middle with ``…``."""
    text = str(text)
    if longest is not None and len(text) > max(longest, SHOWN_HEAD + SHOWN_TAIL + 1):
        text = text[:SHOWN_HEAD] + "…" + text[-SHOWN_TAIL:]
    return "".join(repr(char)[1:-1] if unicodedata.category(char) in HIDDEN_CATEGORIES else char for char in text)
