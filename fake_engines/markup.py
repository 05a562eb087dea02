"""Small pieces every fake engine's markup uses: escaping, stable tokens, filler CSS."""

from __future__ import annotations

import base64
import html
from functools import lru_cache

from fake_engines.catalogue import digest, number


def esc(text: object) -> str:
    """``text`` escaped for HTML text and attribute values."""
    return html.escape(str(text), quote=True)


def token(*parts: object, length: int = 22) -> str:
    """A stable URL-safe token from ``parts`` (ids, ``ved``s, nonces…), at most 43 characters."""
    raw = bytes.fromhex(digest("token", *parts))
    return base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")[:length]


@lru_cache(maxsize=8)
def filler_css(engine: str, rules: int, prefix: str) -> str:
    """``rules`` generated style rules, standing in for the weight of an engine's inline CSS."""
    lines = []
    for i in range(rules):
        n = number("css", engine, i)
        lines.append(
            f".{prefix}{digest('css', engine, i)[:7]}{{margin:{n % 17}px {n % 11}px;padding:{n % 7}px {n % 5}px;"
            f"color:#{n % 0xFFFFFF:06x};line-height:{16 + n % 9}px;border-radius:{n % 12}px}}"
        )
    return "\n".join(lines)
