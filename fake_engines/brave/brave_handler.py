"""The fake Brave's request handling: results requests by page kind, the consent walls, the other paths."""

from __future__ import annotations

from urllib.parse import urlencode

from fake_engines import consent_pages as consent
from fake_engines.brave.brave_layout import RESULTS_PATH
from fake_engines.brave.brave_serp import render_news_page
from fake_engines.brave.brave_walls import (
    CONSENT_COOKIE,
    CONSENT_LANGUAGES,
    CONSENT_PATH,
    CONSENT_SAVE_PATH,
    RATELIMIT_PAGE,
    render_consent,
    render_pow,
)
from fake_engines.engine_pages import EnginePages, Reply, RequestContext
from fake_engines.markup import token

_SMALL = "<!DOCTYPE html><html><head><title>Brave Search</title></head><body></body></html>\n"

_HOME = """\
<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Brave Search</title></head>
<body><main id="home"><img src="/thumbs/brave-logo.png" alt="Brave Search" width="208" height="56">
<form action="/news" method="get" role="search"><input name="q" aria-label="Search" autocomplete="off">
<input type="hidden" name="source" value="web"><button type="submit">Search</button></form></main></body></html>
"""

_ROBOTS = """\
User-agent: *
Disallow: /search
Disallow: /news
Disallow: /images
Disallow: /videos
Disallow: /api/
Allow: /help
"""


def _page_of(ctx: RequestContext) -> int:
    try:
        return max(0, int(ctx.query.get("offset") or 0))
    except ValueError:
        return 0


class BravePages(EnginePages):
    name = "brave"
    page_kinds = frozenset({"results", "empty", "blank", "small", "pow", "ratelimit"})
    query_param = "q"

    def is_results(self, ctx: RequestContext) -> bool:
        return ctx.path == RESULTS_PATH

    def render(self, kind: str, ctx: RequestContext) -> Reply:
        topic = ctx.query.get("q", "")
        tf = ctx.query.get("tf") or None
        if kind in ("results", "empty", "blank"):
            articles = ctx.articles_of(topic) if kind == "results" and topic.strip() else None
            page, served = render_news_page(topic, _page_of(ctx), ctx.now, kind, tf, articles)
            return Reply(200, page, served=served)
        if kind == "small":
            return Reply(200, _SMALL, served="small")
        if kind == "pow":
            return Reply(200, render_pow(ctx.raw_target, topic, ctx.now), served="pow")
        if kind == "ratelimit":
            return Reply(429, RATELIMIT_PAGE, served="ratelimit")
        raise ValueError(f"unknown page kind {kind!r}")

    def other(self, ctx: RequestContext) -> Reply | None:
        if ctx.path == "/":
            return Reply(200, _HOME, served="home")
        if ctx.path == "/robots.txt":
            return Reply(200, _ROBOTS, "text/plain", served="robots")
        if ctx.path == CONSENT_PATH and ctx.method in ("GET", "HEAD"):
            lang = consent.wall_language(self, ctx, ctx.query.get("lang"))
            body = render_consent(consent.safe_continue(ctx.query.get("redirect", ""), ctx), lang)
            return consent.wall_reply(body, lang)
        if ctx.path == CONSENT_SAVE_PATH and ctx.method == "POST":
            form = ctx.form()
            return consent.save_reply(self, ctx, consent.parse_choice(form.get("choice")), form.get("redirect", "/"))
        return None

    # -- consent walls ------------------------------------------------------------------------------

    consent_languages = CONSENT_LANGUAGES
    consent_cookies = (CONSENT_COOKIE,)

    def consent_cookie_value(self, choice: str, ctx: RequestContext) -> str:
        return f"v1.{choice}.{token('brave-consent', choice, ctx.now, length=16)}"

    def consent_wall(self, ctx: RequestContext) -> Reply:
        lang = ctx.consent_language
        return consent.wall_reply(render_consent(ctx.url, lang), lang)

    def consent_redirect(self, ctx: RequestContext) -> Reply:
        query = urlencode({"redirect": ctx.url, "lang": ctx.consent_language})
        return consent.redirect(f"{ctx.consent_base_url}{CONSENT_PATH}?{query}", "consent_redirect")


PAGES = BravePages()
