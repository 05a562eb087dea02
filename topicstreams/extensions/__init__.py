"""The project's Scrapy extensions: thin adapters that listen to the crawl (health, saturation, cycles, digests
and silence, stored logs, membership) and the ones every crawl needs first (the profile lock, the schema upgrade)."""
