"""What became of each topic and canary query of an engine spider, told to the log, the stats and the signals.

* :meth:`TopicFates.settle`: a topic's verdict goes to the topic supply, and its fate is told: swept
  (``topicstreams/<engine>/topics_swept`` and ``topic_swept``), given up (an ERROR and ``topics_given_up``), or to
  be tried again (a WARNING saying when, or that the shared schedule has it back in lease mode);
* :meth:`TopicFates.give_up_paused`: once mode on a paused engine gives up the topics left, with an ERROR;
* :meth:`TopicFates.check_canary`: a canary's answer, when its page looked normal, is checked
  (``canaries``, ``canary_mismatches``, ``canary_checked``).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import Any

from topicstreams.config.sections import CanaryQuerySection
from topicstreams.crawl.canaries import check_answer
from topicstreams.crawl.leased_supply import LeasedTopics
from topicstreams.crawl.signals import canary_checked, topic_swept
from topicstreams.crawl.supply import Fate, TopicSupply
from topicstreams.engines.classify import ResponseClass, Verdict


class TopicFates:
    """The fates of the topics of engine ``engine`` under ``supply``, told through ``logger`` (the spider's)."""

    def __init__(
        self, crawler: Any, engine: str, supply: TopicSupply, *, once: bool, logger: logging.LoggerAdapter
    ) -> None:
        self.crawler = crawler
        self.engine = engine
        self.supply = supply
        self.once = once
        self.logger = logger

    def stat(self, key: str, count: int = 1) -> None:
        self.crawler.stats.inc_value(f"topicstreams/{self.engine}/{key}", count)

    def settle(self, topic: str, verdict: Verdict, hold: float = 0.0) -> None:
        """Give the supply the verdict of ``topic``'s run, and tell what it makes of it (``hold``: see
        :meth:`~topicstreams.crawl.supply.TopicSupply.done`)."""
        outcome = self.supply.done(topic, verdict, hold)
        if outcome.fate is Fate.SWEPT:
            self.stat("topics_swept")
            self.crawler.signals.send_catch_log(signal=topic_swept, engine=self.engine, topic=topic)
        elif outcome.fate is Fate.GIVEN_UP:
            self.logger.error(
                "gave up topic %r after %d attempt%s: last %s (%s)",
                topic,
                outcome.attempts,
                "" if outcome.attempts == 1 else "s",
                verdict.cls,
                verdict.reason,
            )
            self.stat("topics_given_up")
        else:
            if isinstance(self.supply, LeasedTopics):
                again = "given back to the shared schedule, " + (
                    "for a node that still reaches the engine to take now"
                    if outcome.retry_in is None
                    else f"due in {outcome.retry_in:g} s"
                )
            else:
                again = "trying it again " + (
                    "after the cooldown" if outcome.retry_in is None else f"in {outcome.retry_in:g} s"
                )
            # Tried again after the cooldown: the cooldown's line told the failure already (DEBUG); else a WARNING.
            quiet = outcome.retry_in is None and not isinstance(self.supply, LeasedTopics)
            (self.logger.debug if quiet else self.logger.warning)(
                "topic %r %s: %s (%s); %s",
                topic,
                f"attempt {outcome.attempts} failed" if self.once else "failed",
                verdict.cls,
                verdict.reason,
                again,
            )

    def give_up_paused(self) -> None:
        """Once mode on a paused engine: the topics left cannot be scraped until a person resumes it."""
        left = self.supply.abandon()
        self.logger.error(
            "%s is paused by its health (see `scrapy health`): %d topic(s) not scraped: %s; a person "
            "lifts the pause with `scrapy health resume %s`",
            self.engine,
            len(left),
            ", ".join(left),
            self.engine,
        )
        self.stat("topics_given_up", len(left))

    def check_canary(self, canary: CanaryQuerySection, verdict: Verdict, urls: Iterable[str | None]) -> None:
        """A canary's answer (its page's result URLs, normalized), when its page looked normal (a block is the
        hostility signals' business)."""
        if verdict.cls is not ResponseClass.OK:
            return
        check = check_answer(canary, self.engine, urls)
        self.stat("canaries")
        if not check.matched:
            self.stat("canary_mismatches")
        self.logger.debug("canary %r: %d results, %s", canary.query, check.results, check.problem or "as expected")
        self.crawler.signals.send_catch_log(signal=canary_checked, check=check)
