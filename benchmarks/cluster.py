"""Benchmark of lease mode at internet scale, simulated: N nodes claiming 10,000 topics × 4 engines from one real
PostgreSQL on a scaled clock, nodes frozen, killed, joining and blocked on a script — beside the same script under
static shards.

    python benchmarks/cluster.py [--nodes 20] [--topics 10000] [--engines 4] [--minutes 3.5 | --scale S]
                                 [--real-seconds 40] [--interval 600] [--lease 120] [--capacity 1.5] [--look 10]
                                 [--url URL] [--seed 1]

Why: lease mode (``scraper.assignment: lease``) hands the shared schedule out through PostgreSQL
(:mod:`topicstreams.storage.leases`: ``FOR UPDATE SKIP LOCKED`` claims, leases that expire, re-arms guarded by the
claim's token). Three crawl processes in Chromium (the system tests) show that it works; whether it holds at the size
the issue names — 20 nodes, 10,000 topics × 4 engines, nodes dying and joining, one engine blocked on a third of the
exit IPs — only a simulation on this machine can show. The targets (design bounds, not the tests'):

* **0 slots scraped twice without an expired lease** (a lease that lapsed while its node was frozen may end in a
  second scrape: the guard then keeps the late node from re-arming; such slots are counted apart);
* **takeover ≤ lease + one interval**: from a node's death until every row it held is scraped by another node;
* **a new node at 80 % of its fair share within two intervals** (its scrapes in a tenth of an interval against the
  cluster's scrapes in it divided by the nodes alive);
* **claim p95 ≤ 20 ms at 20 nodes on this machine**: real milliseconds around the ``claim`` call, held to the bound
  at a real cluster's pace (see below); the same figure under the scaled clock, which puts many times a real
  cluster's statements on the server, is shown beside it;
* **every topic of the blocked engine still scraped every interval** by the nodes that reach it: every slot of that
  engine falling in the block is scraped, within an interval of it.

The simulation. The database is PostgreSQL with the project's schema (``topicstreams.storage.upgrade``): a
throw-away server of its own (``tests/support/postgres_server.py``, with ``pg_stat_statements`` loaded) unless ``--url``
names an empty database. --topics active topics (``ensure_topics``), the schedule's rows made by ``reconcile`` at
the start (the first slots spread at random over an interval, as a first node would make them). Time is simulated
seconds from a fixed moment, running --scale times faster than the wall clock (by default the scale that makes the
script last --minutes, 3.5). Every node is a thread with its own engine (``make_database``, pool of one, as a crawl
process has its own) and calls exactly the production functions with the simulated ``now=``:

* every --look simulated seconds on average (each gap drawn in 0.5–1.5 × that, so that no node keeps one place
  among the others' looks; 10: lease mode's poll is 5 s, but a real node claims one row at a time as it can
  start it; here a node claims the rows it can start before its next look, which keeps the statements per scrape
  at a real node's order while the clock runs fast) it re-arms the topics whose scrape ended (``next_slot`` from the
  scrape's end, the jitter ``scraper.pacing.jitter_ratio`` 0.25; ``rearm`` in one statement per engine), extends its
  leases every quarter lease (``extend``), reconciles every interval (``reconcile``, idempotent), and per engine
  ``claim``s ``limit`` = the starts its pace leaves it before the next look (``next_due`` when none came, as a real
  node asks when to look again);
* an engine of a node starts a topic every *pace* simulated seconds at most — its budget on its route: pace =
  interval × nodes / (topics × --capacity), so the cluster can do --capacity (1.5) times the demand of one scrape
  per topic and engine an interval; a topic's pages take a scrape time drawn lognormal (median 20 s, 1 in 100 over
  80 s, at most 300 s: longer than the lease, so leases held through a scrape must be extended);
* a scrape is recorded (engine, topic, slot, node, start, end) when it ends and its node re-arms it; a killed node's
  unfinished scrapes are lost with it.

The script, in intervals (20 nodes; counts scale with --nodes): 0 – steady state; 0.75 – one node frozen (SIGSTOP)
for 1.5 leases: its leases lapse, the others take its rows, it wakes and finishes its scrapes (its re-arms refused);
1.5 – 2 nodes killed (no release: their leases expire); 2.75 – 2 new nodes join (lease + an interval after the
kill); 3.75 to 5.75 – google blocked on a third of the nodes alive (rounded down: 6 of 20, so the 14 that reach it
have 1.05 times its demand): they release its claims and claim none until it ends (route-aware, as a cooling
engine); the script ends 1.5 intervals after the block, so that its last slots have their whole interval.

Then the nodes alive go on, with the claims they hold, for --real-seconds (40) wall seconds at a real cluster's
pace: the clock slows to 1x and a node looks every pace, so each of its engines claims one row at a time as a real
node does. The claim latency held to the bound, and the server's statements per second of a real cluster of this
size, are this phase's. At its end every node stops as SIGTERM stops one: its claims go back (``release_tokens``).

The baseline, the same script under static shards (``scraper.shard: "i/n"``, ``topic_supply.in_shard``), is
simulated in virtual time (no database: a shard needs none): node i scrapes its 1/n of the topics on the same
first slots, pace, scrape times and jitter; a dead node's shard goes unscraped; a joining node has no shard (one
needs ``n`` changed on every node together); a blocked engine's topics on a blocked node wait for the block's end.

Printed: the plan, one line per simulated interval while it runs, then the two sides side by side (scrapes; slots
scraped twice and how many with an expired lease; slots late by more than an interval and never scraped, overall
and per phase of the script; takeover; new nodes' time to 80 % of their share; the blocked engine's coverage), the
schedule's statements (calls, per real and per simulated second, p50/p95 real ms; the server's transactions and
statements per second from ``pg_stat_database`` and ``pg_stat_statements``; the pool's ``pool_pre_ping`` is a
transaction of its own per checkout, as in a crawl process), for the scripted run and the real pace, how well the
nodes kept up with the clock (a node that looks late makes the figures the machine's, not the design's), and a
line per target. The script exits 0 whatever the figures (non-zero only when it cannot run).
"""

