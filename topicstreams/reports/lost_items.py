"""The health report's account of lost items: per node, the items its crawls had to stop without storing or
journaling in the last 7 days (:mod:`topicstreams.storage.store_losses`).

``scrapy health --json`` gives every node ``"lost": {"items": N, "last_at": ISO or null}`` (0 and null when none);
the table gets one line per node that lost items, ``lost: …`` (``lost on NODE: …`` for every node).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from topicstreams.reports.utc_times import utc_text
from topicstreams.storage.store_losses import LOST_WINDOW_DAYS, Lost


def lost_json(lost: Lost | None) -> dict[str, Any]:
    """``{"items": N, "last_at": ISO or null}``."""
    lost = lost or Lost()
    return {"items": lost.items, "last_at": utc_text(lost.last_at)}


def with_lost(report: dict[str, Any], lost: Mapping[str, Lost]) -> dict[str, Any]:
    """The JSON report (one node's object, or ``{"nodes": [...]}``) with each node's ``"lost"``."""
    for node in report.get("nodes", [report]):
        node["lost"] = lost_json(lost.get(node["node"]))
    return report


def lost_lines(lost: Mapping[str, Lost], all_nodes: bool, shown: Any = str) -> str:
    """One line per node that lost items (``shown`` makes a node id safe for a terminal), each after a newline;
    "" when none did."""
    lines = []
    for node, each in sorted(lost.items()):
        if not each.items:
            continue
        where = f" on {shown(node)}" if all_nodes else ""
        lines.append(
            f"\nlost{where}: {each.items} item(s) in the last {LOST_WINDOW_DAYS} days, the last at "
            f"{utc_text(each.last_at)}: crawls stopped with them neither stored nor journaled (a full journal disk "
            f"while the database was away; see the crawl's log)"
        )
    return "".join(lines)
