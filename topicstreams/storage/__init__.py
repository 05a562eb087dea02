"""The topicstreams database: schema, migrations, topics and the batched news writer."""

from topicstreams.storage.db import Databases, make_database, utcnow
from topicstreams.storage.migrate import upgrade
from topicstreams.storage.models import (
    Base,
    News,
    ScraperCycle,
    Topic,
    TopicNews,
    TopicNewsEngine,
)
from topicstreams.storage.topics import (
    TopicInfo,
    active_topics,
    add_topics,
    ensure_topics,
    list_topics,
    seed_topics,
    set_active,
)
from topicstreams.storage.writer import NewsWriter, WriteResult, item_problem

__all__ = [
    "Base",
    "Databases",
    "News",
    "NewsWriter",
    "ScraperCycle",
    "Topic",
    "TopicInfo",
    "TopicNews",
    "TopicNewsEngine",
    "WriteResult",
    "active_topics",
    "add_topics",
    "ensure_topics",
    "item_problem",
    "list_topics",
    "make_database",
    "seed_topics",
    "set_active",
    "upgrade",
    "utcnow",
]
