"""The topic schedule of one engine spider: which topic to scrape next, and when.

Each topic is scraped about once per ``interval`` seconds. The schedule is a min-heap of
``(due, seq, topic)`` entries: the earliest due topic comes out first, equal due times in insertion
order (``seq`` is a running counter). A topic has at most one live entry: moving it pushes a new
entry, and the old one goes stale because its ``seq`` is no longer the topic's current one.
Removal is lazy: the topic is marked dropped and its entry is discarded when it reaches the top.
A topic taken by :meth:`TopicSchedule.pop_due` is *in flight* until :meth:`~TopicSchedule.rearm`
(success: due again one jittered interval later) or :meth:`~TopicSchedule.put_back` (failure: back
with the given due time). :meth:`~TopicSchedule.reconcile` follows the topics table's active topics.
The clock and the random generator are injected; nothing here does I/O.
"""

from __future__ import annotations

import heapq
import itertools
import math
import random
import time
from collections.abc import Callable, Iterable


class TopicSchedule:
    """Min-heap schedule of topics, each due again about one interval after its last scrape."""

    def __init__(
        self,
        interval: float,
        jitter_ratio: float = 0.0,
        *,
        clock: Callable[[], float] = time.monotonic,
        rng: random.Random | None = None,
    ) -> None:
        if not (isinstance(interval, (int, float)) and math.isfinite(interval) and interval > 0):
            raise ValueError(f"interval must be a finite number of seconds > 0, got {interval!r}")
        if not (isinstance(jitter_ratio, (int, float)) and 0.0 <= jitter_ratio <= 1.0):
            raise ValueError(f"jitter_ratio must be within [0, 1], got {jitter_ratio!r}")
        self.interval = float(interval)
        self.jitter_ratio = float(jitter_ratio)
        self.clock = clock
        self.rng = rng if rng is not None else random.Random()
        self._heap: list[tuple[float, int, str]] = []
        self._seq = itertools.count()
        self._live: dict[str, tuple[float, int]] = {}  # scheduled topic -> its current (due, seq)
        self._dropped: dict[str, tuple[float, int]] = {}  # dropped topic whose entry has not surfaced yet
        self._in_flight: dict[str, bool] = {}  # popped topic -> still active (False: dropped meanwhile)
        self._popped_seq: dict[str, int] = {}  # popped topic -> its entry's seq (put_back keeps its place)
        self._next_reconcile: float | None = None

    # -- filling the schedule ---------------------------------------------------------------

    def stagger(self, topics: Iterable[str]) -> list[str]:
        """Spread the topics not yet scheduled evenly over one interval from now, in the given order.

        The k-th of n new topics is due at ``now + k * interval / n``. Duplicates count once; topics
        already scheduled (or in flight) keep their due time. Sets the next reconcile time to
        ``now + interval``. Returns the names added.
        """
        now = self.clock()
        added = self._spread(self._unknown(topics), now)
        self._next_reconcile = now + self.interval
        return added

    def add_now(self, topics: Iterable[str]) -> list[str]:
        """Make the topics not yet scheduled all due now, served in the given order. Returns the names added."""
        now = self.clock()
        added = self._unknown(topics)
        for topic in added:
            self._push(topic, now)
        return added

    def reconcile(self, active: Iterable[str]) -> tuple[list[str], list[str]]:
        """Bring the schedule in line with the active topics; returns ``(added, dropped)``.

        Active topics not scheduled are staggered over the next interval as :meth:`stagger` does.
        Scheduled or in-flight topics missing from ``active`` are dropped (lazily); a dropped topic
        listed again before its entry surfaced is un-dropped and keeps its due time. Sets the next
        reconcile time to ``now + interval``.
        """
        now = self.clock()
        wanted = dict.fromkeys(active)
        dropped = [topic for topic in self._live if topic not in wanted]
        dropped += [topic for topic, live in self._in_flight.items() if live and topic not in wanted]
        for topic in dropped:
            self.remove(topic)
        added = self._spread(self._unknown(wanted), now)
        self._next_reconcile = now + self.interval
        return added, dropped

    def defer_reconcile(self, seconds: float) -> None:
        """Look at the active topics again in ``seconds`` (the last look could not read them)."""
        self._next_reconcile = self.clock() + seconds

    def reconcile_due(self) -> bool:
        """True when a reconcile is due (always before the first :meth:`stagger` or :meth:`reconcile`)."""
        return self._next_reconcile is None or self.clock() >= self._next_reconcile

    @property
    def next_reconcile(self) -> float | None:
        """When the next reconcile is due; None before the first :meth:`stagger` or :meth:`reconcile`."""
        return self._next_reconcile

    # -- serving topics ---------------------------------------------------------------------

    def next_due(self) -> float | None:
        """The earliest due time among live topics, or None when none is scheduled."""
        top = self._peek()
        return None if top is None else top[0]

    def wait(self) -> float | None:
        """Seconds until the earliest live topic is due (0 when one is due now), or None when none is scheduled."""
        due = self.next_due()
        return None if due is None else max(0.0, due - self.clock())

    def pop_due(self) -> tuple[str, float] | None:
        """Take the earliest live topic due by now, with its due time; None when none is due.

        The topic is then in flight: out of the schedule until :meth:`rearm` or :meth:`put_back`.
        """
        top = self._peek()
        if top is None or top[0] > self.clock():
            return None
        due, seq, topic = heapq.heappop(self._heap)
        del self._live[topic]
        self._in_flight[topic] = True
        self._popped_seq[topic] = seq
        return topic, due

    def rearm(self, topic: str, scale: float = 1.0, interval: float | None = None) -> float | None:
        """After a successful scrape: due again ``interval * scale * uniform(1 - j/2, 1 + j/2)`` from now
        (``scale`` > 1 while the engine is slowed down; ``interval``: the topic's own, when the adaptive schedule
        gives it one, else the schedule's).

        Returns the new due time, or None (and does nothing) when the topic was dropped meanwhile
        or is not known.
        """
        half = self.jitter_ratio / 2
        factor = self.rng.uniform(1 - half, 1 + half) if half else 1.0
        due = self.clock() + (self.interval if interval is None else interval) * scale * factor
        return due if self._reschedule(topic, due) else None

    def move(self, topic: str, due: float) -> None:
        """A live scheduled topic is due at ``due`` instead (its rate jumped: its visit comes forward); a topic
        in flight, dropped or unknown is left alone."""
        if topic in self._live:
            self._push(topic, due)

    def put_back(self, topic: str, due: float) -> None:
        """Return a topic that could not be scraped with the given due time (normally its old one).

        A topic put back in flight keeps its place among topics due at the same time (it goes before those
        that were behind it). Dropped or unknown topics are ignored.
        """
        self._reschedule(topic, due, self._popped_seq.get(topic) if topic in self._in_flight else None)

    def remove(self, topic: str) -> None:
        """Drop one topic, lazily as :meth:`reconcile` does; unknown topics are ignored."""
        if topic in self._live:
            self._dropped[topic] = self._live.pop(topic)
        elif topic in self._in_flight:
            self._in_flight[topic] = False

    # -- inspection -------------------------------------------------------------------------

    def __len__(self) -> int:
        """The number of live scheduled topics (neither dropped nor in flight)."""
        return len(self._live)

    def __contains__(self, topic: object) -> bool:
        return isinstance(topic, str) and topic in self._live

    @property
    def topics(self) -> list[str]:
        """The live scheduled topics, earliest due first."""
        return sorted(self._live, key=self._live.__getitem__)

    def due_time(self, topic: str) -> float | None:
        """The due time of a live scheduled topic, else None."""
        entry = self._live.get(topic)
        return None if entry is None else entry[0]

    # -- internals --------------------------------------------------------------------------

    def _push(self, topic: str, due: float, seq: int | None = None) -> None:
        seq = next(self._seq) if seq is None else seq
        self._live[topic] = (due, seq)
        heapq.heappush(self._heap, (due, seq, topic))

    def _spread(self, topics: list[str], now: float) -> list[str]:
        for k, topic in enumerate(topics):
            self._push(topic, now + k * self.interval / len(topics))
        return topics

    def _unknown(self, topics: Iterable[str]) -> list[str]:
        """The topics, once each, that are neither scheduled nor in flight; dropped ones met are un-dropped."""
        unknown = []
        for topic in dict.fromkeys(topics):
            if topic in self._dropped:
                self._live[topic] = self._dropped.pop(topic)
            elif topic in self._in_flight:
                self._in_flight[topic] = True
            elif topic not in self._live:
                unknown.append(topic)
        return unknown

    def _reschedule(self, topic: str, due: float, seq: int | None = None) -> bool:
        """Push a new due time for an in-flight or scheduled topic; False for dropped or unknown ones."""
        active = self._in_flight.pop(topic, None)
        self._popped_seq.pop(topic, None)
        if active is False or (active is None and topic not in self._live):
            return False
        self._push(topic, due, seq)
        return True

    def _peek(self) -> tuple[float, int, str] | None:
        """The top live entry, after discarding stale and dropped entries found above it."""
        heap = self._heap
        while heap:
            _, seq, topic = heap[0]
            if topic in self._live and self._live[topic][1] == seq:
                return heap[0]
            heapq.heappop(heap)
            if topic in self._dropped and self._dropped[topic][1] == seq:
                del self._dropped[topic]
        return None
