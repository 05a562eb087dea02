"""Scrapy settings of topicstreams: the one place for the Scrapy-side defaults.

Values that come from the user's configuration (``config.yml``) are not set here: the
:class:`~topicstreams.addon.TopicstreamsAddon` loads and validates the configuration when a crawler is
made and sets the ``TOPICSTREAMS_*`` settings from it (at "addon" priority, so ``-s`` still wins).
"""

BOT_NAME = "topicstreams"

SPIDER_MODULES = ["topicstreams.spiders"]
NEWSPIDER_MODULE = "topicstreams.spiders"
COMMANDS_MODULE = "topicstreams.commands"

ADDONS = {"topicstreams.addon.TopicstreamsAddon": 0}

# Rendering: every engine page goes through Chromium.
TWISTED_REACTOR = "twisted.internet.asyncioreactor.AsyncioSelectorReactor"
DOWNLOAD_HANDLERS = {
    "http": "scrapy_playwright.handler.ScrapyPlaywrightDownloadHandler",
    "https": "scrapy_playwright.handler.ScrapyPlaywrightDownloadHandler",
}
PLAYWRIGHT_BROWSER_TYPE = "chromium"
# One Chromium and one Playwright driver per process, whatever the number of engine crawlers in it; one browser
# context per engine (topicstreams.browser.provider). The add-on sets PLAYWRIGHT_LAUNCH_OPTIONS from the config.
PLAYWRIGHT_BROWSER_PROVIDER = "topicstreams.browser.provider.SharedBrowserProvider"
# The browser sends its own headers (its User-Agent, its Accept-Language), not Scrapy's.
PLAYWRIGHT_PROCESS_REQUEST_HEADERS = None
PLAYWRIGHT_ABORT_REQUEST = "topicstreams.browser.chromium.should_abort_request"
PLAYWRIGHT_DEFAULT_NAVIGATION_TIMEOUT = 30_000
PLAYWRIGHT_MAX_PAGES_PER_CONTEXT = 2
# An engine's tab is navigated from page to page (topicstreams.browser.tabs: EngineTab). Every TAB_GC_PAGES pages its
# renderer is asked for a garbage collection: left alone, it keeps the pages it left in memory long after (0 = never
# asked). After TAB_PAGES pages the tab is renewed (closed; the next page opens a fresh one): a tab keeps every
# request and response it has seen until it closes — in Chromium, in the Playwright driver and in Playwright's
# Python objects — so a tab navigated for hours grows without end (0 = never renewed). Python's allocator and the
# driver's heap keep the room of the most objects a tab has held: 20 pages kept the hour's soak flat, where 100 let
# it climb for 40 minutes (README, Memory).
TOPICSTREAMS_TAB_GC_PAGES = 5
TOPICSTREAMS_TAB_PAGES = 20

ROBOTSTXT_OBEY = False
COOKIES_ENABLED = False  # the browser profile keeps the engine's cookies
TELNETCONSOLE_ENABLED = False
REMOTE_CONTROL_ENABLED = False  # no code-execution port on a crawler that runs for weeks
LOG_LEVEL = "INFO"
# At INFO a person reads what the project says; Scrapy's start-up lists, its per-minute "Crawled N pages" lines and
# the like are at DEBUG (topicstreams.cli.log_levels). The level of Scrapy's closing stats dump, INFO or DEBUG; empty:
# the command's own (INFO for `scrapy crawl`; DEBUG for `crawlall`, whose one summary line says the whole process
# instead of a dump per engine: -s TOPICSTREAMS_STATS_DUMP_LEVEL=INFO brings those back).
TOPICSTREAMS_STATS_DUMP_LEVEL = ""

# One engine is one spider; within it one topic at a time, so a handful of slots is plenty.
CONCURRENT_REQUESTS = 4
CONCURRENT_REQUESTS_PER_DOMAIN = 1

# Pacing and blocks: the floor between two requests to an engine, its cooldown, and the class of every
# response (topicstreams.middlewares). Pacing runs last before the download, classification first after it. The
# add-on enables both, whatever DOWNLOADER_MIDDLEWARES a user sets: an engine spider reads its pages through the
# blocks middleware. TOPICSTREAMS_PACING_ENABLED = False turns pacing off.
TOPICSTREAMS_PACING_ENABLED = True
# The pacing middleware keeps the floor, so Scrapy's own delay is off for the engine spiders (the add-on sets
# DOWNLOAD_DELAY = 0; a delay or AutoThrottle a user adds can only lengthen the gaps, never shorten them).
# With pacing off, DOWNLOAD_DELAY is the floor and it is never randomised below it.
DOWNLOAD_DELAY_JITTER = 0

# 403, 429 and 503 are the engine turning against us: never retried behind the project's back (the engine
# spiders' requests are not retried by Scrapy at all: retrying a block is the project's job, after the cooldown).
RETRY_HTTP_CODES = [500, 502, 504, 522, 524, 408]

