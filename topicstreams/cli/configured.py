"""What the project's Scrapy commands share: checking their arguments, loading the configuration, reporting errors."""

from __future__ import annotations

import functools
import logging
import sys
from typing import NoReturn

from scrapy.commands import ScrapyCommand
from scrapy.exceptions import UsageError

from topicstreams import ENGINES
from topicstreams.browser.chromium import ProfileInUse, ProfileLock, profile_path
from topicstreams.cli.crawl_summary import log_summary
from topicstreams.cli.log_levels import quiet_library_logs
from topicstreams.cli.usage import USAGE_EXIT, fit_parser, refuse_operands, refuse_unknown_options
from topicstreams.config.errors import EX_CONFIG, ConfigError
from topicstreams.config.loading import LOADER_SETTING, Config, ConfigLoader, load_config
from topicstreams.config.sections import Sections
from topicstreams.config.setting_names import sections_with_settings
from topicstreams.crawl.arguments import NO_TOPICS, SPIDER_ARGUMENTS, ArgumentRefused, spider_arguments, split_names
from topicstreams.crawl.runtime import Runtime
from topicstreams.engines.topic_names import TopicsRefused, check_topics, configured_engines, url_length_limit
from topicstreams.storage.durable import LOST

logger = logging.getLogger(__name__)


def load_config_or_exit(settings) -> Config:
    """Load and validate the configuration, and the ``TOPICSTREAMS_*`` settings that override it (``-s``, see
    :func:`topicstreams.config.setting_names.sections_with_settings`); on a problem print one ``config error:``
    line (naming the setting, for one of those) and exit 78.

    When the run logs to a file (``LOG_FILE``, as every Scrapyd job does), the line is also appended there as an
    ERROR: Scrapyd lists a job that failed at start as "finished", and its log is where an operator looks.
    """
    try:
        config = load_config(settings)
        sections_with_settings(config, settings)
        return config
    except ConfigError as exc:
        report_error(settings, f"config error: {exc}")
        raise SystemExit(EX_CONFIG) from None


def report_error(settings, message: str) -> None:
    """Say why a command cannot start: one line on standard error, and an ERROR record in ``LOG_FILE`` if set."""
    print(message, file=sys.stderr)
    if settings is not None and settings.get("LOG_FILE"):
        log_error_to_file(settings, message)


def log_error_to_file(settings, message: str) -> None:
    """Write one ERROR record to the run's ``LOG_FILE`` in its ``LOG_FORMAT`` (Scrapy's logging is not set up yet)."""
    try:
        handler = logging.FileHandler(settings.get("LOG_FILE"), encoding=settings.get("LOG_ENCODING") or "utf-8")
    except OSError as exc:
        print(f"could not write to the log file: {exc}", file=sys.stderr)
        return
    try:
        handler.setFormatter(logging.Formatter(settings.get("LOG_FORMAT"), settings.get("LOG_DATEFORMAT")))
        handler.handle(logger.makeRecord(logger.name, logging.ERROR, __file__, 0, message, None, None))
    finally:
        handler.close()


class ConfiguredCommand(ScrapyCommand):
    """A command that checks its arguments, then validates the configuration, before anything else (before logging
    starts).

    Scrapy creates the crawler process, which configures logging and prints its start-up lines, after
    ``process_options`` and before ``run``: checking here keeps a usage error (exit 2) or a config error (exit 78)
    to one line on stderr. An argument the command does not understand is refused first, whatever the
    configuration (:meth:`check_arguments`): an unknown option, a positional argument it does not take, a value it
    cannot use; the line names it, what was given and what is accepted (:mod:`topicstreams.cli.usage`).
    """

    config: Config
    stats_dump_level = "INFO"
    """The level of Scrapy's closing stats dump when ``TOPICSTREAMS_STATS_DUMP_LEVEL`` is left empty."""

    def add_options(self, parser) -> None:
        super().add_options(parser)
        fit_parser(parser, self.usage_error)

    @property
    def command_name(self) -> str:
        """The command's name, as typed after ``scrapy`` (its module's name)."""
        return type(self).__module__.rpartition(".")[2]

    def usage_error(self, message: str) -> NoReturn:
        """A usage error (Scrapy's ``UsageError``, argparse's own): one line on stderr, and an ERROR in the run's
        ``LOG_FILE`` (a Scrapyd job's log), exit 2."""
        report_error(getattr(self, "settings", None), f"scrapy {self.command_name}: error: {message}")
        raise SystemExit(USAGE_EXIT)

    def process_options(self, args: list[str], opts) -> None:
        super().process_options(args, opts)
        quiet_library_logs(self.settings, self.stats_dump_level)  # before Scrapy's logging and its first lines
        refuse_unknown_options(args)
        self.check_arguments(args, opts)
        # The command's loader: its crawlers load through it (the add-on, the log store), so they share this load.
        self.settings.set(LOADER_SETTING, ConfigLoader(), priority="command")
        self.config = load_config_or_exit(self.settings)
        # The crawlers this command's process makes share the command's runtime (their settings carry it).
        self.runtime.install(self.settings)

    @functools.cached_property
    def sections(self) -> Sections:
        """The configuration's typed sections, with the command's ``TOPICSTREAMS_*`` settings (``-s``) in their
        places (checked when the configuration was loaded)."""
        return sections_with_settings(self.config, self.settings)

    @functools.cached_property
    def runtime(self) -> Runtime:
        """The process's :class:`~topicstreams.crawl.runtime.Runtime`: the command's database handles, and its
        crawlers' shared objects."""
        return Runtime()

    def check_arguments(self, args: list[str], opts) -> None:
        """Refuse (``UsageError``) arguments that can never run, before the configuration is read."""

    def database(self, config: Config):
        """The configured database's handle, its schema brought to the latest revision first (once per process)."""
        url = config.sections.database.url
        self.runtime.upgrade_once(url)
        return self.runtime.database(url)


