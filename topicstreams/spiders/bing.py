"""``scrapy crawl bing``: the engine loop bound to Bing (:mod:`topicstreams.engines.bing`)."""

from topicstreams.engines.bing import Bing
from topicstreams.spiders.base import EngineSpider


class BingSpider(EngineSpider):
    engine_class = Bing
    name = Bing.name
