"""The health reason ``holes``: an engine whose topic visits keep ending in holes (CONTRACT "Freshness").

A hole is a visit whose last results page held only articles not stored before and that could go no deeper (the
depth limit ``scraper.adaptive.burst_pages``, or the engine's last page): articles may have fallen off the results
between two visits. One now and then is a burst the schedule had not seen coming; :data:`HOLES_MIN` or more within
one ``health.window`` (600 s by default) say the schedule cannot keep up with the engine's news at its budget (or the
engine shows a page of articles it never showed before on every visit). The reason informs: it is shown beside the
score's reasons (``scrapy health``, ``/api/health``, ``/monitor``) and changes neither the score nor the band — a
hole is news missed, not the engine turning against the crawler.
"""

from __future__ import annotations

from collections import deque

HOLES = "holes"
"""The reason's name."""

HOLES_MIN = 3
"""Holes within one ``health.window`` from which the reason holds."""


def holes_reason(window_holes: int | None) -> bool:
    """Whether ``window_holes`` (the engine's holes within the last ``health.window``) make the reason ``holes``."""
    return window_holes is not None and window_holes >= HOLES_MIN


class HoleWindow:
    """The times (seconds) of an engine's recent holes, kept for one window (pure: the caller says the time)."""

    def __init__(self, window: float) -> None:
        self.window = window
        self.times: deque[float] = deque()

    def add(self, at: float) -> None:
        self.times.append(at)

    def count(self, now: float) -> int:
        """The holes within ``(now - window, now]``."""
        while self.times and self.times[0] <= now - self.window:
            self.times.popleft()
        return sum(1 for at in self.times if at <= now)
