"""Yahoo News search."""

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

FRESHNESS = {"hour": "d", "day": "d", "week": "w", "month": "m", "any": None}
"""``engines.yahoo.freshness`` as Yahoo's ``btf`` filter; it has no past hour, so "hour" takes the past day."""

VIA_RE = re.compile(r"\s*[·•]\s*via\s+.*$", re.IGNORECASE)
"""The " · via Yahoo News" Yahoo appends to a source."""


class Yahoo(Engine):
    name = "yahoo"
    results_per_page = 10
    domains = RULES["yahoo"]
    layouts: ClassVar[dict[str, str]] = {
        # each result a div.NewsArticle in the main list (li.ov-a alone also matches the trending sidebar)
        "NewsArticle": "#web ol.searchCenterMiddle div.NewsArticle",
    }
    markers = EngineMarkers(
        no_results=("we did not find results for",),
    )

    consent_walls = (
        # A redirect to consent.yahoo.com/v2/collectConsent?sessionId=… (older: guce.yahoo.com/consent?brandType=…),
        # in the visitor's language: a form.consent-form with hidden csrfToken, sessionId, originalDoneUrl and
        # namespace=yahoo, and buttons named reject and agree (the older GUCE form has agree only).
        ConsentWall(
            "yahoo",
            hints=("consent-form", "originaldoneurl", "collectconsent"),
            xpath=(
                "//form[contains(concat(' ', normalize-space(@class), ' '), ' consent-form ')"
                " or .//input[@name='originalDoneUrl'] or contains(@action, 'collectConsent')]"
            ),
            url_markers=("/v2/collectconsent", "/consent?brandtype="),
            buttons={
                "reject": 'form.consent-form button[name="reject"]',
                "accept": 'form.consent-form button[name="agree"]',
            },
        ),
    )

    def results_url(self, topic: str, page: int) -> str:
        query: dict[str, str | None] = {
            "p": topic,
            "b": str(page * self.results_per_page + 1),
            "pz": str(self.results_per_page),
        }
        if FRESHNESS[self.freshness]:
            query["btf"] = FRESHNESS[self.freshness]
        return f"{self.base_url}/search?{urlencode(query)}"

    def parse_result(self, node: Selector, page: Selector) -> ParsedResult:
        link = node.css("h4.s-title > a, h4.s-title a")
        return ParsedResult(
            url=link.attrib.get("href"),
            title=text_of(link),
            source=text_of(node.css("span.s-source")),
            snippet=text_of(node.css("p.s-desc")),
            time_text=text_of(node.css("span.s-time")),
        )

    def clean(self, parsed: ParsedResult) -> ParsedResult:
        if parsed.source:
            parsed.source = VIA_RE.sub("", parsed.source).strip(" ·•") or None
        return parsed

    def has_next_page(self, page: Selector, number: int) -> bool:
        return bool(page.css("a.next"))