# Health: each engine scored against its own normal; degraded slows it down, critical pauses it
# (topicstreams.extensions.watch; the health.* keys of the configuration).
# (The add-on adds the two extensions every crawl needs first, whatever EXTENSIONS a user sets: the engine's
# browser profile, held for the crawl, and the database schema, upgraded once per process.)
EXTENSIONS = {
    "topicstreams.extensions.watch.HealthExtension": 500,
    "topicstreams.extensions.cycle_accounting.CyclesExtension": 510,
    "topicstreams.extensions.log_store.LogStoreExtension": 520,
    "topicstreams.extensions.digest_watch.AlertingExtension": 530,
    "topicstreams.extensions.membership.MembershipExtension": 540,
    "topicstreams.extensions.schedule_watch.ScheduleHoursExtension": 550,
}
TOPICSTREAMS_HEALTH_ENABLED = True
# Cycle accounting: one scraper_cycles row and one INFO line per engine and scrape_interval window, and the
# purge of rows older than scraper.retention_days (topicstreams.extensions.cycle_accounting).
TOPICSTREAMS_CYCLES_ENABLED = True
# The schedule's hours: each engine's topic visits, requests, burst pages, holes and budget per node and UTC hour
# (schedule_hours, from the topic_visited signal; /monitor's schedule panel), purged after scraper.retention_days
# (topicstreams.extensions.schedule_watch).
TOPICSTREAMS_SCHEDULE_HOURS_ENABLED = True
# Stored logs: every crawl process keeps its WARNING-and-above records and the per-window INFO lines in scraper_logs,
# masked, in batches written by a thread of their own, a flood capped, purged after scraper.retention_days; read at
# /logs and GET /api/logs (topicstreams.extensions.log_store, topicstreams.storage.log_records).
TOPICSTREAMS_LOGS_ENABLED = True
# Alerts (topicstreams.alerts): each target of an alert is tried once, then again after each of these delays (seconds);
# every attempt is recorded in alert_deliveries. Delivery runs in a thread of its own, never on the reactor.
TOPICSTREAMS_ALERT_RETRY_DELAYS = [2.0, 10.0, 30.0]
# A stopping crawl waits at most ALERT_STOP_WAIT seconds for its deliveries; what is still on its way is kept in the
# database and delivered by the next start of the same node, or abandoned (with why) when it is older than
# ALERT_LEFTOVER_HOURS then or its URLs are no longer configured (topicstreams.alerts.leftovers).
TOPICSTREAMS_ALERT_STOP_WAIT = 5.0
TOPICSTREAMS_ALERT_LEFTOVER_HOURS = 24.0
# Alerts told by the crawl processes: news digests (alerting.digests: hourly, daily and weekly ones claimed by one
# process of all nodes, as-it-happens batches by the process that stored their events) and topics gone silent
# (topicstreams.extensions.digest_watch): looked at every ALERTS_TICK seconds, silence every ALERTS_SILENCE_EVERY.
TOPICSTREAMS_ALERTS_ENABLED = True
TOPICSTREAMS_ALERTS_TICK = 30.0
TOPICSTREAMS_ALERTS_SILENCE_EVERY = 300.0
# Membership (topicstreams.extensions.membership): every crawl process writes its row of the nodes table when it
# starts, every HEARTBEAT seconds and when it stops (scrapy nodes). The same HEARTBEAT is how often the health
# extension writes each engine's engine_status row at least (it keeps it there: three missed ones read `stale`
# everywhere; one period for a process to say it is alive). Lease mode (scraper.assignment: lease,
# topicstreams.crawl.leased_supply): an engine that found nothing due looks at the shared schedule again at most
# LEASE_POLL seconds later (another node may release a topic at any time).
TOPICSTREAMS_MEMBERSHIP_ENABLED = True
TOPICSTREAMS_NODE_HEARTBEAT = 15.0
TOPICSTREAMS_LEASE_POLL = 5.0

# The adaptive schedule (``scraper.schedule``, :mod:`topicstreams.crawl.topic_planner`): how far back a topic's rate
# remembers (seconds; it also forgets within a few visits), and an object path whose ``rate_per_hour(engine, topic)``
# replaces the learnt rates in the allocation (None: the learnt ones; the freshness benchmark's oracle sets it).
TOPICSTREAMS_RATE_MEMORY = 21600.0
TOPICSTREAMS_FRESHNESS_RATES = None

ITEM_PIPELINES = {
    "topicstreams.pipelines.normalize.NormalizePipeline": 300,
    "topicstreams.pipelines.store.StorePipeline": 800,
}

FEED_EXPORT_ENCODING = "utf-8"

# Batched writes into the store.
TOPICSTREAMS_STORE_BATCH_SIZE = 500
TOPICSTREAMS_STORE_FLUSH_SECONDS = 1.0
# Through a database outage nothing is dropped (topicstreams.storage.durable): at most BUFFER_ITEMS items wait in
# memory, the rest in the journal on disk (TOPICSTREAMS_JOURNAL_DIR, set by the add-on: browser.profile_dir/<node>/
# journal); tries again after RETRY_INITIAL seconds, doubling up to RETRY_MAX; at the end, what waits in memory is
# written as long as the database takes it, no write waiting longer than CLOSE_TIMEOUT seconds, else journaled
# for the next start.
TOPICSTREAMS_STORE_BUFFER_ITEMS = 100_000
TOPICSTREAMS_STORE_RETRY_INITIAL = 0.5
TOPICSTREAMS_STORE_RETRY_MAX = 15.0
TOPICSTREAMS_STORE_CLOSE_TIMEOUT = 10.0

# No topic can stall an engine (topicstreams.crawl.deadline): a results-page request that has not come back
# within the navigation timeout (PLAYWRIGHT_DEFAULT_NAVIGATION_TIMEOUT, ms) plus this margin, counted from when
# pacing lets it go, is lost (dropped by a middleware without an errback, or lost by the browser): its topic resolves
# as an error ("no response"), a WARNING, topicstreams/<engine>/requests_lost, and the engine goes on with the next
# topic. The margin covers what the navigation timeout does not: starting the browser, opening a tab, reading the
# page. (Topic names whose results URL would pass Scrapy's URLLENGTH_LIMIT are refused where they enter.)
TOPICSTREAMS_RESPONSE_MARGIN = 30.0
