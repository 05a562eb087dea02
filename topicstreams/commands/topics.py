"""``scrapy topics add NAME… / list / deactivate NAME… / activate NAME…``."""

from __future__ import annotations

import sys

from scrapy.exceptions import UsageError

from topicstreams.cli.configured import SubcommandCommand
from topicstreams.engines.topic_names import TopicsRefused, check_topics, configured_engines, url_length_limit
from topicstreams.storage import add_topics, list_topics, set_active


class Command(SubcommandCommand):
    subcommands = {
        "add": "add topics to the standing list (active)",
        "list": "list every topic with its state",
        "deactivate": "stop scraping topics (they stay in the table)",
        "activate": "scrape deactivated topics again",
    }
    operands = {"add": "NAME…", "deactivate": "NAME…", "activate": "NAME…"}

    def short_desc(self) -> str:
        return "Manage the topics table"

    @staticmethod
    def _names(args: list[str]) -> list[str]:
        names = [name.strip() for name in args if name.strip()]
        if not names:
            raise UsageError("name at least one topic")
        return names

    def do_add(self, config, args, opts) -> int:
        names = self._names(args)
        # Before anything is stored: one refused name stores none of this call (nothing half-added to fix up).
        # Measured against every engine as configured (the table is every engine's) and the deepest page crawled.
        try:
            check_topics(
                names,
                configured_engines(config.get("engines")),  # the engines read a mapping
                limit=url_length_limit(self.settings),
                max_pages=config.sections.scraper.max_pages,
            )
        except TopicsRefused as exc:
            raise UsageError(f"{exc}\nnothing was added") from None
        added = add_topics(self.database(config), names)
        for name in names:
            print(f"{'added' if name in added else 'already active'}: {name}")
        return 0

    def do_list(self, config, args, opts) -> int:
        rows = list_topics(self.database(config))
        if not rows:
            print("no topics")
            return 0
        width = max(len(row.name) for row in rows)
        for row in rows:
            state = "active" if row.active else "inactive"
            print(f"{row.name:<{width}}  {state:<8}  {row.created_at:%Y-%m-%d %H:%M:%S}")
        return 0

    def _set(self, config, args, active: bool) -> int:
        names = self._names(args)
        missing = set_active(self.database(config), names, active)
        for name in names:
            if name not in missing:
                print(f"{'activated' if active else 'deactivated'}: {name}")
        for name in missing:
            print(f"no such topic: {name}", file=sys.stderr)
        return 1 if missing else 0

    def do_deactivate(self, config, args, opts) -> int:
        return self._set(config, args, active=False)

    def do_activate(self, config, args, opts) -> int:
        return self._set(config, args, active=True)
