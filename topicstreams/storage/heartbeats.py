"""When a status row is stale: the one rule of every row a running crawl keeps writing (an engine's
``engine_status``, a pair's ``route_status``).

A crawl writes its rows at least every heartbeat (:data:`HEARTBEAT`, or the ``heartbeat_seconds`` the row keeps); a
row not written for :data:`STALE_HEARTBEATS` of them has no running crawl behind it (:func:`stale_after`).
"""

from __future__ import annotations

from datetime import timedelta

HEARTBEAT = 15.0
"""Seconds after which a running crawl writes its engine's row again, even without a response (the health
extension's heartbeat: a cooling engine gets none), unless the row says otherwise (``heartbeat_seconds``)."""

STALE_HEARTBEATS = 3
"""Heartbeats a row may miss before it is stale: no running crawl is behind it."""


def stale_after(heartbeat_seconds: float | None) -> timedelta:
    """How long a row written every ``heartbeat_seconds`` (None: :data:`HEARTBEAT`) may go unwritten before it is
    stale: :data:`STALE_HEARTBEATS` of its heartbeats."""
    return timedelta(seconds=STALE_HEARTBEATS * (heartbeat_seconds or HEARTBEAT))
