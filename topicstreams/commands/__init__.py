"""The project's Scrapy commands (``COMMANDS_MODULE``), one module per command, named after it."""
