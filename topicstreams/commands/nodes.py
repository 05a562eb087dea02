"""``scrapy nodes [--json]``: the nodes of the cluster, one line per node id however many crawl processes it runs —
status (live, stale, stopped), heartbeat age, live processes, engines, topics scraped in the last interval per
engine, each engine's state there, and in lease mode the leases it holds now.

Either assignment, SQLite or PostgreSQL: the report is :mod:`topicstreams.reports.nodes_report`'s to build (a process
is live for three ``TOPICSTREAMS_NODE_HEARTBEAT``); this command reads the configuration, prints the table or the JSON
object, and exits 0 — or 1 when the database cannot be read (one line naming ``scrapy db upgrade``).
"""

from __future__ import annotations

import json
import sys

from scrapy.exceptions import UsageError
from sqlalchemy.exc import SQLAlchemyError

from topicstreams.cli.configured import ConfiguredCommand
from topicstreams.config.secrets import mask_url
from topicstreams.reports.nodes_report import build_nodes_report
from topicstreams.storage import utcnow
from topicstreams.storage.damage_notice import damage_of
from topicstreams.storage.failures import describe


class Command(ConfiguredCommand):
    requires_project = True
    requires_crawler_process = False

    def syntax(self) -> str:
        return "[--json]"

    def short_desc(self) -> str:
        return "List the nodes: heartbeat, engines, topics scraped per engine, each engine's state, leases"

    def long_desc(self) -> str:
        return (
            "List the nodes that crawl into the configured database, one line per node id however many "
            "processes it runs: live, stale (not heard of for three heartbeats and no clean stop: it died or "
            "cannot reach the database) or stopped; its heartbeat's age; its engines, the topics each scraped "
            "in the last scrape interval and its state there (stale or stopped once no process of it runs the "
            "engine); in lease mode the leases it holds now. --json "
            'prints one object: {"nodes": [{"node", "heartbeat_at", "age_seconds", "stale", '
            '"engines", "scraped_last_interval", …}]}.'
        )

    def add_options(self, parser) -> None:
        super().add_options(parser)
        parser.add_argument("--json", action="store_true", help="print the nodes as one JSON object")

    def check_arguments(self, args: list[str], opts) -> None:
        if args:
            raise UsageError(f"nodes takes no positional arguments: got {' '.join(args)!r}")

    def run(self, args: list[str], opts) -> None:
        config = self.config
        try:
            report = build_nodes_report(
                self.database(config),
                heartbeat=self.settings.getfloat("TOPICSTREAMS_NODE_HEARTBEAT"),
                lease_mode=config.sections.scraper.assignment == "lease",
                now=utcnow(),
            )
        except SQLAlchemyError as exc:
            print(
                damage_of(config.sections.database.url, exc)
                or f"cannot read the nodes from the database {mask_url(config.sections.database.url)}: "
                f"{describe(exc)} (run `scrapy db upgrade` once it can be reached)",
                file=sys.stderr,
            )
            self.exitcode = 1
            return
        print(json.dumps(report.as_json()) if opts.json else report.as_table())
