"""The project's Scrapy extensions: the database schema at start, health scoring and cycle accounting."""
