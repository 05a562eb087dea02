"""Brave Search news."""

from __future__ import annotations

import re
from typing import ClassVar
from urllib.parse import urlencode

from parsel import Selector

from topicstreams.engines.base import Engine, text_of
from topicstreams.engines.classify import EngineMarkers
from topicstreams.engines.consent_walls import ConsentWall
from topicstreams.engines.domains import RULES
from topicstreams.engines.results import ParsedResult

FRESHNESS = {"hour": "pd", "day": "pd", "week": "pw", "month": "pm", "any": None}
"""``engines.brave.freshness`` as Brave's ``tf`` filter; it has no past hour, so "hour" takes the past day."""

MORE_RESULTS_RE = re.compile(r"\bmore_results_available\s*:\s*(true|false|!0|!1)")
"""``more_results_available`` in the data object the page hands to ``kit.start(…)`` (a JavaScript literal)."""


class Brave(Engine):
    name = "brave"
    results_per_page = 20
    domains = RULES["brave"]
    layouts: ClassVar[dict[str, str]] = {
        "snippet-news": 'div.snippet[data-type="news"]',
    }
    markers = EngineMarkers(
        # the proof-of-work CAPTCHA: its title mentions "PoW Captcha" and its data has a challengeSet
        challenge_html=("pow captcha", "challengeset"),
        no_results=("no results found",),
    )

    consent_walls = (
        # A privacy notice in place of the results: a [data-notice=consent] block whose buttons carry data-consent
        # (reject / accept).
        ConsentWall(
            "brave",
            hints=("data-consent",),
            xpath="//*[@data-notice='consent']//button[@data-consent]",
            buttons={
                "reject": '[data-notice="consent"] button[data-consent="reject"]',
                "accept": '[data-notice="consent"] button[data-consent="accept"]',
            },
        ),
    )

    def results_url(self, topic: str, page: int) -> str:
        query: dict[str, str | None] = {"q": topic, "source": "web"}
        if FRESHNESS[self.freshness]:
            query["tf"] = FRESHNESS[self.freshness]
        if page:
            query["offset"] = str(page)  # a page index, not a result offset
        return f"{self.base_url}/news?{urlencode(query)}"

    def parse_result(self, node: Selector, page: Selector) -> ParsedResult:
        link = node.css("a.l1")
        return ParsedResult(
            url=link.attrib.get("href"),
            title=text_of(node.css("div.title")) or text_of(link),
            source=text_of(node.css(".site-name-content span")[:1]),
            snippet=text_of(node.css("div.description")),
            time_text=text_of(node.css(".age-header, div.age-snippet")[:1]),
        )

    def has_next_page(self, page: Selector, number: int) -> bool:
        for script in page.xpath("//script[contains(., 'kit.start')]/text()").getall():
            match = MORE_RESULTS_RE.search(script)
            if match:
                return match.group(1) in ("true", "!0")
        return len(self.result_nodes(page)) >= self.results_per_page
