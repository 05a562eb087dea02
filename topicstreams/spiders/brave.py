"""``scrapy crawl brave``: the engine loop bound to Brave (:mod:`topicstreams.engines.brave`)."""

from topicstreams.crawl.spider import EngineSpider
from topicstreams.engines.brave import Brave


class BraveSpider(EngineSpider):
    engine_class = Brave
    name = Brave.name
