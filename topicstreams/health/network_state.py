"""A node's network as its status rows tell it: down when every engine running on it fails to connect. Pure.

Each engine's ``engine_status`` row keeps when its current run of connection-level failures began
(``connection_failures_since``: no name resolution, connection refused, no route; None once it got any other
answer). :func:`judge_network` reads a node's rows of running engines — rows whose crawl stopped or went stale are
not a network in use — and says the network is **down** when at least :data:`MIN_ENGINES` of them are known and
every one is in such a run; ``since`` is when the last of them began failing (the moment it could first be told).
One engine alone cannot tell its own site from the node's network, so a node running one engine is never down.

The crawl's own watch (:class:`topicstreams.alerts.network.NetworkWatch`) applies the same rule to what its process
sees; readers (``scrapy health``, the web app) apply this one to the rows every process writes. While it holds, the
node's verdict is the network: no saturation is suspected (:func:`topicstreams.health.saturation.judge_saturation`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

MIN_ENGINES = 2
"""Engines that must be running on a node before its network can be judged down."""


@dataclass(frozen=True)
class NetworkState:
    down: bool
    since: datetime | None = None
    """When the last engine began failing to connect (None unless down)."""
    engines: tuple[str, ...] = ()
    """The running engines the verdict read, sorted."""


def judge_network(failing_since: Iterable[tuple[str, datetime | None]]) -> NetworkState:
    """The network of one node from its running engines: ``(engine, when its run of connection-level failures
    began, or None)``."""
    known = dict(failing_since)
    engines = tuple(sorted(known))
    starts = [since for since in known.values() if since is not None]
    if len(known) < MIN_ENGINES or len(starts) < len(known):
        return NetworkState(False, None, engines)
    return NetworkState(True, max(starts), engines)
