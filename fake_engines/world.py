"""A news world for the fake engines: topics that keep publishing, engines that each know most of it.

Without a world every fake engine serves the catalogue's fixed list of a topic's articles
(:mod:`fake_engines.catalogue`). A :class:`NewsWorld` given to ``FakeEngines(…, world=…)`` replaces that list
on every engine's results pages:

* **A clock the tests control.** World time is ``origin + (time.time() - started) * speed + advanced``, a float
  of seconds since the epoch (like ``time.time()``): it runs with the real clock (``speed`` times as fast) and
  :meth:`NewsWorld.advance` jumps it forward. ``origin`` defaults to the real time the world was made.
* **An endless stream per topic.** Article ``k`` (1, 2, …) of a topic is published at
  ``T_k = phase(topic) + k * every + jitter(topic, k)``, with ``phase`` in ``[EPOCH, EPOCH + every)`` and
  ``jitter`` in ``[0, every - 60)``: a new article every ``every`` seconds on average (5 minutes by default), at
  least a minute apart, so ``T_k`` is strictly increasing and the newest article at a time is found in O(1)
  (:meth:`NewsWorld.latest`). Every stream began at :data:`EPOCH`, so there is always a day (and more) of history.
  Everything derives from SHA-256 (:func:`~fake_engines.catalogue.number`), never from ``hash()``: the same
  topic and ``every`` give the same articles, at the same times, on every run and machine.
* **What a topic shows.** At world time ``t`` a topic's list is its newest :data:`WINDOW` articles with
  ``T_k <= t``, newest first, as :class:`~fake_engines.catalogue.Article` objects whose ``age_seconds`` is
  ``int(t - T_k)`` (:meth:`NewsWorld.topic_articles`).
* **What each engine shows.** Article ``k`` of a topic is on engine ``e`` iff a stable hash of ``(e, topic, k)``
  falls under ``share`` (0.75 by default): each engine's list (:meth:`NewsWorld.articles`) is its part of the
  topic's list, so no engine has every article and any two overlap heavily.
* **A stale engine** (:meth:`NewsWorld.set_stale`) answers every query with *yesterday's* list: its part of the
  topic's list as of ``t - 86400``, with their real ages (a day and more). Its pages still parse perfectly; it
  just stops finding what the others find.

Article URLs are clean publisher URLs on the catalogue's ``.example`` hosts, never the catalogue's own:
``https://www.<source>.example/<yyyy>/<topic-slug>-w<k>`` (``yyyy`` the year of ``T_k``) or, for the sources that
use ids, ``https://www.<source>.example/story?id=<14 digits>`` (the catalogue's ids have at most 7), where ``id`` is
meaningful and a normalizer must keep it.

Engines render each article's world age ("5 minutes ago"); absolute times on a page (Google's ``data-ts``, Brave's
``page_age``) are the *real* time of the request minus that age, so a crawler reading them against its own clock
sees the same age, whatever the world's speed or advances (a world ahead of the real clock never publishes "in the
future").

A world is thread-safe: the engines' server threads read it while a test advances it or makes an engine stale.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from functools import lru_cache
from typing import Any

from fake_engines.catalogue import SOURCES, Article, number, topic_slug
from topicstreams import ENGINES

EPOCH = 1_704_067_200.0
"""2024-01-01T00:00:00Z, seconds since the epoch: where every topic's stream begins."""
DAY = 86_400.0
"""How far back a stale engine lives (its pages show the lists of ``t - DAY``)."""
WINDOW = 30
"""How many of a topic's newest articles its list holds (each engine shows its part of them)."""
MIN_GAP = 60.0
"""Two articles of a topic are at least this many seconds apart (the jitter stays under ``every - MIN_GAP``)."""
_SCALE = 1_000_000
"""Resolution of the fractions drawn from hashes (phase, jitter, share)."""

_TITLES = (
    "{topic}: what we know so far",
    "Breaking: new developments in {topic}",
    "{topic} live: the latest updates",
    "Officials give an update on {topic}",
    "{topic}: reactions pour in",
    "Analysis: what the latest on {topic} changes",
    "{topic}, explained in five points",
    "Fresh details emerge on {topic}",
    "Why {topic} is back in the headlines",
    "Inside the newest turn in {topic}",
    "{topic}: the view from the ground",
    "Experts react to the latest on {topic}",
    "{topic}: a new statement and what it means",
    "Q&A: your questions on {topic}",
)

_SNIPPETS = (
    "{source} is following {topic} as the story develops; this article is updated as details come in.",
    "A new statement on {topic} was published a few minutes ago, according to several people briefed on it.",
    "The latest on {topic}: what changed in the last hour and what to watch for next.",
    "Readers asked {source} about {topic}; here are the answers our reporters could confirm.",
    "Figures released moments ago add a new angle to {topic}.",
    "Local voices weigh in on {topic} in interviews with {source}.",
    "What happened, who said what, and what comes next in {topic}.",
    "Our correspondents report on {topic} from where it is unfolding.",
)


