"""``scrapy crawl yahoo``: the engine loop bound to Yahoo (:mod:`topicstreams.engines.yahoo`)."""

from topicstreams.crawl.spider import EngineSpider
from topicstreams.engines.yahoo import Yahoo


class YahooSpider(EngineSpider):
    engine_class = Yahoo
    name = Yahoo.name
