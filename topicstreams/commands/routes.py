"""``scrapy routes [--json]`` and ``scrapy routes check [--json]`` (CONTRACT "Routes").

``scrapy routes``: this node's routes (``node.id``), one line each: its proxy as it may be shown, its state and, per
engine, the pair's state, score and cooldown, from ``route_status`` (the report is
:mod:`topicstreams.reports.routes_report`'s to build). Exits 0; 1 when the database cannot be read.

``scrapy routes check``: one request per route and enabled engine it serves, now, in a real Chromium through the
route's proxy and persona (:mod:`topicstreams.browser.route_reach`), each given the navigation timeout (15 s at
most): ``reachable`` or why not. Exits 1 when a route is unreachable: none of its requests got an answer.
"""

from __future__ import annotations

import json
import sys

from scrapy.exceptions import UsageError
from sqlalchemy.exc import SQLAlchemyError

from topicstreams.browser.chromium import BrowserNotFound, launch_options
from topicstreams.browser.route_reach import check_routes
from topicstreams.cli.configured import SubcommandCommand
from topicstreams.cli.usage import refuse_operands
from topicstreams.config.route_table import configured_routes
from topicstreams.config.secrets import mask_url
from topicstreams.crawl.deadline import navigation_timeout
from topicstreams.engines.topic_names import configured_engines
from topicstreams.reports.route_checks import check_table, unreachable_routes
from topicstreams.reports.routes_report import build_routes_report
from topicstreams.storage import utcnow
from topicstreams.storage.damage_notice import damage_of
from topicstreams.storage.failures import describe

CHECK = "check"

CHECK_QUERY = "weather"
"""The harmless query whose results page each route asks each engine for."""

CHECK_TIMEOUT = 15.0
"""The longest a check waits for one answer (seconds); shorter when the navigation timeout is."""


class Command(SubcommandCommand):
    requires_crawler_process = False
    subcommands = {
        CHECK: "one request per route and enabled engine it serves, now: reachable or why not (exit 1 when a "
        "route is unreachable)"
    }

    def syntax(self) -> str:
        return "[--json] | check [--json]"

    def short_desc(self) -> str:
        return "Show this node's routes (state per engine), or check that each reaches its engines now"

    def long_desc(self) -> str:
        return (
            "Show this node's routes (node.id), one line each: its proxy (direct, or scheme://host:port: never "
            "its credentials), its state (ok; cooling: an engine is benched on it; down: it fails on every engine "
            "it serves; stale or stopped: no crawl is behind it; not crawled yet) and per engine the pair's "
            "state, score and cooling until. --json prints one object: "
            '{"routes": [{"node", "route", "state", "engines": {ENGINE: {"state", "score", "band", '
            '"cooling_until", "reason"}}, "proxy", "configured"}]} — each entry that of "route_states" in '
            "`scrapy health --json`, plus the proxy shown, whether the route is configured and each pair's "
            "latest failure; a state null where no crawl has used the route (or engine) yet; times ISO 8601 "
            "UTC. Exits 0 (1 when the database cannot be read).\n\n"
            "scrapy routes check: one request per route and enabled engine it serves, now, in Chromium through "
            f"the route's proxy and persona, to the engine's results page for {CHECK_QUERY!r} (the navigation "
            f"timeout, at most {CHECK_TIMEOUT:g} s each): reachable with the HTTP status and time, or the reason "
            "(proxy refused, 407, DNS, timeout…). A route is unreachable when none of its requests got an answer "
            "(any HTTP status but the proxy's 407 is an answer); exits 1 when one is, else 0. Without `routes`, the "
            "default route goes through the first of anti_detection.proxy.proxies (or direct). --json prints "
            '{"checks": [{"route", "proxy", "engine", "url", "reachable", "status", "seconds", "problem"}], '
            '"unreachable": [ROUTE]}.'
        )

    def add_options(self, parser) -> None:
        super().add_options(parser)
        parser.add_argument("--json", action="store_true", help="print one JSON object")

    def check_arguments(self, args: list[str], opts) -> None:
        """Refuse arguments that can never run, before the configuration is read."""
        if not args:
            return
        if args[0] != CHECK:
            raise UsageError(f"unknown sub-command {args[0]!r}: expected none (the report) or {CHECK}")
        refuse_operands(CHECK, "", args[1:])

    def run(self, args: list[str], opts) -> None:
        if args:
            super().run(args, opts)  # check (check_arguments refused anything else)
            return
        try:
            self.exitcode = self.do_report(opts)
        finally:
            self.runtime.close()

    def do_report(self, opts) -> int:
        sections = self.sections
        try:
            report = build_routes_report(
                self.database(self.config),
                node=sections.node.id,
                routes=configured_routes(sections),
                enabled=sections.enabled_engines(),
                now=utcnow(),
                proxies=len(sections.anti_detection.proxy.proxies) if sections.anti_detection.proxy.enabled else 1,
            )
        except SQLAlchemyError as exc:
            url = sections.database.url
            print(
                damage_of(url, exc)
                or f"cannot read the routes from the database {mask_url(url)}: {describe(exc)} (run `scrapy db "
                "upgrade` once it can be reached)",
                file=sys.stderr,
            )
            return 1
        print(json.dumps(report.as_json()) if opts.json else report.as_table())
        return 0

    def do_check(self, config, args, opts) -> int:
        sections = self.sections
        routes = configured_routes(sections)
        enabled = sections.enabled_engines()
        engines = {engine.name: engine for engine in configured_engines(self.config.get("engines"), enabled)}
        targets = [
            (route, [(name, engines[name].results_url(CHECK_QUERY, 0)) for name in enabled if route.serves(name)])
            for route in routes
        ]
        unchecked = [route.name for route, pairs in targets if not pairs]
        if not any(pairs for _, pairs in targets):
            print("nothing to check: no route serves an enabled engine", file=sys.stderr)
            return 0
        timeout = min(CHECK_TIMEOUT, navigation_timeout(self.settings))
        try:
            reaches = check_routes(targets, launch_options(sections.browser), timeout)
        except BrowserNotFound as exc:
            print(f"cannot check the routes: {exc}", file=sys.stderr)
            return 1
        unreachable = unreachable_routes(reaches)
        if opts.json:
            print(json.dumps({"checks": [reach.as_json() for reach in reaches], "unreachable": unreachable}))
        else:
            print(check_table(reaches, unchecked))
        return 1 if unreachable else 0
