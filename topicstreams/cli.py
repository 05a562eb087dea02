"""What the project's Scrapy commands share: loading the configuration, reporting its errors."""

from __future__ import annotations

import sys

from scrapy.commands import ScrapyCommand
from scrapy.exceptions import UsageError

from topicstreams.config import EX_CONFIG, Config, ConfigError, load_config


def load_config_or_exit(settings) -> Config:
    """Load and validate the configuration; on a problem print one ``config error:`` line and exit 78."""
    try:
        return load_config(settings)
    except ConfigError as exc:
        print(f"config error: {exc}", file=sys.stderr)
        raise SystemExit(EX_CONFIG) from None


class ConfiguredCommand(ScrapyCommand):
    """A command that validates the configuration before anything else (before logging starts).

    Scrapy creates the crawler process, which configures logging and prints its start-up lines, after
    ``process_options`` and before ``run``: validating here keeps a config error to one line on stderr.
    """

    config: Config

    def process_options(self, args: list[str], opts) -> None:
        super().process_options(args, opts)
        self.refuse(args)
        self.config = load_config_or_exit(self.settings)

    def refuse(self, args: list[str]) -> None:
        """Exit early for arguments that can never run (before the configuration is read)."""


class SubcommandCommand(ConfiguredCommand):
    """A command with sub-commands: ``scrapy NAME SUB [ARGS…]``, each handled by a ``do_<sub>`` method."""

    requires_project = True
    requires_crawler_process = False
    subcommands: dict[str, str] = {}

    def syntax(self) -> str:
        return "|".join(self.subcommands) + " [ARGS…]"

    def long_desc(self) -> str:
        lines = [self.short_desc(), ""]
        lines += [f"  {name:<12} {desc}" for name, desc in self.subcommands.items()]
        return "\n".join(lines)

    def run(self, args: list[str], opts) -> None:
        if not args or args[0] not in self.subcommands:
            raise UsageError(f"expected one of: {', '.join(self.subcommands)}")
        self.exitcode = getattr(self, f"do_{args[0]}")(self.config, args[1:], opts) or 0


class CrawlingCommand(ConfiguredCommand):
    """A command that runs crawlers and exits non-zero when one of them could not start its loop.

    Scrapy closes a spider whose ``start()`` raised with the reason ``start_error`` and exits 0; a crawl
    that never began is a failure to whoever runs it (a shell script, Scrapyd's log reader).
    """

    def _create_crawler(self, spidercls):
        crawler = super()._create_crawler(spidercls)
        self.__dict__.setdefault("started_crawlers", []).append(crawler)
        return crawler

    def run(self, args: list[str], opts) -> None:
        super().run(args, opts)
        failed = [crawler.spidercls.name for crawler in self.__dict__.get("started_crawlers", [])
                  if crawler.stats and crawler.stats.get_value("finish_reason") == "start_error"]
        if failed:
            print(f"could not start: {', '.join(failed)} (see the log above)", file=sys.stderr)
            self.exitcode = self.exitcode or 1
