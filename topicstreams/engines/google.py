"""Google News (the News tab of Google Search)."""

from __future__ import annotations

from typing import ClassVar
from urllib.parse import urlencode

from parsel import Selector

from topicstreams.engines.base import Engine, text_of
from topicstreams.engines.classify import EngineMarkers
from topicstreams.engines.consent_walls import ConsentWall
from topicstreams.engines.domains import RULES
from topicstreams.engines.results import ParsedResult

FRESHNESS = {"hour": "qdr:h", "day": "qdr:d", "week": "qdr:w", "month": "qdr:m", "any": None}
"""``engines.google.freshness`` as Google's ``tbs`` time filter."""


class Google(Engine):
    name = "google"
    results_per_page = 10
    domains = RULES["google"]
    layouts: ClassVar[dict[str, str]] = {
        # 2026: each result a div[data-news-doc-id] under #rso
        "2026": "#rso div[data-news-doc-id]",
    }
    markers = EngineMarkers(
        # a redirect to /sorry/index?continue=… (the CAPTCHA page); the consent interstitial is a wall of its own
        challenge_urls=("/sorry/index", "/sorry/"),
        challenge_html=(
            'id="captcha-form"',
            "g-recaptcha",
            "our systems have detected unusual traffic",
        ),
        # the shell served to clients without JavaScript
        block_html=("/httpservice/retry/enablejs",),
        no_results=("did not match any news results", "did not match any documents"),
    )

    consent_walls = (
        # "Before you continue to Google": two forms posting to consent.google.<tld>/save, told apart by their hidden
        # set_eom (true: reject all, false: accept all), in every language. A script naming consent.google.com is
        # no mark: results pages carry such scripts too.
        ConsentWall(
            "google",
            hints=("set_eom", "consent.google."),
            xpath="//form[.//input[@name='set_eom'] or contains(@action, '//consent.google.')]",
            buttons={
                "reject": 'form:has(input[name="set_eom"][value="true"]) :is(button, input[type="submit"])',
                "accept": 'form:has(input[name="set_eom"][value="false"]) :is(button, input[type="submit"])',
            },
        ),
    )

    def results_url(self, topic: str, page: int) -> str:
        tbs = ",".join(part for part in (FRESHNESS[self.freshness], "sbd:1") if part)
        query: dict[str, str | int] = {"q": topic, "tbm": "nws", "tbs": tbs}
        if page:
            query["start"] = page * self.results_per_page
        return f"{self.base_url}/search?{urlencode(query)}"

    def parse_result(self, node: Selector, page: Selector) -> ParsedResult:
        link = node.css("a.WlydOe, a[jsname=YKoRaf]") or node.css("a[href]")
        stamp = node.css("div.OSrXXb span[data-ts]")
        return ParsedResult(
            url=link.attrib.get("href"),
            title=text_of(node.css("div[role=heading]")),
            source=text_of(node.css("div.MgUUmf span")),
            snippet=text_of(node.css("div.UqSP2b")),
            time_text=text_of(stamp or node.css("div.OSrXXb span")),
            timestamp=stamp.attrib.get("data-ts"),
        )

    def has_next_page(self, page: Selector, number: int) -> bool:
        return bool(page.css("a#pnnext"))
