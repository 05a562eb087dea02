"""One run of the spider's loop: a topic (or canary query) whose pages are out, one after another, on a lane.

An engine's lane is one route it takes, with its pacing state, its browser tab and the run in flight on it. An engine
runs at most one topic at a time per route (CONTRACT "Routes"), several at once across its routes: the spider
(:mod:`topicstreams.crawl.spider`) drives one loop per lane. Without ``routes`` an engine has one lane, the
``default`` route's, and runs one topic at a time.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import scrapy

from topicstreams.config.sections import CanaryQuerySection
from topicstreams.engines.classify import Verdict

if TYPE_CHECKING:
    from topicstreams.browser.tabs import EngineTab
    from topicstreams.crawl.engine_state import RouteLane
    from topicstreams.crawl.topic_planner import VisitCount


@dataclass
class TopicRun:
    """The topic (or canary query) whose pages are out; ``done`` resolves with the last page's verdict."""

    topic: str
    done: asyncio.Future = field(repr=False)
    seen: set[str] = field(default_factory=set, repr=False)
    """The URLs of the pages so far (an engine that repeats its last page past the end is caught by it)."""
    canary: CanaryQuerySection | None = None
    lane: Lane = field(default=None, repr=False)  # type: ignore[assignment]  # set by the spider, always
    """The lane (route) its pages go by."""
    request: scrapy.Request | None = field(default=None, repr=False)
    """The request of its latest page."""
    asked_at: float = 0.0
    """When that request was made (monotonic)."""
    lost: bool = False
    """Its latest page's request never came back in time: the run is over, its late answers belong to no run."""
    visit: VisitCount | None = field(default=None, repr=False)
    """What the visit's pages found (a topic's run; None for a canary's)."""
    settled: bool = False
    """Its verdict went to the topic supply (once, by the loop, or by the spider's ``closed()`` when the spider
    closed between the last page and the loop's turn)."""

    @property
    def kind(self) -> str:
        """ "canary" or "topic", as log lines name the run."""
        return "canary" if self.canary is not None else "topic"

    def finish(self, verdict: Verdict) -> None:
        if not self.done.done():
            self.done.set_result(verdict)


@dataclass(eq=False)
class Lane:
    """One route of an engine's crawl (see the module docstring)."""

    route: str
    state: RouteLane = field(repr=False)
    """The pair's pace, cooldown and probe (and its route's standing)."""
    tab: EngineTab = field(repr=False)
    """The pair's tab, in the pair's browser context."""
    slot: str | None = None
    """Scrapy's download slot of its requests (one per route when the engine has several: Scrapy's per-domain
    concurrency then holds per route), None for the engine's one lane."""
    run: TopicRun | None = field(default=None, repr=False)
    """The topic (or canary) whose pages are out on it."""

    @property
    def free(self) -> bool:
        """Whether the lane could take a topic now: off the bench, its route up."""
        return self.state.bench_remaining() <= 0 and not self.state.route_down