from __future__ import annotations

import argparse
import bisect
import heapq
import math
import os
import random
import signal
import statistics
import sys
import threading
import time
from collections import defaultdict
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
if __package__ in (None, ""):  # run as a script: make the project (and tests.support.postgres_server) importable
    sys.path.insert(0, str(REPO))

from sqlalchemy import Engine, text
from sqlalchemy.exc import SQLAlchemyError

from topicstreams import ENGINES
from topicstreams.crawl.supply import in_shard
from topicstreams.storage import ensure_topics, upgrade
from topicstreams.storage.db import make_database
from topicstreams.storage.leases import (
    Claim,
    Rearm,
    claim,
    extend,
    next_due,
    next_slot,
    rearm,
    reconcile,
    release,
    release_tokens,
)

T0 = datetime(2026, 12, 1, tzinfo=UTC)
"""Simulated second 0 (a fixed moment: nothing depends on the day the benchmark runs)."""
US = timedelta(microseconds=1)
JITTER = 0.25
"""``scraper.pacing.jitter_ratio``'s default."""
SCRAPE_MEDIAN, SCRAPE_SIGMA, SCRAPE_MAX = 20.0, 0.6, 300.0
"""A topic's pages: lognormal simulated seconds (median 20 s, 1 in 100 over 80 s), at most 300 s."""
SHARE_BINS = 10
"""A new node's share is judged over a tenth of an interval."""
SHARE_TARGET = 0.8
TARGET_CLAIM_P95_MS = 20.0
KINDS = ("claim", "next_due", "rearm", "extend", "release", "release_tokens", "reconcile")

# ---- the plan and the script ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Plan:
    nodes: int
    topics: int
    engines: tuple[str, ...]
    interval: float
    lease: float
    capacity: float
    look: float
    seed: int

    @property
    def pace(self) -> float:
        """Simulated seconds between an engine's topic starts on one node."""
        return self.interval * self.nodes / (self.topics * self.capacity)

    @property
    def blocked_engine(self) -> str:
        return "google" if "google" in self.engines else self.engines[0]


@dataclass(frozen=True)
class Script:
    """The events, in simulated seconds; node names."""

    initial: tuple[str, ...]
    frozen: str
    freeze_at: float
    freeze_until: float
    killed: tuple[str, ...]
    kill_at: float
    joined: tuple[str, ...]
    join_at: float
    blocked: tuple[str, ...]
    block_at: float
    block_until: float
    end: float

    @property
    def names(self) -> tuple[str, ...]:
        return self.initial + self.joined

    def phases(self) -> list[tuple[str, float, float]]:
        """The script's stretches, by slot time: a slot belongs to the stretch its time falls in."""
        return [
            ("steady", 0.0, self.freeze_at),
            ("a node frozen", self.freeze_at, self.kill_at),
            (f"{len(self.killed)} killed", self.kill_at, self.join_at),
            (f"{len(self.joined)} joined", self.join_at, self.block_at),
            (f"engine blocked on {len(self.blocked)}", self.block_at, self.block_until),
        ]

    def alive(self, name: str, at: float) -> bool:
        if name in self.joined and at < self.join_at:
            return False
        return not (name in self.killed and at >= self.kill_at)


def node_name(index: int, width: int) -> str:
    return f"node-{index:0{width}d}"


