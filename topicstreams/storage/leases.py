"""Lease mode's shared schedule (the ``schedule`` table, PostgreSQL only): which (engine, topic) is due, and which
node holds it.

The way PostgreSQL job queues (procrastinate, Oban, GoodJob, pg-boss) hand out work, in a handful of statements:

* :func:`reconcile` — the active topics of the ``topics`` table that have no row for the engine get one, their first
  slots spread at random over the next interval; rows of deactivated topics that no one holds are deleted. Any node
  may run it, as often as it likes: it is idempotent (``ON CONFLICT DO NOTHING``), and a deactivated topic is never
  claimed in between (claims join the active topics);
* :func:`claim` — up to ``limit`` due rows of an engine that no live lease holds, oldest due first, taken with
  ``FOR UPDATE SKIP LOCKED``: two nodes claiming at once get different rows, and neither waits for the other. The
  rows get the claim's lease: this node, a fresh token, an expiry ``lease_seconds`` ahead;
* :func:`rearm` — after the topic's pages: the next slot (see :func:`next_slot`), the lease cleared, the node and time
  of the scrape recorded; only where the row still carries the claim's token. A node whose lease expired and was
  claimed by another finds its token gone: it re-arms nothing;
* :func:`release` — the claim given back without a scrape (the engine is benched here, the process stops): the row is
  free for any node at once, due when it was (or when the caller says);
* :func:`extend` — a node still working on its claims pushes their expiry forward; :func:`release_tokens` gives every
  claim of a stopping process back in one statement.

Times: ``now`` is the caller's clock when given (the cluster benchmark runs on a scaled clock), else the server's
(``now()``): one clock for every node in a real cluster, whatever their own clocks say.
"""

from __future__ import annotations

import math
import random
import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import Engine, text

NOW = "COALESCE(CAST(:now AS timestamptz), now())"
"""The statement's clock: the caller's ``now`` when given, else the server's."""


@dataclass(frozen=True)
class Claim:
    """A row taken by :func:`claim`: the topic, the slot it is anchored to, when it was due, and the claim's token."""

    topic_id: int
    topic: str
    slot_at: datetime
    due_at: datetime
    token: str


@dataclass(frozen=True)
class Rearm:
    """What :func:`rearm` writes for one claim: its next slot and due time."""

    claim: Claim
    slot_at: datetime
    due_at: datetime


def next_slot(
    slot_at: datetime, now: datetime, interval: float, jitter_ratio: float = 0.0, rng: random.Random | None = None
) -> tuple[datetime, datetime]:
    """The slot after ``slot_at`` and its due time, for a topic scraped at ``now``.

    Anchored to the slot: the next one is a whole number of intervals after ``slot_at``, the first after ``now``
    (missed slots are skipped, never made up in a burst). Due within ``jitter_ratio`` of an interval around it
    (``uniform(-j/2, +j/2)``). A slot whose due time would already be past (a late scrape, an early jitter) is
    missed too: the topic is never handed out again at once."""
    step = timedelta(seconds=interval)
    behind = (now - slot_at) / step
    slot = slot_at + step * max(1, math.floor(behind) + 1)
    half = jitter_ratio / 2
    shift = timedelta(seconds=(rng or random).uniform(-half, half) * interval) if half else timedelta(0)
    if slot + shift <= now:
        slot += step
    return slot, slot + shift


