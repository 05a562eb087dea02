"""What a search means, pure: an article's words (folded: no accents, lower case) and a person's search parsed into
words and phrases. The storage layer turns a parsed search into SQL (:mod:`topicstreams.storage.search`)."""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

MAX_QUERY_WORDS = 32
"""More words than this in one search are refused (each costs the index a lookup)."""

_WORD = re.compile(r"[^\W_]+")
_PHRASE = re.compile(r'"([^"]*)"')


class SearchError(ValueError):
    """A search text the index cannot use; the message says why, for the person who typed it."""


def fold(value: str) -> str:
    """*value* without accents, lower-cased (``Émile Zola`` → ``emile zola``)."""
    decomposed = unicodedata.normalize("NFKD", value)
    return "".join(char for char in decomposed if not unicodedata.combining(char)).lower()


def words(value: str | None) -> list[str]:
    """The words of *value*, folded."""
    return _WORD.findall(fold(value)) if value else []


def document(*fields: str | None) -> str:
    """The searchable text of an article: the words of its fields, folded, separated by spaces."""
    return " ".join(word for value in fields for word in words(value))


@dataclass(frozen=True)
class SearchQuery:
    """A parsed search: words that must all be there, and phrases that must appear as such."""

    words: tuple[str, ...]
    phrases: tuple[tuple[str, ...], ...]

    @classmethod
    def parse(cls, text_: str) -> SearchQuery:
        """Parse what a person typed; :class:`SearchError` when nothing in it can be searched for."""
        phrases: list[tuple[str, ...]] = []
        loose: list[str] = []
        position = 0
        for match in _PHRASE.finditer(text_):
            loose.extend(words(text_[position : match.start()]))
            phrase = tuple(words(match[1]))
            if len(phrase) == 1:
                loose.append(phrase[0])
            elif phrase:
                phrases.append(phrase)
            position = match.end()
        loose.extend(words(text_[position:]))  # a lone quote is left here, and is no word
        unique = tuple(dict.fromkeys(loose))
        count = len(unique) + sum(len(phrase) for phrase in phrases)
        if not count:
            raise SearchError("nothing to search for: no letters or digits")
        if count > MAX_QUERY_WORDS:
            raise SearchError(f"too many words: {count}, at most {MAX_QUERY_WORDS}")
        return cls(unique, tuple(dict.fromkeys(phrases)))
