"""Benchmark of the feed: ``GET /api/feed`` on a database of 1,000,000 events, beside OFFSET paging.

    python benchmarks/feed.py [--events 1000000] [--requests 200] [--seconds 10] [--db URL] [--rebuild]

The data: --events feed events (``topic_news`` rows) over 200 topics (some far busier than others: weights
1/sqrt(rank)), found by the engines google, bing, yahoo and brave (about 1.3 engines an event: the first at the
event's time, the others in later batches), about 4 % of them an article already found for another topic. The
articles have English-like headlines, sentence-or-two snippets and one of ~200 publishers, all drawn from word
lists with a seeded random; ``first_seen_at`` spans 30 days in store batches of 10–200 events sharing one time,
``published_at`` is before it. One made-up word, ``heatwave``, is planted in 1 % of the titles (and nowhere
else): the search shape looks for it.

The database is built fast but faithfully: ``topicstreams.storage.upgrade(url)`` makes the real schema (indexes,
search index, SQLite's triggers), then the rows go in by bulk inserts in time order, generated in a second
process meanwhile:

* SQLite (default): ``executemany`` in transactions of ~50,000 events, ``PRAGMA synchronous = OFF`` and a 2 GB
  page cache for the build only; the triggers index every article for search as the store's inserts do. No
  ANALYZE (the project runs none). The file is cached as ``.topicstreams/bench/feed-<events>.db`` (keyed by the
  parameters and the generator's version; --cache to put it elsewhere) and reused when present (--rebuild to
  build it again). 1,000,000 events take about 2 minutes to build, 1.5 GB.
* PostgreSQL (``--db postgresql+psycopg://…``): COPY, and ``news_search`` filled with ``to_tsvector('simple', …)``
  of ``search.document(title, snippet, source)``, as ``search.store_documents`` writes it; then VACUUM ANALYZE
  (what autovacuum does to a table that grew). The tables are emptied first (TRUNCATE), unless they already
  hold this benchmark's data for the same parameters (a comment on topic_news says so): then they are reused.

The app is the real one: ``create_app(WebSettings(url, page_size=50))`` served by uvicorn in a subprocess on a
free loopback port, as ``scrapy serve`` runs it, asked with httpx from this process, one request at a time.
Shapes (--requests each, the topic and engine varying from request to request):

  no filter          page 1 of the whole feed;
  one topic          page 1 of one topic (any of the 200, drawn at random);
  one engine         page 1 of one engine (the four in turn);
  topic × engine     page 1 of one topic found by one engine (both drawn at random);
  search             page 1 of ``q=heatwave`` (1 % of the articles);
  page N by cursor   page --page (1000) of the whole feed: the ``next`` cursors of pages 1 … N-1 followed
                     through the app first, then page N fetched with the last one.

Columns, in ms (p50 and p95 of each):

  app      ``GET /api/feed`` through uvicorn, timed by the client (5 untimed requests of each shape first);
  reader   the same pages by the app's own ``FeedReader.events()`` in this process, on the app's kind of
           read-only engine (``make_reader``): the SQL and the loading of the events, without HTTP, uvicorn,
           FastAPI and JSON (app − reader is the web stack's share);
  SQL      FeedReader's events query alone (the keys of the page), as it ran (captured from SQLAlchemy);
  OFFSET   the same pages by ``LIMIT … OFFSET`` (``FeedReader.events(offset=…)``: the naive baseline, same
           filters, same connection layer, in this process). On page 1 it is OFFSET 0, the cursor's own
           statement; page N skips (N-1) × 50 events.

Each series goes in rounds, one request of each shape a round, so that background load, the page cache and the
server's state weigh on every shape alike; it stops early once its rounds have taken --budget seconds a shape
(the n column says how many requests were made), and the walk to page N once it has taken twice that (page N's
cursor is then read from the index, and said so): a slow app still gets measured within ~10 minutes. Then the first page
with 8 concurrent clients (threads, each its own httpx.Client) for --seconds: requests per second. Then, for each shape,
the plan of its events query (SQLite: EXPLAIN QUERY PLAN on one line; PostgreSQL: the first lines of EXPLAIN), and of
the two statements loading a page.

Targets: every shape's p95 through the app ≤ 50 ms (set for SQLite; shown for PostgreSQL too); page N by cursor
within 1.5× of page 1 (both p50 and p95). The script exits 0 whatever the figures; non-zero if the app fails or
page N differs between cursor and OFFSET.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import signal
import socket
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
if __package__ in (None, ""):  # run as a script: make the project importable from a checkout
    sys.path.insert(0, str(REPO))

import httpx
from sqlalchemy import Engine, text
from sqlalchemy import event as sa_event
from sqlalchemy.engine import make_url

from topicstreams import ENGINES
from topicstreams.engines.news_urls import news_id
from topicstreams.storage import Databases, upgrade
from topicstreams.storage.db import make_reader
from topicstreams.storage.feed_reads import Cursor, FeedFilter, FeedReader
from topicstreams.storage.migrate import head_revisions
from topicstreams.storage.search import SEARCH_TABLE, TEXT_CONFIG
from topicstreams.text.search_words import SearchQuery, document

DATA_VERSION = 1
"""The generator's version: a cached database built by another version is built again (SQLite user_version)."""

PAGE_SIZE = 50
SEARCH_WORD = "heatwave"
SEARCH_SHARE = 0.01
SHARED_SHARE = 0.04
"""Share of events that are an article already found (recently) for another topic."""
DAYS = 30
BATCH_SIZES = (10, 200)
CHUNK_EVENTS = 50_000
"""Events per build transaction (SQLite) or COPY round (PostgreSQL)."""
END = datetime(2026, 11, 30, 18, 0, tzinfo=UTC)
"""The newest batch's time (fixed: the data do not depend on the day the benchmark runs)."""
FIRST_ENGINE_WEIGHTS = {"google": 0.38, "bing": 0.26, "yahoo": 0.20, "brave": 0.16}
ENGINE_COUNT_WEIGHTS = {1: 0.76, 2: 0.19, 3: 0.04, 4: 0.01}
"""Engines an event is found by: 1.30 on average."""
CONCURRENCY = 8
TARGET_P95_MS = 50.0
TARGET_DEEP_RATIO = 1.5
BENCH_MARK = "topicstreams feed benchmark"
"""PostgreSQL: the start of the comment on topic_news naming the data it holds."""

# -- word lists ------------------------------------------------------------------------------------------------

