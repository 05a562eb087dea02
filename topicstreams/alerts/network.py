"""The node's network verdict: when every engine of a node fails at once with connection-level errors (no name
resolution, connection refused, no route: :data:`topicstreams.engines.classify.CONNECTION_LEVEL`), it is the node's
network, not the engines. Pure.

:class:`NetworkWatch` is one per node and process (the engine crawlers of ``scrapy crawlall`` share it). It keeps,
per engine, when its current run of connection-level failures began (``failing_since``; None once it got any other
answer) and when it last got an answer that was not one (``answered_at``). Engines of other processes on the node
(separate Scrapyd jobs) count through their status rows (``engine_status.connection_failures_since``, with their
freshness), given with :meth:`NetworkWatch.other_processes`.

The verdict is **down** when at least :data:`MIN_ENGINES` engines are known on the node and every one of them is in
a run of connection-level failures. One engine alone cannot tell its own site from the node's network, so a node
running one engine is never judged down.

Holding back: the first connection-level failure of an engine comes before the others' — before the verdict can
form. So such a failure is held (:meth:`NetworkWatch.hold`) rather than scored: it is dropped when the verdict
turns down, and released into the engine's score once the network is seen to work (another engine of the node
answered after it) or after :data:`HOLD_SECONDS` without a verdict. While the verdict holds, the health extension
leaves those failures out of the engines' scores and stored windows (their class and cooldown stay), so nothing is
paused for the network. Nor does it count in a row for the engines' cooldowns
(:meth:`topicstreams.crawl.engine_state.EngineState.network_changed`), and no exit-IP saturation is told while the
network is down or failures are held (:meth:`NetworkWatch.in_doubt`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

MIN_ENGINES = 2
"""Engines that must be known on a node before its network can be judged down."""

HOLD_SECONDS = 90.0
"""How long a connection-level failure waits for the verdict before it is scored as the engine's own."""


@dataclass
class EngineNet:
    failing_since: float | None = None
    """When the engine's current run of connection-level failures began (None: its last answer was not one)."""
    reasons: set[str] = field(default_factory=set)
    answered_at: float | None = None
    """When it last got an answer that was not a connection-level failure."""


@dataclass(frozen=True)
class NetworkVerdict:
    down: bool
    engines: tuple[str, ...] = ()
    """The engines known on the node, sorted."""
    since: float | None = None
    """When the last of them began failing (the moment the verdict could first be made)."""
    reasons: tuple[str, ...] = ()


@dataclass
class Held:
    engine: str
    at: float
    sample: Any


class NetworkWatch:
    """The network verdict of one node as one process sees it (see the module docstring)."""

    def __init__(self, node: str, hold_seconds: float = HOLD_SECONDS) -> None:
        self.node = node
        self.hold_seconds = hold_seconds
        self.engines: dict[str, EngineNet] = {}
        self.others: dict[str, float | None] = {}
        """Engines of other processes on the node -> when their run of connection-level failures began (None)."""
        self.held: list[Held] = []
        self.announced: NetworkVerdict = NetworkVerdict(False)
        """The verdict last announced by this process (one announcement per change, whichever crawler sees it)."""

    def register(self, engine: str) -> None:
        """An engine crawler of this process opened: it counts as known from now (not failing)."""
        self.engines.setdefault(engine, EngineNet())

    def other_processes(self, rows: Iterable[tuple[str, float | None]]) -> None:
        """The fresh status rows of the node's engines run by other processes: ``(engine, failing since)``."""
        self.others = {engine: since for engine, since in rows if engine not in self.engines}

    def answered(self, engine: str, at: float, connection_level: bool, reason: str = "") -> None:
        """An answer of ``engine`` at ``at``: a connection-level failure, or anything else."""
        net = self.engines.setdefault(engine, EngineNet())
        if connection_level:
            if net.failing_since is None:
                net.failing_since = at
                net.reasons = set()
            net.reasons.add(reason)
        else:
            net.failing_since = None
            net.reasons = set()
            net.answered_at = at if net.answered_at is None else max(net.answered_at, at)

    def verdict(self) -> NetworkVerdict:
        known = {engine: net.failing_since for engine, net in self.engines.items()} | self.others
        if len(known) < MIN_ENGINES or any(since is None for since in known.values()):
            return NetworkVerdict(False, tuple(sorted(known)))
        reasons = sorted({reason for net in self.engines.values() for reason in net.reasons if reason})
        return NetworkVerdict(
            True, tuple(sorted(known)), max(since for since in known.values() if since is not None), tuple(reasons)
        )

    def in_doubt(self) -> bool:
        """Whether the node's network is down, or connection-level failures still wait for its verdict: no other
        verdict on the node's engines (saturation) can be told meanwhile."""
        return bool(self.held) or self.verdict().down

    # ---- holding connection-level failures until the verdict is known ---------------------------------
    def hold(self, engine: str, at: float, sample: Any) -> None:
        self.held.append(Held(engine, at, sample))

    def settle(self, engine: str, now: float) -> tuple[list[Held], list[Held]]:
        """``engine``'s held failures to score now (the network works, or they waited long enough) and those to drop
        (the network is down); the rest stay held."""
        mine = [held for held in self.held if held.engine == engine]
        if not mine:
            return [], []
        others = [held for held in self.held if held.engine != engine]
        if self.verdict().down:
            self.held = others
            return [], mine
        answers = [net.answered_at for net in self.engines.values() if net.answered_at is not None]
        newest_answer = max(answers) if answers else None
        release, keep = [], []
        for held in mine:
            works = newest_answer is not None and newest_answer >= held.at
            (release if works or now - held.at >= self.hold_seconds else keep).append(held)
        self.held = others + keep
        return release, []

    def taken_by(self, engine: str) -> list[Held]:
        """Forget the failures held for ``engine`` (its crawler closes): returned so they can still be scored."""
        mine = [held for held in self.held if held.engine == engine]
        self.held = [held for held in self.held if held.engine != engine]
        return mine
