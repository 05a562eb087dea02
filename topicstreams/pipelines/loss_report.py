"""Telling of lost items: the store pipeline's account when a crawl stops with items neither stored nor journaled.

When the :class:`~topicstreams.storage.durable.DurableWriter` closes with items that neither the database nor the
journal took (:attr:`~topicstreams.storage.durable.DurableWriter.lost`), :meth:`LossReport.report`:

* adds them to the stat ``topicstreams/store/lost`` (the ``crawl`` and ``crawlall`` commands exit non-zero on it);
* records the loss (:mod:`topicstreams.storage.store_losses`): a ``store_losses`` row when the database takes it,
  else a line in ``<engine>.lost`` beside the journal (in room reserved at the start: a full disk takes it), which
  the next start of the engine records (:meth:`LossReport.record_earlier`), else nowhere but the log;
* logs one ERROR with the count, why, and where the loss is recorded;
* sends the ``data_loss`` alert (when ``alerting.events`` names it) and waits for its delivery as long as a stopping
  crawl waits for any (``TOPICSTREAMS_ALERT_STOP_WAIT``; what is left then goes to the node's next start).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from scrapy.statscollectors import StatsCollector
from sqlalchemy import Engine

from topicstreams.alerts import transitions
from topicstreams.alerts.delivery import Notifier
from topicstreams.storage.db import utcnow
from topicstreams.storage.durable import LOST
from topicstreams.storage.failures import describe
from topicstreams.storage.store_losses import Loss, keep_for_later, record_kept, record_losses, reserve

logger = logging.getLogger(__name__)


@dataclass
class LossReport:
    """The account of one engine's crawl on one node (see the module docstring)."""

    engine: str
    node: str
    journal_dir: str
    stats: StatsCollector
    database: Callable[[], Engine]
    notifier: Callable[[], Notifier | None] = lambda: None

    def record_earlier(self) -> None:
        """At the start: record the losses an earlier run kept beside the journal (the database was away then), and
        reserve the room of the next."""
        Path(self.journal_dir).mkdir(parents=True, exist_ok=True)
        try:
            items = record_kept(self.database(), self.journal_dir, self.engine)
        except Exception as exc:  # the database away again: the file stays for the next start
            logger.warning(
                "[%s] could not record the items an earlier run lost (kept beside the journal in %s): %s; "
                "the next start tries again",
                self.engine,
                self.journal_dir,
                describe(exc),
            )
            return
        finally:
            reserve(self.journal_dir, self.engine)
        if items:
            logger.warning(
                "[%s] recorded %d item(s) an earlier run lost (`scrapy health` lists them)", self.engine, items
            )

    async def report(self, items: int, why: str) -> None:
        """``items`` were lost (``why``): count, record, say, alert."""
        self.stats.inc_value(LOST, items)
        loss = Loss(self.node, self.engine, items, utcnow(), why)
        recorded = await asyncio.to_thread(self._record, loss)
        logger.error(
            "[%s] %d item(s) lost: the crawl stopped with them neither stored in the database nor kept in the "
            "journal (%s). The loss is %s; the crawl exits non-zero. Free space on the journal's disk "
            "(browser.profile_dir) and check the database before the next crawl",
            self.engine,
            items,
            why,
            recorded,
        )
        notifier = self.notifier()
        if notifier is None:
            return
        notifier.send(transitions.data_loss(self.engine, self.node, items, why, recorded, loss.at))
        await asyncio.to_thread(notifier.wait_at_stop)  # TOPICSTREAMS_ALERT_STOP_WAIT, as every stop

    def _record(self, loss: Loss) -> str:
        """Record ``loss`` where it can be; says where."""
        try:
            record_losses(self.database(), [loss])
        except Exception as exc:
            failure = describe(exc)
        else:
            return "recorded in the database (`scrapy health` lists it)"
        try:
            path = keep_for_later(self.journal_dir, loss)
        except OSError as exc:
            return (
                f"recorded nowhere but this log: the database could not take it ({failure}), nor the journal's "
                f"disk ({type(exc).__name__}: {exc})"
            )
        return f"kept in {path} (the database could not take it: {failure}); the next start records it"
