"""The fake Bing's request handling: results requests by page kind, the consent walls, the other paths."""

# ruff: noqa: E501 - the page templates keep their lines as a page writes them

from __future__ import annotations

from urllib.parse import quote, urlencode

from fake_engines import consent_pages as consent
from fake_engines.bing.bing_layout import RESULTS_PATHS, SCROLL_PATH, page_lang, requested_page
from fake_engines.bing.bing_serp import render_fragment, render_full_page
from fake_engines.bing.bing_walls import (
    CAPTCHA_PATH,
    CONSENT_COOKIE,
    CONSENT_LANGUAGES,
    CONSENT_PATH,
    CONSENT_SAVE_PATH,
    render_captcha,
    render_consent,
)
from fake_engines.catalogue import digest
from fake_engines.engine_pages import EnginePages, Reply, RequestContext
from fake_engines.markup import esc

_HOME = """\
<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Bing News</title></head>
<body class="b_news_home"><div id="b_header"><img src="/thumbs/bing-logo.png" alt="Fake Bing" width="60" height="24">
<form action="/news/search" id="sb_form" role="search" method="get"><input id="sb_form_q" name="q" aria-label="Enter your search term">
<input type="hidden" name="FORM" value="NWBHOM"><button type="submit">Search</button></form></div></body></html>
"""

_SMALL = "<!DOCTYPE html><html><head><title>Bing</title></head><body></body></html>\n"

_ROBOTS = """\
User-agent: *
Disallow: /account/
Disallow: /search
Disallow: /news/search
Disallow: /news/infinitescrollajax
Disallow: /turing/
Allow: /news$
"""


class BingPages(EnginePages):
    name = "bing"
    page_kinds = frozenset({"results", "empty", "blank", "small", "captcha"})
    query_param = "q"

    def is_results(self, ctx: RequestContext) -> bool:
        return ctx.path in RESULTS_PATHS

    def render(self, kind: str, ctx: RequestContext) -> Reply:
        topic = ctx.query.get("q", "")
        page = requested_page(ctx)
        lang = page_lang(ctx)
        headers = [("Content-Language", "nl-NL" if lang == "nl" else "en-US")]
        if kind in ("results", "empty", "blank"):
            articles = ctx.articles_of(topic) if kind == "results" and topic.strip() else None
            if ctx.path == SCROLL_PATH:
                body, served = render_fragment(topic, page, lang, kind, articles)
            else:
                body, served = render_full_page(topic, page, lang, ctx.now, kind, articles)
            return Reply(200, body, headers=headers, served=served)
        if kind == "small":
            return Reply(200, _SMALL, served="small")
        if kind == "captcha":
            vid = digest("vid", ctx.url, int(ctx.now))[:32].upper()
            target = (
                f"{ctx.base_url}{CAPTCHA_PATH}?q=&iid=captcha.challenge&vid={vid}&redirect={quote(ctx.url, safe='')}"
            )
            body = (
                f"<html><head><title>Object moved</title></head><body>\n"
                f'<h2>Object moved to <a href="{esc(target)}">here</a>.</h2>\n</body></html>\n'
            )
            return Reply(302, body, headers=[("Location", target)], served="captcha")
        raise ValueError(f"unknown page kind {kind!r}")

    # -- consent walls ------------------------------------------------------------------------------

    consent_languages = CONSENT_LANGUAGES
    consent_cookies = (CONSENT_COOKIE,)

    def consent_cookie_value(self, choice: str, ctx: RequestContext) -> str:
        return "AD=1&AL=1&SM=1" if choice == "accept" else "AD=0&AL=0&SM=0"

    def consent_wall(self, ctx: RequestContext) -> Reply:
        lang = ctx.consent_language
        return consent.wall_reply(render_consent(ctx.url, lang), lang, [("Content-Language", _content_language(lang))])

    def consent_redirect(self, ctx: RequestContext) -> Reply:
        query = urlencode({"ru": ctx.url, "setlang": ctx.consent_language})
        return consent.redirect(f"{ctx.consent_base_url}{CONSENT_PATH}?{query}", "consent_redirect")

    def other(self, ctx: RequestContext) -> Reply | None:
        path = ctx.path
        if path in ("/", "/news"):
            return Reply(200, _HOME, served="home")
        if path == CAPTCHA_PATH:
            redirect = ctx.query.get("redirect", "")
            if ctx.method == "POST":
                form = ctx.form(keep_blank_values=False)
                redirect = form.get("redirect", redirect)
            vid = ctx.query.get("vid") or digest("vid", redirect)[:32].upper()
            return Reply(200, render_captcha(redirect, vid), served="captcha")
        if path == "/robots.txt":
            return Reply(200, _ROBOTS, "text/plain", served="robots")
        if path == CONSENT_PATH and ctx.method in ("GET", "HEAD"):
            lang = consent.wall_language(self, ctx, ctx.query.get("setlang"))
            body = render_consent(consent.safe_continue(ctx.query.get("ru", ""), ctx), lang)
            return consent.wall_reply(body, lang, [("Content-Language", _content_language(lang))])
        if path == CONSENT_SAVE_PATH and ctx.method == "POST":
            form = ctx.form()
            return consent.save_reply(self, ctx, consent.parse_choice(form.get("choice")), form.get("ru", "/"))
        return None


def _content_language(lang: str) -> str:
    return {"fr": "fr-FR", "nl": "nl-NL"}.get(lang, "en-US")


PAGES = BingPages()