TOPIC_SUBJECTS = """climate change|electric vehicles|interest rates|artificial intelligence|housing market|
renewable energy|space exploration|public health|cybersecurity|supply chains|inflation|labour market|
semiconductors|quantum computing|vaccines|wildfires|drought|ocean plastic|nuclear power|offshore wind|
solar power|battery storage|hydrogen|carbon capture|electric grid|oil prices|natural gas|mining|
cryptocurrency|stock markets|central banks|trade policy|tariffs|shipping|aviation|rail transport|
public transport|autonomous driving|ride hailing|food prices|agriculture|fisheries|water supply|
biodiversity|deforestation|air pollution|recycling|fast fashion|retail sales|e-commerce|streaming services|
video games|social media|online privacy|data protection|antitrust|big tech|startups|venture capital|
remote work|higher education|school funding|student loans|childcare|pensions|healthcare costs|
drug prices|mental health|obesity|cancer research|dementia|antibiotic resistance|bird flu|pandemic preparedness|
elections|parliament|local government|immigration|refugees|border security|defence spending|
arms control|diplomacy|sanctions|human rights|press freedom|policing|prisons|courts|housing policy|
homelessness|urban planning|tourism|football|cricket|tennis|cycling|olympics|formula one|film industry|
music industry|publishing|museums|architecture|archaeology|astronomy|robotics|drones|smartphones|
cloud computing|open source|chip exports|satellite internet|5g networks|telecoms|banking|insurance|
real estate|construction|steel industry|car industry|chemicals|pharmaceuticals|biotech|gene editing|
wildlife|national parks|flooding|sea levels|glaciers|hurricanes|earthquakes|volcanoes""".replace("\n", "")
TOPIC_QUALIFIERS = (
    "regulation",
    "investment",
    "research",
    "policy",
    "jobs",
    "prices",
    "technology",
    "funding",
    "exports",
    "safety",
)

SOURCE_FIRST = (
    "Daily",
    "Evening",
    "Morning",
    "National",
    "Metro",
    "Coastal",
    "Northern",
    "Southern",
    "Western",
    "Eastern",
    "City",
    "County",
    "Valley",
    "Harbour",
    "Capital",
    "Global",
    "Union",
    "Independent",
    "Weekly",
    "Sunday",
    "Central",
    "Highland",
    "Lakeside",
    "River",
    "Prairie",
    "Atlantic",
    "Pacific",
    "Summit",
    "Bay",
    "Frontier",
)
SOURCE_SECOND = (
    "Herald",
    "Times",
    "Post",
    "Chronicle",
    "Gazette",
    "Tribune",
    "Observer",
    "Courier",
    "Ledger",
    "Standard",
    "Journal",
    "Examiner",
    "Record",
    "Sentinel",
    "Dispatch",
    "Express",
    "Bulletin",
    "Review",
    "Monitor",
    "Wire",
    "Report",
    "Press",
    "News",
    "Telegraph",
    "Mirror",
)

SINGULAR_ORGS = (
    "The central bank",
    "The government",
    "The commission",
    "The agency",
    "The committee",
    "The regulator",
    "The council",
    "The court",
    "The ministry",
    "The union",
    "The board",
    "Parliament",
    "The city",
    "The state",
    "The company",
    "The watchdog",
    "The school board",
    "The airline",
)
PLURAL_ORGS = (
    "Regulators",
    "Lawmakers",
    "Investors",
    "Researchers",
    "City officials",
    "Ministers",
    "Shareholders",
    "Analysts",
    "Union leaders",
    "Scientists",
    "Health officials",
    "Tech firms",
    "Startups",
    "Farmers",
    "Police",
    "Voters",
    "Opposition leaders",
    "Economists",
    "Engineers",
    "Doctors",
    "Teachers",
    "Airlines",
    "Carmakers",
    "Retailers",
    "Banks",
    "Insurers",
    "Developers",
    "Campaigners",
    "Judges",
    "Prosecutors",
    "Mayors",
    "Governors",
    "Local councils",
    "Residents",
    "Consumers",
    "Suppliers",
    "Exporters",
    "Utilities",
)
ORGS = SINGULAR_ORGS + PLURAL_ORGS
VERBS_BASE = (
    "weigh",
    "unveil",
    "back",
    "delay",
    "reject",
    "expand",
    "cut",
    "probe",
    "launch",
    "target",
    "approve",
    "slash",
    "boost",
    "halt",
    "revive",
    "eye",
    "scrap",
    "tighten",
    "ease",
    "defend",
    "question",
    "double",
    "freeze",
    "extend",
    "review",
    "block",
    "pledge",
    "announce",
    "win",
    "lose",
    "sign",
    "drop",
    "finalise",
    "pause",
    "resume",
    "challenge",
    "confirm",
    "deny",
    "curb",
    "fund",
    "test",
    "rethink",
    "overhaul",
)


def third_person(verb: str) -> str:
    if verb.endswith(("ch", "sh", "s", "x", "z")):
        return verb + "es"
    if verb.endswith("y") and verb[-2] not in "aeiou":
        return verb[:-1] + "ies"
    return verb + "s"


VERBS = tuple(third_person(verb) for verb in VERBS_BASE)
VERBS_PAST = (
    "jumped",
    "slumped",
    "stalled",
    "soared",
    "collapsed",
    "rebounded",
    "doubled",
    "halved",
    "surged",
    "fell",
    "rose",
    "slipped",
    "climbed",
    "steadied",
    "recovered",
    "tumbled",
    "eased",
    "spiked",
)
ADJECTIVES = (
    "new",
    "record",
    "surprise",
    "controversial",
    "long-awaited",
    "sweeping",
    "temporary",
    "global",
    "local",
    "rare",
    "fresh",
    "major",
    "modest",
    "sharp",
    "landmark",
    "emergency",
    "hidden",
    "rising",
    "growing",
    "unexpected",
    "ambitious",
    "costly",
    "stalled",
    "bold",
    "cautious",
    "crucial",
    "fragile",
    "historic",
    "massive",
    "quiet",
    "rapid",
    "risky",
    "secret",
    "stricter",
    "tougher",
    "uncertain",
)
NOUNS = (
    "plan",
    "deal",
    "ban",
    "rules",
    "report",
    "investment",
    "tax",
    "merger",
    "strike",
    "shortage",
    "forecast",
    "budget",
    "rollout",
    "lawsuit",
    "probe",
    "subsidy",
    "tariff",
    "outage",
    "recall",
    "vote",
    "review",
    "partnership",
    "pilot",
    "warning",
    "rally",
    "crackdown",
    "bailout",
    "reform",
    "takeover",
    "contract",
    "loan",
    "study",
    "survey",
    "audit",
    "inquiry",
    "agreement",
    "target",
    "scheme",
    "project",
    "programme",
    "slowdown",
    "boom",
    "crisis",
    "dispute",
    "deadline",
    "upgrade",
    "launch",
    "protest",
    "settlement",
)
NOUNS_PL = (
    "prices",
    "jobs",
    "profits",
    "sales",
    "costs",
    "wages",
    "rents",
    "exports",
    "imports",
    "shares",
    "bills",
    "emissions",
    "orders",
    "deliveries",
    "bookings",
    "claims",
    "fees",
    "rates",
    "savings",
    "loans",
)
PLACES = (
    "London",
    "Paris",
    "Berlin",
    "Madrid",
    "Rome",
    "Tokyo",
    "Seoul",
    "Beijing",
    "Delhi",
    "Mumbai",
    "Sydney",
    "Toronto",
    "Chicago",
    "Texas",
    "California",
    "New York",
    "Brazil",
    "Mexico",
    "Canada",
    "Japan",
    "India",
    "Germany",
    "France",
    "Spain",
    "Italy",
    "Poland",
    "Sweden",
    "Norway",
    "Kenya",
    "Nigeria",
    "Egypt",
    "South Africa",
    "Australia",
    "Indonesia",
    "Vietnam",
    "Chile",
    "Argentina",
    "Scotland",
    "Wales",
    "Ireland",
    "Europe",
    "Asia",
    "Africa",
    "the Gulf",
    "the Arctic",
    "the Alps",
    "the Midwest",
    "Ontario",
    "Bavaria",
    "Catalonia",
    "Lisbon",
    "Vienna",
    "Prague",
    "Warsaw",
    "Athens",
    "Istanbul",
    "Singapore",
    "Manila",
    "Lagos",
    "Nairobi",
    "Dublin",
    "Oslo",
    "Helsinki",
    "Brussels",
    "Geneva",
    "Zurich",
    "Denver",
)
FIRST_NAMES = (
    "Anna",
    "James",
    "Maria",
    "David",
    "Sofia",
    "Liam",
    "Elena",
    "Omar",
    "Priya",
    "Chen",
    "Lucas",
    "Amara",
    "Noah",
    "Yuki",
    "Fatima",
    "Jonas",
    "Isabel",
    "Mateo",
    "Grace",
    "Ravi",
    "Hana",
    "Tom",
)
LAST_NAMES = (
    "Smith",
    "Garcia",
    "Müller",
    "Rossi",
    "Kowalski",
    "Tanaka",
    "Okafor",
    "Patel",
    "Nguyen",
    "Silva",
    "Johansson",
    "Dubois",
    "Kim",
    "Haddad",
    "Novak",
    "Costa",
    "Brennan",
    "Larsen",
    "Moreau",
    "Ivanova",
)
ROLES = (
    "minister",
    "chief executive",
    "economist",
    "professor",
    "mayor",
    "analyst",
    "senator",
    "director",
    "spokesperson",
    "founder",
    "chair",
    "governor",
)
WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
SECTIONS = (
    "news",
    "business",
    "world",
    "politics",
    "technology",
    "science",
    "environment",
    "health",
    "sport",
    "culture",
    "money",
    "local",
)
CLAUSES = (
    "a move critics called overdue",
    "the first such step in a decade",
    "despite months of delays",
    "according to people familiar with the matter",
    "amid mounting pressure from rivals",
    "ahead of a key vote next week",
    "in a bid to reassure markets",
    "after a year of falling demand",
    "as costs continue to climb",
    "with details expected later this month",
    "though no timetable was given",
    "raising questions about its long-term future",
)


