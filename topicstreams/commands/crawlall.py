"""``scrapy crawlall``: every enabled engine (or ``-a engines=…``) in one process, through CrawlerProcess.

Its arguments are checked as ``crawl``'s are (:meth:`~topicstreams.cli.configured.CrawlingCommand.check_arguments`),
and ``-a engines=`` too: a name that is no engine of the project, or none at all, is a usage error (exit 2).
"""

from __future__ import annotations

import sys

from scrapy.commands import BaseRunSpiderCommand
from scrapy.exceptions import UsageError

from topicstreams.cli.configured import CrawlingCommand, exit_on_losses
from topicstreams.cli.crawl_summary import StartedLine, log_summary
from topicstreams.commands.crawl import refuse_engines, spider_names
from topicstreams.crawl.arguments import SPIDER_ARGUMENTS, split_names

ENGINES_ARGUMENT = "engines"


class Command(CrawlingCommand, BaseRunSpiderCommand):
    requires_project = True
    stats_dump_level = "DEBUG"  # one summary line for the whole process (log_summary), not a dump per engine

    def syntax(self) -> str:
        return "[-a engines=google,bing] [-a topics=a,b] [-a once=1] [options]"

    def short_desc(self) -> str:
        return "Crawl every enabled engine at once, in one process"

    accepted_arguments = (*SPIDER_ARGUMENTS, ENGINES_ARGUMENT)

    def check_arguments(self, args: list[str], opts) -> None:
        if args:
            raise UsageError(
                f"crawlall takes no positional arguments: got {' '.join(args)!r}; name engines with -a engines=…"
            )
        super().check_arguments(args, opts)  # the spiders' arguments, and engines
        named = opts.spargs.get(ENGINES_ARGUMENT)
        if named is None:
            return
        names = split_names(named)
        refuse_engines(names)
        known = spider_names(self.settings)
        if not names:
            raise UsageError(
                f"-a engines= names no engine: give some of {', '.join(known)}, or leave the argument out to "
                "crawl every enabled engine"
            )
        unknown = [name for name in names if name not in known]
        if unknown:
            raise UsageError(f"-a engines: unknown engine {', '.join(unknown)}: expected some of {', '.join(known)}")

    def process_options(self, args: list[str], opts) -> None:
        super().process_options(args, opts)
        named = opts.spargs.pop(ENGINES_ARGUMENT, None)
        self.named = named is not None
        self.engines = split_names(named) if self.named else self.config.sections.enabled_engines()
        refuse_engines(self.engines)
        self.refuse_topics_argument(self.engines, opts)

    def run(self, args: list[str], opts) -> None:
        known = set(self.crawler_process.spider_loader.list())
        unknown = [name for name in self.engines if name not in known]  # enabled in the config (named: checked)
        if unknown:
            print(
                f"crawlall: no spider yet for {', '.join(unknown)}; crawling {', '.join(sorted(known))}",
                file=sys.stderr,
            )
            self.engines = [name for name in self.engines if name in known]
        if not self.engines:
            print("crawlall: no engine enabled (engines.<name>.enabled in the config)", file=sys.stderr)
            self.exitcode = 1
            return
        for name in self.engines:  # every profile before anything is made (the database's schema included)
            self.check_profile_free(name)
        crawlers = [self._create_crawler(name) for name in self.engines]
        StartedLine(crawlers)
        for crawler in crawlers:
            self.crawler_process.crawl(crawler, **opts.spargs)
        self.crawler_process.start()
        if self.crawler_process.bootstrap_failed:
            self.exitcode = 1
        log_summary(crawlers)
        exit_on_losses(self)
