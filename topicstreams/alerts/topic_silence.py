"""A topic gone silent (a hole in the data): the verdict, and the two messages it sends (pure).

A topic whose new events usually arrive — at least ``alerting.silence_min_events`` of them over the baseline period
(``health.baseline_days``) — and that gets none for ``alerting.silence_factor`` × G, and never less than an hour,
while its engines are running, is **silent**; G is the median gap between its arrivals. The first new event
afterwards ends the silence (one "news again" line).

* **Arrivals, not events.** A scrape finds several new articles at once, and each engine's store batch is written
  at its own moment: events less than :data:`ARRIVAL_WINDOW` seconds after the one before belong to one arrival
  (a chain: a burst of scrapes is one arrival however long it lasts, as long as no gap in it reaches the window).
  G is the median of the gaps between the arrivals' first events; fewer than two arrivals have no gap, and no G.
* **The latest day is not left out.** The health score leaves the latest day out of its baseline so that a
  current incident does not become its own normal. A silence cannot do that: the silence being judged holds no
  event, so it adds no gap to G (the open gap after the last arrival is never counted), and the median keeps the
  few long gaps of an earlier slow spell from moving G much. Keeping the latest day lets a topic added yesterday,
  or a configuration with a short ``baseline_days``, be watched as soon as its events say what its normal is,
  and lets G follow a topic whose pace changed.
* **While its engines are running.** The caller says whether any of the topic's engines is running (a fresh
  ``engine_status`` row in state ``running``) and since when it has seen them so: the quiet time counts from the
  later of the last event and that moment, so that a crawl starting again after hours stopped does not call every
  topic silent before its first scrape.

:func:`judge_silence` gives a :class:`SilenceVerdict` with the numbers a message needs; :func:`silence_alert` and
:func:`news_again_alert` make the two :class:`~topicstreams.alerts.events.Alert` s (event ``silence``; its
``details["state"]`` is ``silent`` or ``ended``). The storage (:mod:`topicstreams.storage.event_times`), the state kept
per topic (:mod:`topicstreams.storage.alert_states`, key ``silence:<topic>``) and the sending
(:mod:`topicstreams.extensions.digest_watch`) are elsewhere.
"""

from __future__ import annotations

import bisect
import statistics
from array import array
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from topicstreams.alerts.events import SILENCE, Alert
from topicstreams.alerts.inert_text import duration, html, plain

ARRIVAL_WINDOW = 60.0
"""Seconds: an event this close to the one before it arrived with it (one scrape, or one burst of scrapes)."""

MIN_SILENCE = 3600.0
"""Seconds: a topic is never called silent sooner than this after its last event, however short its G."""

SILENT, OK = "silent", "ok"
"""A topic's silence states (``alert_states`` rows ``silence:<topic>``); "ok" is also a missing row's state."""

ENDED = "ended"
"""``details["state"]`` of the "news again" alert."""


def state_key(topic: str) -> str:
    """The ``alert_states`` key of ``topic``'s silence."""
    return f"silence:{topic}"


@dataclass(frozen=True)
class SilenceVerdict:
    """A topic's silence as judged at ``at``."""

    topic: str
    at: datetime
    silent: bool
    usual: bool
    """Whether the topic's new events usually arrive (enough events and at least two arrivals in the period)."""
    events: int
    """New events in the baseline period."""
    arrivals: int
    gap: float | None
    """G: the median seconds between arrivals (None when fewer than two arrivals)."""
    threshold: float | None
    """Seconds of quiet that make the topic silent: ``max(MIN_SILENCE, factor × G)`` (None without G)."""
    last_event: datetime | None
    """The topic's latest new event in the period."""
    quiet: float | None
    """Seconds of quiet counted: from the later of the last event and the moment the engines were seen running."""
    running: bool
    """Whether any of the topic's engines is running."""


def arrivals(times: Iterable[datetime]) -> list[datetime]:
    """The first moment of each arrival of ``times`` (any order, repeats allowed), oldest first."""
    found: list[datetime] = []
    previous: datetime | None = None
    for moment in sorted(times):
        if previous is None or (moment - previous).total_seconds() >= ARRIVAL_WINDOW:
            found.append(moment)
        previous = moment
    return found


