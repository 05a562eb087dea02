"""Pure text rules that every layer may use (no I/O, no Scrapy, no database)."""