def topic_names(count: int, rnd: random.Random) -> list[str]:
    """*count* distinct topic names: the subjects, then subjects with a qualifier."""
    subjects = TOPIC_SUBJECTS.split("|")
    names = list(subjects)
    extra = [f"{subject} {qualifier}" for subject in subjects for qualifier in TOPIC_QUALIFIERS]
    rnd.shuffle(extra)
    names += extra
    return names[:count]


def source_names(count: int, rnd: random.Random) -> list[tuple[str, str]]:
    """*count* publishers: (name, domain)."""
    pairs = [(first, second) for first in SOURCE_FIRST for second in SOURCE_SECOND]
    rnd.shuffle(pairs)
    chosen = []
    for first, second in pairs[:count]:
        name = f"The {first} {second}" if rnd.random() < 0.4 else f"{first} {second}"
        chosen.append((name, f"{first.lower()}{second.lower()}.example"))
    return chosen


class Headlines:
    """English-like headlines and snippets, from the word lists above and a seeded random."""

    def __init__(self, rnd: random.Random) -> None:
        self.rnd = rnd

    def acts(self) -> str:
        """A subject and its verb, agreeing (``Regulators back``, ``The agency backs``)."""
        index = self.rnd.randrange(len(ORGS))
        verb = self.rnd.randrange(len(VERBS_BASE))
        return f"{ORGS[index]} {VERBS[verb] if index < len(SINGULAR_ORGS) else VERBS_BASE[verb]}"

    def person(self) -> str:
        choice = self.rnd.choice
        return f"{choice(FIRST_NAMES)} {choice(LAST_NAMES)}"

    def title(self, topic: str, planted: bool) -> str:
        choice, rnd = self.rnd.choice, self.rnd
        subject = topic[0].upper() + topic[1:]
        form = rnd.randrange(10)
        if form == 0:
            words = f"{self.acts()} {choice(ADJECTIVES)} {topic} {choice(NOUNS)} in {choice(PLACES)}"
        elif form == 1:
            acts = self.acts()
            words = f"{subject}: {acts[0].lower()}{acts[1:]} {choice(NOUNS)} amid {choice(ADJECTIVES)} {choice(NOUNS)}"
        elif form == 2:
            words = (
                f"{choice(PLACES)} {choice(NOUNS_PL)} {choice(VERBS_PAST)} after {choice(ADJECTIVES)} "
                f"{topic} {choice(NOUNS)}"
            )
        elif form == 3:
            words = f"Why {topic} {choice(NOUNS_PL)} {choice(VERBS_PAST)} this year"
        elif form == 4:
            words = f"{self.person()} says {topic} {choice(NOUNS)} will {choice(VERBS_BASE)} {choice(NOUNS_PL)}"
        elif form == 5:
            words = (
                f"{rnd.randrange(2, 40)} {choice(NOUNS_PL)} {choice(VERBS_PAST)} in {choice(PLACES)} as "
                f"{topic} {choice(NOUNS)} {choice(VERBS_PAST)}"
            )
        elif form == 6:
            words = f"What the {choice(ADJECTIVES)} {choice(NOUNS)} means for {topic}"
        elif form == 7:
            words = f"Live: {self.acts()} {choice(ADJECTIVES)} {choice(NOUNS)} on {topic}"
        elif form == 8:
            words = f"{choice(ORGS)} to {choice(VERBS_BASE)} {topic} {choice(NOUNS)} by {rnd.randrange(2027, 2036)}"
        else:
            words = (
                f"{subject} {choice(NOUNS)} {choice(VERBS_PAST)} as {choice(PLACES)} {choice(VERBS)} "
                f"{choice(ADJECTIVES)} {choice(NOUNS)}"
            )
        if planted:
            where = rnd.randrange(3)
            if where == 0:
                words = f"Heatwave: {words}"
            elif where == 1:
                words = f"{words} during {choice(PLACES)} heatwave"
            else:
                words = f"{words} as heatwave grips {choice(PLACES)}"
        return words[0].upper() + words[1:]

    def snippet(self, topic: str) -> str:
        choice, rnd = self.rnd.choice, self.rnd
        first = (
            f"{choice(ORGS)} said on {choice(WEEKDAYS)} that the {choice(ADJECTIVES)} {choice(NOUNS)} would "
            f"{choice(VERBS_BASE)} {topic} {choice(NOUNS_PL)} in {choice(PLACES)}, {choice(CLAUSES)}."
        )
        if rnd.random() < 0.55:
            return first
        role = choice(ROLES)
        article = "an" if role[0] in "aeiou" else "a"
        second = (
            f"{self.person()}, {article} {role}, said {choice(NOUNS_PL)} had {choice(VERBS_PAST)} "
            f"{rnd.randrange(2, 60)} % since the {choice(NOUNS)}."
        )
        return f"{first} {second}"


def slug(title: str) -> str:
    return "-".join("".join(c for c in word.lower() if c.isalnum()) for word in title.split()[:7]).strip("-")


# -- the data ----------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Params:
    events: int
    topics: int
    seed: int

    @property
    def key(self) -> str:
        extra = "" if (self.topics, self.seed) == (200, 1) else f"-t{self.topics}-s{self.seed}"
        return f"feed-{self.events}{extra}"


