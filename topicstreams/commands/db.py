"""``scrapy db upgrade``: run the Alembic migrations on the configured database."""

from __future__ import annotations

from topicstreams.cli import SubcommandCommand
from topicstreams.config import mask_url
from topicstreams.storage import upgrade


class Command(SubcommandCommand):
    subcommands = {"upgrade": "bring the database schema to the newest migration"}

    def short_desc(self) -> str:
        return "Manage the topicstreams database"

    def do_upgrade(self, config, args, opts) -> int:
        url = config.get("database.url")
        upgrade(url)
        print(f"database up to date: {mask_url(url)}")
        return 0
