"""Bounds on what one results page brings (``scraper.limits``), pure. The page reader
(:class:`~topicstreams.engines.reader.PageReader`) holds them and applies every one of them:

* ``page_bytes`` — a page whose body is larger is not read at all: a ``soft_block`` with the reason
  ``oversized`` (:func:`~topicstreams.engines.classify.oversized_verdict`);
* ``items_per_page`` — of a page with more result items, the first ones are read and kept, the others left out
  (no engine shows that many on one page: its layout has changed to match more than results, or the page is
  stuffed);
* ``title_chars`` — titles and sources are cut at this many characters, marked as cut (ending in "…", see
  :func:`~topicstreams.text.scraped_text.cut`); a source is a publisher's name, shorter than any title, so it
  shares the title's limit;
* ``snippet_chars`` — snippets, likewise.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from topicstreams.engines.results import ParsedResult
from topicstreams.text.scraped_text import cut


@dataclass(frozen=True)
class PageLimits:
    """``scraper.limits``: every value comes from the configuration (its defaults are ``defaults.yml``'s)."""

    items_per_page: int
    title_chars: int
    snippet_chars: int
    page_bytes: int

    def bounded(self, result: ParsedResult) -> ParsedResult:
        """``result`` with its title and source cut at ``title_chars`` and its snippet at ``snippet_chars``."""
        if not self.cut_fields(result):
            return result
        title, source, snippet = (cut(text, limit) if text else text for text, limit in self._fields(result))
        return replace(result, title=title, source=source, snippet=snippet)

    def cut_fields(self, result: ParsedResult) -> int:
        """How many of ``result``'s fields :meth:`bounded` cuts."""
        return sum(text is not None and len(text) > limit for text, limit in self._fields(result))

    def _fields(self, result: ParsedResult) -> tuple[tuple[str | None, int], ...]:
        return (
            (result.title, self.title_chars),
            (result.source, self.title_chars),
            (result.snippet, self.snippet_chars),
        )