@dataclass
class Chunk:
    """Rows for one build transaction, in time order. Times are datetimes (UTC)."""

    news: list[tuple] = field(default_factory=list)
    """(id, url, title, source, snippet, published_at, first_seen_at)"""
    events: list[tuple] = field(default_factory=list)
    """(topic_id, news_id, first_seen_at)"""
    attributions: list[tuple] = field(default_factory=list)
    """(topic_id, news_id, engine, first_seen_at)"""


@dataclass
class Summary:
    topics: list[str] = field(default_factory=list)
    """Topic names; topic id = index + 1."""
    events: int = 0
    news: int = 0
    attributions: int = 0
    batches: int = 0
    planted_titles: int = 0
    planted_events: int = 0
    first: datetime | None = None
    last: datetime | None = None


def generate(params: Params, summary: Summary) -> Iterator[Chunk]:
    """The feed's rows, chunk by chunk (about CHUNK_EVENTS events each), newest batch last."""
    rnd = random.Random(params.seed)
    words = Headlines(rnd)
    names = topic_names(params.topics, rnd)
    if len(names) < params.topics:
        raise SystemExit(f"at most {len(names)} topics")
    summary.topics = names
    weights = [1 / math.sqrt(rank) for rank in range(1, params.topics + 1)]
    rnd.shuffle(weights)  # which topic is busy is random, not alphabetical
    cumulative = list(_accumulate(weights))
    sources = source_names(200, rnd)
    first_engines, first_weights = list(FIRST_ENGINE_WEIGHTS), list(_accumulate(FIRST_ENGINE_WEIGHTS.values()))
    counts, count_weights = list(ENGINE_COUNT_WEIGHTS), list(_accumulate(ENGINE_COUNT_WEIGHTS.values()))

    # batch sizes first: they fix the number of batches, hence their times over DAYS days
    sizes: list[int] = []
    while sum(sizes) < params.events:
        sizes.append(rnd.randint(*BATCH_SIZES))
    sizes[-1] -= sum(sizes) - params.events
    gaps = [rnd.expovariate(1.0) for _ in sizes]
    scale = DAYS * 86400 / max(sum(gaps[1:]), 1e-9)
    times: list[datetime] = []
    moment = END - timedelta(days=DAYS)
    for index, gap in enumerate(gaps):
        if index:
            moment += timedelta(seconds=gap * scale)
        times.append(moment.replace(microsecond=rnd.randrange(1_000_000)))
    summary.batches, summary.first, summary.last = len(sizes), times[0], times[-1]

    recent: list[str] = []  # recent articles: those found again for another topic are among them
    topics_of: dict[str, set[int]] = {}  # article -> the topics it was found for (recent articles only)
    planted_ids: set[str] = set()  # articles (recent ones) with the search word in their title
    chunk = Chunk()
    serial = 0
    topic_range = range(1, params.topics + 1)
    for batch, (size, when) in enumerate(zip(sizes, times, strict=True)):
        engine = rnd.choices(first_engines, cum_weights=first_weights)[0]
        for _ in range(size):
            topic_id = rnd.choices(topic_range, cum_weights=cumulative)[0]
            article = None
            if recent and rnd.random() < SHARED_SHARE:
                candidate = rnd.choice(recent)
                if topic_id not in topics_of[candidate]:
                    article = candidate
            if article is None:
                serial += 1
                topic = names[topic_id - 1]
                planted = rnd.random() < SEARCH_SHARE
                title = words.title(topic, planted)
                source, domain = rnd.choice(sources)
                url = f"https://www.{domain}/{rnd.choice(SECTIONS)}/{when:%Y/%m/%d}/{slug(title)}-{serial}"
                article = news_id(url)
                published = (
                    None
                    if rnd.random() < 0.03
                    else when - timedelta(seconds=min(rnd.lognormvariate(8.5, 1.2), 7 * 86400))
                )
                chunk.news.append((article, url, title, source, words.snippet(topic), published, when))
                topics_of[article] = set()
                summary.news += 1
                if planted:
                    summary.planted_titles += 1
                    planted_ids.add(article)
                recent.append(article)
            topics_of[article].add(topic_id)
            summary.planted_events += article in planted_ids
            chunk.events.append((topic_id, article, when))
            engines = [engine]
            extra = rnd.choices(counts, cum_weights=count_weights)[0] - 1
            if extra:
                engines += rnd.sample([each for each in ENGINES if each != engine], extra)
            for position, name in enumerate(engines):
                seen = when if not position else times[min(batch + rnd.randint(1, 60), len(times) - 1)]
                chunk.attributions.append((topic_id, article, name, seen))
        summary.events += size
        if len(chunk.events) >= CHUNK_EVENTS:
            summary.attributions += len(chunk.attributions)
            yield chunk
            chunk = Chunk()
        if len(recent) > 5000:  # only recent articles are found again: forget the older ones
            del recent[:-4000]
            keep = set(recent)
            topics_of = {news: seen for news, seen in topics_of.items() if news in keep}
            planted_ids &= keep
    if chunk.events:
        summary.attributions += len(chunk.attributions)
        yield chunk


def _accumulate(values) -> Iterator[float]:
    total = 0.0
    for value in values:
        total += value
        yield total


def _produce(params: Params, sqlite: bool, out) -> None:
    """The generator's chunks (times as SQLite's text when *sqlite*) into the queue *out*, then the summary."""
    summary = Summary()
    try:
        for chunk in generate(params, summary):
            if sqlite:
                chunk.news = [(*row[:5], sqlite_time(row[5]), sqlite_time(row[6])) for row in chunk.news]
                chunk.events = [(topic, news, sqlite_time(when)) for topic, news, when in chunk.events]
                chunk.attributions = [
                    (topic, news, engine, sqlite_time(when)) for topic, news, engine, when in chunk.attributions
                ]
            out.put((chunk, summary.events))
        out.put((None, summary))
    except BaseException as exc:
        out.put((None, exc))
        raise


def chunks(params: Params, summary: Summary, sqlite: bool) -> Iterator[Chunk]:
    """generate()'s chunks, made in another process while this one writes them (2 cores: about a third faster);
    *summary* filled in at the end."""
    import multiprocessing

    context = multiprocessing.get_context("fork")
    queue = context.Queue(maxsize=2)
    producer = context.Process(target=_produce, args=(params, sqlite, queue), daemon=True)
    producer.start()
    try:
        while True:
            chunk, state = queue.get(timeout=600)
            if chunk is None:
                if isinstance(state, BaseException):
                    raise RuntimeError(f"generating the data failed: {state!r}")
                summary.__dict__.update(state.__dict__)
                return
            summary.events = state
            yield chunk
    finally:
        producer.join(timeout=10)
        if producer.is_alive():
            producer.kill()


def sqlite_time(value: datetime | None) -> str | None:
    """The text the project's UTCDateTime writes on SQLite."""
    return None if value is None else value.astimezone(UTC).isoformat(" ", "microseconds")[:26]


# -- building ---------------------------------------------------------------------------------------------------