class SubcommandCommand(ConfiguredCommand):
    """A command with sub-commands: ``scrapy NAME SUB [ARGS…]``, each handled by a ``do_<sub>`` method.

    ``subcommands`` describes each; ``operands`` gives the positional arguments of those that take any, in the
    syntax of :func:`~topicstreams.cli.usage.operand_bounds` (``"NAME…"``, ``"[PATH]"``): the sub-command and their
    number are checked before the configuration is read, and ``--help`` lists them one a line.
    """

    requires_project = True
    requires_crawler_process = False
    subcommands: dict[str, str] = {}
    operands: dict[str, str] = {}

    def syntax(self) -> str:
        return " | ".join(self.synopsis(name) for name in self.subcommands)

    def synopsis(self, subcommand: str) -> str:
        """``add NAME…``: the sub-command with its positional arguments."""
        return f"{subcommand} {self.operands.get(subcommand, '')}".strip()

    def subcommand_lines(self) -> str:
        """The sub-commands, one a line, each with its description."""
        width = max(len(self.synopsis(name)) for name in self.subcommands)
        return "\n".join(f"  {self.synopsis(name):<{width}}   {desc}" for name, desc in self.subcommands.items())

    def add_options(self, parser) -> None:
        super().add_options(parser)
        # --help lists the sub-commands one a line under the description, whatever the command's long_desc says
        parser.description = f"{parser.description}\n\n{self.subcommand_lines()}"

    def check_arguments(self, args: list[str], opts) -> None:
        expected = f"expected one of: {', '.join(self.subcommands)}"
        if not args:
            raise UsageError(f"no sub-command given: {expected}")
        if args[0] not in self.subcommands:
            raise UsageError(f"unknown sub-command {args[0]!r}: {expected}")
        refuse_operands(args[0], self.operands.get(args[0], ""), args[1:])

    def run(self, args: list[str], opts) -> None:
        try:
            self.exitcode = getattr(self, f"do_{args[0]}")(self.config, args[1:], opts) or 0
        except Exception as exc:  # a damaged database file, met by any sub-command: one message, no traceback
            from topicstreams.storage.damage_notice import damage_of

            damage = damage_of(self.config.sections.database.url, exc)
            if damage is None:
                raise
            report_error(self.settings, damage)
            self.exitcode = 1
        finally:
            self.runtime.close()  # the database handles the sub-command opened


