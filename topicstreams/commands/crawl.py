"""``scrapy crawl ENGINE``: Scrapy's crawl, with the configuration validated first and DuckDuckGo refused.

A crawl that had to stop with items neither stored nor journaled (the stat ``topicstreams/store/lost``: a full
journal disk while the database was away) exits :data:`LOST_EXIT`, with one line on stderr; ``crawlall`` too.
"""

from __future__ import annotations

import sys

from scrapy.commands.crawl import Command as ScrapyCrawlCommand

from topicstreams.cli.configured import CrawlingCommand
from topicstreams.storage.durable import LOST

REFUSED_ENGINES = {
    "duckduckgo": (
        "DuckDuckGo is not supported: it hard-blocks automated access with an 'anomaly' challenge page "
        "(anomaly.js, form#challenge-form), so it cannot be scraped reliably. "
        "Use google, bing, yahoo or brave (see docs/DUCKDUCKGO_UNSUPPORTED.md)."
    ),
}
REFUSED_EXIT = 2
LOST_EXIT = 1
"""The exit status of a crawl that lost items (unless it failed otherwise first)."""


def refuse_engines(names: list[str]) -> None:
    """Exit with the reason when any of ``names`` is an engine the project refuses."""
    for name in names:
        reason = REFUSED_ENGINES.get(name.strip().lower())
        if reason:
            print(reason, file=sys.stderr)
            raise SystemExit(REFUSED_EXIT)


def lost_items(crawler) -> int:
    """The items ``crawler``'s crawl lost (its ``topicstreams/store/lost`` stat; 0 for a crawl that never began)."""
    try:
        stats = crawler.stats
    except RuntimeError:  # Scrapy: "Crawler.stats is not set yet"
        return 0
    return int(stats.get_value(LOST, 0) or 0) if stats else 0


def exit_on_losses(command) -> None:
    """Make ``command`` exit non-zero, with one line on stderr, when any crawl it ran lost items."""
    crawlers = command.__dict__.get("started_crawlers", [])
    lost = {crawler.spidercls.name: count for crawler in crawlers if (count := lost_items(crawler))}
    if lost:
        counts = ", ".join(f"{count} of {name}" for name, count in lost.items())
        print(
            f"items lost: {counts}, neither stored nor journaled (see the ERROR above; `scrapy health` lists them)",
            file=sys.stderr,
        )
        command.exitcode = command.exitcode or LOST_EXIT


class Command(CrawlingCommand, ScrapyCrawlCommand):
    def short_desc(self) -> str:
        return "Crawl one engine (google, bing, yahoo, brave) for the configured topics"

    def refuse(self, args: list[str]) -> None:
        refuse_engines(args[:1])

    def process_options(self, args: list[str], opts) -> None:
        super().process_options(args, opts)
        self.refuse_topics_argument(args[:1], opts)

    def run(self, args: list[str], opts) -> None:
        super().run(args, opts)
        exit_on_losses(self)