def judge_silence(
    topic: str,
    event_times: Iterable[tuple[datetime, int]],
    now: datetime,
    *,
    baseline_days: float,
    factor: float,
    min_events: int,
    running: bool,
    running_since: datetime | None = None,
) -> SilenceVerdict:
    """Judge ``topic``'s silence at ``now``.

    ``event_times``: the moments the topic's new events were stored, each with how many were stored then (a store
    batch writes its events with one time); those outside ``(now - baseline_days, now]`` are left out.
    ``running``: whether any of the topic's engines is running now; ``running_since``: since when the caller has
    seen them running without a break (None: no more than that they run now, so the quiet counts from the last
    event).
    """
    pairs = sorted((moment.timestamp(), count) for moment, count in event_times)
    return judge_moments(
        topic,
        [moment for moment, _ in pairs],
        [count for _, count in pairs],
        now,
        baseline_days=baseline_days,
        factor=factor,
        min_events=min_events,
        running=running,
        running_since=running_since,
    )


def judge_moments(
    topic: str,
    times: Sequence[float],
    counts: Sequence[int],
    now: datetime,
    *,
    baseline_days: float,
    factor: float,
    min_events: int,
    running: bool,
    running_since: datetime | None = None,
) -> SilenceVerdict:
    """:func:`judge_silence` on moments as Unix seconds, sorted, with their counts (what :class:`TopicMoments`
    keeps): no datetime per moment."""
    end = now.timestamp()
    first = bisect.bisect_right(times, end - baseline_days * 86400)
    last = bisect.bisect_right(times, end)
    events = 0
    starts: list[float] = []
    previous: float | None = None
    latest: float | None = None
    for index in range(first, last):
        if counts[index] <= 0:
            continue
        moment = times[index]
        events += counts[index]
        if previous is None or moment - previous >= ARRIVAL_WINDOW:
            starts.append(moment)
        previous = latest = moment
    gaps = [later - earlier for earlier, later in zip(starts, starts[1:], strict=False)]
    gap = float(statistics.median(gaps)) if gaps else None
    usual = events >= min_events and gap is not None
    threshold = max(MIN_SILENCE, factor * gap) if gap is not None else None
    last_event = None if latest is None else datetime.fromtimestamp(latest, UTC)
    quiet = None
    if last_event is not None:
        counted_from = max(last_event, running_since) if running and running_since is not None else last_event
        quiet = max(0.0, (now - counted_from).total_seconds())
    silent = bool(usual and running and threshold is not None and quiet is not None and quiet >= threshold)
    return SilenceVerdict(
        topic=topic,
        at=now,
        silent=silent,
        usual=usual,
        events=events,
        arrivals=len(starts),
        gap=gap,
        threshold=threshold,
        last_event=last_event,
        quiet=quiet,
        running=running,
    )


class TopicMoments:
    """Each active topic's new-event moments (Unix seconds, sorted, with their counts), kept between two silence
    checks so that a check reads only what was stored since the last one: a full read of a large feed's baseline
    period (a thousand topics, 14 days) is seconds of work and a hundred MiB of objects every few minutes; kept in
    arrays it is a few MiB, and each check reads a few minutes of rows (``benchmarks/alerts.py``).

    :meth:`replace` takes a full read, :meth:`merge` the rows read since :attr:`watermark` minus an overlap (rows
    another process committed late with a slightly earlier time are read again and replace what was kept for
    that stretch), :meth:`trim` forgets what left the period."""

    def __init__(self) -> None:
        self.times: dict[str, array] = {}
        self.counts: dict[str, array] = {}
        self.watermark: float | None = None
        """The newest moment read so far (None: nothing read yet)."""

    def replace(self, topics: Iterable[str], rows: Iterable[tuple[str, float, int]]) -> None:
        self.times = {topic: array("d") for topic in topics}
        self.counts = {topic: array("q") for topic in self.times}
        self.watermark = None
        self._add(rows)

    def merge(self, topics: Iterable[str], rows: Iterable[tuple[str, float, int]], since: float) -> None:
        """The active ``topics`` now, and their ``rows`` read after ``since``: what was kept after it is replaced."""
        active = list(topics)
        self.times = {topic: self.times.get(topic, array("d")) for topic in active}
        self.counts = {topic: self.counts.get(topic, array("q")) for topic in active}
        for topic, times in self.times.items():
            cut = bisect.bisect_right(times, since)
            if cut < len(times):
                del times[cut:]
                del self.counts[topic][cut:]
        self._add(rows)

    def _add(self, rows: Iterable[tuple[str, float, int]]) -> None:
        fresh: dict[str, list[tuple[float, int]]] = {}
        for topic, moment, count in rows:
            if topic in self.times:
                fresh.setdefault(topic, []).append((moment, count))
                if self.watermark is None or moment > self.watermark:
                    self.watermark = moment
        for topic, pairs in fresh.items():
            pairs.sort()
            times, counts = self.times[topic], self.counts[topic]
            if times and pairs[0][0] <= times[-1]:  # out of order: keep the arrays sorted
                pairs = sorted([*zip(times, counts, strict=True), *pairs])
                del times[:], counts[:]
            times.extend(moment for moment, _ in pairs)
            counts.extend(count for _, count in pairs)

    def trim(self, before: float) -> None:
        """Forget the moments at or before ``before`` (out of the baseline period)."""
        for topic, times in self.times.items():
            cut = bisect.bisect_right(times, before)
            if cut:
                del times[:cut]
                del self.counts[topic][:cut]


