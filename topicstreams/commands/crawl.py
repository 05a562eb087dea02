"""``scrapy crawl ENGINE``: Scrapy's crawl, with its arguments checked and the configuration validated first, and
DuckDuckGo refused. An engine that is not the project's, a ``-a`` name it does not take or a value it does not
understand (``-a once=maybe``) is a usage error: one line naming it, exit 2, before any crawler starts.

A crawl that had to stop with items neither stored nor journaled (the stat ``topicstreams/store/lost``: a full
journal disk while the database was away) exits non-zero, with one line on stderr
(:func:`topicstreams.cli.configured.exit_on_losses`); ``crawlall`` too.
"""

from __future__ import annotations

import sys

from scrapy.commands.crawl import Command as ScrapyCrawlCommand
from scrapy.exceptions import UsageError
from scrapy.spiderloader import get_spider_loader

from topicstreams import ENGINES
from topicstreams.cli.configured import CrawlingCommand

REFUSED_ENGINES = {
    "duckduckgo": (
        "DuckDuckGo is not supported: it hard-blocks automated access with an 'anomaly' challenge page "
        "(anomaly.js, form#challenge-form), so it cannot be scraped reliably. "
        "Use google, bing, yahoo or brave (see docs/DUCKDUCKGO_UNSUPPORTED.md)."
    ),
}
REFUSED_EXIT = 2


def spider_names(settings) -> list[str]:
    """The project's spiders (its engines), in the order commands list them."""
    names = get_spider_loader(settings).list()
    return sorted(names, key=lambda name: ENGINES.index(name) if name in ENGINES else len(ENGINES))


def refuse_engines(names: list[str]) -> None:
    """Exit with the reason when any of ``names`` is an engine the project refuses."""
    for name in names:
        reason = REFUSED_ENGINES.get(name.strip().lower())
        if reason:
            print(reason, file=sys.stderr)
            raise SystemExit(REFUSED_EXIT)


class Command(CrawlingCommand, ScrapyCrawlCommand):
    def short_desc(self) -> str:
        return "Crawl one engine (google, bing, yahoo, brave) for the configured topics"

    def syntax(self) -> str:
        return "ENGINE [-a topics=a,b] [-a once=1] [options]"

    def check_arguments(self, args: list[str], opts) -> None:
        refuse_engines(args[:1])
        known = spider_names(self.settings)
        if not args:
            raise UsageError(f"name the engine to crawl: one of {', '.join(known)}")
        if len(args) > 1:
            raise UsageError(
                f"crawl takes one engine: got {' '.join(args)!r} (crawlall runs several: -a engines=google,bing)"
            )
        if args[0] not in known:
            raise UsageError(f"unknown engine {args[0]!r}: expected one of {', '.join(known)}")
        super().check_arguments(args, opts)

    def process_options(self, args: list[str], opts) -> None:
        super().process_options(args, opts)
        self.refuse_topics_argument(args[:1], opts)
