"""What the health and cycle extensions share: the checks of their ``from_crawler``, and wall-clock times.

An engine extension runs when its switch setting is on, on an engine spider's crawler (:data:`topicstreams.ENGINES`),
with a database to write to; otherwise it is not built (Scrapy's ``NotConfigured``, whose reason Scrapy logs).
"""

from __future__ import annotations

from datetime import UTC, datetime

from scrapy.crawler import Crawler
from scrapy.exceptions import NotConfigured

from topicstreams import ENGINES


def engine_database_url(crawler: Crawler, *, switch: str, purpose: str, keeps: str) -> str:
    """The database URL the extension writes to, once it is known the extension runs on ``crawler``.

    Raises ``NotConfigured`` when the ``switch`` setting is off (``<switch> is off``), when the spider is not an
    engine's (``<purpose> follows the engine spiders only``) or when ``TOPICSTREAMS_DATABASE_URL`` is empty
    (``… nowhere to keep <keeps>``)."""
    settings = crawler.settings
    if not settings.getbool(switch):
        raise NotConfigured(f"{switch} is off")
    if getattr(crawler.spidercls, "name", None) not in ENGINES:
        raise NotConfigured(f"{purpose} follows the engine spiders only")
    database_url = (settings.get("TOPICSTREAMS_DATABASE_URL") or "").strip()
    if not database_url:
        raise NotConfigured(f"TOPICSTREAMS_DATABASE_URL is empty: nowhere to keep {keeps}")
    return database_url


STORED_LINE = "topicstreams_stored"
"""The attribute of a log record (given as ``extra={STORED_LINE: True}``) that stores it in ``scraper_logs`` whatever
its level: the per-window INFO line of the cycle accounting (:mod:`topicstreams.extensions.log_store` stores the
WARNING-and-above records anyway)."""

STORED = {STORED_LINE: True}
"""``extra=STORED``: keep this INFO record in ``scraper_logs``."""


def wall(seconds: float) -> datetime:
    """A ``time.time()`` reading as an aware UTC datetime."""
    return datetime.fromtimestamp(seconds, UTC)