def start_partial(path: Path) -> Path:
    """A new file beside *path* with the project's schema, to build in and rename to *path* once complete (an
    interrupted build then leaves no half-built database behind)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".partial")
    for leftover in (partial, Path(f"{partial}-wal"), Path(f"{partial}-shm")):
        leftover.unlink(missing_ok=True)
    upgrade(f"sqlite:///{partial}")
    return partial


def finish_partial(conn: sqlite3.Connection, partial: Path, path: Path, data_version: int) -> None:
    """Mark the built file with the generator's ``data_version``, fold its write-ahead log in, close it and put it
    at *path*."""
    conn.execute(f"PRAGMA user_version = {data_version}")
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    partial.rename(path)
    for leftover in (Path(f"{partial}-wal"), Path(f"{partial}-shm")):
        leftover.unlink(missing_ok=True)


def build_sqlite(path: Path, params: Params) -> Summary:
    """Build the SQLite database at *path* (through a temporary file, renamed when complete)."""
    partial = start_partial(path)
    summary = Summary()
    conn = sqlite3.connect(partial, isolation_level=None)
    conn.execute("PRAGMA synchronous = OFF")
    conn.execute("PRAGMA cache_size = -2000000")  # 2 GB for the build: the indexes stay in memory
    conn.executemany(
        "INSERT INTO topics (id, name, active, created_at) VALUES (?, ?, 1, ?)",
        [
            (index + 1, name, sqlite_time(END - timedelta(days=DAYS + 1)))
            for index, name in enumerate(topic_names(params.topics, random.Random(params.seed)))
        ],
    )
    for chunk in chunks(params, summary, sqlite=True):
        conn.execute("BEGIN")
        conn.executemany(
            "INSERT INTO news (id, url, title, source, snippet, published_at, first_seen_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            chunk.news,
        )  # the triggers index each for search
        conn.executemany("INSERT INTO topic_news (topic_id, news_id, first_seen_at) VALUES (?, ?, ?)", chunk.events)
        conn.executemany(
            "INSERT INTO topic_news_engines (topic_id, news_id, engine, first_seen_at) VALUES (?, ?, ?, ?)",
            chunk.attributions,
        )
        conn.execute("COMMIT")
        progress(summary, params)
    finish_partial(conn, partial, path, DATA_VERSION)
    return summary


def progress(summary: Summary, params: Params) -> None:
    if not sys.stderr.isatty():
        return
    print(f"\r  building: {summary.events:,} of {params.events:,} events", end="", file=sys.stderr, flush=True)
    if summary.events >= params.events:
        print(file=sys.stderr, flush=True)


def sqlite_usable(path: Path) -> bool:
    """Whether the cached file at *path* is a complete build of this version at the newest schema."""
    if not path.exists():
        return False
    try:
        with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as conn:
            version = conn.execute("PRAGMA user_version").fetchone()[0]
            revisions = {row[0] for row in conn.execute("SELECT version_num FROM alembic_version")}
    except sqlite3.Error:
        return False
    return version == DATA_VERSION and revisions == head_revisions()


def pg_dsn(url: str) -> str:
    """A libpq connection string for a SQLAlchemy URL."""
    parsed = make_url(url).set(drivername="postgresql")
    return parsed.render_as_string(hide_password=False)


def pg_marker(params: Params) -> str:
    return f"{BENCH_MARK} v{DATA_VERSION} {params.key} at {','.join(sorted(head_revisions()))}"


def pg_usable(url: str, params: Params) -> bool:
    with Databases() as databases, databases.of(url).connect() as conn:
        comment = conn.scalar(text("SELECT obj_description('topic_news'::regclass, 'pg_class')"))
    return comment == pg_marker(params)


def build_postgresql(url: str, params: Params) -> Summary:
    """Empty the feed's tables at *url* and fill them by COPY; the search index as the store writes it."""
    import psycopg

    upgrade(url)
    summary = Summary()
    with psycopg.connect(pg_dsn(url)) as conn:
        with conn.cursor() as cur:
            cur.execute(
                f"TRUNCATE topics, news, topic_news, topic_news_engines, {SEARCH_TABLE} RESTART IDENTITY CASCADE"
            )
            cur.execute("COMMENT ON TABLE topic_news IS NULL")
            with cur.copy("COPY topics (id, name, active, created_at) FROM STDIN") as copy:
                for index, name in enumerate(topic_names(params.topics, random.Random(params.seed))):
                    copy.write_row((index + 1, name, True, END - timedelta(days=DAYS + 1)))
            cur.execute("SELECT setval(pg_get_serial_sequence('topics', 'id'), %s)", (params.topics,))
            cur.execute("CREATE TEMPORARY TABLE bench_documents (news_id varchar(32), doc text)")
        conn.commit()
        for chunk in chunks(params, summary, sqlite=False):
            with conn.cursor() as cur:
                with cur.copy(
                    "COPY news (id, url, title, source, snippet, published_at, first_seen_at) FROM STDIN"
                ) as copy:
                    for row in chunk.news:
                        copy.write_row(row)
                with cur.copy("COPY bench_documents (news_id, doc) FROM STDIN") as copy:
                    for row in chunk.news:
                        copy.write_row((row[0], document(row[2], row[4], row[3])))
                # as search.store_documents writes it: to_tsvector of search.document(), in news id order
                cur.execute(
                    f"INSERT INTO {SEARCH_TABLE} (news_id, document) SELECT news_id, "
                    f"to_tsvector('{TEXT_CONFIG}', doc) FROM bench_documents ORDER BY news_id"
                )
                cur.execute("TRUNCATE bench_documents")
                with cur.copy("COPY topic_news (topic_id, news_id, first_seen_at) FROM STDIN") as copy:
                    for row in chunk.events:
                        copy.write_row(row)
                with cur.copy("COPY topic_news_engines (topic_id, news_id, engine, first_seen_at) FROM STDIN") as copy:
                    for row in chunk.attributions:
                        copy.write_row(row)
            conn.commit()
            progress(summary, params)
        with conn.cursor() as cur:
            cur.execute(f"COMMENT ON TABLE topic_news IS '{pg_marker(params)}'")
        conn.commit()
    with psycopg.connect(pg_dsn(url), autocommit=True) as conn:
        for table in ("topics", "news", "topic_news", "topic_news_engines", SEARCH_TABLE):
            conn.execute(f"VACUUM ANALYZE {table}")
    return summary


def describe(reader: Engine) -> dict[str, int]:
    """What the database holds: rows, and articles/events matching the search word."""
    query = SearchQuery.parse(SEARCH_WORD)
    from topicstreams.storage.search import matching

    with reader.connect() as conn:
        figures = {
            table: conn.scalar(text(f"SELECT count(*) FROM {table}"))
            for table in ("topics", "news", "topic_news", "topic_news_engines")
        }
        titles = conn.scalar(
            text("SELECT count(*) FROM news WHERE lower(title) LIKE :word"), {"word": f"%{SEARCH_WORD}%"}
        )
        from sqlalchemy import func, select

        from topicstreams.storage.models import news_table as news
        from topicstreams.storage.models import topic_news_table as events

        figures["search_news"] = conn.scalar(
            select(func.count()).select_from(news).where(matching(conn, news.c.id, query))
        )
        figures["search_events"] = conn.scalar(
            select(func.count()).select_from(events).where(matching(conn, events.c.news_id, query))
        )
        figures["titles"] = titles
    return figures


# -- the app, served ------------------------------------------------------------------------------------------

