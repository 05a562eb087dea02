"""``scrapy crawl ENGINE``: Scrapy's crawl, with the configuration validated first and DuckDuckGo refused.

A crawl that had to stop with items neither stored nor journaled (the stat ``topicstreams/store/lost``: a full
journal disk while the database was away) exits non-zero, with one line on stderr
(:func:`topicstreams.cli.configured.exit_on_losses`); ``crawlall`` too.
"""

from __future__ import annotations

import sys

from scrapy.commands.crawl import Command as ScrapyCrawlCommand

from topicstreams.cli.configured import CrawlingCommand

REFUSED_ENGINES = {
    "duckduckgo": (
        "DuckDuckGo is not supported: it hard-blocks automated access with an 'anomaly' challenge page "
        "(anomaly.js, form#challenge-form), so it cannot be scraped reliably. "
        "Use google, bing, yahoo or brave (see docs/DUCKDUCKGO_UNSUPPORTED.md)."
    ),
}
REFUSED_EXIT = 2


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

    def refuse(self, args: list[str]) -> None:
        refuse_engines(args[:1])

    def process_options(self, args: list[str], opts) -> None:
        super().process_options(args, opts)
        self.refuse_topics_argument(args[:1], opts)
