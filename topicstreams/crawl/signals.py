"""The signals topicstreams sends through the crawler's signal manager.

``response_classified`` — sent once for every request to an engine (probes and canaries included) when its
class is known, with one keyword argument, ``classification``: a :class:`Classification`.

``page_parsed`` — sent by the spider once it has built the items of a results page it received, with one
keyword argument, ``outcome``: a :class:`PageParsed`, which carries the page's ``Classification`` (the very
object sent before), so a listener joins the two.

``canary_checked`` — sent by the spider once it has read a canary query's results page (``canaries.*``), with
one keyword argument, ``check``: a :class:`CanaryChecked`.

``events_stored`` — sent by the store pipeline (on the crawl's event loop) after a write of its batches added feed
events, with one keyword argument, ``stored``: an :class:`EventsStored`. The alerting extension's as-it-happens
digests listen (:mod:`topicstreams.extensions.digest_watch`): the process that stored the events sends them.

``topic_swept`` — sent by the spider when every page of a topic was read, with two keyword arguments, ``engine`` and
``topic`` (names). Membership counts them (:mod:`topicstreams.extensions.membership`: ``scrapy nodes``).

``engine_starting`` — sent by an engine spider once its loop starts (after its first line, ``… spider starting``),
with one keyword argument, ``engine`` (its name). ``crawlall`` says one line when all of its engines have
(:mod:`topicstreams.cli.crawl_summary`).

Health listens to the first three; nothing in the request path depends on who listens::

    crawler.signals.connect(handler, signal=topicstreams.crawl.signals.response_classified)

    def handler(classification): ...
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime

from topicstreams.engines.classify import ResponseClass

response_classified = object()
page_parsed = object()
canary_checked = object()
events_stored = object()
topic_swept = object()
engine_starting = object()


@dataclass(frozen=True)
class Classification:
    """One engine response (or failure), as the blocks middleware classed it."""

    engine: str
    topic: str | None
    page: int | None
    page_type: str
    """``first`` (a topic's first results page) or ``next`` (a later one): sizes are compared within a type."""
    url: str
    status: int | None
    """The HTTP status; None when no response came (a reset, a refusal, a timeout)."""
    cls: ResponseClass
    reason: str
    latency: float | None
    """Seconds from the moment the request left to its rendered response or its failure."""
    bytes: int
    """The rendered page's size (0 without a response)."""
    items: int
    """Result items read from the page."""
    probe: bool
    """Whether it was the single probe after a cooldown."""
    bench: float | None
    """The cooldown it started (seconds), if any."""
    at: datetime
    canary: bool = False
    """Whether it was a canary query's page (``topic`` is then the query)."""
    sent_at: float | None = None
    """When the request left (the monotonic clock of the crawl's process, as pacing measured it: the moment the
    browser reported the navigation leaving); None if it never did."""
    route: str = "default"
    """The route it went by (``routes``; ``default`` without them)."""


@dataclass(frozen=True)
class PageParsed:
    """What the spider made of one results page: its items, the valid ones among them, or a parse error."""

    classification: Classification | None
    """The page's classification (None when the blocks middleware did not run)."""
    items: int
    valid_items: int
    """Items carrying every required field (:data:`topicstreams.engines.results.REQUIRED_RESULT_FIELDS`)."""
    error: str | None = None
    """The parse error, when the parser failed on the page."""
    missing: Mapping[str, int] = field(default_factory=dict)
    """Required field -> how many of the page's items lack it."""


@dataclass(frozen=True)
class CanaryChecked:
    """A canary query's answer, as the spider read it from a results page that looked normal."""

    engine: str
    query: str
    matched: bool
    results: int
    """Results read from the page."""
    problem: str | None
    """What was wrong with the answer (None when it matched)."""
    at: datetime


@dataclass(frozen=True)
class EventsStored:
    """Feed events a write of the store added (``topic_news`` rows new to the database)."""

    engine: str
    """The crawler whose store wrote them."""
    keys: tuple[tuple[int, str], ...]
    """The events, as ``(topic_id, news_id)``."""
    at: datetime
    """Their ``first_seen_at``."""


route_changed = object()
"""Sent by the blocks middleware when a request's outcome turned its (proxied) route ``down`` or brought it back
(``recovered``): ``change`` (:class:`RouteChange`). Health alerts on it (``route_down``, ``route_recovered``)."""


@dataclass(frozen=True)
class RouteChange:
    """A proxied route's transition in this process (:mod:`topicstreams.crawl.route_standing`)."""

    route: str
    change: str
    """``down`` or ``recovered``."""
    engine: str
    """The engine whose request made it."""
    engines: tuple[str, ...]
    """The engines of the process that take the route."""
    reason: str
    """The route's latest failure (what it failed with)."""
    at: datetime
    since: datetime | None
    """When it went down (for a recovery: when the outage it ends began)."""
    bench: float | None = None
    """The route's bench (seconds) when it went down."""


topic_visited = object()
"""Sent by the spider once per visit of a topic (not a canary's) whose pages came back, with one keyword argument,
``visit``: a :class:`TopicVisit` (CONTRACT "Freshness": what the schedule learnt and spent). The schedule's hours
(``/monitor``) and the health reason ``holes`` listen."""


@dataclass(frozen=True)
class TopicVisit:
    """One visit of a topic on an engine: its pages, what was new on them, and what the schedule made of it."""

    engine: str
    topic: str
    route: str
    pages: int
    """Results pages requested in the visit (burst pages included)."""
    burst_pages: int
    """Pages read past ``scraper.max_pages`` because every article so far was new (depth on demand)."""
    new: int | None
    """Articles of the visit the engine had not stored for the topic before; None when the store could not tell (the
    database away): the visit then teaches the schedule nothing."""
    items: int
    """Articles on the visit's pages."""
    censored: bool
    """The visit's last page held only new articles: ``new`` is a lower bound."""
    hole: bool
    """A censored visit that could go no deeper (the depth limit, or the engine's last page): articles may have
    fallen off the results between two visits. Never on a pair's first visit (everything is new then)."""
    first: bool
    """The pair's first visit (nothing stored before it: its articles say nothing of the rate)."""
    rate_per_hour: float | None
    """The pair's rate after the visit (None: not learnt yet)."""
    interval_seconds: float
    """The interval the schedule gave the topic on the engine after the visit."""
    budget_per_hour: float
    """The engine's request budget an hour at the time (what the fixed schedule would send, less while degraded)."""
    at: datetime
