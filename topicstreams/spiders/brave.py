"""Brave Search news."""

from __future__ import annotations

import re
from typing import ClassVar
from urllib.parse import urlencode

from scrapy.http import Response
from scrapy.selector import Selector

from topicstreams.spiders.base import EngineSpider, ParsedResult, text_of

FRESHNESS = {"hour": "pd", "day": "pd", "week": "pw", "month": "pm", "any": None}
"""``engines.brave.freshness`` as Brave's ``tf`` filter; it has no past hour, so "hour" takes the past day."""

MORE_RESULTS_RE = re.compile(r"\bmore_results_available\s*:\s*(true|false|!0|!1)")
"""``more_results_available`` in the data object the page hands to ``kit.start(…)`` (a JavaScript literal)."""


class BraveSpider(EngineSpider):
    name = "brave"
    results_per_page = 20
    own_domains = ("search.brave.com",)
    layouts: ClassVar[dict[str, str]] = {
        "snippet-news": 'div.snippet[data-type="news"]',
    }

    def results_url(self, topic: str, page: int) -> str:
        query = {"q": topic, "source": "web"}
        if FRESHNESS[self.freshness]:
            query["tf"] = FRESHNESS[self.freshness]
        if page:
            query["offset"] = str(page)  # a page index, not a result offset
        return f"{self.base_url}/news?{urlencode(query)}"

    def parse_result(self, node: Selector, response: Response) -> ParsedResult:
        link = node.css("a.l1")
        return ParsedResult(
            url=link.attrib.get("href"),
            title=text_of(node.css("div.title")) or text_of(link),
            source=text_of(node.css(".site-name-content span")[:1]),
            snippet=text_of(node.css("div.description")),
            time_text=text_of(node.css(".age-header, div.age-snippet")[:1]),
        )

    def has_next_page(self, response: Response, page: int) -> bool:
        for script in response.xpath("//script[contains(., 'kit.start')]/text()").getall():
            match = MORE_RESULTS_RE.search(script)
            if match:
                return match.group(1) in ("true", "!0")
        return len(self.result_nodes(response)) >= self.results_per_page