class NewsWorld:
    """Topics that keep publishing, on a clock the tests control; each engine sees ``share`` of every topic.

    ``speed``: world seconds per real second (0 stops the clock, :meth:`advance` still moves it). ``share``: the
    chance that an engine shows a given article, in (0, 1]. ``origin``: the world time at creation (default: the
    real time). ``every``: the mean seconds between two articles of a topic (more than :data:`MIN_GAP`).
    ``window``: how many of a topic's newest articles its list holds.
    """

    def __init__(
        self,
        speed: float = 1.0,
        share: float = 0.75,
        origin: float | None = None,
        every: float = 300.0,
        window: int = WINDOW,
    ) -> None:
        if not _number(speed) or speed < 0:
            raise ValueError(f"speed: a number >= 0, not {speed!r}")
        if not _number(share) or not 0 < share <= 1:
            raise ValueError(f"share: a number in (0, 1], not {share!r}")
        if not _number(every) or every <= MIN_GAP:
            raise ValueError(f"every: a number of seconds above {MIN_GAP:g}, not {every!r}")
        if not isinstance(window, int) or isinstance(window, bool) or window < 1:
            raise ValueError(f"window: an int >= 1, not {window!r}")
        if origin is not None and not _number(origin):
            raise ValueError(f"origin: seconds since the epoch, not {origin!r}")
        self.speed = float(speed)
        self.share = float(share)
        self.every = float(every)
        self.window = window
        self._lock = threading.Lock()
        self.started = time.time()  # the real time the world was made
        self.origin = self.started if origin is None else float(origin)
        self._advanced = 0.0
        self._stale: set[str] = set()

    def __repr__(self) -> str:
        return (
            f"<NewsWorld now={_iso(self.now())} speed={self.speed:g} share={self.share:g} every={self.every:g}"
            f" stale={','.join(self.stale_engines()) or '-'}>"
        )

    # -- the clock ------------------------------------------------------------------------------------

    def now(self) -> float:
        """The world time, seconds since the epoch."""
        return self.at(time.time())

    def at(self, real: float) -> float:
        """The world time when the real clock reads ``real`` (with the advances made so far)."""
        with self._lock:
            return self.origin + (real - self.started) * self.speed + self._advanced

    def advance(self, seconds: float) -> float:
        """Move the world's clock ``seconds`` (>= 0) forward; the new world time."""
        if not _number(seconds) or seconds < 0:
            raise ValueError(f"advance: a number of seconds >= 0, not {seconds!r}")
        with self._lock:
            self._advanced += float(seconds)
        return self.now()

    # -- stale engines --------------------------------------------------------------------------------

    def set_stale(self, engine: str, on: bool = True) -> None:
        """Make ``engine`` serve yesterday's lists (``on``), or today's again (``on=False``)."""
        if engine not in ENGINES:
            raise ValueError(f"unknown engine {engine!r}; engines are {', '.join(ENGINES)}")
        with self._lock:
            if on:
                self._stale.add(engine)
            else:
                self._stale.discard(engine)

    def is_stale(self, engine: str) -> bool:
        with self._lock:
            return engine in self._stale

    def stale_engines(self) -> tuple[str, ...]:
        """The stale engines, in :data:`topicstreams.ENGINES` order."""
        with self._lock:
            return tuple(name for name in ENGINES if name in self._stale)

    # -- the streams ----------------------------------------------------------------------------------

    def phase(self, topic: str) -> float:
        """When ``topic``'s stream begins: in ``[EPOCH, EPOCH + every)`` (article 1 comes ``every`` later or so)."""
        return EPOCH + number("world-phase", topic) % _SCALE / _SCALE * self.every

    def published(self, topic: str, k: int) -> float:
        """``T_k``: when article ``k`` (>= 1) of ``topic`` is published, seconds since the epoch."""
        jitter = number("world-jitter", topic, k) % _SCALE / _SCALE * (self.every - MIN_GAP)
        return self.phase(topic) + k * self.every + jitter

    def latest(self, topic: str, t: float) -> int:
        """The number of ``topic``'s newest article at world time ``t`` (0: none yet)."""
        k = max(0, math.floor((t - self.phase(topic)) / self.every))
        # T_k lies in [phase + k*every, phase + (k+1)*every - MIN_GAP): k or k - 1 (the loops mend float rounding)
        while k >= 1 and self.published(topic, k) > t:
            k -= 1
        while self.published(topic, k + 1) <= t:
            k += 1
        return k

    def visible(self, engine: str, topic: str, k: int) -> bool:
        """Whether article ``k`` of ``topic`` is on ``engine`` (a stable hash under ``share``)."""
        return number("world-share", engine, topic, k) % _SCALE < self.share * _SCALE

    def article(self, topic: str, k: int, t: float) -> Article:
        """Article ``k`` of ``topic`` as seen at world time ``t`` (its age ``int(t - T_k)``)."""
        published = self.published(topic, k)
        url, title, source, snippet, slug = _story(topic, k, datetime.fromtimestamp(published, UTC).year)
        return Article(url, title, source, snippet, int(t - published), topic, k, slug)

    def topic_articles(self, topic: str, now: float | None = None) -> list[Article]:
        """``topic``'s list at world time ``now`` (default: :meth:`now`): its newest :attr:`window` articles
        published by then, newest first, whatever the engines."""
        t = self.now() if now is None else float(now)
        newest = self.latest(topic, t)
        return [self.article(topic, k, t) for k in range(newest, max(0, newest - self.window), -1)]

    def articles(self, engine: str, topic: str, now: float | None = None) -> list[Article]:
        """What ``engine`` shows for ``topic`` at world time ``now`` (default: :meth:`now`), newest first: its part
        of the topic's list; when the engine is stale, its part of the list of ``now - DAY``, with their real ages
        (a day and more)."""
        t = self.now() if now is None else float(now)
        seen = t - DAY if self.is_stale(engine) else t
        newest = self.latest(topic, seen)
        return [
            self.article(topic, k, t)
            for k in range(newest, max(0, newest - self.window), -1)
            if self.visible(engine, topic, k)
        ]

    # -- control --------------------------------------------------------------------------------------

    def state(self) -> dict[str, Any]:
        """The world's settings and state, JSON-able."""
        now = self.now()
        with self._lock:
            advanced, stale = self._advanced, sorted(self._stale, key=ENGINES.index)
        return {
            "now": now,
            "now_iso": _iso(now),
            "origin": self.origin,
            "speed": self.speed,
            "advanced": advanced,
            "every": self.every,
            "share": self.share,
            "window": self.window,
            "stale": stale,
        }

    def apply(self, changes: Any, engines: Iterable[str] | None = None) -> dict[str, Any]:
        """Apply a control request's JSON body, then :meth:`state`: ``{"advance": seconds}`` and/or
        ``{"stale": engine, "on": true|false}`` (``on`` defaults to true). ``engines``: the engines a stale one
        must be among (default: every engine). Checks everything before changing anything (ValueError)."""
        if changes is None:
            changes = {}
        if not isinstance(changes, Mapping):
            raise ValueError('world: a JSON object {"advance": seconds} and/or {"stale": engine, "on": true}')
        unknown = sorted(set(changes) - {"advance", "stale", "on"})
        if unknown:
            raise ValueError(f"world: unknown keys {unknown}; known: advance, stale, on")
        advance = changes.get("advance")
        if advance is not None and (not _number(advance) or advance < 0):
            raise ValueError(f"world: advance is a number of seconds >= 0, not {advance!r}")
        stale, on = changes.get("stale"), changes.get("on", True)
        if "on" in changes and stale is None:
            raise ValueError('world: "on" goes with "stale": {"stale": engine, "on": true}')
        if not isinstance(on, bool):
            raise ValueError(f"world: on is true or false, not {on!r}")
        if stale is not None:
            allowed = tuple(engines) if engines is not None else ENGINES
            if stale not in allowed:
                raise ValueError(f"world: stale engine {stale!r} is not served here (served: {', '.join(allowed)})")
        if advance is not None:
            self.advance(advance)
        if stale is not None:
            self.set_stale(stale, on)
        return self.state()


@lru_cache(maxsize=8192)
def _story(topic: str, k: int, year: int) -> tuple[str, str, str, str, str]:
    """(url, title, source name, snippet, source slug) of article ``k`` of ``topic``, published in ``year``."""
    source = SOURCES[number("world-source", topic, k) % len(SOURCES)]
    if source.id_urls:
        story_id = (10**5 + number("world-id", topic) % (9 * 10**5)) * 10**8 + k % 10**8
        url = f"https://www.{source.slug}.example/story?id={story_id}"
    else:
        url = f"https://www.{source.slug}.example/{year}/{topic_slug(topic)}-w{k}"
    title = _TITLES[number("world-title", topic, k) % len(_TITLES)].format(topic=topic)
    snippet = _SNIPPETS[number("world-snippet", topic, k) % len(_SNIPPETS)].format(topic=topic, source=source.name)
    return url, title, source.name, snippet, source.slug


def _number(value: Any) -> bool:
    """Whether ``value`` is a finite int or float (not a bool)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _iso(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