SERVER = """
import json
import sys
import uvicorn
from topicstreams.web.app import WebSettings, create_app
url, port, page_size, more = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), json.loads(sys.argv[4])
app = create_app(WebSettings(url, port=port, page_size=page_size, **more))
uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning", access_log=False, server_header=False,
            proxy_headers=False)
"""
"""The app as ``scrapy serve`` runs it (one uvicorn process, its default loop and HTTP implementation)."""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Served:
    """The app on *url* in a uvicorn subprocess on a free loopback port, until ``stop()``; ``settings``: more
    ``WebSettings`` fields (plain values)."""

    def __init__(self, url: str, log: Path, settings: dict | None = None) -> None:
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.log = log
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}
        with log.open("wb") as out:
            self.process = subprocess.Popen(
                [sys.executable, "-c", SERVER, url, str(self.port), str(PAGE_SIZE), json.dumps(settings or {})],
                cwd=REPO,
                env=env,
                stdout=out,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
            )
        deadline = time.monotonic() + 60
        with httpx.Client(base_url=self.base, timeout=30) as client:
            while True:
                if self.process.poll() is not None:
                    raise SystemExit(f"the app exited {self.process.returncode}:\n{self.tail()}")
                try:
                    if client.get("/api/feed", params={"limit": 1}).status_code == 200:
                        return
                except httpx.TransportError:
                    pass
                if time.monotonic() > deadline:
                    self.stop()
                    raise SystemExit(f"the app did not answer within 60 s:\n{self.tail()}")
                time.sleep(0.1)

    def tail(self) -> str:
        return self.log.read_text(errors="replace")[-3000:]

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


# -- shapes and measurements -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Ask:
    """One request of a shape: its filters and cursor (the same for the app and for FeedReader)."""

    topic: str | None = None
    engine: str | None = None
    q: str | None = None
    before: str | None = None
    offset: int = 0
    """The OFFSET of the same page (the baseline)."""

    def query(self) -> list[tuple[str, str]]:
        pairs = [("topic", self.topic), ("engine", self.engine), ("q", self.q), ("before", self.before)]
        return [(name, value) for name, value in pairs if value is not None]

    def feed(self) -> FeedFilter:
        from topicstreams.web.params import feed_filter

        return feed_filter([self.topic] if self.topic else [], [self.engine] if self.engine else [], self.q, None)


@dataclass
class Shape:
    name: str
    asks: list[Ask]
    app: list[float] = field(default_factory=list)
    reader: list[float] = field(default_factory=list)
    sql: list[float] = field(default_factory=list)
    offset: list[float] = field(default_factory=list)
    items: list[int] = field(default_factory=list)
    statements: list[tuple[str, Any]] = field(default_factory=list)
    plan: list[str] = field(default_factory=list)


def p50(values: list[float]) -> float:
    return statistics.median(values)


def p95(values: list[float]) -> float:
    if len(values) < 2:
        return values[0]
    return statistics.quantiles(values, n=100, method="inclusive")[94]


class Capture:
    """The statements an engine runs while ``on`` (SQLAlchemy's before_cursor_execute): FeedReader's own SQL."""

    def __init__(self, engine) -> None:
        self.on = False
        self.statements: list[tuple[str, Any]] = []
        sa_event.listen(engine, "before_cursor_execute", self._record)

    def _record(self, conn, cursor, statement, parameters, context, executemany) -> None:
        if self.on:
            self.statements.append((statement, parameters))

    def run(self, call: Callable[[], Any]) -> list[tuple[str, Any]]:
        self.statements = []
        self.on = True
        try:
            call()
        finally:
            self.on = False
        return self.statements


def answer(client: httpx.Client, shape: Shape, ask: Ask) -> tuple[float, httpx.Response]:
    """GET /api/feed for *ask*: the seconds it took and the answer (exits on any status but 200)."""
    started = time.perf_counter()
    response = client.get("/api/feed", params=ask.query())
    elapsed = time.perf_counter() - started
    if response.status_code != 200:
        raise SystemExit(
            f"{shape.name}: GET /api/feed with {ask.query()} answered {response.status_code}: {response.text[:500]}"
        )
    return elapsed, response


def in_rounds(
    shapes: list[Shape], count: Callable[[Shape], int], budget: float, step: Callable[[Shape, int], None]
) -> None:
    """``step(shape, i)`` for i = 0, 1, … in rounds, one of each shape a round (so background load, the page cache
    and the server's state weigh on every shape alike), until each has had ``count(shape)`` or the rounds have
    taken *budget* seconds per shape."""
    deadline = time.perf_counter() + budget * len(shapes)
    for index in range(max(count(shape) for shape in shapes)):
        if index and time.perf_counter() > deadline:
            return
        for shape in shapes:
            if index < count(shape):
                step(shape, index)


def time_app(client: httpx.Client, shapes: list[Shape], budget: float) -> None:
    def step(shape: Shape, index: int) -> None:
        elapsed, response = answer(client, shape, shape.asks[index])
        shape.app.append(elapsed * 1000)
        shape.items.append(len(response.json()["items"]))

    in_rounds(shapes, lambda shape: len(shape.asks), budget, step)


def time_reader(reader: FeedReader, capture: Capture, shapes: list[Shape], budget: float) -> None:
    """The pages the app answered, by FeedReader in this process (its events query recorded); then by OFFSET."""

    def keyset(shape: Shape, index: int) -> None:
        ask = shape.asks[index]
        feed, before = ask.feed(), Cursor.decode(ask.before) if ask.before else None
        started = time.perf_counter()
        statements = capture.run(lambda: reader.events(feed, limit=PAGE_SIZE, before=before))
        shape.reader.append((time.perf_counter() - started) * 1000)
        shape.statements.append(events_query(statements))

    def offset(shape: Shape, index: int) -> None:
        ask = shape.asks[index]
        feed = ask.feed()
        started = time.perf_counter()
        reader.events(feed, limit=PAGE_SIZE, offset=ask.offset)
        shape.offset.append((time.perf_counter() - started) * 1000)

    in_rounds(shapes, lambda shape: len(shape.app), budget, keyset)
    in_rounds(shapes, lambda shape: len(shape.app), budget, offset)


EVENTS_ORDER = "ORDER BY topic_news.first_seen_at DESC"
"""How FeedReader's events query (the keys of a page, newest first) is told from its other statements."""


def events_query(statements: list[tuple[str, Any]]) -> tuple[str, Any]:
    """The events query among the statements of one FeedReader.events() call (the first ordered by the feed)."""
    for statement, parameters in statements:
        if EVENTS_ORDER in statement:
            return statement, parameters
    raise SystemExit(f"no events query ({EVENTS_ORDER} …) among FeedReader's statements: {statements}")


def time_sql(reader: FeedReader, shapes: list[Shape], budget: float) -> None:
    """The events queries alone (FeedReader's statements as they ran, rows fetched, no loading of the events)."""
    with reader.db.connect() as conn:

        def step(shape: Shape, index: int) -> None:
            statement, parameters = shape.statements[index]
            started = time.perf_counter()
            conn.exec_driver_sql(statement, parameters).fetchall()
            shape.sql.append((time.perf_counter() - started) * 1000)

        in_rounds(shapes, lambda shape: len(shape.statements), budget, step)


