"""Small pieces the fake engines' markup shares: escaping, stable tokens, filler CSS, an unreachable asset host,
Google's (and Yahoo's) relative ages."""

from __future__ import annotations

import base64
import html
from functools import lru_cache

from fake_engines.catalogue import digest, number

INVALID_HOST = "http://assets.fake-engine.invalid"
"""A host that never resolves (``.invalid``): page weight that can never leave the machine (Google, Bing, Yahoo)."""


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


def relative_age(seconds: int) -> str:
    """What Google shows for an age: "1 minute ago", "14 minutes ago", "1 hour ago", "5 hours ago"."""
    minutes = max(1, seconds // 60)
    if minutes < 60:
        return "1 minute ago" if minutes == 1 else f"{minutes} minutes ago"
    hours = minutes // 60
    if hours < 24:
        return "1 hour ago" if hours == 1 else f"{hours} hours ago"
    days = hours // 24
    return "1 day ago" if days == 1 else f"{days} days ago"
