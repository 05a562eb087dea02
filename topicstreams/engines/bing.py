"""Bing News."""

from __future__ import annotations

from typing import ClassVar
from urllib.parse import urlencode

from parsel import Selector

from topicstreams.engines.base import Engine, text_of
from topicstreams.engines.classify import EngineMarkers
from topicstreams.engines.consent_walls import ConsentWall
from topicstreams.engines.domains import RULES
from topicstreams.engines.results import ParsedResult

FRESHNESS = {"hour": "4", "day": "7", "week": "8", "month": "9", "any": None}
"""``engines.bing.freshness`` as the ``interval`` of Bing's ``qft`` filter (4: past hour … 9: past 30 days)."""


class Bing(Engine):
    name = "bing"
    results_per_page = 10
    domains = RULES["bing"]
    layouts: ClassVar[dict[str, str]] = {
        # each result a div.news-card.newsitem (under #algocore on the full page; bare in the scroll pages)
        "news-card": "div.news-card.newsitem",
    }
    markers = EngineMarkers(
        # a redirect to /turing/captcha/challenge
        challenge_urls=("/turing/captcha/",),
        challenge_html=("/turing/captcha/challenge",),
        no_results=("there are no results for",),
    )

    consent_walls = (
        # The cookie notice (div#bnp_container), answered by its buttons #bnp_btn_reject / #bnp_btn_accept. Laid over
        # a results page it is no wall (the cards still parse); served alone, in place of the results, it is.
        ConsentWall(
            "bing",
            hints=("bnp_container", "bnp_btn_"),
            xpath="//*[@id='bnp_container']//*[@id='bnp_btn_reject' or @id='bnp_btn_accept']",
            buttons={"reject": "#bnp_btn_reject", "accept": "#bnp_btn_accept"},
        ),
    )

    def qft(self) -> str:
        interval = FRESHNESS[self.freshness]
        filters = ([f'interval="{interval}"'] if interval else []) + ['sortbydate="1"']
        return " ".join(filters)  # Bing joins its filters with "+", an encoded space

    def results_url(self, topic: str, page: int) -> str:
        if page == 0:
            query = {"q": topic, "qft": self.qft(), "form": "PTFTNR"}
            return f"{self.base_url}/news/search?{urlencode(query)}"
        # Later pages come from the infinite scroll: first = page * 10 + 1, SFX = page.
        query = {
            "q": topic,
            "InfiniteScroll": "1",
            "first": str(page * self.results_per_page + 1),
            "SFX": str(page),
            "qft": self.qft(),
            "form": "PTFTNR",
        }
        return f"{self.base_url}/news/infinitescrollajax?{urlencode(query)}"

    def parse_result(self, node: Selector, page: Selector) -> ParsedResult:
        title_link = node.css("a.title")
        time = node.css("div.source span[aria-label]")
        return ParsedResult(
            url=node.attrib.get("url") or node.attrib.get("data-url") or title_link.attrib.get("href"),
            title=node.attrib.get("data-title") or text_of(title_link),
            source=node.attrib.get("data-author") or text_of(node.css("div.source a")),
            snippet=text_of(node.css("div.snippet")),
            time_text=time.attrib.get("aria-label") or text_of(time),
        )

    def has_next_page(self, page: Selector, number: int) -> bool:
        # The scroll has no end marker: past its end Bing repeats its last page, which the loop notices.
        return len(self.result_nodes(page)) >= self.results_per_page
