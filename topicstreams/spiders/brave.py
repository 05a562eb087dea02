"""``scrapy crawl brave``: the engine loop bound to Brave (:mod:`topicstreams.engines.brave`)."""

from topicstreams.engines.brave import Brave
from topicstreams.spiders.base import EngineSpider


class BraveSpider(EngineSpider):
    engine_class = Brave
    name = Brave.name
