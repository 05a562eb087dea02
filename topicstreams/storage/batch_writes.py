"""One batch of the store written, and a journal written by hand: the parts of the durable store that do not wait.

* :func:`write_or_set_aside`: a batch in one transaction; when the data of some items can never be written, the batch
  is split in halves until those are alone, and they are set aside with their reason (the rest is written). A
  failure that can pass is raised: the caller keeps the batch;
* :func:`replay_file`: ``scrapy db replay``: a journal (or a reject file) written into the database, then emptied;
* :class:`Backoff`: the capped exponential backoff of the writers that retry (the store, the outbox, the log store).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from topicstreams.storage.failures import can_pass, describe
from topicstreams.storage.journal import Journal, Unreadable, encode, is_rejects
from topicstreams.storage.writer import NewsWriter, WriteResult

Item = Mapping[str, Any]


@dataclass
class Backoff:
    """Capped exponential backoff: ``initial``, twice that, … up to ``maximum`` seconds."""

    initial: float = 0.5
    maximum: float = 15.0
    failures: int = 0

    def next_delay(self) -> float:
        # the exponent stops growing long before a float would overflow (a write failing for hours, every few ms)
        delay = min(self.maximum, self.initial * 2 ** min(self.failures, 64))
        self.failures += 1
        return delay

    def reset(self) -> None:
        self.failures = 0


@dataclass
class Written:
    """What one write of a batch did: the rows it added, and the items the database refused for good."""

    result: WriteResult = field(default_factory=WriteResult)
    rejected: list[tuple[Item | Unreadable, str]] = field(default_factory=list)


def write_or_set_aside(writer: NewsWriter, items: list[Item | Unreadable]) -> Written:
    """Write ``items`` in one transaction; when the data of some can never be written, split the batch until
    those are alone and set them aside (with their reason), writing the rest.

    A failure that can pass is raised (nothing of it is set aside): the caller keeps the batch and tries again.
    """
    written = Written()
    readable: list[Item] = []
    for item in items:
        if isinstance(item, Unreadable):
            written.rejected.append((item, item.problem))
        else:
            readable.append(item)
    _write_part(writer, readable, written)
    return written


def _write_part(writer: NewsWriter, items: list[Item], written: Written) -> None:
    if not items:
        return
    try:
        result = writer.write(items)
    except Exception as exc:
        if can_pass(exc):
            raise
        if len(items) == 1:
            written.rejected.append((items[0], describe(exc)))
            return
        middle = len(items) // 2
        _write_part(writer, items[:middle], written)
        _write_part(writer, items[middle:], written)
        return
    written.result.add(result)


@dataclass
class Replayed:
    """What ``replay_file`` did."""

    path: Path
    items: int = 0
    result: WriteResult = field(default_factory=WriteResult)
    rejected: int = 0


def replay_file(writer: NewsWriter, path: Path, batch_size: int = 500) -> Replayed:
    """Write a journal (or a reject file) into the database by hand, then empty it.

    A journal's refused items go to its reject file. A reject file's items are tried again; those refused again
    stay in it (rewritten with the new reason). A failure that can pass stops the replay and is raised: what is
    written is written, the file keeps the rest (a replay again takes up from its start: idempotent).
    """
    done = Replayed(path)
    with Journal(path) as journal:
        still_refused: list[tuple[Any, str]] = []
        while journal.unread:
            items, end = journal.read(batch_size)
            written = write_or_set_aside(writer, items)
            if is_rejects(path):
                still_refused.extend(written.rejected)
            else:
                journal.reject(written.rejected)
            done.rejected += len(written.rejected)
            done.result.add(written.result)
            done.result.event_keys.clear()  # counted; a replay keeps no event of its own in memory
            journal.advance(end, len(items))
            done.items += len(items)
        if is_rejects(path):
            _rewrite_rejects(journal, still_refused)
        else:
            journal.clear()
    return done


def _rewrite_rejects(journal: Journal, refused: Iterable[tuple[Any, str]]) -> None:
    lines = b"".join(
        item.line + b"\n" if isinstance(item, Unreadable) else encode(item, reason=reason) for item, reason in refused
    )
    journal.clear()
    if lines:
        os.write(journal.fd, lines)
        os.fsync(journal.fd)
