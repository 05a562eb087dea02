"""The cooldown's policy: how long a failure benches a lane (or a route), longer each time in a row."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class CooldownPolicy:
    initial: float
    factor: float
    max: float

    def length(self, failures: int, retry_after: float | None = None) -> float:
        """The bench after ``failures`` consecutive failures (1 for the first one)."""
        computed = min(self.max, self.initial * self.factor ** max(0, failures - 1))
        if retry_after is not None and retry_after > computed:
            return retry_after
        return computed
