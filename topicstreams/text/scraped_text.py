"""Scraped text made fit to keep and to show, pure: what a title, a source or a snippet of a results page may not
carry, and how a text too long is cut.

Anyone can write a results page, so its text is hostile:

* :func:`clean_text` drops what no reader should get: control characters but tab and line breaks, lone surrogates
  and the non-characters U+FFFE and U+FFFF (a database refuses them: PostgreSQL stores no NUL, no database encodes a
  lone surrogate), and the Unicode bidirectional embeddings, overrides and isolates (U+202A–U+202E,
  U+2066–U+2069, :data:`BIDI_CONTROLS`), with which a text reads other than it is (``Harmless \\u202egpj.exe`` shows
  as "Harmless exe.jpg"). Surrounding white space goes too. The normalize pipeline stores text through it; the web
  app shows text through it again (:func:`without_bidi_controls`), for rows stored before it existed.
* :func:`cut` shortens a text to a number of characters, marked as cut: it then ends in :data:`CUT_MARK` ("…"),
  within the limit.
"""

from __future__ import annotations

import re

BIDI_CONTROLS = "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
"""The bidirectional embeddings and overrides (LRE, RLE, PDF, LRO, RLO) and isolates (LRI, RLI, FSI, PDI): they
change the order in which the characters after them are shown. The marks (LRM, RLM, ALM) are kept: they order no
strong character, and right-to-left text needs them."""

_BIDI = re.compile(f"[{BIDI_CONTROLS}]")
_UNKEPT = re.compile(f"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\ud800-\udfff\ufffe\uffff{BIDI_CONTROLS}]")
"""Every character :func:`clean_text` drops."""

CUT_MARK = "…"
"""What a cut text ends in."""


def without_bidi_controls(value: str) -> str:
    """``value`` without :data:`BIDI_CONTROLS`."""
    return _BIDI.sub("", value)


def clean_text(value: str) -> str:
    """``value`` without the characters no reader should get (see the module docstring) and surrounding white
    space. Applying it twice changes nothing more."""
    return _UNKEPT.sub("", value).strip()


def cut(value: str, limit: int) -> str:
    """``value`` when it has at most ``limit`` characters (``limit`` ≥ 1); else its first characters, trailing white
    space dropped, and :data:`CUT_MARK`, ``limit`` characters at most in all. Applying it twice changes nothing
    more."""
    if len(value) <= limit:
        return value
    return value[: max(limit - len(CUT_MARK), 0)].rstrip() + CUT_MARK
