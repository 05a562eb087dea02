"""What Apprise and its HTTP client log while a thread delivers an alert (:class:`AppriseLogs`, one per notifier).

What Apprise says is captured by a filter on its logger, in the delivering thread only: its WARNING lines become the
attempt's detail (:func:`topicstreams.alerts.targets.apprise_attempt`) and go no further, so the log holds the
notifier's one masked line instead; the HTTP client's debug lines, which show request paths and queries (where
services keep their tokens), are dropped there too. Records of other threads pass as usual.

The filters belong to their :class:`AppriseLogs`: put on the loggers when it is made, taken off by
:meth:`AppriseLogs.close` (and put back by a later delivery), so that nothing stays installed on a logger once its
owner is done.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from topicstreams.config.apprise_urls import QUIET_LOGGER

HUSHED_LOGGERS = (
    "urllib3.connectionpool",
    "urllib3.connection",
    "urllib3.poolmanager",
    "urllib3.response",
    "urllib3.util.retry",
    "requests",
)
"""The loggers of the HTTP client Apprise's services use (a filter applies to the records of its own logger only,
so each is named)."""


class _ApprisesWords(logging.Filter):
    """On Apprise's logger: while a thread delivers (:meth:`AppriseLogs.said`), what Apprise logs in that thread is
    kept for it (WARNING and above) and goes no further; other threads' records pass as usual."""

    def __init__(self, local: threading.local) -> None:
        super().__init__()
        self.local = local

    def filter(self, record: logging.LogRecord) -> bool:
        said = getattr(self.local, "said", None)
        if said is None:
            return True
        if record.levelno >= logging.WARNING:
            try:
                said.append(record.getMessage())
            except Exception:  # a record whose arguments do not fit its format: still a failure word
                said.append(str(record.msg))
        return False


class _Hushed(logging.Filter):
    """On the HTTP client's loggers: nothing they log in a thread that delivers (:meth:`AppriseLogs.said`) goes
    further — at debug level urllib3 logs each request's path and query, where services keep their tokens."""

    def __init__(self, local: threading.local) -> None:
        super().__init__()
        self.local = local

    def filter(self, record: logging.LogRecord) -> bool:
        return getattr(self.local, "said", None) is None


class AppriseLogs:
    """What Apprise and its HTTP client log while a thread delivers: the filters on their loggers, installed when
    made (and again at a delivery after :meth:`close`), removed by :meth:`close` once no delivery is under way.
    A :class:`Notifier` owns one. Thread-safe."""

    def __init__(self) -> None:
        self._local = threading.local()
        self._words = _ApprisesWords(self._local)
        self._hushed = _Hushed(self._local)
        self._lock = threading.Lock()
        self._installed = False
        self._closing = False
        self._busy = 0
        with self._lock:
            self._install()

    def _install(self) -> None:
        if not self._installed:
            logging.getLogger(QUIET_LOGGER).addFilter(self._words)
            for name in HUSHED_LOGGERS:
                logging.getLogger(name).addFilter(self._hushed)
            self._installed = True

    def _remove(self) -> None:
        if self._installed:
            logging.getLogger(QUIET_LOGGER).removeFilter(self._words)
            for name in HUSHED_LOGGERS:
                logging.getLogger(name).removeFilter(self._hushed)
            self._installed = False

    @property
    def installed(self) -> bool:
        """Whether the filters are on the loggers."""
        return self._installed

    @contextmanager
    def said(self) -> Iterator[list[str]]:
        """The lines Apprise logs at WARNING or above in this thread, within the block; neither they nor anything
        the HTTP client logs in this thread meanwhile reach the log."""
        with self._lock:
            self._closing = False
            self._install()
            self._busy += 1
        said: list[str] = []
        self._local.said = said
        try:
            yield said
        finally:
            self._local.said = None
            with self._lock:
                self._busy -= 1
                if self._closing and not self._busy:
                    self._remove()

    def close(self) -> None:
        """Take the filters off the loggers (when the last delivery under way ends, if one is)."""
        with self._lock:
            self._closing = True
            if not self._busy:
                self._remove()
