"""One object per database URL and process, made on first use: the process's outage state and outbox of each
database (:mod:`topicstreams.storage.availability`, :mod:`topicstreams.storage.outbox`)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")


class PerDatabase(Generic[T]):
    """``of(url)``: the object of ``url``, made by ``make(url)`` the first time (thread-safe)."""

    def __init__(self, make: Callable[[str], T]) -> None:
        self.make = make
        self._made: dict[str, T] = {}
        self._lock = threading.Lock()

    def of(self, url: str) -> T:
        with self._lock:
            found = self._made.get(url)
            if found is None:
                found = self._made[url] = self.make(url)
            return found

    def forget(self) -> None:
        """Start afresh (tests: each test's database is a new one)."""
        with self._lock:
            self._made.clear()
