"""Consent walls of the fake engines: what the EU shows a new browser profile before its first results.

Control (off by default, and again after ``reset``): ``fakes.consent(engine, mode, language="en")``, the control
endpoint ``POST /__fakes__/consent`` with ``{"mode": …, "language": …}`` (``GET`` answers the current
``{"mode", "language"}``), or ``python -m fake_engines serve --consent MODE[:LANG]``. Modes
(:data:`~fake_engines.engine_pages.CONSENT_MODES`):

* ``off`` — pages as without walls;
* ``wall`` — a results request without the engine's consent cookie gets the wall itself, at the results URL,
  status 200. The step or route is not used up: after the consent, the next results request takes it;
* ``redirect`` — such a request gets a 302 to the wall on the engine's *consent host*: the same server reached
  as ``http://localhost:PORT`` instead of ``http://127.0.0.1:PORT`` (Chromium resolves ``localhost`` to
  loopback itself, trying ``::1`` then ``127.0.0.1``; the fakes listen on 127.0.0.1 only);
* ``broken`` — like ``wall``, but the answer never works: the save redirects back without any cookie.

A wall is served as written: an :class:`~fake_engines.engine_pages.Extension`'s ``results`` hook never sees it.

Languages: "en" or the engine's second one (google "de", yahoo "it", bing "fr", brave "es"): the title,
paragraphs, buttons and ``<html lang>``; the form, its fields and its buttons' names, ids and values are the same
in both.

The answer: the wall's form posts to the save path of the host that served it. On the results host (127.0.0.1)
the save sets the cookie (``Path=/``, ``Max-Age`` of 13 months: it outlives browser restarts) and 302s to the
continue URL (the results URL that met the wall). On the consent host it 302s to
``http://127.0.0.1:PORT/consent/set?choice=…&continue=…`` (:data:`~fake_engines.engine_pages.CONSENT_SET_PATH`),
which sets the cookie for 127.0.0.1 and 302s on. A continue URL off this machine becomes ``http://127.0.0.1:PORT/``.

Per engine: the wall on the consent host (GET), the save (POST), the cookie:

* google — ``/ml?continue=URL&gl=DE&m=0&pc=n&cm=2&hl=…&src=1``; ``/save`` (the older ``/consent/save`` too);
  ``SOCS`` (``CAES…`` for a rejection, ``CAIS…`` for an acceptance);
* yahoo — ``/v2/collectConsent?sessionId=…``; the same URL; ``A1``;
* bing — ``/cookieconsent?ru=URL&setlang=…``; ``/cookieconsent/save``; ``BCP`` (``AD=0&AL=0&SM=0`` rejected,
  ``AD=1&AL=1&SM=1`` accepted);
* brave — ``/privacy-notice?redirect=URL&lang=…``; ``/privacy-notice/save``; ``brave_consent``.

The cookies of every engine live on the one host 127.0.0.1 (cookies ignore ports), hence four different names.
(Yahoo's GUCE page, page kind ``guce``, sets ``GUC``, which counts as consent too.) The walls' pages are also
served by the old page kinds (google and yahoo ``consent``: a 302 to the wall on the results host).

The request log (``step`` is the kind served):

* ``consent_redirect`` — a results request sent to the consent host (kind ``results``, status 302);
* ``consent_wall`` — a wall page (kind ``results`` at a results URL, ``other`` on a consent path), with
  ``consent_language``;
* ``consent_saved`` — a save: it set the cookie (on the results host) or handed over to ``/consent/set`` (on the
  consent host); ``consent_dropped`` — a save in mode ``broken`` (no cookie);
* ``consent_set`` — the ``/consent/set`` hop;

each save and hop entry with ``consent_choice`` ("reject" or "accept") and ``cookie_set`` (the cookie's name, or
None). Every entry has ``host`` ("127.0.0.1", "localhost"), every results entry ``consent_cookie`` (whether the
request carried the engine's consent cookie).
"""

from __future__ import annotations

from urllib.parse import urlencode

from fake_engines.engine_pages import (
    CONSENT_SET_PATH,
    EnginePages,
    Reply,
    RequestContext,
)
from fake_engines.markup import esc

COOKIE_MAX_AGE = 33_696_000
"""13 months, in seconds (Chromium keeps a cookie at most 400 days)."""
CHOICES = ("reject", "accept")


def parse_choice(value: object) -> str:
    """ "accept" for an accepting answer ("accept", "agree"), else "reject"."""
    return "accept" if str(value or "").strip().lower() in ("accept", "agree") else "reject"


def moved(target: str) -> str:
    return (
        f"<HTML><HEAD><TITLE>302 Moved</TITLE></HEAD><BODY><H1>302 Moved</H1>The document has moved "
        f'<A HREF="{esc(target)}">here</A>.</BODY></HTML>\n'
    )


def redirect(
    target: str, served: str, headers: list[tuple[str, str]] | None = None, log: dict[str, object] | None = None
) -> Reply:
    return Reply(
        302, moved(target), headers=[("Location", target), *(headers or [])], served=served, log=dict(log or {})
    )


def safe_continue(url: str, ctx: RequestContext) -> str:
    """``url`` if it is on this server (results or consent host), made absolute on the results host if it is a
    path; anything else is the results host's ``/`` (never send a client off this machine)."""
    for base in (ctx.base_url, ctx.consent_base_url):
        if base and url.startswith(base + "/"):
            return url
    if url.startswith("/") and not url.startswith("//"):
        return ctx.base_url + url
    return ctx.base_url + "/"


def cookie_header(name: str, value: str) -> str:
    return f"{name}={value}; Path=/; Max-Age={COOKIE_MAX_AGE}"


def cookie_reply(pages: EnginePages, ctx: RequestContext, choice: str, cont: str, served: str) -> Reply:
    """A 302 to ``cont`` setting the engine's consent cookie for ``choice`` (none in mode broken)."""
    log: dict[str, object] = {"consent_choice": choice, "cookie_set": None}
    if ctx.consent_mode == "broken":
        return redirect(cont, "consent_dropped", log=log)
    name = pages.consent_cookies[0]
    log["cookie_set"] = name
    return redirect(cont, served, [("Set-Cookie", cookie_header(name, pages.consent_cookie_value(choice, ctx)))], log)


def save_reply(pages: EnginePages, ctx: RequestContext, choice: str, continue_url: str) -> Reply:
    """The answer to a wall's form: the cookie and back (results host), or on to ``/consent/set`` (consent host)."""
    cont = safe_continue(continue_url, ctx)
    if ctx.on_consent_host and ctx.consent_mode != "broken":
        hop = f"{ctx.base_url}{CONSENT_SET_PATH}?{urlencode({'choice': choice, 'continue': cont})}"
        return redirect(hop, "consent_saved", log={"consent_choice": choice, "cookie_set": None})
    return cookie_reply(pages, ctx, choice, cont, served="consent_saved")


def wall_reply(body: str, language: str, headers: list[tuple[str, str]] | None = None) -> Reply:
    return Reply(200, body, headers=list(headers or []), served="consent_wall", log={"consent_language": language})


def wall_language(pages: EnginePages, ctx: RequestContext, asked: object = None) -> str:
    """``asked`` (a language in the URL) if the engine's walls have it, else the engine's current language."""
    text = str(asked or "").strip().lower()
    for language in pages.consent_languages:
        if text == language or text.startswith(language + "-"):
            return language
    return ctx.consent_language if ctx.consent_language in pages.consent_languages else "en"