def explain(reader: FeedReader, statement: str, parameters: Any) -> list[str]:
    """The plan of *statement*: SQLite's EXPLAIN QUERY PLAN as one line; PostgreSQL's EXPLAIN, first lines."""
    with reader.db.connect() as conn:
        if reader.db.dialect.name == "sqlite":
            rows = conn.exec_driver_sql(f"EXPLAIN QUERY PLAN {statement}", parameters).all()
            return [" ; ".join(row[-1] for row in rows)]
        rows = conn.exec_driver_sql(f"EXPLAIN {statement}", parameters).all()
        return [row[0] if len(row[0]) <= 150 else row[0][:149] + "…" for row in rows][:4]


def walk(client: httpx.Client, pages: int, budget: float) -> tuple[str | None, int, float]:
    """Follow ``next`` from page 1 towards page *pages* through the app, for at most *budget* seconds: the
    cursor of page *pages* (None if the budget ran out first), the pages walked and the mean ms a page."""
    cursor = None
    started = time.perf_counter()
    page = 1
    while page < pages:
        response = client.get("/api/feed", params={"before": cursor} if cursor else None)
        response.raise_for_status()
        cursor = response.json()["next"]
        if cursor is None:
            raise SystemExit(f"the feed ends at page {page}: fewer than {pages} pages (--page)")
        if time.perf_counter() - started > budget and page < pages - 1:
            break
        page += 1
    return (cursor if page == pages else None), page, (time.perf_counter() - started) * 1000 / page


def cursor_at(url: str, page: int) -> str:
    """The cursor of page *page* of the whole feed, from the feed's index (the last event of page - 1)."""
    with Databases() as databases, databases.of(url).connect() as conn:
        row = conn.execute(
            text(
                "SELECT first_seen_at, topic_id, news_id FROM topic_news ORDER BY first_seen_at DESC, "
                "topic_id DESC, news_id DESC LIMIT 1 OFFSET :skip"
            ),
            {"skip": (page - 1) * PAGE_SIZE - 1},
        ).one()
    from topicstreams.storage.models import UTCDateTime

    when = row[0] if isinstance(row[0], datetime) else datetime.fromisoformat(row[0])
    return Cursor(UTCDateTime().process_result_value(when, None), row[1], row[2]).encode()


def concurrent(base: str, clients: int, seconds: float) -> tuple[int, float, list[float], int]:
    """The first page with *clients* threads at once for *seconds*: (requests, elapsed, latencies ms, failures)."""
    start = threading.Barrier(clients + 1)
    latencies: list[list[float]] = [[] for _ in range(clients)]
    failures = [0] * clients
    deadline = [0.0]

    def run(index: int) -> None:
        with httpx.Client(base_url=base, timeout=60) as client:
            client.get("/api/feed")  # connected before the start
            start.wait()
            while time.perf_counter() < deadline[0]:
                began = time.perf_counter()
                response = client.get("/api/feed")
                latencies[index].append((time.perf_counter() - began) * 1000)
                failures[index] += response.status_code != 200

    threads = [threading.Thread(target=run, args=(index,), daemon=True) for index in range(clients)]
    for thread in threads:
        thread.start()
    deadline[0] = time.perf_counter() + 3600
    start.wait()
    began = time.perf_counter()
    deadline[0] = began + seconds
    for thread in threads:
        thread.join()
    elapsed = time.perf_counter() - began
    every = [value for values in latencies for value in values]
    return len(every), elapsed, every, sum(failures)


def make_shapes(topics: list[str], requests: int, page: int, rnd: random.Random) -> list[Shape]:
    engines = list(ENGINES)
    return [
        Shape("no filter", [Ask() for _ in range(requests)]),
        Shape("one topic", [Ask(topic=rnd.choice(topics)) for _ in range(requests)]),
        Shape("one engine", [Ask(engine=engines[index % len(engines)]) for index in range(requests)]),
        Shape("topic × engine", [Ask(topic=rnd.choice(topics), engine=rnd.choice(engines)) for _ in range(requests)]),
        Shape(f"search q={SEARCH_WORD}", [Ask(q=SEARCH_WORD) for _ in range(requests)]),
        Shape(f"page {page:,} by cursor", []),  # its cursor comes from the walk
    ]


# -- the run ----------------------------------------------------------------------------------------------------


def built(summary: Summary) -> str:
    return (
        f"{summary.batches:,} store batches from {summary.first:%Y-%m-%d %H:%M} to {summary.last:%Y-%m-%d %H:%M}"
        f" UTC, {summary.planted_titles:,} titles with {SEARCH_WORD!r}"
    )


def prepare(args: argparse.Namespace, params: Params) -> str:
    """The database URL, built (or reused) for *params*."""
    if args.db:
        label = make_url(args.db).render_as_string(hide_password=True)
        upgrade(args.db)
        if not args.rebuild and pg_usable(args.db, params):
            print(f"database: {label} already holds this data ({params.key}): reused")
        else:
            started = time.perf_counter()
            print(f"database: {label}: emptying the feed's tables and building {params.key} (COPY)", flush=True)
            summary = build_postgresql(args.db, params)
            print(f"built in {time.perf_counter() - started:.0f} s (VACUUM ANALYZE included): {built(summary)}")
        return args.db
    folder = Path(args.cache) if args.cache else REPO / ".topicstreams" / "bench"
    path = folder / f"{params.key}.db"
    if not args.rebuild and sqlite_usable(path):
        print(f"database: {path} (cached, reused; --rebuild to build it again)")
    else:
        started = time.perf_counter()
        print(f"database: {path}: building (SQLite, executemany, {CHUNK_EVENTS:,} events a transaction)", flush=True)
        summary = build_sqlite(path, params)
        print(
            f"built in {time.perf_counter() - started:.0f} s, {path.stat().st_size / 2**20:,.0f} MiB: {built(summary)}"
        )
    return f"sqlite:///{path}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--events", type=int, default=1_000_000, help="feed events (default 1000000)")
    parser.add_argument("--topics", type=int, default=200, help="topics (default 200)")
    parser.add_argument("--seed", type=int, default=1, help="the data's random seed (default 1)")
    parser.add_argument("--requests", type=int, default=200, help="requests timed per shape (default 200)")
    parser.add_argument("--page", type=int, default=1000, help="the deep page reached by cursor (default 1000)")
    parser.add_argument(
        "--seconds", type=float, default=10.0, help=f"duration of the {CONCURRENCY}-client run (default 10)"
    )
    parser.add_argument(
        "--budget",
        type=float,
        default=20.0,
        help="seconds at most for each shape's series (fewer requests when slower; default 20)",
    )
    parser.add_argument("--db", help="a PostgreSQL URL (postgresql+psycopg://…) instead of the cached SQLite file")
    parser.add_argument("--cache", help="folder of the cached SQLite files (default .topicstreams/bench)")
    parser.add_argument("--rebuild", action="store_true", help="build the database even if a cached one fits")
    args = parser.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit("terminated"))  # the app's process is stopped on the way out
    if args.db and make_url(args.db).get_backend_name() != "postgresql":
        parser.error("--db takes a PostgreSQL URL; SQLite is the default (a cached file)")
    if args.events < PAGE_SIZE * args.page + 1:
        parser.error(f"--page {args.page} needs more than {PAGE_SIZE * args.page} events")

    params = Params(args.events, args.topics, args.seed)
    url = prepare(args, params)
    kind = "PostgreSQL" if args.db else "SQLite"
    with Databases() as databases:
        figures = describe(databases.of(url))
        with databases.of(url).connect() as conn:
            version = conn.scalar(text("SELECT version()" if args.db else "SELECT 'SQLite ' || sqlite_version()"))
    print(
        f"{figures['topic_news']:,} events, {figures['news']:,} articles, {figures['topic_news_engines']:,} "
        f"engine sightings ({figures['topic_news_engines'] / figures['topic_news']:.2f} an event), "
        f"{figures['topics']} topics; {version.split(',')[0]}"
    )
    print(
        f"search word {SEARCH_WORD!r}: in {figures['titles']:,} titles ({figures['titles'] / figures['news']:.2%} "
        f"of the articles); the search finds {figures['search_news']:,} articles, {figures['search_events']:,} "
        f"events"
    )

    rnd = random.Random(args.seed)
    with Databases() as databases:
        topics = FeedReader(databases.of(url)).topic_names()
    shapes = make_shapes([name for name, _ in topics], args.requests, args.page, rnd)
    deep = shapes[-1]

    with tempfile.TemporaryDirectory(prefix="topicstreams-feedbench-") as tmp:
        served = Served(url, Path(tmp) / "app.log")
        try:
            with httpx.Client(base_url=served.base, timeout=120) as client:
                cursor, walked, walk_ms = walk(client, args.page, args.budget * 2)
                if cursor is None:  # the app is too slow to walk there within the budget
                    cursor = cursor_at(url, args.page)
                deep.asks = [Ask(before=cursor, offset=(args.page - 1) * PAGE_SIZE)] * args.requests
                for shape in shapes:  # warm-up: the running app has served each kind of page before
                    for ask in shape.asks[:5]:
                        answer(client, shape, ask)
                time_app(client, shapes, args.budget)
            requests, elapsed, latencies, failures = concurrent(served.base, CONCURRENCY, args.seconds)
        finally:
            served.stop()

    reader = FeedReader(make_reader(url))
    capture = Capture(reader.db)
    time_reader(reader, capture, shapes, args.budget)
    time_sql(reader, shapes, args.budget)
    for shape in shapes:
        shape.plan = explain(reader, *shape.statements[0])
    keyset = reader.events(FeedFilter(), limit=PAGE_SIZE, before=Cursor.decode(cursor))
    by_offset = reader.events(FeedFilter(), limit=PAGE_SIZE, offset=(args.page - 1) * PAGE_SIZE)
    same = [event.cursor for event in keyset.items] == [event.cursor for event in by_offset.items]
    statements = capture.run(lambda: reader.events(FeedFilter(), limit=PAGE_SIZE))
    load = statements[statements.index(events_query(statements)) + 1 :]
    load_plans = [explain(reader, statement, parameters) for statement, parameters in load]
    reader.db.dispose()

    report(args, kind, shapes, walked, walk_ms, same, (requests, elapsed, latencies, failures), load_plans)
    if not same:
        sys.exit(f"page {args.page} by cursor and by OFFSET differ")


