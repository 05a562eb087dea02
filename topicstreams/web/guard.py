"""What every response of the web app carries, and which requests it refuses before any view runs.

* **Host check**: a request whose ``Host`` is not one of the app's own names is refused with 421 (Misdirected
  Request). A page on another site that points its own name at 127.0.0.1 (DNS rebinding) then cannot read the
  feed with the reader's browser. The app's names are the loopback names, ``web.host`` when it is a name, and
  any IP address literal (a rebinding attack needs a name; an address typed by a person is no attack).
* **Headers**: a Content-Security-Policy allowing scripts, styles and images from the app itself only (no inline
  script, no other origin), ``X-Content-Type-Options: nosniff``, ``Referrer-Policy: no-referrer``, and frames
  refused.

A plain ASGI middleware, in the manner of Starlette's own (``TrustedHostMiddleware``, which knows no IP literals).
"""

from __future__ import annotations

import ipaddress
import logging
from collections.abc import Iterable

from starlette.datastructures import Headers
from starlette.responses import PlainTextResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

logger = logging.getLogger(__name__)

LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})

CONTENT_SECURITY_POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
    "connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
)

SECURITY_HEADERS = (
    (b"content-security-policy", CONTENT_SECURITY_POLICY.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-frame-options", b"DENY"),
)


def is_loopback(host: str) -> bool:
    """Whether *host* (a name or an address) is this machine only."""
    name = host.strip("[]").lower()
    if name in LOOPBACK_NAMES or name.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def host_name(header: str) -> str:
    """The name in a ``Host`` header, without its port (``[::1]:8080`` → ``::1``)."""
    header = header.strip().lower()
    if header.startswith("["):
        return header[1:].split("]", 1)[0]
    return header.rsplit(":", 1)[0] if header.count(":") == 1 else header


class Guard:
    """Refuses requests for other hosts; adds the security headers to every response."""

    def __init__(self, app: ASGIApp, names: Iterable[str] = ()) -> None:
        self.app = app
        self.names = frozenset(name.strip("[]").lower() for name in names) | LOOPBACK_NAMES

    def allowed(self, host: str) -> bool:
        name = host_name(host)
        if not name:
            return False
        if name in self.names or is_loopback(name):
            return True
        try:
            ipaddress.ip_address(name)
        except ValueError:
            return False
        return True

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                message.setdefault("headers", [])
                present = {name.lower() for name, _ in message["headers"]}
                message["headers"] = [*message["headers"], *(h for h in SECURITY_HEADERS if h[0] not in present)]
            await send(message)

        host = Headers(scope=scope).get("host", "")
        if not self.allowed(host):
            logger.warning("Refused a request for host %r: not this app's (DNS rebinding?)", host[:100])
            response = PlainTextResponse(
                "421 Misdirected Request: this feed answers only to its own host names (see web.host)", status_code=421
            )
            await response(scope, receive, send_with_headers)
            return
        await self.app(scope, receive, send_with_headers)
