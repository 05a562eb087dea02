"""The fake Yahoo's request handling: results requests by page kind, consent sessions and walls, other paths."""

# ruff: noqa: E501 - the page templates keep their lines as a page writes them

from __future__ import annotations

import threading
from urllib.parse import quote, quote_plus

from fake_engines import consent_pages as consent
from fake_engines.engine_pages import EnginePages, Reply, RequestContext
from fake_engines.markup import esc, token
from fake_engines.yahoo.yahoo_layout import RESULTS_PATH, page_of
from fake_engines.yahoo.yahoo_serp import render_search_page
from fake_engines.yahoo.yahoo_walls import (
    CONSENT_COOKIE,
    CONSENT_LANGUAGES,
    CONSENT_PATH,
    GUCE_COOKIE,
    GUCE_PATH,
    render_consent,
    render_guce,
)

_SMALL = "<!DOCTYPE html><html><head><title>Yahoo Search</title></head><body></body></html>\n"

_HOME = """\
<!DOCTYPE html>
<html lang="en"><head><meta charset="UTF-8"><title>Yahoo News Search</title></head>
<body class="news home"><div id="doc"><a id="logo" href="/"><img src="/thumbs/logo-yahoo.png" alt="Yahoo News" width="180" height="52"></a>
<form id="sf" name="s" action="/search" method="get" role="search"><input type="text" name="p" aria-label="Search query" autocomplete="off">
<input type="hidden" name="fr" value="uh3_news_web_gs"><button type="submit">Search News</button></form></div></body></html>
"""

_ROBOTS = """\
User-agent: *
Disallow: /search
Disallow: /r/
Disallow: /_ylt=
Allow: /
"""


def _moved(target: str) -> str:
    return (
        f"<HTML><HEAD><TITLE>302 Found</TITLE></HEAD><BODY>The document has moved "
        f'<A HREF="{esc(target)}">here</A>.</BODY></HTML>\n'
    )


def _safe_done(done: str, ctx: RequestContext) -> str:
    """Never send a client off this machine."""
    if done.startswith(ctx.base_url + "/") or (done.startswith("/") and not done.startswith("//")):
        return done
    return ctx.base_url + "/"


class YahooPages(EnginePages):
    name = "yahoo"
    page_kinds = frozenset({"results", "empty", "blank", "small", "consent", "guce"})
    query_param = "p"

    def __init__(self) -> None:
        self._sessions: dict[str, tuple[str, str]] = {}  # consent sessionId -> (the URL the client wanted, language)
        self._lock = threading.Lock()

    def is_results(self, ctx: RequestContext) -> bool:
        return ctx.path == RESULTS_PATH or ctx.path.startswith(RESULTS_PATH + ";")

    def consent_session(self, url: str, lang: str = "en") -> str:
        """The ``sessionId`` of a consent redirect for ``url`` (remembered with the wall's language, to send the
        client back)."""
        session = "3_cc-session_" + token("yahoo-session", url, lang, length=22)
        with self._lock:
            if len(self._sessions) > 1000:
                self._sessions.clear()
            self._sessions[session] = (url, lang)
        return session

    # -- consent walls ------------------------------------------------------------------------------

    consent_languages = CONSENT_LANGUAGES
    consent_cookies = (CONSENT_COOKIE, GUCE_COOKIE)

    def consent_cookie_value(self, choice: str, ctx: RequestContext) -> str:
        return f"d=AQAB{token('a1', choice, ctx.now, length=30)}&S=AQAAA{token('a1s', choice, ctx.now, length=20)}"

    def consent_wall(self, ctx: RequestContext) -> Reply:
        lang = ctx.consent_language
        return consent.wall_reply(render_consent(self.consent_session(ctx.url, lang), ctx.url, lang), lang)

    def consent_redirect(self, ctx: RequestContext) -> Reply:
        session = self.consent_session(ctx.url, ctx.consent_language)
        return consent.redirect(
            f"{ctx.consent_base_url}{CONSENT_PATH}?sessionId={quote(session, safe='')}", "consent_redirect"
        )

    def render(self, kind: str, ctx: RequestContext) -> Reply:
        topic = ctx.query.get("p", "")
        if kind in ("results", "empty", "blank"):
            page = page_of(ctx.query.get("b") or 1)
            btf = ctx.query.get("btf") or None
            articles = ctx.articles_of(topic) if kind == "results" and topic.strip() else None
            body, served = render_search_page(topic, page, ctx.now, kind, btf, articles)
            return Reply(200, body, served=served)
        if kind == "small":
            return Reply(200, _SMALL, served="small")
        if kind == "consent":
            session = self.consent_session(ctx.url, ctx.consent_language)
            target = f"{ctx.base_url}{CONSENT_PATH}?sessionId={quote(session, safe='')}"
            return Reply(302, _moved(target), headers=[("Location", target)], served="consent")
        if kind == "guce":
            gcrumb = token("gcrumb", ctx.url, length=8)
            target = f"{ctx.base_url}{GUCE_PATH}?brandType=nonEu&gcrumb={gcrumb}&done={quote(ctx.url, safe='')}"
            return Reply(302, _moved(target), headers=[("Location", target)], served="guce")
        raise ValueError(f"unknown page kind {kind!r}")

    def other(self, ctx: RequestContext) -> Reply | None:
        path = ctx.path
        if path == "/":
            return Reply(200, _HOME, served="home")
        if path == "/robots.txt":
            return Reply(200, _ROBOTS, "text/plain", served="robots")
        if path == CONSENT_PATH:
            session = ctx.query.get("sessionId", "")
            with self._lock:
                done, lang = self._sessions.get(session, (ctx.base_url + "/", ""))
            if ctx.method == "POST":
                form = ctx.form()
                choice = "accept" if "agree" in form else "reject"
                return consent.save_reply(self, ctx, choice, form.get("originalDoneUrl", done))
            lang = consent.wall_language(self, ctx, lang)
            return consent.wall_reply(render_consent(session, consent.safe_continue(done, ctx), lang), lang)
        if path == GUCE_PATH:
            done = _safe_done(ctx.query.get("done", ""), ctx)
            gcrumb = ctx.query.get("gcrumb", "")
            if ctx.method == "POST":
                form = ctx.form()
                done = _safe_done(form.get("done", done), ctx)
                cookie = f"GUC=AQEBCAF{token('guc', gcrumb, length=24)}; Path=/; Max-Age=31557600"
                return Reply(
                    302, _moved(done), headers=[("Location", done), ("Set-Cookie", cookie)], served="guce_saved"
                )
            action = (
                f"{GUCE_PATH}?brandType={quote_plus(ctx.query.get('brandType', 'nonEu'))}&gcrumb={quote_plus(gcrumb)}"
            )
            return Reply(200, render_guce(action, gcrumb, done), served="guce")
        return None


PAGES = YahooPages()
