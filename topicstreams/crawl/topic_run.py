"""One run of the spider's loop: a topic (or canary query) whose pages are out, one after another."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

import scrapy

from topicstreams.config.sections import CanaryQuerySection
from topicstreams.engines.classify import Verdict


@dataclass
class TopicRun:
    """The topic (or canary query) whose pages are out; ``done`` resolves with the last page's verdict."""

    topic: str
    done: asyncio.Future = field(repr=False)
    seen: set[str] = field(default_factory=set, repr=False)
    """The URLs of the pages so far (an engine that repeats its last page past the end is caught by it)."""
    canary: CanaryQuerySection | None = None
    request: scrapy.Request | None = field(default=None, repr=False)
    """The request of its latest page."""
    asked_at: float = 0.0
    """When that request was made (monotonic)."""
    lost: bool = False
    """Its latest page's request never came back in time: the run is over, its late answers belong to no run."""
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