def reconcile(db: Engine, engine: str, interval: float, *, now: datetime | None = None) -> tuple[int, int]:
    """Bring the engine's rows in line with the active topics; returns ``(added, deleted)`` (see the module)."""
    with db.begin() as conn:
        added = conn.execute(
            text(f"""
            WITH fresh AS (
                SELECT t.id AS topic_id, {NOW} + random() * make_interval(secs => :interval) AS at
                FROM topics t
                WHERE t.active AND NOT EXISTS (
                    SELECT 1 FROM schedule s WHERE s.engine = :engine AND s.topic_id = t.id))
            INSERT INTO schedule (engine, topic_id, slot_at, due_at)
            SELECT :engine, topic_id, at, at FROM fresh
            ON CONFLICT DO NOTHING"""),
            {"engine": engine, "interval": interval, "now": now},
        ).rowcount
        deleted = conn.execute(
            text(f"""
            DELETE FROM schedule s USING topics t
            WHERE s.engine = :engine AND t.id = s.topic_id AND NOT t.active
              AND (s.lease_token IS NULL OR s.lease_until <= {NOW})"""),
            {"engine": engine, "now": now},
        ).rowcount
    return added, deleted


def claim(
    db: Engine, engine: str, node: str, lease_seconds: float, *, limit: int = 1, now: datetime | None = None
) -> list[Claim]:
    """Take up to ``limit`` due rows of ``engine`` that no live lease holds (see the module)."""
    token = secrets.token_hex(8)
    with db.begin() as conn:
        rows = conn.execute(
            text(f"""
            WITH picked AS (
                SELECT s.engine, s.topic_id
                FROM schedule s JOIN topics t ON t.id = s.topic_id
                WHERE s.engine = :engine AND t.active AND s.due_at <= {NOW}
                  AND (s.lease_until IS NULL OR s.lease_until <= {NOW})
                ORDER BY s.due_at
                LIMIT :limit
                FOR UPDATE OF s SKIP LOCKED)
            UPDATE schedule s
            SET lease_node = :node, lease_token = :token, lease_until = {NOW} + make_interval(secs => :lease)
            FROM picked, topics t
            WHERE s.engine = picked.engine AND s.topic_id = picked.topic_id AND t.id = s.topic_id
            RETURNING s.topic_id, t.name, s.slot_at, s.due_at"""),
            {"engine": engine, "node": node, "token": token, "lease": lease_seconds, "limit": limit, "now": now},
        ).all()
    return sorted((Claim(row[0], row[1], row[2], row[3], token) for row in rows), key=lambda c: c.due_at)


def next_due(db: Engine, engine: str) -> datetime | None:
    """The earliest moment a row of ``engine`` may be claimable: a free row's due time, or a held one's expiry (or
    due time, if later). Two index scans (``ix_schedule_engine_due_at`` for the first free row in due order,
    ``ix_schedule_leased`` for the few held ones) rather than a pass over every row of the engine."""
    with db.connect() as conn:
        return conn.execute(
            text("""
            SELECT LEAST(
                (SELECT s.due_at FROM schedule s JOIN topics t ON t.id = s.topic_id
                 WHERE s.engine = :engine AND t.active AND s.lease_token IS NULL
                 ORDER BY s.due_at LIMIT 1),
                (SELECT min(GREATEST(s.due_at, s.lease_until)) FROM schedule s JOIN topics t ON t.id = s.topic_id
                 WHERE s.engine = :engine AND t.active AND s.lease_token IS NOT NULL))"""),
            {"engine": engine},
        ).scalar()


def rearm(db: Engine, engine: str, node: str, done: Sequence[Rearm], *, now: datetime | None = None) -> set[int]:
    """Re-arm the scraped rows still held by their claims; returns the topic ids re-armed (a missing one had lost
    its lease to another node)."""
    if not done:
        return set()
    with db.begin() as conn:
        rows = (
            conn.execute(
                text(f"""
            UPDATE schedule s
            SET slot_at = v.slot_at, due_at = v.due_at, lease_node = NULL, lease_token = NULL, lease_until = NULL,
                last_done_at = {NOW}, last_node = :node, scrapes = s.scrapes + 1
            FROM (SELECT unnest(CAST(:ids AS integer[])) AS topic_id, unnest(CAST(:tokens AS text[])) AS token,
                         unnest(CAST(:slots AS timestamptz[])) AS slot_at,
                         unnest(CAST(:dues AS timestamptz[])) AS due_at) v
            WHERE s.engine = :engine AND s.topic_id = v.topic_id AND s.lease_token = v.token
            RETURNING s.topic_id"""),
                {
                    "engine": engine,
                    "node": node,
                    "now": now,
                    "ids": [each.claim.topic_id for each in done],
                    "tokens": [each.claim.token for each in done],
                    "slots": [each.slot_at for each in done],
                    "dues": [each.due_at for each in done],
                },
            )
            .scalars()
            .all()
        )
    return set(rows)


