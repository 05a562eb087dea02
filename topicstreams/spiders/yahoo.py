"""``scrapy crawl yahoo``: the engine loop bound to Yahoo (:mod:`topicstreams.engines.yahoo`)."""

from topicstreams.engines.yahoo import Yahoo
from topicstreams.spiders.base import EngineSpider


class YahooSpider(EngineSpider):
    engine_class = Yahoo
    name = Yahoo.name
