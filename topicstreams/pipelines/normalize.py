"""URL normalization and the news id (being written)."""

import hashlib


def news_id(normalized_url: str) -> str:
    """The id of a news article: the first 32 hex digits of the SHA-256 of its normalized URL."""
    return hashlib.sha256(normalized_url.encode("utf-8")).hexdigest()[:32]
