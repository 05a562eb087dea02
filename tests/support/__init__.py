"""What the tests share, one module per job.

The project as users run it (project), crawlers built in-process (crawler), engine pages read without a crawl
(parsing), the databases (databases: the fixtures; postgres_server: the throw-away server), the fake engines over
HTTP (fakes_http), crawl configs and what a crawl left behind (crawl_checks), the web app's data (feed_data), alert
receivers (alert_receivers), lease mode's cluster and schedule (lease_cluster, schedule_rows), a real Scrapyd
(scrapyd_node), the suite's short soak (soak_run), free ports (ports), and test-only Scrapy components
(classification_recorder, dropping_middleware).

Fixtures are registered once, as plugins, in tests/conftest.py (``pytest_plugins``): test modules import helpers
from here, never fixtures."""
