"""Country and regional domains in real Chromium: a crawl of Google and Yahoo whose result markup is unknown to
their parsers (every class, id and data attribute scrambled), so the structural fallback reads every page. Their
chrome links to google.com.ng, google.de, google.co.uk, it.yahoo.com and uk.news.yahoo.com; none of those is ever
stored, and the articles are."""

from __future__ import annotations

import sqlite3
from urllib.parse import urlsplit

import pytest

from fake_engines import FakeEngines
from fake_engines.server import Extension, Reply, RequestContext
from tests.support.crawl_checks import STATS_DUMP, crawl_config, expected_urls, stat_count
from tests.unit.test_fallback import scramble_everything
from topicstreams.engines.domains import RULES

pytestmark = pytest.mark.timeout(180)

ENGINES = ("google", "yahoo")
COUNTRY_LINKS = ("www.google.com.ng", "www.google.de", "policies.google.co.uk", "it.yahoo.com", "uk.news.yahoo.com")


class Redesigned(Extension):
    """Every results page as after a redesign: no class, id or data attribute the parsers know."""

    def results(self, reply: Reply, ctx: RequestContext) -> Reply:
        if reply.status == 200 and "text/html" in reply.content_type:
            reply.body = scramble_everything(reply.payload().decode("utf-8")).encode("utf-8")
        return reply


@pytest.fixture(scope="module")
def fakes():
    with FakeEngines(engines=ENGINES, extensions=[Redesigned()]) as engines:
        yield engines


def test_the_fallback_never_stores_an_engines_country_or_regional_site(scrapy_cmd, fakes, tmp_path):
    config = crawl_config(tmp_path, fakes, floor=0.2, engines=ENGINES)
    result = scrapy_cmd(
        "crawlall", "-a", "topics=alpha", "-a", "once=1", *STATS_DUMP, env={"TOPICSTREAMS_CONFIG": str(config)}
    )
    assert result.returncode == 0, result.stderr[-3000:]
    for engine in ENGINES:
        assert stat_count(result.stderr, "layout_fallbacks", engine) >= 1, result.stderr[-3000:]
        served = [entry for entry in fakes.results_requests(engine) if entry["step"] == "results"]
        assert served, engine
    with sqlite3.connect(tmp_path / "news.db") as conn:
        stored = {row[0] for row in conn.execute("select url from news")}
    hosts = {urlsplit(url).hostname for url in stored}
    assert not hosts & set(COUNTRY_LINKS)
    assert not any(RULES["google"].owns(host) or RULES["yahoo"].owns(host) for host in hosts), sorted(hosts)
    # what the known layouts read on the pages as the fakes write them, the fallback read on the redesign
    assert stored == expected_urls("google", "alpha") | expected_urls("yahoo", "alpha")