def report(
    args: argparse.Namespace,
    kind: str,
    shapes: list[Shape],
    walked: int,
    walk_ms: float,
    same: bool,
    load: tuple[int, float, list[float], int],
    load_plans: list[list[str]],
) -> None:
    deep, page1 = shapes[-1], shapes[0]
    print()
    print(
        f"{kind}, page size {PAGE_SIZE}, ms. app: GET /api/feed through uvicorn, one client; reader: the same pages "
        f"by FeedReader.events() in this process (same read-only engine, no HTTP); SQL: its events query alone; "
        f"OFFSET: the same pages by LIMIT … OFFSET (FeedReader.events(offset=…), in this process)"
    )
    print(
        f"{'shape':<22} {'n':>4} {'app p50':>8} {'app p95':>8} {'reader p50':>10} {'reader p95':>10} "
        f"{'SQL p50':>8} {'SQL p95':>8} {'OFFSET p50':>10} {'OFFSET p95':>10} {'events':>6}"
    )
    for shape in shapes:
        print(
            f"{shape.name:<22} {len(shape.app):>4} {p50(shape.app):>8.2f} {p95(shape.app):>8.2f} "
            f"{p50(shape.reader):>10.2f} {p95(shape.reader):>10.2f} {p50(shape.sql):>8.2f} {p95(shape.sql):>8.2f} "
            f"{p50(shape.offset):>10.2f} {p95(shape.offset):>10.2f} {statistics.mean(shape.items):>6.1f}"
        )
    if any(len(shape.app) < args.requests for shape in shapes):
        print(
            f"(fewer than {args.requests} requests: the rounds, one request of each shape a round, took over "
            f"--budget {args.budget:g} s a shape)"
        )
    offset = (args.page - 1) * PAGE_SIZE
    how = (
        f"walked pages 1-{args.page - 1:,} by cursor through the app first ({walk_ms:.2f} ms a page)"
        if walked == args.page
        else f"the walk by cursor through the app stopped at page {walked:,} after {args.budget * 2:g} s "
        f"({walk_ms:.2f} ms a page): page {args.page:,}'s cursor taken from the index instead"
    )
    print(
        f"(page 1 by OFFSET is OFFSET 0, the cursor's own statement; page {args.page:,} by OFFSET skips "
        f"{offset:,} events; {how}; page {args.page:,} by cursor and by OFFSET: "
        f"{'the same events' if same else 'DIFFERENT events'})"
    )
    requests, elapsed, latencies, failures = load
    print()
    print(
        f"{CONCURRENCY} concurrent clients (threads, one httpx.Client each), first page, {elapsed:.1f} s: "
        f"{requests / elapsed:,.1f} requests/s (p50 {p50(latencies):.1f} ms, p95 {p95(latencies):.1f} ms, "
        f"{failures} failed)"
    )
    print()
    print(f"{'EXPLAIN QUERY PLAN' if kind == 'SQLite' else 'EXPLAIN (first lines)'} of the events query:")
    for shape in shapes:
        if kind == "SQLite":
            print(f"  {shape.name:<22} {shape.plan[0]}")
        else:
            print(f"  {shape.name}:")
            print("\n".join(f"    {line}" for line in shape.plan))
    for name, plan in zip(("articles and topics", "engines"), load_plans, strict=False):
        if kind == "SQLite":
            print(f"  {'(page load: ' + name + ')':<22} {plan[0]}")
        else:
            print(f"  (page load: {name}):")
            print("\n".join(f"    {line}" for line in plan))
    print()
    worst = max(shapes, key=lambda shape: p95(shape.app))
    ratio50, ratio95 = p50(deep.app) / p50(page1.app), p95(deep.app) / p95(page1.app)
    scope = "" if kind == "SQLite" else " (set for SQLite; for reference)"
    print(
        f"target: every shape p95 <= {TARGET_P95_MS:.0f} ms{scope}: "
        f"{'PASS' if p95(worst.app) <= TARGET_P95_MS else 'FAIL'} (worst: {worst.name}, {p95(worst.app):.2f} ms)"
    )
    print(
        f"target: page {args.page:,} by cursor within {TARGET_DEEP_RATIO}x of page 1 (p50 and p95): "
        f"{'PASS' if max(ratio50, ratio95) <= TARGET_DEEP_RATIO else 'FAIL'} "
        f"(p50 {ratio50:.2f}x, p95 {ratio95:.2f}x; by OFFSET: p50 {p50(deep.offset) / p50(page1.offset):.1f}x)"
    )


if __name__ == "__main__":
    main()
