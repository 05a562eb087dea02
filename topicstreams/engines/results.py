"""What a parser reads from one result, and the fields every result must carry (pure: no Scrapy)."""

from dataclasses import dataclass

REQUIRED_RESULT_FIELDS = ("url", "title", "source", "published_at")
"""The fields every result of an engine carries: an item missing one is not valid (the parser has slipped)."""


@dataclass
class ParsedResult:
    """What a parser (an engine's own, or the structural fallback) reads from one result, before times are
    resolved."""

    url: str | None
    title: str | None
    source: str | None = None
    snippet: str | None = None
    time_text: str | None = None
    timestamp: str | None = None
