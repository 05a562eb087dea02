"""Who asks an engine, as the engine would see it: a session cookie per client address and the persona its pages'
script reports.

Off by default (pages as the engines write them). ``fakes.watch_clients("google")`` (``POST /__fakes__/clients``
with ``{"watch": true}``) turns it on for one engine until :meth:`FakeEngines.reset`:

* **sessions**: a results request that carries no session cookie of this engine (``<engine>_sid``, e.g.
  ``google_sid``) gets one in its reply (``Set-Cookie``), whose value names the client address it was issued to and
  a number (``"127.0.0.3-2"``): unique per address and per visit without the cookie. Every request's log entry then
  has ``session`` (the value it carried, or None, even when watching is off) and results entries ``session_set``
  (the value issued with the reply, or None);
* **personas**: every results page (of any page kind, any status, HTML only) carries a small inline script at the
  end of its body that reports what the page's script sees — ``navigator.userAgent``, ``navigator.language`` and
  ``navigator.languages``, ``Intl.DateTimeFormat().resolvedOptions().timeZone``, ``innerWidth``/``innerHeight``, the
  page's path — in a synchronous ``POST /__fakes__/persona`` (so it has arrived by the page's ``load`` event), with
  the session cookie the page has. The parsers never see it (a ``<script>`` with no markup).

``fakes.clients("google")`` (``GET /__fakes__/clients``) hands back, per client address (the fake sees a proxy's
source address), ``{"sessions": [values issued to it, oldest first], "personas": [reports, oldest first]}``; a
report is ``{"time", "user_agent", "language", "languages", "timezone", "width", "height", "page", "session",
"header_user_agent"}`` (the last two from the beacon request itself: the cookie it carried and its ``User-Agent``
header).

Per-address answers (``fakes.address(...)``) are :mod:`fake_engines.scripted_engine`'s: they work with or without
watching.
"""

from __future__ import annotations

import threading
import time
from typing import Any

from fake_engines.engine_pages import Reply, RequestContext

PERSONA_PATH = "/__fakes__/persona"
"""Where a watched page's script posts what it sees (a control path: never in the request log)."""

PERSONA_SCRIPT = (
    "<script>(function(){try{var r=new XMLHttpRequest();"
    f'r.open("POST","{PERSONA_PATH}",false);'
    'r.setRequestHeader("Content-Type","application/json");'
    "r.send(JSON.stringify({user_agent:navigator.userAgent,language:navigator.language,"
    "languages:Array.prototype.slice.call(navigator.languages||[]),"
    "timezone:Intl.DateTimeFormat().resolvedOptions().timeZone,width:window.innerWidth,height:window.innerHeight,"
    "page:location.pathname+location.search}));}catch(e){}})();</script>\n"
)
"""The probe a watched results page carries at the end of its body."""

REPORT_KEYS = ("user_agent", "language", "languages", "timezone", "width", "height", "page")
"""What a persona report keeps from the page's script (anything else it posts is dropped)."""


def session_cookie(engine: str) -> str:
    """The name of ``engine``'s session cookie: ``<engine>_sid``."""
    return f"{engine}_sid"


class ClientWatch:
    """One engine's sessions and persona reports per client address (see the module's docstring)."""

    def __init__(self, engine: str) -> None:
        self.engine = engine
        self.cookie = session_cookie(engine)
        self.lock = threading.Lock()
        self.on = False
        self.issued = 0
        self.clients: dict[str, dict[str, list[Any]]] = {}

    def watch(self, on: bool) -> dict[str, bool]:
        if not isinstance(on, bool):
            raise ValueError(f'clients: {{"watch": true or false}}, not {on!r}')
        with self.lock:
            self.on = on
        return {"watch": on}

    def reset(self) -> None:
        with self.lock:
            self.on, self.issued = False, 0
            self.clients.clear()

    def state(self) -> dict[str, dict[str, list[Any]]]:
        with self.lock:
            return {
                address: {"sessions": list(record["sessions"]), "personas": [dict(p) for p in record["personas"]]}
                for address, record in self.clients.items()
            }

    def _client(self, address: str) -> dict[str, list[Any]]:
        return self.clients.setdefault(address, {"sessions": [], "personas": []})

    def session_of(self, ctx: RequestContext) -> str | None:
        """The session cookie ``ctx`` carried, or None."""
        return ctx.cookies().get(self.cookie) or None

    def results(self, reply: Reply, ctx: RequestContext, entry: dict[str, Any]) -> None:
        """When watching: a session cookie for a client without one, and the persona probe in an HTML page."""
        with self.lock:
            if not self.on:
                return
            if entry.get("session") is None:
                self.issued += 1
                value = f"{ctx.address or 'unknown'}-{self.issued}"
                self._client(ctx.address)["sessions"].append(value)
                entry["session_set"] = value
                reply.headers.append(("Set-Cookie", f"{self.cookie}={value}; Path=/; Max-Age=86400; SameSite=Lax"))
        if reply.content_type.startswith("text/html"):
            reply.body = with_probe(reply.payload())

    def report(self, data: Any, ctx: RequestContext) -> dict[str, bool]:
        """A persona report posted by a watched page's script from ``ctx.address``."""
        if not isinstance(data, dict):
            raise ValueError("persona: a JSON object, as a watched page's script posts it")
        record = {key: data.get(key) for key in REPORT_KEYS}
        record["time"] = time.time()
        record["session"] = self.session_of(ctx)
        record["header_user_agent"] = ctx.headers.get("user-agent", "")
        with self.lock:
            self._client(ctx.address)["personas"].append(record)
        return {"ok": True}


def with_probe(body: bytes) -> bytes:
    """``body`` with :data:`PERSONA_SCRIPT` before its last ``</body>`` (at its end when it has none)."""
    probe = PERSONA_SCRIPT.encode()
    at = body.lower().rfind(b"</body>")
    return body + probe if at < 0 else body[:at] + probe + body[at:]
