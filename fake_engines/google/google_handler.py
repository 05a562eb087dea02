"""The fake Google's request handling: results requests by page kind, the consent walls, the other paths."""

from __future__ import annotations

from urllib.parse import quote

from fake_engines import consent_pages as consent
from fake_engines.engine_pages import EnginePages, Reply, RequestContext
from fake_engines.google.google_extremes import KINDS as EXTREME_KINDS
from fake_engines.google.google_extremes import render_extreme
from fake_engines.google.google_layout import RESULTS_PATH
from fake_engines.google.google_serp import render_search_page
from fake_engines.google.google_walls import (
    CONSENT_COOKIE,
    CONSENT_LANGUAGES,
    CONSENT_PATH,
    CONSENT_SAVE_PATHS,
    LEGACY_CONSENT_PATH,
    consent_location,
    render_consent,
    render_sorry,
)
from fake_engines.markup import esc, token

_HOME = """\
<!DOCTYPE html>
<html lang="en"><head><meta charset="UTF-8"><title>Google</title>
<script nonce="home">(function(){window.google={kEI:'home',kBL:'fake'};google.sn='webhp';})();</script></head>
<body><div id="main"><img src="/thumbs/logo.png" alt="Fake Google" width="272" height="92">
<form action="/search" method="GET" role="search"><input name="q" aria-label="Search" autocomplete="off">
<button type="submit">Google Search</button></form></div></body></html>
"""

_SMALL = "<!DOCTYPE html><html><head><title>Google</title></head><body></body></html>\n"

_REDIRECT_NOTICE = """\
<!DOCTYPE html>
<html><head><meta charset="UTF-8"><title>Redirect Notice</title></head>
<body><div class="fTk7vd">Redirect Notice</div>
<p>The page you were on is trying to send you to <a href="{target}">{target}</a>.</p>
<p>If you do not want to visit that page, you can <a href="/">return to the previous page</a>.</p>
</body></html>
"""


class GooglePages(EnginePages):
    name = "google"
    page_kinds = (
        frozenset({"results", "empty", "sorry", "captcha200", "blank", "small", "consent", "restyled"}) | EXTREME_KINDS
    )
    query_param = "q"

    def is_results(self, ctx: RequestContext) -> bool:
        return ctx.path == RESULTS_PATH

    def render(self, kind: str, ctx: RequestContext) -> Reply:
        topic = ctx.query.get("q", "")
        if kind in ("results", "restyled", "empty", "blank"):
            try:
                start = max(0, int(ctx.query.get("start") or 0))
            except ValueError:
                start = 0
            articles = ctx.articles_of(topic) if kind in ("results", "restyled") and topic.strip() else None
            page, served = render_search_page(topic, start, ctx.now, kind, articles)
            return Reply(200, page, served=served)
        if kind in EXTREME_KINDS:
            return Reply(200, render_extreme(kind, topic, ctx.now), served=kind)
        if kind == "sorry":
            target = f"{ctx.base_url}/sorry/index?continue={quote(ctx.url, safe='')}&q={token('q', ctx.url, ctx.now)}"
            return consent.redirect(target, "sorry")
        if kind == "captcha200":
            return Reply(200, render_sorry(ctx.url, token("q", ctx.url, ctx.now), ctx.now), served="captcha200")
        if kind == "small":
            return Reply(200, _SMALL, served="small")
        if kind == "consent":
            target = consent_location(ctx.base_url, ctx.url, ctx.consent_language, LEGACY_CONSENT_PATH)
            return consent.redirect(target, "consent")
        raise ValueError(f"unknown page kind {kind!r}")

    # -- consent walls ------------------------------------------------------------------------------

    consent_languages = CONSENT_LANGUAGES
    consent_cookies = (CONSENT_COOKIE,)

    def consent_cookie_value(self, choice: str, ctx: RequestContext) -> str:
        # the real SOCS is a base64 protobuf; here its first bytes tell a rejection (CAES…) from an acceptance
        head = "CAESHAgB" if choice == "reject" else "CAISHAgC"
        return head + token("socs", choice, ctx.now, length=30)

    def consent_wall(self, ctx: RequestContext) -> Reply:
        lang = ctx.consent_language
        return consent.wall_reply(render_consent(ctx.url, ctx.origin, lang), lang)

    def consent_redirect(self, ctx: RequestContext) -> Reply:
        return consent.redirect(
            consent_location(ctx.consent_base_url, ctx.url, ctx.consent_language), "consent_redirect"
        )

    def other(self, ctx: RequestContext) -> Reply | None:
        path = ctx.path
        if path == "/":
            return Reply(200, _HOME, served="home")
        if path == "/sorry/index":
            cont = ctx.query.get("continue", "")
            if ctx.method == "POST":
                form = ctx.form(keep_blank_values=False)
                cont = form.get("continue", cont)
            return Reply(429, render_sorry(cont, ctx.query.get("q", ""), ctx.now), served="sorry")
        if path in (CONSENT_PATH, LEGACY_CONSENT_PATH) and ctx.method in ("GET", "HEAD"):
            lang = consent.wall_language(self, ctx, ctx.query.get("hl"))
            cont = consent.safe_continue(ctx.query.get("continue", ""), ctx)
            return consent.wall_reply(render_consent(cont, ctx.origin, lang), lang)
        if path in CONSENT_SAVE_PATHS and ctx.method == "POST":
            form = ctx.form()
            if "set_eom" in form:  # what the real forms tell their answers apart by
                choice = "reject" if form["set_eom"].strip().lower() == "true" else "accept"
            else:
                choice = consent.parse_choice(form.get("choice"))
            return consent.save_reply(self, ctx, choice, form.get("continue", "/"))
        if path == "/url":
            target = ctx.query.get("q") or ctx.query.get("url") or ""
            return Reply(200, _REDIRECT_NOTICE.format(target=esc(target)), served="redirect_notice")
        if path == "/robots.txt":
            body = "User-agent: *\nDisallow: /search\nAllow: /search/about\nDisallow: /sorry/\nDisallow: /url\n"
            return Reply(200, body, "text/plain", served="robots")
        return None


PAGES = GooglePages()
