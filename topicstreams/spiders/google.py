"""``scrapy crawl google``: the engine loop bound to Google (:mod:`topicstreams.engines.google`)."""

from topicstreams.crawl.spider import EngineSpider
from topicstreams.engines.google import Google


class GoogleSpider(EngineSpider):
    engine_class = Google
    name = Google.name
