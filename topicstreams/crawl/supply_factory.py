"""The one way a spider gets its topic supply: a pass of this node's own topics (:class:`PassTopics`), or, in lease
mode's continuous runs, claims on the shared schedule (:class:`LeasedTopics`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from topicstreams.crawl.engine_state import EngineState
from topicstreams.crawl.leased_supply import LeasedTopics
from topicstreams.crawl.supply import PassTopics, TopicSupply


def leases_topics(settings, *, topics: Sequence[str] | None, once: bool) -> bool:
    """Whether a crawl claims its topics from the shared schedule: lease mode, and not a one-off run (``once=1`` or
    ``-a topics=`` keep their meaning and claim nothing)."""
    return settings.get("TOPICSTREAMS_ASSIGNMENT") == "lease" and topics is None and not once


def topic_supply_for(
    settings,
    state: EngineState,
    *,
    topics: Sequence[str] | None,
    once: bool,
    database: Callable[[str], Any],
    problem_of: Callable[[str], str | None] | None = None,
) -> TopicSupply:
    """The supply of an engine's topics under the crawl's settings (``TOPICSTREAMS_*``); ``problem_of`` says what
    keeps the engine from taking a name (None: nothing); ``database`` where the database's handle comes from (the
    process runtime's). Lease mode's continuous runs claim from the shared
    schedule (:mod:`topicstreams.crawl.leased_supply`); everything else is a pass of this node's own topics."""
    if leases_topics(settings, topics=topics, once=once):
        return LeasedTopics(
            state,
            database_url=settings.get("TOPICSTREAMS_DATABASE_URL"),
            node=settings.get("TOPICSTREAMS_NODE_ID"),
            interval=settings.getfloat("TOPICSTREAMS_SCRAPE_INTERVAL"),
            lease_seconds=settings.getfloat("TOPICSTREAMS_LEASE_SECONDS"),
            poll=settings.getfloat("TOPICSTREAMS_LEASE_POLL"),
            seed=settings.getlist("TOPICSTREAMS_TOPICS"),
            problem_of=problem_of,
            database=database,
        )
    return PassTopics(
        state,
        database_url=settings.get("TOPICSTREAMS_DATABASE_URL"),
        interval=settings.getfloat("TOPICSTREAMS_SCRAPE_INTERVAL"),
        topics=topics,
        seed=settings.getlist("TOPICSTREAMS_TOPICS"),
        once=once,
        once_attempts=settings.getint("TOPICSTREAMS_ONCE_ATTEMPTS"),
        shard=settings.get("TOPICSTREAMS_SHARD"),
        problem_of=problem_of,
        database=database,
    )


def supply_mode(settings, supply: TopicSupply, *, once: bool) -> str:
    """How a spider takes its topics from ``supply``, in words (its first line): once or continuous, its shard, and
    whether lease mode claims them from the shared schedule."""
    if once:
        mode = "once: each topic one pass, then close"
    else:
        mode = f"continuous: every {settings.getfloat('TOPICSTREAMS_SCRAPE_INTERVAL'):g} s until stopped"
    shard = settings.get("TOPICSTREAMS_SHARD")
    if shard != "0/1":
        mode += f"; shard {shard}: the topics whose hash falls here"
    if settings.get("TOPICSTREAMS_ASSIGNMENT") == "lease":
        mode += (
            "; lease mode: topics claimed from the schedule every node shares"
            if isinstance(supply, LeasedTopics)
            else "; lease mode, but a one-off run (once=1 or -a topics=) claims nothing from the shared schedule"
        )
    return mode
