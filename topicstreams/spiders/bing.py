"""``scrapy crawl bing``: the engine loop bound to Bing (:mod:`topicstreams.engines.bing`)."""

from topicstreams.crawl.spider import EngineSpider
from topicstreams.engines.bing import Bing


class BingSpider(EngineSpider):
    engine_class = Bing
    name = Bing.name
