"""Parser health: whether the engine's parser still reads what its pages carry. Pure.

A separate signal from the health score (which measures hostility): a redesign that breaks the parser loads
every page fine, so blocks never show it. Over the same window of responses, it is the share of **result
pages** (pages that carry results: ``ok`` pages other than "no results", and pages the parser failed on) that
yielded items, times the share of items that carry every required field
(:data:`topicstreams.engines.results.REQUIRED_RESULT_FIELDS`), on 0–100. Its reasons name what slipped:

* ``parse error`` — the parser raised on a page;
* ``pages without items`` — pages with result items yielded none;
* ``missing <field>`` — items lack a required field, one reason per field, in the fields' order.
"""

from __future__ import annotations

from collections.abc import Mapping

from topicstreams.engines.results import REQUIRED_RESULT_FIELDS

PARSE_ERROR_REASON = "parse error"
NO_ITEMS_REASON = "pages without items"


def missing_reason(field: str) -> str:
    return f"missing {field}"


def parser_score(
    result_pages: int,
    yielding_pages: int,
    parse_errors: int,
    items: int,
    valid_items: int,
    missing: Mapping[str, int] | None = None,
) -> tuple[int | None, list[str]]:
    """The parser score (None without a result page) and its reasons."""
    if result_pages <= 0:
        return None, []
    page_share = min(1.0, yielding_pages / result_pages)
    item_share = min(1.0, valid_items / items) if items else 0.0
    reasons = []
    if parse_errors:
        reasons.append(PARSE_ERROR_REASON)
    if yielding_pages + parse_errors < result_pages:
        reasons.append(NO_ITEMS_REASON)
    missing = missing or {}
    reasons += [missing_reason(field) for field in REQUIRED_RESULT_FIELDS if missing.get(field)]
    return round(100 * page_share * item_share), reasons
