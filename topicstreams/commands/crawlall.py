"""``scrapy crawlall``: every enabled engine (or ``-a engines=…``) in one process, through CrawlerProcess."""

from __future__ import annotations

import sys

from scrapy.commands import BaseRunSpiderCommand
from scrapy.exceptions import UsageError

from topicstreams.cli.configured import CrawlingCommand, exit_on_losses
from topicstreams.cli.crawl_summary import StartedLine, log_summary
from topicstreams.commands.crawl import refuse_engines
from topicstreams.crawl.arguments import split_names


class Command(CrawlingCommand, BaseRunSpiderCommand):
    requires_project = True
    stats_dump_level = "DEBUG"  # one summary line for the whole process (log_summary), not a dump per engine

    def syntax(self) -> str:
        return "[-a engines=google,bing] [-a topics=a,b] [-a once=1] [options]"

    def short_desc(self) -> str:
        return "Crawl every enabled engine at once, in one process"

    def refuse(self, args: list[str]) -> None:
        if args:
            raise UsageError("crawlall takes no positional arguments; name engines with -a engines=…")

    def process_options(self, args: list[str], opts) -> None:
        super().process_options(args, opts)
        named = opts.spargs.pop("engines", None)
        self.named = named is not None
        self.engines = split_names(named) if self.named else self.config.sections.enabled_engines()
        refuse_engines(self.engines)
        self.refuse_topics_argument(self.engines, opts)

    def run(self, args: list[str], opts) -> None:
        known = set(self.crawler_process.spider_loader.list())
        unknown = [name for name in self.engines if name not in known]
        if unknown and self.named:
            raise UsageError(f"unknown engine {', '.join(unknown)}: expected some of {', '.join(sorted(known))}")
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
