"""What a parser reads from one result, and the one list of the fields an item must carry (pure: no Scrapy).

An item goes from a results page to the store in three steps, and each requires some of its fields; all of them
are in :data:`REQUIRED_FIELDS`, the one list every check reads:

* :data:`~Need.RESULT` — what every result of an engine carries (:data:`REQUIRED_RESULT_FIELDS`): an item
  missing one is not valid (the parser has slipped), counted by ``page_parsed`` and the parser's health, and kept;
* :data:`~Need.KEPT` — what an item cannot go without (:data:`REQUIRED_TO_KEEP`): the normalize pipeline drops an
  item whose field is not text with something in it;
* :data:`~Need.STORED` — what a row of the store needs (:data:`REQUIRED_TO_STORE`): the store's writer refuses
  an item missing one (:func:`topicstreams.storage.writer.item_problem`).
"""

from dataclasses import dataclass
from enum import Enum


class Need(Enum):
    """A step of an item's way from a results page to the store that requires a field."""

    RESULT = "result"
    KEPT = "kept"
    STORED = "stored"


REQUIRED_FIELDS: dict[str, frozenset[Need]] = {
    "news_id": frozenset({Need.STORED}),  # set by the normalize pipeline, from the normalized URL
    "url": frozenset({Need.RESULT, Need.KEPT, Need.STORED}),
    "title": frozenset({Need.RESULT, Need.KEPT}),
    "source": frozenset({Need.RESULT}),
    "published_at": frozenset({Need.RESULT}),
    "topic": frozenset({Need.STORED}),  # set by the reader, as ``engine``
    "engine": frozenset({Need.STORED}),
}
"""Each field an item must carry, and the steps that require it (see the module docstring)."""


def required_for(need: Need) -> tuple[str, ...]:
    """The fields ``need`` requires, in the order of :data:`REQUIRED_FIELDS`."""
    return tuple(name for name, needs in REQUIRED_FIELDS.items() if need in needs)


REQUIRED_RESULT_FIELDS = required_for(Need.RESULT)
"""The fields every result of an engine carries: an item missing one is not valid (the parser has slipped)."""

REQUIRED_TO_KEEP = required_for(Need.KEPT)
"""The fields without which the normalize pipeline drops an item."""

REQUIRED_TO_STORE = required_for(Need.STORED)
"""The fields without which the store's writer refuses an item."""


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
