"""The one way a spider gets its topic supply: a pass of this node's own topics (:class:`PassTopics`), or, in lease
mode's continuous runs, claims on the shared schedule (:class:`LeasedTopics`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from topicstreams.config.setting_names import sections_from
from topicstreams.crawl.engine_state import EngineState
from topicstreams.crawl.leased_supply import LeasedTopics
from topicstreams.crawl.supply import PassTopics, TopicSupply
from topicstreams.crawl.topic_planner import TopicPlanner


def leases_topics(settings: Any, *, topics: Sequence[str] | None, once: bool) -> bool:
    """Whether a crawl claims its topics from the shared schedule: lease mode (``scraper.assignment``), and not a
    one-off run (``once=1`` or ``-a topics=`` keep their meaning and claim nothing)."""
    return sections_from(settings).scraper.assignment == "lease" and topics is None and not once


def topic_supply_for(
    settings: Any,
    state: EngineState,
    *,
    topics: Sequence[str] | None,
    once: bool,
    database: Callable[[str], Any],
    problem_of: Callable[[str], str | None] | None = None,
    planner: TopicPlanner | None = None,
) -> TopicSupply:
    """The supply of an engine's topics under the crawl's settings (its typed sections, and
    ``TOPICSTREAMS_LEASE_POLL``); ``problem_of`` says what keeps the engine from taking a name (None: nothing);
    ``database`` where the database's handle comes from (the process runtime's). Lease mode's continuous runs claim
    from the shared schedule (:mod:`topicstreams.crawl.leased_supply`); everything else is a pass of this node's own
    topics."""
    sections = sections_from(settings)
    scraper = sections.scraper
    if leases_topics(settings, topics=topics, once=once):
        return LeasedTopics(
            state,
            database_url=sections.database.url,
            node=sections.node.id,
            interval=scraper.scrape_interval,
            lease_seconds=scraper.lease_seconds,
            poll=settings.getfloat("TOPICSTREAMS_LEASE_POLL"),
            seed=sections.topics,
            problem_of=problem_of,
            database=database,
            planner=planner,
        )
    return PassTopics(
        state,
        database_url=sections.database.url,
        interval=scraper.scrape_interval,
        topics=topics,
        seed=sections.topics,
        once=once,
        once_attempts=scraper.once_attempts,
        shard=scraper.shard,
        problem_of=problem_of,
        database=database,
        planner=planner,
    )


def supply_mode(settings: Any, supply: TopicSupply, *, once: bool) -> str:
    """How a spider takes its topics from ``supply``, in words (its first line): once or continuous, its shard, and
    whether lease mode claims them from the shared schedule."""
    scraper = sections_from(settings).scraper
    if once:
        mode = "once: each topic one pass, then close"
    elif scraper.schedule == "adaptive":
        adaptive = scraper.adaptive
        mode = (
            f"continuous, adaptive: each topic every {adaptive.min_interval:g}-{adaptive.max_interval:g} s by its "
            f"rate, within the requests of one visit every {scraper.scrape_interval:g} s, until stopped"
        )
    else:
        mode = f"continuous: every {scraper.scrape_interval:g} s until stopped"
    if scraper.shard != "0/1":
        mode += f"; shard {scraper.shard}: the topics whose hash falls here"
    if scraper.assignment == "lease":
        mode += (
            "; lease mode: topics claimed from the schedule every node shares"
            if isinstance(supply, LeasedTopics)
            else "; lease mode, but a one-off run (once=1 or -a topics=) claims nothing from the shared schedule"
        )
    return mode
