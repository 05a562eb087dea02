"""``scrapy crawl google``: the engine loop bound to Google (:mod:`topicstreams.engines.google`)."""

from topicstreams.engines.google import Google
from topicstreams.spiders.base import EngineSpider


class GoogleSpider(EngineSpider):
    engine_class = Google
    name = Google.name
