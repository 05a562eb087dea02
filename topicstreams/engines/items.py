"""The item every engine spider yields."""

import scrapy

from topicstreams.engines.results import REQUIRED_RESULT_FIELDS


class NewsItem(scrapy.Item):
    """One result of one engine for one topic, as parsed from a results page.

    ``published_at`` and ``fetched_at`` are timezone-aware UTC datetimes
    (``published_at`` is None when the page gave no time, or one we could not read).
    ``news_id`` is filled by the normalize pipeline from the normalized ``url``.
    """

    url = scrapy.Field()
    title = scrapy.Field()
    source = scrapy.Field()
    snippet = scrapy.Field()
    published_at = scrapy.Field()
    topic = scrapy.Field()
    engine = scrapy.Field()
    rank = scrapy.Field()
    fetched_at = scrapy.Field()
    news_id = scrapy.Field()


def missing_fields(item: NewsItem) -> list[str]:
    """The required fields ``item`` lacks, in the order of :data:`REQUIRED_RESULT_FIELDS`."""
    return [name for name in REQUIRED_RESULT_FIELDS if not item.get(name)]
