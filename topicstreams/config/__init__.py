"""The configuration: its schema and checks, loading and merging (defaults from ``defaults.yml``), the typed
sections components read, the Scrapy settings it becomes, and masking of its secrets."""
