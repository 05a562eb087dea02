"""``scrapy topics add NAME… / list / deactivate NAME… / activate NAME…``.

``list`` prints one line per topic: its name, state, creation time and its schedule on each engine that has a row
for it (CONTRACT "Freshness": ``google 12.0/h every 5 min, due 14:52 UTC``; ``learning`` while not learnt —
:mod:`topicstreams.reports.schedule_words`), what ``GET /api/topics`` gives as each item's ``"engines"``.
"""

from __future__ import annotations

import sys

from scrapy.exceptions import UsageError

from topicstreams.cli.configured import SubcommandCommand
from topicstreams.engines.topic_names import TopicsRefused, check_topics, configured_engines, url_length_limit
from topicstreams.reports.schedule_words import rows_by_topic, topic_text
from topicstreams.storage import add_topics, list_topics, set_active, utcnow
from topicstreams.storage.topic_rates import read_topic_rates


class Command(SubcommandCommand):
    subcommands = {
        "add": "add topics to the standing list (active)",
        "list": "list every topic with its state, and its rate, interval and next visit per engine",
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
        db = self.database(config)
        rows = list_topics(db)
        if not rows:
            print("no topics")
            return 0
        rates, now = rows_by_topic(read_topic_rates(db)), utcnow()
        width = max(len(row.name) for row in rows)
        for row in rows:
            state = "active" if row.active else "inactive"
            schedule = topic_text(rates.get(row.name, ()), now)
            print(f"{row.name:<{width}}  {state:<8}  {row.created_at:%Y-%m-%d %H:%M:%S}  {schedule}")
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