def make_script(plan: Plan, rng: random.Random) -> Script:
    width = max(2, len(str(plan.nodes * 2)))
    initial = tuple(node_name(i + 1, width) for i in range(plan.nodes))
    turnover = max(1, round(plan.nodes / 10))
    killed = tuple(sorted(rng.sample(initial, turnover))) if plan.nodes > turnover else ()
    rest = [name for name in initial if name not in killed]
    frozen = rng.choice(rest)
    joined = tuple(node_name(plan.nodes + i + 1, width) for i in range(len(killed)))
    alive = [name for name in initial if name not in killed] + list(joined)
    blocked = tuple(sorted(rng.sample(alive, max(1, len(alive) // 3))))
    interval = plan.interval
    block_until = 5.75 * interval
    return Script(
        initial=initial,
        frozen=frozen,
        freeze_at=0.75 * interval,
        freeze_until=0.75 * interval + 1.5 * plan.lease,
        killed=killed,
        kill_at=1.5 * interval,
        joined=joined,
        join_at=2.75 * interval,
        blocked=blocked,
        block_at=3.75 * interval,
        block_until=block_until,
        end=block_until + 1.5 * interval,
    )


# ---- records ----------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Scrape:
    engine: str
    topic_id: int
    slot: int
    """Microseconds from T0: the slot the claim was anchored to."""
    node: str
    start: float
    end: float
    lapsed: bool
    """Its lease had lapsed before the scrape ended, or its re-arm was refused (another node held the row)."""


def micros(at: datetime) -> int:
    return (at - T0) // US


def moment(seconds: float) -> datetime:
    return T0 + timedelta(seconds=seconds)


def scrape_time(rng: random.Random) -> float:
    return min(SCRAPE_MAX, rng.lognormvariate(math.log(SCRAPE_MEDIAN), SCRAPE_SIGMA))


# ---- the scaled clock -------------------------------------------------------------------------------------------


class Clock:
    """Simulated seconds since T0: ``scale`` times faster than the wall clock once started, and at the wall clock's
    pace from ``slow_from`` (simulated seconds) on."""

    def __init__(self, scale: float, slow_from: float = math.inf) -> None:
        self.scale = scale
        self.slow_from = slow_from
        self.started = 0.0

    def start(self) -> None:
        self.started = time.perf_counter()

    def elapsed(self, seconds: float) -> float:
        """Wall seconds from the start to simulated second *seconds*."""
        if seconds <= self.slow_from:
            return seconds / self.scale
        return self.slow_from / self.scale + seconds - self.slow_from

    def seconds(self) -> float:
        elapsed = time.perf_counter() - self.started
        fast = elapsed * self.scale
        return fast if fast <= self.slow_from else self.slow_from + elapsed - self.slow_from / self.scale

    def sleep_until(self, seconds: float, stop: threading.Event) -> None:
        wait = self.elapsed(seconds) - (time.perf_counter() - self.started)
        if wait > 0:
            stop.wait(wait)


# ---- the lease side: a node -------------------------------------------------------------------------------------


@dataclass
class Held:
    engine: str
    claim: Claim
    start: float
    end: float


@dataclass
class NodeLog:
    """What one node measured in a phase: its scrapes, its statements' real ms, how late it looked."""

    scrapes: list[Scrape] = field(default_factory=list)
    ms: dict[str, list[float]] = field(default_factory=lambda: {kind: [] for kind in KINDS})
    lags: list[float] = field(default_factory=list)
    released: int = 0
    refused: int = 0
    """Re-arms refused: the row's lease had been taken by another node."""


class SimNode(threading.Thread):
    """One node: its own engine and connection, the production functions on the scaled clock (see the module).

    It looks every ``plan.look`` simulated seconds through the script, then every pace (one row claimed at a time)
    until ``until``, where it stops as SIGTERM stops a node: its claims released."""

    def __init__(
        self,
        name: str,
        plan: Plan,
        script: Script,
        url: str,
        clock: Clock,
        stop: threading.Event,
        seed: int,
        until: float,
    ) -> None:
        super().__init__(name=name, daemon=True)
        self.node = name
        self.plan = plan
        self.script = script
        self.until = until
        self.url = url
        self.clock = clock
        self.stop = stop
        self.rng = random.Random(seed)
        self.logs = (NodeLog(), NodeLog())
        """The scripted run's, then the real pace's."""
        self.error: BaseException | None = None

    def log_at(self, now: float) -> NodeLog:
        return self.logs[now >= self.script.end]

    def run(self) -> None:
        db = make_database(self.url, pool_size=1, max_overflow=1)
        try:
            self.loop(db)
        except BaseException as exc:
            self.error = exc
        finally:
            db.dispose()

    @contextmanager
    def timed(self, log: NodeLog, kind: str) -> Iterator[None]:
        started = time.perf_counter()
        yield
        log.ms[kind].append((time.perf_counter() - started) * 1000)

    def loop(self, db: Engine) -> None:
        plan, script, node = self.plan, self.script, self.node
        wake = (script.join_at if node in script.joined else 0.0) + self.rng.uniform(0, plan.look)
        next_extend, next_reconcile = wake + plan.lease / 4, wake
        next_start = dict.fromkeys(plan.engines, 0.0)
        quiet_until = dict.fromkeys(plan.engines, 0.0)
        held: list[Held] = []
        lease_until: dict[str, float] = {}
        frozen = blocked_now = False
        while True:
            self.clock.sleep_until(wake, self.stop)
            if self.stop.is_set():
                return
            now = self.clock.seconds()
            log = self.log_at(now)
            # the next look: every look on average, drawn (as a real node's looks follow its starts and the due
            # times) so that no node keeps the same place among the others' looks, and with it a bigger or smaller
            # share of the rows coming due
            look = (plan.look if now < script.end else plan.pace) * self.rng.uniform(0.5, 1.5)
            log.lags.append(now - wake)
            if now >= self.until:  # stopping (SIGTERM): every claim goes back at once
                tokens = sorted({each.claim.token for each in held})
                if tokens:
                    with self.timed(log, "release_tokens"):
                        release_tokens(db, tokens)
                return
            if node in script.killed and now >= script.kill_at:
                return  # no release: its leases expire

            ended = [each for each in held if each.end <= now]
            if ended:
                held = [each for each in held if each.end > now]
                self.finish(db, log, ended, lease_until, now)
            if node == script.frozen and not frozen and now >= script.freeze_at:
                frozen = True
                self.clock.sleep_until(script.freeze_until, self.stop)
                woke = self.clock.seconds()
                pause = woke - now
                for each in held:  # nothing started or went on while stopped
                    if each.start >= now:
                        each.start += pause
                    each.end += pause
                for engine in plan.engines:
                    next_start[engine] = max(next_start[engine], now) + pause
                now, wake, next_extend = woke, woke, woke

            blocked = (
                node in script.blocked
                and plan.blocked_engine in plan.engines
                and script.block_at <= now < script.block_until
            )
            if blocked and not blocked_now:  # the engine is blocked here: its claims go back at once
                engine = plan.blocked_engine
                given = [each.claim for each in held if each.engine == engine]
                held = [each for each in held if each.engine != engine]
                if given:
                    with self.timed(log, "release"):
                        log.released += len(release(db, engine, given))
            blocked_now = blocked

            if now >= next_extend:
                tokens = sorted({each.claim.token for each in held})
                if tokens:
                    with self.timed(log, "extend"):
                        kept = extend(db, tokens, plan.lease, now=moment(now))
                    for token in kept:
                        lease_until[token] = now + plan.lease
                next_extend = now + plan.lease / 4

            if now >= next_reconcile:
                for engine in plan.engines:
                    with self.timed(log, "reconcile"):
                        reconcile(db, engine, plan.interval, now=moment(now))
                next_reconcile = now + plan.interval

            horizon = now + look
            for engine in plan.engines:
                if (blocked_now and engine == plan.blocked_engine) or now < quiet_until[engine]:
                    continue
                free_from = max(next_start[engine], now)
                if free_from >= horizon:
                    continue
                limit = math.ceil((horizon - free_from) / plan.pace)
                with self.timed(log, "claim"):
                    taken = claim(db, engine, node, plan.lease, limit=limit, now=moment(now))
                for each in taken:
                    begin = max(next_start[engine], now)
                    next_start[engine] = begin + plan.pace
                    held.append(Held(engine, each, begin, begin + scrape_time(self.rng)))
                if taken:
                    lease_until[taken[0].token] = now + plan.lease
                else:  # as a real node asks when to look again (its poll: the look here)
                    with self.timed(log, "next_due"):
                        due = next_due(db, engine)
                    quiet_until[engine] = min(horizon, (due - T0).total_seconds()) if due else horizon

            wake += look
            if now < script.end <= wake:  # the script is over: the real pace from its end on
                wake = script.end + self.rng.uniform(0, plan.pace)
            if wake < now - look:  # far behind the clock: look again at once, without a burst of looks
                wake = now

    def finish(self, db: Engine, log: NodeLog, ended: list[Held], lease_until: dict[str, float], now: float) -> None:
        """Re-arm the ended scrapes, one statement per engine, and record them."""
        plan = self.plan
        by_engine: dict[str, list[Held]] = defaultdict(list)
        for each in ended:
            by_engine[each.engine].append(each)
        for engine, items in by_engine.items():
            done = [
                Rearm(each.claim, *next_slot(each.claim.slot_at, moment(each.end), plan.interval, JITTER, self.rng))
                for each in items
            ]
            with self.timed(log, "rearm"):
                kept = rearm(db, engine, self.node, done, now=moment(now))
            for each in items:
                refused = each.claim.topic_id not in kept
                log.refused += refused
                lapsed = refused or each.end > lease_until.get(each.claim.token, 0.0)
                log.scrapes.append(
                    Scrape(
                        engine, each.claim.topic_id, micros(each.claim.slot_at), self.node, each.start, each.end, lapsed
                    )
                )


# ---- the lease side: the run ------------------------------------------------------------------------------------


@dataclass
class Phase:
    """One stretch of the run: its nodes' logs, its wall and simulated seconds, the server's counts over it."""

    logs: dict[str, NodeLog]
    seconds: float
    """Wall seconds of the stretch (the statements' rates are per these)."""
    simulated: float
    scale: float
    server_seconds: float = 0.0
    """Wall seconds the server's counts were taken over."""
    transactions: int = 0
    statements: int | None = None
    claim_mean_ms: float | None = None
    claim_max_ms: float | None = None

    def ms(self, kind: str) -> list[float]:
        return [ms for log in self.logs.values() for ms in log.ms[kind]]


@dataclass
class LeaseRun:
    anchors: dict[tuple[str, int], int]
    names: dict[int, str]
    held_at_kill: list[tuple[str, int, int]]
    scripted: Phase
    real: Phase
    with_statements: bool

    @property
    def scrapes(self) -> list[Scrape]:
        return [scrape for log in self.scripted.logs.values() for scrape in log.scrapes]


class Counters:
    """The server's counts for this database. Where ``pg_stat_statements`` is loaded (reset at each phase's start):
    its statements, its COMMITs and ROLLBACKs as the transactions, the claim statement's execution times. Elsewhere
    ``pg_stat_database``'s transactions (the pool's pings among them; a backend reports them up to 10 s late, so
    the phases' figures blur into each other)."""

    def __init__(self, db: Engine) -> None:
        self.db = db
        self.with_statements = self.reset()
        self.transactions, self.statements = self.read()
        self.since = time.perf_counter()

    def reset(self) -> bool:
        try:
            with self.db.begin() as conn:
                conn.execute(text("CREATE EXTENSION IF NOT EXISTS pg_stat_statements"))
            with self.db.begin() as conn:
                conn.execute(text("SELECT pg_stat_statements_reset()"))
            return True
        except SQLAlchemyError:
            return False

    def read(self) -> tuple[int, int]:
        with self.db.connect() as conn:
            if not self.with_statements:
                return int(
                    conn.execute(
                        text(
                            "SELECT xact_commit + xact_rollback FROM pg_stat_database "
                            "WHERE datname = current_database()"
                        )
                    ).scalar()
                    or 0
                ), 0
            transactions, statements = conn.execute(
                text(
                    "SELECT sum(calls) FILTER (WHERE query IN ('COMMIT', 'ROLLBACK')), sum(calls)"
                    " FROM pg_stat_statements s"
                    " JOIN pg_database d ON d.oid = s.dbid WHERE d.datname = current_database()"
                )
            ).one()
        return int(transactions or 0), int(statements or 0)

    def take(self, phase: Phase, seconds: float | None = None) -> None:
        """Put the counts since the last take (or the start) into *phase*, over *seconds* (default: the wall
        seconds since), and start counting anew."""
        transactions, statements = self.read()
        phase.server_seconds = seconds if seconds is not None else time.perf_counter() - self.since
        phase.transactions = transactions - self.transactions
        if self.with_statements:
            phase.statements = statements - self.statements
            with self.db.connect() as conn:
                mean, most = conn.execute(
                    text(
                        "SELECT sum(total_exec_time) / nullif(sum(calls), 0), max(max_exec_time)"
                        " FROM pg_stat_statements"
                        " WHERE query LIKE '%FOR UPDATE OF s SKIP LOCKED%'"
                    )
                ).one()
            if mean is not None:
                phase.claim_mean_ms, phase.claim_max_ms = float(mean), float(most)
            self.reset()
        self.transactions, self.statements = self.read()
        self.since = time.perf_counter()


def prepare(url: str, plan: Plan) -> tuple[dict[int, str], dict[tuple[str, int], int]]:
    """The schema, the topics, the schedule's first slots; returns id → name and (engine, id) → first slot."""
    upgrade(url)
    db = make_database(url)
    try:
        with db.connect() as conn:
            if conn.execute(text("SELECT count(*) FROM topics")).scalar():
                raise SystemExit("--url must name an empty database (the benchmark fills topics and schedule)")
        names = [f"topic {index:05d}" for index in range(plan.topics)]
        ids = ensure_topics(db, names, active=True)
        for engine in plan.engines:  # as the first node to open its supplies makes them
            reconcile(db, engine, plan.interval, now=T0)
        with db.begin() as conn:
            anchors = {
                (engine, topic_id): micros(slot)
                for engine, topic_id, slot in conn.execute(text("SELECT engine, topic_id, slot_at FROM schedule"))
            }
            conn.execute(text("ANALYZE"))
    finally:
        db.dispose()
    return {topic_id: name for name, topic_id in ids.items()}, anchors


SETTLE = 2.0
"""Wall seconds into the real pace before the server's counts switch phase (the backends report every second)."""


def run_leases(
    url: str, plan: Plan, script: Script, scale: float | None, minutes: float, real_seconds: float
) -> LeaseRun:
    started = time.perf_counter()
    names, anchors = prepare(url, plan)
    watcher = make_database(url)
    until = script.end + real_seconds
    clock = Clock(scale or script.end / (minutes * 60), slow_from=script.end)
    stop = threading.Event()
    rng = random.Random(plan.seed)
    nodes = [SimNode(name, plan, script, url, clock, stop, rng.randrange(2**32), until) for name in script.names]
    scripted = Phase({}, script.end / clock.scale, script.end, clock.scale)
    real = Phase({}, real_seconds, real_seconds, 1.0)
    held_at_kill: list[tuple[str, int, int]] = []
    try:
        counters = Counters(watcher)
        print(
            f"set up in {time.perf_counter() - started:.0f} s; simulating {script.end:,.0f} s at {clock.scale:.1f}x:"
            f" about {script.end / clock.scale:.0f} s, then {real_seconds:g} s at a real cluster's pace (the clock "
            "at 1x, one row claimed at a time)",
            flush=True,
        )
        clock.start()
        for each in nodes:
            each.start()
        shown, switched = 0, False
        while any(each.is_alive() for each in nodes):
            time.sleep(0.2)
            now = clock.seconds()
            if script.killed and not held_at_kill and now >= script.kill_at:
                for each in nodes:
                    if each.node in script.killed:
                        each.join()  # it stops at its first look after the kill
                held_at_kill.extend(held_rows(watcher, script.killed))
            if (shown + 1) * plan.interval <= now < script.end:
                shown += 1
                progress(shown, plan, script, nodes, now)
            if not switched and now >= script.end + SETTLE:
                counters.take(scripted, clock.elapsed(script.end) + SETTLE)
                switched = True
            failed = [each for each in nodes if each.error is not None]
            if failed:
                raise RuntimeError(f"{failed[0].node} failed: {failed[0].error!r}") from failed[0].error
        time.sleep(1.0)  # the backends' last statistics reach the views within a second of their end
        counters.take(real, real_seconds - SETTLE)
    finally:
        stop.set()
        for each in nodes:
            each.join(timeout=30)
        watcher.dispose()
    scripted.logs = {each.node: each.logs[0] for each in nodes}
    real.logs = {each.node: each.logs[1] for each in nodes if script.alive(each.node, script.end)}
    return LeaseRun(anchors, names, held_at_kill, scripted, real, counters.with_statements)


def held_rows(db: Engine, killed: Sequence[str]) -> list[tuple[str, int, int]]:
    """The rows the dead nodes hold (their leases not yet expired): (engine, topic id, slot)."""
    with db.connect() as conn:
        rows = conn.execute(
            text(
                "SELECT engine, topic_id, slot_at FROM schedule WHERE lease_node = ANY(CAST(:nodes AS text[])) "
                "AND lease_token IS NOT NULL"
            ),
            {"nodes": list(killed)},
        ).all()
    return [(engine, topic_id, micros(slot)) for engine, topic_id, slot in rows]


def progress(shown: int, plan: Plan, script: Script, nodes: list[SimNode], now: float) -> None:
    scrapes = sum(len(each.logs[0].scrapes) for each in nodes)
    alive = sum(script.alive(each.node, now) for each in nodes)
    lags = [lag for each in nodes for lag in each.logs[0].lags[-50:]]
    claims = [ms for each in nodes for ms in each.logs[0].ms["claim"][-50:]]
    print(
        f"  interval {shown}: {alive} nodes, {scrapes:,} scrapes so far (demand {plan.topics * len(plan.engines):,}"
        f" an interval); recent looks late p95 {quantile(lags, 0.95):.1f} s simulated, claims p95 "
        f"{quantile(claims, 0.95):.1f} ms",
        flush=True,
    )


# ---- the static side --------------------------------------------------------------------------------------------


def run_static(plan: Plan, script: Script, names: dict[int, str], anchors: dict[tuple[str, int], int]) -> list[Scrape]:
    """The same script under static shards, in virtual time: node i of the initial n scrapes its shard only."""
    count = len(script.initial)
    shards: dict[str, list[int]] = {name: [] for name in script.initial}
    for topic_id, name in names.items():
        for index, node in enumerate(script.initial):
            if in_shard(name, f"{index}/{count}"):
                shards[node].append(topic_id)
                break
    scrapes: list[Scrape] = []
    rng = random.Random(plan.seed + 1)
    for node, topic_ids in shards.items():
        dies = script.kill_at if node in script.killed else math.inf
        for engine in plan.engines:
            blocked = node in script.blocked and engine == plan.blocked_engine
            queue = [
                (anchors[(engine, topic_id)] / 1e6, topic_id, anchors[(engine, topic_id)]) for topic_id in topic_ids
            ]
            heapq.heapify(queue)
            free = 0.0
            while queue:
                due, topic_id, slot = heapq.heappop(queue)
                start = max(due, free)
                if node == script.frozen and script.freeze_at <= start < script.freeze_until:
                    start = script.freeze_until
                if blocked and script.block_at <= start < script.block_until:
                    start = script.block_until  # its engine cools here; no other node has its topics
                if start >= min(dies, script.end):
                    break
                end = start + scrape_time(rng)
                if node == script.frozen and start < script.freeze_at < end:
                    end += script.freeze_until - script.freeze_at
                free = start + plan.pace
                if end > min(dies, script.end):
                    continue  # died (or the run ended) in its pages
                scrapes.append(Scrape(engine, topic_id, slot, node, start, end, False))
                slot_at, due_at = next_slot(T0 + slot * US, moment(end), plan.interval, JITTER, rng)
                heapq.heappush(queue, ((due_at - T0).total_seconds(), topic_id, micros(slot_at)))
    return scrapes


def static_lost(plan: Plan, script: Script, names: dict[int, str]) -> tuple[int, int]:
    """(topic, engine) pairs of the dead nodes' shards, and the blocked nodes' topics of the blocked engine."""
    count = len(script.initial)
    dead = blocked = 0
    for name in names.values():
        index = next(i for i in range(count) if in_shard(name, f"{i}/{count}"))
        dead += script.initial[index] in script.killed
        blocked += script.initial[index] in script.blocked
    return dead * len(plan.engines), blocked


# ---- the figures ------------------------------------------------------------------------------------------------


def quantile(values: Sequence[float], q: float) -> float:
    if not values:
        return float("nan")
    if len(values) < 2:
        return float(values[0])
    return statistics.quantiles(values, n=100, method="inclusive")[round(q * 100) - 1]


@dataclass
class Figures:
    scrapes: int = 0
    doubles: int = 0
    doubles_lapsed: int = 0
    slots: int = 0
    late: int = 0
    missed: int = 0
    phases: dict[str, tuple[int, int, int]] = field(default_factory=dict)
    """phase → (slots, late by more than an interval, never scraped)."""
    takeover: float | None = None
    taken_over: int = 0
    held: int = 0
    shares: dict[str, float | None] = field(default_factory=dict)
    """A joined node → seconds to 80 % of its fair share (None: not within the run)."""
    two_intervals: dict[str, float] = field(default_factory=dict)
    """A joined node → its scrapes over its first two intervals, against its fair share of them."""
    blocked_slots: int = 0
    blocked_late: int = 0
    blocked_topics_short: int = 0
    blocked_carriers: int = 0


def figures(
    scrapes: list[Scrape],
    plan: Plan,
    script: Script,
    anchors: dict[tuple[str, int], int],
    held_at_kill: Sequence[tuple[str, int, int]] = (),
) -> Figures:
    found = Figures(scrapes=len(scrapes))
    by_slot: dict[tuple[str, int, int], list[Scrape]] = defaultdict(list)
    for each in scrapes:
        by_slot[(each.engine, each.topic_id, each.slot)].append(each)
    for group in by_slot.values():
        if len(group) > 1:
            found.doubles += 1
            found.doubles_lapsed += any(each.lapsed for each in group)

    step = round(plan.interval * 1e6)
    last = (script.end - 1.5 * plan.interval) * 1e6  # a slot counts when its whole interval is in the run
    phases = script.phases()
    counts = {name: [0, 0, 0] for name, _, _ in phases}
    short_topics: set[int] = set()
    blocked_from, blocked_to = script.block_at * 1e6, script.block_until * 1e6
    for (engine, topic_id), first in anchors.items():
        slot = first
        while slot <= last:
            group = by_slot.get((engine, topic_id, slot))
            began = min(each.start for each in group) if group else None
            late = began is None or began - slot / 1e6 > plan.interval
            seconds = slot / 1e6
            phase = next((name for name, low, high in phases if low <= seconds < high), None)
            if phase is not None:
                row = counts[phase]
                row[0] += 1
                row[1] += late
                row[2] += began is None
            found.slots += 1
            found.late += late
            found.missed += began is None
            if engine == plan.blocked_engine and blocked_from <= slot < blocked_to:
                found.blocked_slots += 1
                found.blocked_late += late
                if late:
                    short_topics.add(topic_id)
            slot += step
    found.phases = {name: tuple(row) for name, row in counts.items()}  # type: ignore[misc]
    found.blocked_topics_short = len(short_topics)
    found.blocked_carriers = len(
        {
            each.node
            for each in scrapes
            if each.engine == plan.blocked_engine and script.block_at <= each.start < script.block_until
        }
    )

    found.held = len(held_at_kill)
    times = []
    for key in held_at_kill:
        others = [each.start for each in by_slot.get(key, []) if each.node not in script.killed]
        if others:
            times.append(min(others) - script.kill_at)
    found.taken_over = len(times)
    if held_at_kill and len(times) == len(held_at_kill):
        found.takeover = max(times)

    width = plan.interval / SHARE_BINS
    starts = sorted(each.start for each in scrapes)
    for node in script.joined:
        mine = sorted(each.start for each in scrapes if each.node == node)
        found.shares[node] = None
        low, high = script.join_at, min(script.end, script.join_at + 2 * plan.interval)
        total = bisect.bisect_left(starts, high) - bisect.bisect_left(starts, low)
        alive = sum(script.alive(name, low) for name in script.names)
        own = bisect.bisect_left(mine, high) - bisect.bisect_left(mine, low)
        found.two_intervals[node] = own / (total / alive) if total else 0.0
        low = script.join_at
        while low + width <= script.end:
            high = low + width
            total = bisect.bisect_left(starts, high) - bisect.bisect_left(starts, low)
            alive = sum(script.alive(name, low) for name in script.names)
            own = bisect.bisect_left(mine, high) - bisect.bisect_left(mine, low)
            if total and own >= SHARE_TARGET * total / alive:
                found.shares[node] = high - script.join_at
                break
            low = high
    return found


# ---- the report -------------------------------------------------------------------------------------------------


def seconds_text(value: float | None) -> str:
    return "never" if value is None else f"{value:,.0f} s"


def report(
    plan: Plan, script: Script, run: LeaseRun, lease: Figures, static: Figures, static_dead: int, static_blocked: int
) -> None:
    interval = plan.interval
    scripted, real = run.scripted, run.real
    print()
    print(f"{'':<56}{'lease (PostgreSQL)':>26}{'static shards':>26}")

    def row(label: str, mine: str, theirs: str) -> None:
        print(f"{label:<56}{mine:>26}{theirs:>26}")

    row("scrapes", f"{lease.scrapes:,}", f"{static.scrapes:,}")
    row("slots scraped twice", f"{lease.doubles:,}", f"{static.doubles:,}")
    row("  of them with an expired lease", f"{lease.doubles_lapsed:,}", "-")
    row("  without one", f"{lease.doubles - lease.doubles_lapsed:,}", f"{static.doubles:,}")
    row("slots due (their interval within the run)", f"{lease.slots:,}", f"{static.slots:,}")
    row("slots late by more than one interval", f"{lease.late:,}", f"{static.late:,}")
    row("  of them never scraped", f"{lease.missed:,}", f"{static.missed:,}")
    for name, low, high in script.phases():
        mine, theirs = lease.phases[name], static.phases[name]
        row(
            f"  late / due, slots {low / interval:.2f}-{high / interval:.2f} ({name})",
            f"{mine[1]:,} / {mine[0]:,}",
            f"{theirs[1]:,} / {theirs[0]:,}",
        )
    if lease.held and lease.takeover is not None:
        lease_takeover = f"{seconds_text(lease.takeover)} ({lease.held:,} rows held)"
    elif lease.held:
        lease_takeover = f"{lease.taken_over:,} of {lease.held:,} rows"
    else:
        lease_takeover = "- (no row held)"
    row(
        f"takeover after the kill of {len(script.killed)}",
        lease_takeover,
        f"never ({static_dead:,} pairs idle)" if static_dead else "-",
    )
    for node in script.joined:
        row(
            f"{node} (joined) at {SHARE_TARGET:.0%} of its fair share (over 2 int.)",
            f"{seconds_text(lease.shares.get(node))} ({lease.two_intervals[node]:.0%})",
            "never (no shard)",
        )
    engine = plan.blocked_engine
    row(
        f"{engine} blocked on {len(script.blocked)}: its slots late / due",
        f"{lease.blocked_late:,} / {lease.blocked_slots:,}",
        f"{static.blocked_late:,} / {static.blocked_slots:,}",
    )
    row(
        f"  {engine} topics with a slot late or lost",
        f"{lease.blocked_topics_short:,} of {plan.topics:,}",
        f"{static.blocked_topics_short:,} of {plan.topics:,}",
    )
    row(
        f"  nodes that scraped {engine} during the block",
        f"{lease.blocked_carriers}",
        f"{static.blocked_carriers} ({static_blocked:,} topics idle)",
    )
    labels = ((real, "real pace"), (scripted, f"clock {scripted.scale:.0f}x"))
    for phase, label in labels:
        claims = phase.ms("claim")
        row(
            f"claim latency p50 / p95, real ms ({label})",
            f"{quantile(claims, 0.5):.1f} / {quantile(claims, 0.95):.1f}",
            "- (no database)",
        )
    for phase, label in labels:
        figure = f"{phase.transactions / phase.server_seconds:,.0f}"
        if phase.statements is not None:
            figure += f" / {phase.statements / phase.server_seconds:,.0f}"
        row(f"server xacts{' / statements' if phase.statements is not None else ''} per real s ({label})", figure, "-")

    for phase, title in (
        (scripted, f"the scripted run, the clock {scripted.scale:.1f}x"),
        (real, "at a real cluster's pace, the clock 1x, one row claimed at a time"),
    ):
        print()
        print(
            f"schedule statements, {title}: {phase.seconds:.0f} s real, {phase.simulated:,.0f} s simulated; real "
            "ms around each call"
        )
        print(f"{'call':<16}{'calls':>10}{'per real s':>12}{'per sim. s':>12}{'p50 ms':>9}{'p95 ms':>9}{'max ms':>9}")
        for kind in KINDS:
            values = phase.ms(kind)
            print(
                f"{kind:<16}{len(values):>10,}{len(values) / phase.seconds:>12,.1f}"
                f"{len(values) / phase.simulated:>12,.2f}{quantile(values, 0.5):>9.1f}"
                f"{quantile(values, 0.95):>9.1f}{max(values, default=float('nan')):>9.1f}"
            )
        simulated = phase.server_seconds * phase.scale
        source = (
            "pg_stat_statements"
            if phase.statements is not None
            else "pg_stat_database, pings included, reported up to 10 s late: pg_stat_statements not loaded"
        )
        line = (
            f"server ({source}): {phase.transactions:,} transactions in {phase.server_seconds:.0f} s "
            f"({phase.transactions / phase.server_seconds:,.0f} per real s, {phase.transactions / simulated:,.1f} "
            "per simulated s)"
        )
        if phase.statements is not None:
            line += (
                f", {phase.statements:,} statements ({phase.statements / phase.server_seconds:,.0f} per real s, "
                f"{phase.statements / simulated:,.1f} per simulated s; BEGIN and COMMIT included)"
            )
        print(line)
        if phase.claim_mean_ms is not None:
            print(
                f"the claim statement on the server (pg_stat_statements): mean {phase.claim_mean_ms:.2f} ms, max "
                f"{phase.claim_max_ms:.1f} ms"
            )
        lags = [lag for log in phase.logs.values() for lag in log.lags]
        print(
            f"keeping up with the clock: node looks late by p50 {quantile(lags, 0.5):.1f} / p95 "
            f"{quantile(lags, 0.95):.1f} / max {max(lags, default=0.0):.1f} simulated s"
        )
    released = sum(log.released for log in scripted.logs.values())
    refused = sum(log.refused for log in scripted.logs.values())
    print()
    print(
        f"claims released by the blocked nodes: {released:,}; re-arms refused (the lease taken by another node): "
        f"{refused:,}; load average over the last 5 minutes: {os.getloadavg()[1]:.1f} on {os.cpu_count()} CPUs"
    )

    print()
    clean = lease.doubles - lease.doubles_lapsed
    verdict(
        f"0 slots scraped twice without an expired lease ({clean:,}; {lease.doubles_lapsed:,} with one)", clean == 0
    )
    bound = plan.lease + interval
    if script.killed:
        verdict(
            f"takeover <= lease + one interval ({bound:,.0f} s): {seconds_text(lease.takeover)}",
            lease.takeover is not None and lease.takeover <= bound,
        )
    if script.joined:
        shares = ", ".join(f"{node} {seconds_text(lease.shares.get(node))}" for node in script.joined)
        verdict(
            f"new node at {SHARE_TARGET:.0%} of its share within two intervals ({2 * interval:,.0f} s): {shares}",
            all(value is not None and value <= 2 * interval for value in lease.shares.values()),
        )
    p95 = quantile(real.ms("claim"), 0.95)
    verdict(
        f"claim p95 <= {TARGET_CLAIM_P95_MS:g} ms at {len(real.logs)} nodes at a real cluster's pace: "
        f"{p95:.1f} ms ({quantile(scripted.ms('claim'), 0.95):.1f} ms with the clock {scripted.scale:.0f}x)",
        p95 <= TARGET_CLAIM_P95_MS,
    )
    verdict(
        f"every {engine} topic scraped every interval by the nodes that reach it during the block "
        f"({lease.blocked_topics_short:,} topics with a slot late or lost)",
        lease.blocked_topics_short == 0,
    )


def verdict(text_: str, ok: bool) -> None:
    print(f"target: {text_}: {'PASS' if ok else 'FAIL'}")


def print_plan(plan: Plan, script: Script) -> None:
    interval = plan.interval
    reach = (plan.nodes - len(script.killed) + len(script.joined) - len(script.blocked)) / plan.nodes * plan.capacity
    print(
        f"cluster: {plan.nodes} nodes, {plan.topics:,} topics x {len(plan.engines)} engines "
        f"({', '.join(plan.engines)}), interval {interval:g} s, lease {plan.lease:g} s, a look every "
        f"{plan.look:g} s (simulated)"
    )
    print(
        f"pace: a topic start every {plan.pace:.3f} s per node and engine: capacity {plan.capacity:g}x the demand "
        f"({plan.capacity * (plan.nodes - len(script.killed)) / plan.nodes:.2f}x after the kill, {reach:.2f}x for "
        f"{plan.blocked_engine} on the nodes that reach it during the block)"
    )
    print(
        f"script (intervals): 0 steady; {script.freeze_at / interval:g} {script.frozen} frozen for "
        f"{script.freeze_until - script.freeze_at:g} s; {script.kill_at / interval:g} killed "
        f"{', '.join(script.killed) or '-'}; {script.join_at / interval:g} joined {', '.join(script.joined) or '-'}"
        f"; {script.block_at / interval:g}-{script.block_until / interval:g} {plan.blocked_engine} blocked on "
        f"{', '.join(script.blocked)}; end {script.end / interval:g}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--nodes", type=int, default=20, help="nodes at the start (default 20)")
    parser.add_argument("--topics", type=int, default=10000, help="active topics (default 10000)")
    parser.add_argument(
        "--engines",
        type=int,
        default=len(ENGINES),
        choices=range(1, len(ENGINES) + 1),
        help=f"engines, the first of {', '.join(ENGINES)} (default {len(ENGINES)})",
    )
    pace = parser.add_mutually_exclusive_group()
    pace.add_argument(
        "--minutes",
        type=float,
        default=3.5,
        help="wall minutes the script lasts, setting the clock's scale (default 3.5)",
    )
    pace.add_argument("--scale", type=float, help="simulated seconds per wall second (instead of --minutes)")
    parser.add_argument("--interval", type=float, default=600.0, help="scrape interval, simulated s (default 600)")
    parser.add_argument("--lease", type=float, default=120.0, help="scraper.lease_seconds (default 120)")
    parser.add_argument(
        "--capacity",
        type=float,
        default=1.5,
        help="the cluster's capacity over the demand, setting each node's pace (default 1.5)",
    )
    parser.add_argument("--look", type=float, default=10.0, help="simulated s between a node's looks (default 10)")
    parser.add_argument(
        "--real-seconds",
        type=float,
        default=40.0,
        help="wall seconds at a real cluster's pace after the script, for the claim latency (default 40)",
    )
    parser.add_argument("--url", help="an empty PostgreSQL database (default: a throw-away server of its own)")
    parser.add_argument("--seed", type=int, default=1, help="random seed of the script and the draws (default 1)")
    args = parser.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit("terminated"))
    if args.real_seconds < 2 * SETTLE:
        parser.error(f"--real-seconds takes {2 * SETTLE:g} or more")
    if (
        min(args.nodes, args.topics) < 2
        or min(args.interval, args.lease, args.capacity, args.look, args.minutes, args.real_seconds, args.scale or 1)
        <= 0
    ):
        parser.error("--nodes and --topics take 2 or more, the times, --capacity and --scale positive numbers")
    plan = Plan(
        args.nodes, args.topics, ENGINES[: args.engines], args.interval, args.lease, args.capacity, args.look, args.seed
    )
    script = make_script(plan, random.Random(args.seed))
    print_plan(plan, script)
    started = time.perf_counter()
    if args.url:
        run = run_leases(args.url, plan, script, args.scale, args.minutes, args.real_seconds)
    else:
        from tests.support.postgres_server import PostgresServer

        with PostgresServer(settings={"shared_preload_libraries": "pg_stat_statements"}) as server:
            print(f"server: {server.version} (a throw-away one; --url to use another)", flush=True)
            run = run_leases(
                server.create_database("cluster"), plan, script, args.scale, args.minutes, args.real_seconds
            )
    measured = time.perf_counter()
    lease = figures(run.scrapes, plan, script, run.anchors, run.held_at_kill)
    static = figures(run_static(plan, script, run.names, run.anchors), plan, script, run.anchors)
    dead, blocked = static_lost(plan, script, run.names)
    print(
        f"static side simulated and both judged in {time.perf_counter() - measured:.0f} s; whole run "
        f"{time.perf_counter() - started:.0f} s"
    )
    report(plan, script, run, lease, static, dead, blocked)


if __name__ == "__main__":
    main()
