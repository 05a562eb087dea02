"""The database tables, as SQLAlchemy 2 typed declarative models, assembled: every table on the one ``MetaData``
of :class:`~topicstreams.storage.table_base.Base` (what Alembic's environment compares the migrations with), under
the names the rest of the package imports.

Each area's tables live in their own module: the feed's (:mod:`topicstreams.storage.feed_tables`), the health
status and history (:mod:`topicstreams.storage.health_tables`), the crawl's cycles, totals, logs, schedule and
membership (:mod:`topicstreams.storage.crawl_tables`), the alerts (:mod:`topicstreams.storage.alert_tables`).
"""

from __future__ import annotations

from topicstreams.storage.alert_tables import Alert, AlertDelivery, AlertState, DigestState
from topicstreams.storage.crawl_tables import EngineTotal, NodeProcess, ScheduleSlot, ScraperCycle, ScraperLog
from topicstreams.storage.feed_tables import News, Topic, TopicNews, TopicNewsEngine
from topicstreams.storage.health_tables import EngineStatus, HealthDaily, HealthWindow
from topicstreams.storage.route_status import RouteStatus
from topicstreams.storage.schedule_hours import ScheduleHour
from topicstreams.storage.store_losses import StoreLoss
from topicstreams.storage.table_base import Base, UTCDateTime
from topicstreams.storage.topic_rates import TopicRate

topics_table = Topic.__table__
news_table = News.__table__
topic_news_table = TopicNews.__table__
topic_news_engines_table = TopicNewsEngine.__table__
scraper_cycles_table = ScraperCycle.__table__
engine_status_table = EngineStatus.__table__
alerts_table = Alert.__table__
alert_deliveries_table = AlertDelivery.__table__
alert_states_table = AlertState.__table__
digest_states_table = DigestState.__table__
health_windows_table = HealthWindow.__table__
scraper_logs_table = ScraperLog.__table__
health_daily_table = HealthDaily.__table__
engine_totals_table = EngineTotal.__table__
schedule_table = ScheduleSlot.__table__
nodes_table = NodeProcess.__table__
store_losses_table = StoreLoss.__table__
route_status_table = RouteStatus.__table__
topic_rates_table = TopicRate.__table__
schedule_hours_table = ScheduleHour.__table__

TABLE_NAMES: tuple[str, ...] = (
    "topics",
    "news",
    "topic_news",
    "topic_news_engines",
    "scraper_cycles",
    "engine_status",
    "alerts",
    "health_windows",
    "scraper_logs",
    "health_daily",
    "engine_totals",
    "alert_deliveries",
    "alert_states",
    "digest_states",
    "schedule",
    "nodes",
    "store_losses",
    "route_status",
    "topic_rates",
    "schedule_hours",
)

__all__ = [
    "TABLE_NAMES",
    "Alert",
    "AlertDelivery",
    "AlertState",
    "DigestState",
    "Base",
    "EngineStatus",
    "EngineTotal",
    "HealthDaily",
    "HealthWindow",
    "News",
    "ScraperCycle",
    "ScraperLog",
    "RouteStatus",
    "ScheduleHour",
    "StoreLoss",
    "Topic",
    "TopicNews",
    "TopicRate",
    "TopicNewsEngine",
    "UTCDateTime",
    "alert_deliveries_table",
    "alert_states_table",
    "alerts_table",
    "digest_states_table",
    "engine_status_table",
    "engine_totals_table",
    "health_daily_table",
    "health_windows_table",
    "news_table",
    "scraper_cycles_table",
    "scraper_logs_table",
    "route_status_table",
    "schedule_hours_table",
    "store_losses_table",
    "topic_news_engines_table",
    "topic_news_table",
    "topic_rates_table",
    "topics_table",
]
