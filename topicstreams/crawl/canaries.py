"""Canary queries: queries with a known answer, fetched like any topic, whose answer is checked. Pure.

A canary (``canaries.queries.<engine>``) names a query, the fewest results a normal page has for it
(``min_results``) and, optionally, a domain one of those results comes from (``expect_domain``). Block pages are
the hostility signals' business; a canary catches the other failure: a page that looks normal (it is classed
``ok``) but is not what a real visitor would see — too few results, or none from the domain that always answers.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime
from urllib.parse import urlsplit

from topicstreams.config.sections import CanariesSection, CanaryQuerySection
from topicstreams.crawl.signals import CanaryChecked

CANARY_MISMATCH = "canary mismatch"
"""The health reason a wrong canary answer adds (until that canary answers right again)."""


def canaries_for(canaries: CanariesSection, engine: str) -> list[CanaryQuerySection]:
    """The engine's canary queries (``canaries.queries.<engine>``, each entry's defaults filled in by the
    configuration)."""
    return list(canaries.queries.get(engine, ()))


def host_of(url: str | None) -> str:
    """The host name of ``url``, lower-cased ("" when it has none or does not parse)."""
    try:
        return (urlsplit(url or "").hostname or "").rstrip(".").lower()
    except ValueError:
        return ""


def on_domain(url: str | None, domain: str) -> bool:
    """Whether ``url`` is on ``domain`` or one of its subdomains."""
    host = host_of(url)
    return host == domain or host.endswith("." + domain)


def answer_problem(canary: CanaryQuerySection, urls: Iterable[str | None]) -> str | None:
    """What is wrong with a canary's answer (the page's result URLs, normalized), or None when it is right."""
    urls = [url for url in urls if url]
    problems = []
    if len(urls) < canary.min_results:
        problems.append(f"{len(urls)} results, expected at least {canary.min_results}")
    if canary.expect_domain and not any(on_domain(url, canary.expect_domain) for url in urls):
        hosts = sorted({host_of(url) or "?" for url in urls})
        shown = ", ".join(hosts[:5]) + (", …" if len(hosts) > 5 else "")
        problems.append(f"no result from {canary.expect_domain}" + (f" (hosts: {shown})" if hosts else ""))
    return "; ".join(problems) or None


def check_answer(canary: CanaryQuerySection, engine: str, urls: Iterable[str | None]) -> CanaryChecked:
    """The check of a canary's answer (the result URLs of its page, normalized) by ``engine``, as it is signalled."""
    urls = list(urls)
    problem = answer_problem(canary, urls)
    return CanaryChecked(
        engine=engine,
        query=canary.query,
        matched=problem is None,
        results=len(urls),
        problem=problem,
        at=datetime.now(UTC),
    )
