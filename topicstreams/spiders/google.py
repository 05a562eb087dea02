"""Google News (the News tab of Google Search)."""

from __future__ import annotations

from urllib.parse import urlencode

from scrapy.http import Response
from scrapy.selector import Selector, SelectorList

from topicstreams.blocks import EngineMarkers
from topicstreams.spiders.base import EngineSpider, ParsedResult, text_of

FRESHNESS = {"hour": "qdr:h", "day": "qdr:d", "week": "qdr:w", "month": "qdr:m", "any": None}
"""``engines.google.freshness`` as Google's ``tbs`` time filter."""


class GoogleSpider(EngineSpider):
    name = "google"
    results_per_page = 10

    markers = EngineMarkers(
        challenge_urls=("/sorry/index", "/sorry/", "consent.google.com"),
        challenge_html=(
            'id="captcha-form"',
            "g-recaptcha",
            "our systems have detected unusual traffic",
            "before you continue to google",
        ),
        block_html=("/httpservice/retry/enablejs",),
        no_results=("did not match any news results", "did not match any documents"),
    )

    def results_url(self, topic: str, page: int) -> str:
        tbs = ",".join(part for part in (FRESHNESS[self.freshness], "sbd:1") if part)
        query = {"q": topic, "tbm": "nws", "tbs": tbs}
        if page:
            query["start"] = page * self.results_per_page
        return f"{self.base_url}/search?{urlencode(query)}"

    def result_nodes(self, response: Response) -> SelectorList:
        return response.css("#rso div[data-news-doc-id]")

    def parse_result(self, node: Selector, response: Response) -> ParsedResult:
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

    def has_next_page(self, response: Response, page: int) -> bool:
        return bool(response.css("a#pnnext"))
