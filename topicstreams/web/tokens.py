"""The admin token: who may resume a paused engine from the web, and how repeated wrong guesses are slowed down.

The one write the web app allows (``POST /api/engines/{engine}/resume``) asks for ``web.admin_token``, sent as
``Authorization: Bearer TOKEN`` by a script or as the form field ``token`` by the monitor's Resume form (a plain
form cannot send a header). Never in the query string: access logs, proxies and browser histories keep URLs.
Because the form carries the secret itself (there is no cookie session), a page on another site cannot make a
reader's browser post a resume that passes.

:class:`TokenCheck` compares in constant time (``hmac.compare_digest``) and slows down repeated failures from one
client: after the first wrong or missing token in a row, each answer waits twice as long as the one before
(:data:`FIRST_DELAY` up to :data:`MAX_DELAY`), so guessing is hopeless while a person's typo costs a fraction of a
second. A right token resets the client's count; a client that stays quiet for :data:`FORGET_AFTER` is forgotten.
The token itself is never logged, whatever the outcome.
"""

from __future__ import annotations

import hmac
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass

from starlette.requests import Request

FIRST_DELAY = 0.25
"""Seconds the answer to a client's second failure in a row waits (the first one answers at once)."""

MAX_DELAY = 8.0
"""The longest wait before a 401."""

FORGET_AFTER = 900.0
"""Seconds after a client's last failure when its count starts over."""

MAX_CLIENTS = 4096
"""Clients remembered at most (the oldest forgotten first)."""

BEARER = "bearer "


def bearer_token(request: Request) -> str | None:
    """The token of an ``Authorization: Bearer TOKEN`` header, or None."""
    header = request.headers.get("authorization", "")
    if header[: len(BEARER)].lower() != BEARER:
        return None
    return header[len(BEARER) :].strip() or None


def same_token(given: str | None, expected: str) -> bool:
    """Whether ``given`` is the configured token, compared in constant time (an empty configured token matches
    nothing)."""
    if not expected or given is None:
        return False
    return hmac.compare_digest(given.encode("utf-8", "surrogatepass"), expected.encode("utf-8"))


def client_of(request: Request) -> str:
    return request.client.host if request.client is not None else "unknown"


@dataclass
class _Failures:
    count: int
    last: float


class TokenCheck:
    """Consecutive failures per client, and how long the next answer to that client waits. Thread-safe."""

    def __init__(self, clock=time.monotonic) -> None:
        self.clock = clock
        self._failures: OrderedDict[str, _Failures] = OrderedDict()
        self._lock = threading.Lock()

    def failed(self, client: str) -> tuple[int, float]:
        """Count a failure of ``client``: its failures in a row, and the seconds to wait before answering."""
        now = self.clock()
        with self._lock:
            entry = self._failures.pop(client, None)
            if entry is None or now - entry.last > FORGET_AFTER:
                entry = _Failures(0, now)
            entry.count += 1
            entry.last = now
            self._failures[client] = entry
            while len(self._failures) > MAX_CLIENTS:
                self._failures.popitem(last=False)
            count = entry.count
        return count, self.delay(count)

    def succeeded(self, client: str) -> None:
        with self._lock:
            self._failures.pop(client, None)

    @staticmethod
    def delay(failures: int) -> float:
        """0 for the first failure in a row, then :data:`FIRST_DELAY` doubling up to :data:`MAX_DELAY`."""
        if failures <= 1:
            return 0.0
        return min(MAX_DELAY, FIRST_DELAY * 2 ** (failures - 2))
