"""``scrapy health [--json] [--all-nodes]`` and ``scrapy health resume ENGINE [--node NODE]``.

The report's first line is its verdict (:mod:`topicstreams.reports.verdict_line`). It exits 2 when an engine is
critical or paused or the node's network is down; else 3 when an engine is stale or the database cannot be read;
else 1 when one is degraded; else 0 (as monitoring plugins read it).
Under the table (in JSON: ``"journal"``), this node's store journals
that hold items not yet in the database, and its reject files. In lease mode (``scraper.assignment: lease``) each
engine says which nodes carry it: ``"carried_by"`` in JSON, a ``carried by …`` line under the table. A damaged
database file is named as such (:mod:`topicstreams.storage.damage_notice`), exit 3. The report is
:mod:`topicstreams.reports.health_report`'s to build; this command reads the arguments and the configuration, prints it,
and exits with its status.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from scrapy.exceptions import UsageError
from sqlalchemy.exc import SQLAlchemyError

from topicstreams import ENGINES
from topicstreams.cli.configured import SubcommandCommand
from topicstreams.config.secrets import mask_url
from topicstreams.health.saturation import saturation_policy
from topicstreams.reports.health_report import build_report, lease_interval_of
from topicstreams.storage import utcnow
from topicstreams.storage.damage_notice import damage_of
from topicstreams.storage.engine_status import resume
from topicstreams.storage.failures import describe
from topicstreams.storage.journal import is_rejects, journal_folder, pending_files

RESUME = "resume"

EXIT_UNKNOWN = 3
"""The database cannot be read: the health is not known (monitoring plugins' UNKNOWN)."""


def journal_backlog(config) -> list[tuple[Path, str, int]]:
    """This node's non-empty journal and reject files: (path, "journal" or "rejects", items)."""
    folder = journal_folder(config.sections.browser.profile_dir, config.sections.node.id)
    return [(path, "rejects" if is_rejects(path) else "journal", items) for path, items in pending_files(folder)]


def backlog_lines(backlog: list[tuple[Path, str, int]]) -> list[str]:
    lines = []
    for path, kind, items in backlog:
        if kind == "journal":
            lines.append(
                f"journal: {path} holds {items} item(s) not yet in the database: the next crawl of its "
                f"engine writes them first (or run `scrapy db replay`)"
            )
        else:
            lines.append(
                f"rejects: {path} holds {items} item(s) the database refused for good, each with its "
                f"reason: `scrapy db replay {path}` tries them again after a fix"
            )
    return lines


class Command(SubcommandCommand):
    requires_crawler_process = False
    subcommands = {RESUME: "lift an engine's pause on this node (or on --node NODE); its alerts are resolved"}
    operands = {RESUME: "ENGINE"}

    def syntax(self) -> str:
        return "[--json] [--all-nodes] | resume ENGINE [--node NODE]"

    def short_desc(self) -> str:
        return "Show each engine's health, or resume a paused engine"

    def long_desc(self) -> str:
        return (
            "Show each engine's health on this node (every node with --all-nodes): score, band, state, "
            "latency and reasons, as a table under a one-line verdict, or as JSON. Exits 2 when an engine is "
            "critical or paused or the network is down, else 3 when an engine is stale (its crawl went silent) or "
            "the database cannot be read, else 1 when one is degraded, else 0."
        )

    def add_options(self, parser) -> None:
        super().add_options(parser)
        parser.add_argument("--json", action="store_true", help="print the report as one JSON object")
        parser.add_argument(
            "--all-nodes",
            dest="all_nodes",
            action="store_true",
            help="report every node in the database, not only this one",
        )
        parser.add_argument("--node", metavar="NODE", help="with resume: the node to resume on (default: this one)")

    def check_arguments(self, args: list[str], opts) -> None:
        """Refuse arguments that can never run, before the configuration is read."""
        if not args:
            if opts.node is not None:
                raise UsageError("--node goes with resume: scrapy health resume ENGINE --node NODE")
            return
        if args[0] != RESUME:
            raise UsageError(f"unknown sub-command {args[0]!r}: expected none (the report) or {RESUME}")
        if opts.json or opts.all_nodes:
            raise UsageError("--json and --all-nodes go with the report, not with resume")
        if len(args) != 2:
            raise UsageError(f"resume takes one engine: one of {', '.join(ENGINES)}")
        if args[1] not in ENGINES:
            raise UsageError(f"unknown engine {args[1]!r}: expected one of {', '.join(ENGINES)}")
        if opts.node is not None and not opts.node.strip():
            raise UsageError("--node is empty: name a node")

    def run(self, args: list[str], opts) -> None:
        if args:
            super().run(args, opts)  # resume (check_arguments refused anything else)
        else:
            self.exitcode = self.do_report(self.config, args, opts)

    def do_report(self, config, args, opts) -> int:
        backlog = journal_backlog(config)
        sections = config.sections
        try:
            report = build_report(
                self.database(config),
                node=sections.node.id,
                enabled=sections.enabled_engines(),
                policy=saturation_policy(sections.scraper),
                all_nodes=opts.all_nodes,
                now=utcnow(),
                lease_interval=lease_interval_of(config),
            )
        except SQLAlchemyError as exc:
            url = sections.database.url
            print(
                damage_of(url, exc) or f"cannot read the health from the database {mask_url(url)}: {describe(exc)}",
                file=sys.stderr,
            )
            for line in backlog_lines(backlog):
                print(line, file=sys.stderr)
            return EXIT_UNKNOWN
        if opts.json:
            payload = report.as_json()
            if backlog:
                payload["journal"] = [
                    {"path": str(path), "kind": kind, "items": items} for path, kind, items in backlog
                ]
            print(json.dumps(payload))
        else:
            print("\n".join([report.as_table(), *backlog_lines(backlog)]))
        return report.exit_status()

    def do_resume(self, config, args, opts) -> int:
        engine = args[0]
        node = opts.node.strip() if opts.node is not None else config.sections.node.id
        if not resume(self.database(config), engine, node, at=utcnow()):
            print(f"{engine} is not paused on node {node}", file=sys.stderr)
            return 1
        print(f"resumed: {engine} on node {node}")
        print("it restarts at the slowed pace; only a new critical score pauses it again")
        return 0