def _utc(moment: datetime) -> str:
    return f"{moment:%Y-%m-%d %H:%M} UTC"


def silence_alert(verdict: SilenceVerdict, engines: Sequence[str]) -> Alert:
    """The ``silence`` alert of a topic gone silent: what, why (its usual gap), since when, on which engines, what to
    do."""
    assert verdict.last_event is not None and verdict.gap is not None and verdict.threshold is not None
    since = verdict.at - timedelta(seconds=verdict.quiet or 0.0)
    names = ", ".join(engines) or "none"
    quiet = duration((verdict.at - verdict.last_event).total_seconds())
    facts = (
        f"no new article for {quiet} (since {_utc(verdict.last_event)}) while its engines ran ({names}); "
        f"its new articles usually arrive every {duration(verdict.gap)} (median gap over "
        f"{verdict.arrivals} arrivals, {verdict.events} articles), so {duration(verdict.threshold)} without one "
        f"is a silence."
    )
    todo = (
        "Open the topic's results on each engine to see whether they still have news for it, and check "
        "`scrapy health` for an engine serving stale or empty pages."
    )
    title = f'topicstreams: topic "{plain(verdict.topic)}" silent for {quiet}'
    return Alert(
        event=SILENCE,
        title=title,
        text=f'Topic "{plain(verdict.topic)}": {facts}\n{todo}',
        at=verdict.at,
        html=f"<p>Topic <b>{html(verdict.topic)}</b>: {html(facts)}</p><p>{html(todo)}</p>",
        topic=verdict.topic,
        reasons=("silence",),
        details={
            "state": SILENT,
            "topic": verdict.topic,
            "last_event": verdict.last_event.isoformat(),
            "quiet_seconds": round((verdict.at - verdict.last_event).total_seconds()),
            "counted_since": since.isoformat(),
            "gap_seconds": round(verdict.gap),
            "threshold_seconds": round(verdict.threshold),
            "events": verdict.events,
            "arrivals": verdict.arrivals,
            "engines": list(engines),
        },
    )


def news_again_alert(
    topic: str, last_before: datetime | None, first_after: datetime, at: datetime, engines: Sequence[str]
) -> Alert:
    """The "news again" line of a topic whose silence ended: its first new event after ``last_before``."""
    gap = f" after {duration((first_after - last_before).total_seconds())} without one" if last_before else ""
    facts = f"new articles again since {_utc(first_after)}{gap}."
    return Alert(
        event=SILENCE,
        title=f'topicstreams: topic "{plain(topic)}" has news again',
        at=at,
        text=f'Topic "{plain(topic)}": {facts}',
        html=f"<p>Topic <b>{html(topic)}</b>: {html(facts)}</p>",
        topic=topic,
        details={
            "state": ENDED,
            "topic": topic,
            "first_event": first_after.isoformat(),
            "last_event_before": last_before.isoformat() if last_before else None,
            "engines": list(engines),
        },
    )
