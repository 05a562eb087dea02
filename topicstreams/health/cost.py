"""Cost drift: what one valid record costs the engine, now and normally. Pure.

Per valid record (an item carrying every required field): the **attempts** (requests to the engine, blocks and
retries included), the **bytes** of rendered pages and the **browser seconds** spent on them. A window's cost
is compared with the baseline's (the engine's own history): the drift is their ratio, so 2.0 means a record
costs twice what it normally does — an engine starting to throttle, or pages growing, shows here before
the data thins. Reported by ``scrapy health --json``; not part of the health score.
"""

from __future__ import annotations

from typing import Any

COST_KEYS = ("attempts", "bytes", "browser_seconds")


def per_record(requests: int, bytes_: int, browser_seconds: float, valid_items: int) -> dict[str, float] | None:
    """The cost of one valid record; None without any valid record."""
    if valid_items <= 0:
        return None
    totals = {"attempts": requests, "bytes": bytes_, "browser_seconds": browser_seconds}
    return {key: round(totals[key] / valid_items, 3) for key in COST_KEYS}


def cost_drift(window: dict[str, float] | None, baseline: dict[str, float] | None) -> dict[str, Any]:
    """``{"window": …, "baseline": …, "drift": …}``: the costs per record and their ratios (None where unknown)."""
    drift = None
    if window is not None and baseline is not None:
        drift = {key: round(window[key] / baseline[key], 3) if baseline[key] else None for key in COST_KEYS}
    return {"window": window, "baseline": baseline, "drift": drift}