def release(db: Engine, engine: str, claims: Sequence[Claim], *, due_at: datetime | None = None) -> set[int]:
    """Give claims back without a scrape: free for any node at once, due when they were (or at ``due_at``).
    Returns the topic ids released (a missing one was no longer held by its claim)."""
    if not claims:
        return set()
    with db.begin() as conn:
        rows = (
            conn.execute(
                text("""
            UPDATE schedule s
            SET lease_node = NULL, lease_token = NULL, lease_until = NULL,
                due_at = COALESCE(CAST(:due AS timestamptz), s.due_at)
            FROM (SELECT unnest(CAST(:ids AS integer[])) AS topic_id, unnest(CAST(:tokens AS text[])) AS token) v
            WHERE s.engine = :engine AND s.topic_id = v.topic_id AND s.lease_token = v.token
            RETURNING s.topic_id"""),
                {
                    "engine": engine,
                    "due": due_at,
                    "ids": [each.topic_id for each in claims],
                    "tokens": [each.token for each in claims],
                },
            )
            .scalars()
            .all()
        )
    return set(rows)


def extend(db: Engine, tokens: Sequence[str], lease_seconds: float, *, now: datetime | None = None) -> set[str]:
    """Push the expiry of the claims with these tokens ``lease_seconds`` ahead; returns the tokens still held."""
    if not tokens:
        return set()
    with db.begin() as conn:
        rows = (
            conn.execute(
                text(f"""
            UPDATE schedule SET lease_until = {NOW} + make_interval(secs => :lease)
            WHERE lease_token = ANY(CAST(:tokens AS text[]))
            RETURNING lease_token"""),
                {"tokens": list(tokens), "lease": lease_seconds, "now": now},
            )
            .scalars()
            .all()
        )
    return set(rows)


def release_tokens(db: Engine, tokens: Sequence[str]) -> int:
    """Give back every row held by these claims (a process stopping); returns how many."""
    if not tokens:
        return 0
    with db.begin() as conn:
        return conn.execute(
            text("""
            UPDATE schedule SET lease_node = NULL, lease_token = NULL, lease_until = NULL
            WHERE lease_token = ANY(CAST(:tokens AS text[]))"""),
            {"tokens": list(tokens)},
        ).rowcount


def carriers(db: Engine, since: datetime) -> dict[str, dict[str, int]]:
    """Per engine, the nodes that scraped its topics since ``since`` and how many topics each (lease mode)."""
    with db.connect() as conn:
        rows = conn.execute(
            text("""
            SELECT engine, last_node, count(*) FROM schedule
            WHERE last_done_at >= :since AND last_node IS NOT NULL
            GROUP BY engine, last_node ORDER BY engine, last_node"""),
            {"since": since},
        ).all()
    found: dict[str, dict[str, int]] = {}
    for engine, node, count in rows:
        found.setdefault(engine, {})[node] = count
    return found


def leases(db: Engine, *, now: datetime | None = None) -> dict[str, dict[str, int]]:
    """Per node, the rows it holds now per engine (leases not expired)."""
    with db.connect() as conn:
        rows = conn.execute(
            text(f"""
            SELECT lease_node, engine, count(*) FROM schedule
            WHERE lease_token IS NOT NULL AND lease_until > {NOW}
            GROUP BY lease_node, engine"""),
            {"now": now},
        ).all()
    found: dict[str, dict[str, int]] = {}
    for node, engine, count in rows:
        found.setdefault(node, {})[engine] = count
    return found
