"""What a person reads at INFO: Scrapy's, scrapy-playwright's, Alembic's and uvicorn's start-up and per-minute lines
are moved down to DEBUG, still one ``-s LOG_LEVEL=DEBUG`` away.

Left alone, ``scrapy crawlall`` prints Scrapy's version table, and per engine crawler its add-ons, its extensions,
middlewares and pipelines, its overridden settings, a "Crawled 0 pages" line a minute and a stats dump at the end:
hundreds of lines in which the few that tell something (an engine cooling down, the network down) scroll away.

:func:`quiet_library_logs` puts a :class:`DemoteToDebug` filter on each logger of :data:`DEMOTED`: an INFO record whose
message starts with one of the listed beginnings (all of them, for ``None``) becomes a DEBUG record, which the
handler of an INFO log leaves out and the handler of a DEBUG log shows as DEBUG. Warnings and errors are never
touched. Scrapy's closing stats dump goes down too when ``TOPICSTREAMS_STATS_DUMP_LEVEL`` is ``DEBUG`` or, left
empty, when the command's level is (``crawlall``'s: it says one summary for the whole process instead,
:mod:`topicstreams.cli.crawl_summary`).
"""

from __future__ import annotations

import logging

DEMOTED: dict[str, tuple[str, ...] | None] = {
    "scrapy.utils.log": None,  # "Scrapy 2.x started", the versions table
    "scrapy.addons": None,  # "Enabled addons"
    "scrapy.middleware": None,  # "Enabled extensions / downloader middlewares / spider middlewares / item pipelines"
    "scrapy.crawler": ("Overridden settings",),  # not "Received SIGINT, shutting down gracefully"
    "scrapy.extensions.logstats": None,  # "Crawled 0 pages (at 0 pages/min) …", every minute per engine
    "scrapy.core.engine": ("Spider opened", "Closing spider"),  # "Spider closed (reason)" stays
    "scrapy-playwright": None,  # "Starting download handler", "Closing browser", …: per engine crawler
    "alembic.runtime.migration": ("Context impl", "Will assume"),  # "Running upgrade …" stays
    "uvicorn.error": (
        "Started server process",
        "Waiting for application",
        "Application startup complete",
        "Shutting down",
        "Application shutdown complete",
        "Finished server process",
    ),
}
"""Logger name → the beginnings of the INFO messages moved to DEBUG (None: every INFO message of the logger)."""

STATS_LOGGER, STATS_DUMP = "scrapy.statscollectors", ("Dumping Scrapy stats",)
STATS_DUMP_SETTING = "TOPICSTREAMS_STATS_DUMP_LEVEL"


class DemoteToDebug(logging.Filter):
    """Turns the INFO records of its logger that begin with one of ``beginnings`` (all, for None) into DEBUG ones (and
    drops them where the logger itself is set above DEBUG)."""

    def __init__(self, beginnings: tuple[str, ...] | None) -> None:
        super().__init__()
        self.beginnings = beginnings

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno == logging.INFO and (self.beginnings is None or str(record.msg).startswith(self.beginnings)):
            record.levelno, record.levelname = logging.DEBUG, logging.getLevelName(logging.DEBUG)
            # Scrapy's loggers pass every record on and leave the level to the root's handler; uvicorn's have a
            # handler of their own without a level, behind the logger's: there a DEBUG record goes no further.
            return logging.getLogger(record.name).isEnabledFor(logging.DEBUG)
        return True


def demote(name: str, beginnings: tuple[str, ...] | None) -> None:
    """Put one :class:`DemoteToDebug` on logger ``name`` (replacing one put there before: this is idempotent)."""
    target = logging.getLogger(name)
    for old in [f for f in target.filters if isinstance(f, DemoteToDebug)]:
        target.removeFilter(old)
    target.addFilter(DemoteToDebug(beginnings))


def quiet_library_logs(settings=None, stats_dump_level: str = "INFO") -> None:
    """Install the demotions of :data:`DEMOTED` in this process, and of Scrapy's stats dump when its level is DEBUG:
    ``TOPICSTREAMS_STATS_DUMP_LEVEL`` of ``settings``, else ``stats_dump_level`` (the command's). Called by the
    project's commands before Scrapy sets its logging up."""
    for name, beginnings in DEMOTED.items():
        demote(name, beginnings)
    level = str((settings.get(STATS_DUMP_SETTING) if settings is not None else None) or stats_dump_level).upper()
    stats = logging.getLogger(STATS_LOGGER)
    if level == "DEBUG":
        demote(STATS_LOGGER, STATS_DUMP)
    else:
        for old in [f for f in stats.filters if isinstance(f, DemoteToDebug)]:
            stats.removeFilter(old)
