"""The admin token: who may resume a paused engine from the web, and how repeated wrong guesses are slowed down.

The one write the web app allows (``POST /api/engines/{engine}/resume``) asks for ``web.admin_token``, sent as
``Authorization: Bearer TOKEN`` by a script or as the form field ``token`` by the monitor's Resume form (a plain
form cannot send a header). Never in the query string: access logs, proxies and browser histories keep URLs.
Because the form carries the secret itself (there is no cookie session), a page on another site cannot make a
reader's browser post a resume that passes.

:func:`same_token` compares in constant time (``hmac.compare_digest``) and :class:`TokenCheck` slows down repeated
failures from one client: after the first wrong or missing token in a row, each answer waits twice as long as the
one before (:data:`FIRST_DELAY` up to :data:`MAX_DELAY`), so guessing is hopeless while a person's typo costs a
fraction of a second. Attempts made at once count too: a client's attempts wait in line, each answered no sooner
than the answers before it plus its own slow-down (:meth:`TokenCheck.attempt`), so a hundred guesses sent together
take as long as a hundred sent one after another; a right token waits its turn behind the client's earlier guesses
(else the quick answer among them would tell the right one). A client whose line already reaches
:data:`MAX_LINE` seconds ahead is answered 429 at once, its token not even compared. Other clients are never held up.
A right token resets the client's count; a client that stays quiet for :data:`FORGET_AFTER` is forgotten, and at
most :data:`MAX_CLIENTS` are remembered (the longest quiet first). The table belongs to the app
(``app.state.token_check``). The token itself is never logged, whatever the outcome.
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
"""Clients remembered at most (the longest quiet forgotten first)."""

MAX_LINE = 60.0
"""Seconds ahead a client's line of attempts may reach; an attempt beyond it is answered 429 at once, unjudged."""

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
    free_at: float = 0.0
    """When the client's line is free: the answer to its latest attempt goes out then (clock seconds)."""


@dataclass(frozen=True)
class Attempt:
    """How to answer one attempt: after ``wait`` seconds; ``failures`` in a row counting this one (0 when right);
    ``refused`` when the client's line is too long (the token was not looked at)."""

    ok: bool
    failures: int
    wait: float
    refused: bool = False


class TokenCheck:
    """Consecutive failures per client, each client's line of attempts, and how long each answer waits (see the
    module docstring). Thread-safe; the app keeps one (``app.state.token_check``)."""

    def __init__(
        self,
        clock=time.monotonic,
        *,
        first_delay: float = FIRST_DELAY,
        max_delay: float = MAX_DELAY,
        max_line: float = MAX_LINE,
        max_clients: int = MAX_CLIENTS,
    ) -> None:
        self.clock = clock
        self.first_delay = first_delay
        self.max_delay = max_delay
        self.max_line = max_line
        self.max_clients = max_clients
        self._failures: OrderedDict[str, _Failures] = OrderedDict()
        self._lock = threading.Lock()

    def _entry(self, client: str, now: float) -> _Failures:
        """The client's entry, made the newest (a fresh one after a long quiet); the table kept to its bound."""
        entry = self._failures.pop(client, None)
        if entry is None or (now - entry.last > FORGET_AFTER and entry.free_at <= now):
            entry = _Failures(0, now)
        self._failures[client] = entry
        while len(self._failures) > self.max_clients:
            self._failures.popitem(last=False)
        return entry

    def attempt(self, client: str, given: str | None, expected: str) -> Attempt:
        """One attempt of ``client`` with the token ``given`` (:func:`same_token` as ``expected``): when to answer
        it, behind the client's attempts still waiting for their answer."""
        now = self.clock()
        with self._lock:
            entry = self._entry(client, now)
            ahead = max(0.0, entry.free_at - now)
            if ahead >= self.max_line:
                return Attempt(False, entry.count, ahead, refused=True)
            if same_token(given, expected):
                entry.count = 0
                return Attempt(True, 0, ahead)
            entry.count += 1
            entry.last = now
            wait = ahead + self.delay(entry.count)
            entry.free_at = now + wait
            return Attempt(False, entry.count, wait)

    def line(self, client: str) -> tuple[int, float]:
        """``client``'s failures in a row, and how many seconds ahead its line reaches (what an attempt made now
        waits behind)."""
        now = self.clock()
        with self._lock:
            entry = self._failures.get(client)
            return (0, 0.0) if entry is None else (entry.count, max(0.0, entry.free_at - now))

    def remembered(self) -> int:
        """Clients in the table."""
        with self._lock:
            return len(self._failures)

    def delay(self, failures: int) -> float:
        """0 for the first failure in a row, then the first delay doubling up to the longest."""
        if failures <= 1:
            return 0.0
        return min(self.max_delay, self.first_delay * 2 ** (failures - 2))