class CrawlingCommand(ConfiguredCommand):
    """A command that runs crawlers and exits non-zero when one of them could not start its loop.

    Scrapy closes a spider whose ``start()`` raised with the reason ``start_error`` and exits 0; a crawl
    that never began is a failure to whoever runs it (a shell script, Scrapyd's log reader). A spider that
    refused its ``-a topics=`` (reason ``topics_refused``) exits 2, as a bad argument does.
    """

    accepted_arguments: tuple[str, ...] = SPIDER_ARGUMENTS
    """The ``-a`` names the command takes: its spiders' (:mod:`topicstreams.crawl.arguments`), and its own."""

    def check_arguments(self, args: list[str], opts) -> None:
        """A usage error (exit 2, one line, no traceback) for a ``-a`` name the crawl does not take or a value its
        spiders do not understand (``-a once=maybe``): the spiders' own check
        (:func:`~topicstreams.crawl.arguments.spider_arguments`, which the spider makes again in its ``__init__``
        for every other way of running it), made here before any crawler is made: from inside Scrapy, an exception
        of a spider's ``__init__`` comes out as a traceback and exit 1."""
        try:
            spider_arguments(opts.spargs, self.accepted_arguments)
        except ArgumentRefused as exc:
            raise UsageError(str(exc)) from None

    def refuse_topics_argument(self, engines: list[str], opts) -> None:
        """A usage error (exit 2, one message, no traceback) when ``-a topics=`` names no topic or a name that
        breaks the rule (:mod:`topicstreams.engines.topic_names`) for any of ``engines``, as configured.

        Checked here, before any crawler is made (the spider checks again when it starts, for other ways of running
        it); after the configuration is read, which gives the engines' URLs and the deepest page.
        """
        value = opts.spargs.get("topics")
        if value is None:
            return
        names = split_names(value)
        if not names:
            raise UsageError(NO_TOPICS)
        try:
            check_topics(
                names,
                configured_engines(self.config.get("engines"), engines),  # the engines read a mapping
                limit=url_length_limit(self.settings),
                max_pages=self.sections.scraper.max_pages,
            )
        except TopicsRefused as exc:
            raise UsageError(f"-a topics: {exc}") from None

    def _create_crawler(self, spidercls):
        name = spidercls if isinstance(spidercls, str) else spidercls.name
        if name in ENGINES:  # an unknown name is Scrapy's to refuse
            self.check_profile_free(name)
            self.check_database()
        crawler = super()._create_crawler(spidercls)
        self.__dict__.setdefault("started_crawlers", []).append(crawler)
        return crawler

    def check_profile_free(self, engine: str) -> None:
        """Refuse, in one line, to start an engine whose browser profile another process holds.

        The spider takes the profile lock itself (and keeps it); from inside Scrapy its refusal would come with
        tracebacks. Checked here, before any crawler starts, it is one line (and one ERROR in a Scrapyd job's log).
        """
        sections = self.config.sections
        lock = ProfileLock(profile_path(sections.browser.profile_dir, sections.node.id, engine))
        try:
            lock.acquire()
        except ProfileInUse as exc:
            report_error(self.settings, f"could not start {engine}: {exc}")
            raise SystemExit(1) from None
        lock.release()

    def check_database(self) -> None:
        """Refuse, in one line, to start when the database cannot be reached (or its schema brought up to date), or
        its file is damaged (:mod:`topicstreams.storage.damage_notice`).

        The schema extension would find out first thing, from inside Scrapy, with tracebacks. Once a crawl runs,
        the database may come and go: the store keeps what is scraped (see :mod:`topicstreams.storage.durable`).
        """
        from sqlalchemy.exc import SQLAlchemyError

        from topicstreams.config.secrets import mask_url
        from topicstreams.storage.damage_notice import damage_of
        from topicstreams.storage.failures import describe

        url = self.sections.database.url
        try:
            self.runtime.upgrade_once(url)  # what the schema extension does, once per process
        except SQLAlchemyError as exc:
            damage = damage_of(url, exc)  # no outage: waiting will not mend the file
            report_error(
                self.settings,
                f"could not start: {damage}"
                if damage
                else f"could not start: the database {mask_url(url)} cannot be reached "
                f"({describe(exc)}); nothing is crawled until it answers",
            )
            raise SystemExit(1) from None

    def run(self, args: list[str], opts) -> None:
        super().run(args, opts)
        crawlers = self.__dict__.get("started_crawlers", [])
        failed = [crawler.spidercls.name for crawler in crawlers if finish_reason(crawler) == "start_error"]
        refused = [crawler.spidercls.name for crawler in crawlers if finish_reason(crawler) == "topics_refused"]
        if failed:
            print(f"could not start: {', '.join(failed)} (see the log above)", file=sys.stderr)
            self.exitcode = self.exitcode or 1
        if refused:
            print(f"could not start: {', '.join(refused)}: -a topics is refused (see the log above)", file=sys.stderr)
            self.exitcode = self.exitcode or 2
        log_summary(crawlers)
        exit_on_losses(self)


LOST_EXIT = 1
"""The exit status of a crawl that lost items (unless it failed otherwise first)."""


def exit_on_losses(command) -> None:
    """Make ``command`` (``crawl``, ``crawlall``) exit :data:`LOST_EXIT`, with one line on stderr, when any crawl it ran
    had to stop with items neither stored nor journaled (the stat ``topicstreams/store/lost``: a full journal disk
    while the database was away)."""
    crawlers = command.__dict__.get("started_crawlers", [])
    lost = {crawler.spidercls.name: count for crawler in crawlers if (count := int(crawl_stat(crawler, LOST) or 0))}
    if lost:
        counts = ", ".join(f"{count} of {name}" for name, count in lost.items())
        print(
            f"items lost: {counts}, neither stored nor journaled (see the ERROR above; `scrapy health` lists them)",
            file=sys.stderr,
        )
        command.exitcode = command.exitcode or LOST_EXIT


def crawl_stat(crawler, key: str):
    """The crawl's stat ``key``; None for a crawler whose crawl never began (it has no stats)."""
    try:
        stats = crawler.stats
    except RuntimeError:  # Scrapy: "Crawler.stats is not set yet"
        return None
    return stats.get_value(key) if stats else None


def finish_reason(crawler) -> str | None:
    """The crawl's ``finish_reason`` stat; None for a crawler whose crawl never began."""
    return crawl_stat(crawler, "finish_reason")
