"""The store's hold on its engine: no new work while nothing can keep what it would scrape.

A :class:`~topicstreams.storage.durable.DurableWriter` keeps a batch the database cannot take in its journal. When
the journal cannot take it either (an append fails with an ``OSError``: no space left, a read-only file system, a
quota), the batch waits in memory, and the engine must stop taking topics until the journal or the database takes
items again, or what it scrapes meanwhile would have nowhere to go. :class:`StoreHold` decides when that is, and
says so once each way:

* **held** while the journal's last append failed and either the database cannot be written either (its last write
  failed) or the items waiting in memory reach ``TOPICSTREAMS_STORE_BUFFER_ITEMS``: one ERROR naming the journal,
  the free space on its disk and how many items wait in memory alone, and what to do;
* **released** as soon as the journal takes items again, or the database does (and memory is under the bound):
  one INFO, and the engine goes on by itself.

Its ``on_change`` is called with the reason (held) or None (released): the store pipeline puts that on the
engine's state (:attr:`topicstreams.crawl.engine_state.EngineState.held`), which the spider's loop reads. It is
kept apart from the health pause: neither lifts the other.
"""

from __future__ import annotations

import logging
import shutil
from collections.abc import Callable
from pathlib import Path

logger = logging.getLogger(__name__)


def described(exc: OSError) -> str:
    """``OSError: [Errno 28] No space left on device``."""
    return f"{type(exc).__name__}: {exc}"


def free_space(folder: Path) -> str:
    """The free space on the disk of ``folder``, for a person (``"12.0 KiB free"``), or "" when it cannot be read."""
    try:
        free = shutil.disk_usage(folder).free
    except OSError:
        return ""
    size, unit = float(free), "bytes"
    for name in ("KiB", "MiB", "GiB", "TiB"):
        if size < 1024:
            break
        size, unit = size / 1024, name
    return f"{free} bytes free" if unit == "bytes" else f"{size:.1f} {unit} free"


class StoreHold:
    """One writer's hold on its engine (see the module docstring). Called with the writer's lock held."""

    def __init__(
        self, name: str, journal: Path, buffer_items: int, on_change: Callable[[str | None], None] = lambda why: None
    ) -> None:
        self.name = name
        self.journal = journal
        self.buffer_items = buffer_items
        self.on_change = on_change
        self.error: str | None = None
        """The journal's last failed append, described; None while it takes items."""
        self.holding = False
        self.holds = 0
        """How many times the engine was held (each with its ERROR)."""

    def journal_failed(self, exc: OSError) -> None:
        self.error = described(exc)

    def journal_takes(self) -> None:
        """The journal took an append (or was emptied): it is tried again for the next batch."""
        self.error = None

    def update(self, *, db_failing: bool, in_memory: int) -> None:
        """Hold or release the engine after a change: ``db_failing`` when the database's last write failed,
        ``in_memory`` the items waiting in memory."""
        holding = self.error is not None and (db_failing or in_memory >= self.buffer_items)
        if holding == self.holding:
            return
        self.holding = holding
        if holding:
            self.holds += 1
            free = free_space(self.journal.parent)
            why = "the database cannot be written either" if db_failing else "the database is slower than the crawl"
            logger.error(
                "[%s] The journal %s cannot be written (%s%s) and %s: %d item(s) wait in memory alone (at most "
                "TOPICSTREAMS_STORE_BUFFER_ITEMS, %d, and the pages under way). %s takes no new topic until the "
                "journal or the database takes items again, then goes on by itself. Free space on the journal's "
                "disk (browser.profile_dir), or bring the database back: if the crawl stops before, what waits in "
                "memory is lost (counted in topicstreams/store/lost, and the crawl exits non-zero)",
                self.name,
                self.journal,
                self.error,
                f"; {free} on its disk" if free else "",
                why,
                in_memory,
                self.buffer_items,
                self.name,
            )
            self.on_change(f"the journal {self.journal} cannot be written ({self.error}) and {why}")
            return
        if self.error is None:
            logger.info(
                "[%s] the journal %s takes items again: what waited in memory is kept in it; %s takes topics again",
                self.name,
                self.journal,
                self.name,
            )
        else:
            logger.info(
                "[%s] the database takes items again: the %d item(s) waiting in memory are written from there; %s "
                "takes topics again",
                self.name,
                in_memory,
                self.name,
            )
        self.on_change(None)
