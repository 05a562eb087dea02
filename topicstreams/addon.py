"""The add-on that turns the topicstreams configuration into Scrapy settings."""

from __future__ import annotations

import random

from scrapy.crawler import Crawler
from scrapy.settings import BaseSettings

from topicstreams.browser.chromium import context_options, launch_options, profile_path
from topicstreams.config.loading import Config, load_config
from topicstreams.config.persona_places import warn_persona_contradictions
from topicstreams.config.route_table import configured_routes, engine_routes
from topicstreams.config.setting_names import SECTIONS_SETTING, sections_with_settings, setting_values
from topicstreams.crawl.runtime import Runtime
from topicstreams.storage.journal import journal_folder

RUN_PROXY = "run proxy"
"""The key of the run's proxy endpoint among the runtime's shared objects."""

PERSONA_CHECK = "persona check"
"""The key of the routes' persona check among the runtime's shared objects: it runs once per process."""


def config_settings(config: Config, proxy: str | None = None) -> dict:
    """The ``TOPICSTREAMS_*`` settings (:data:`~topicstreams.config.setting_names.SETTING_KEYS`) and the browser's
    options for a validated configuration (``proxy``: the run's proxy endpoint, see
    :func:`~topicstreams.browser.chromium.context_options`)."""
    sections = config.sections
    return {
        **setting_values(config),
        "TOPICSTREAMS_CONTEXT_OPTIONS": context_options(sections.anti_detection, proxy),
        "PLAYWRIGHT_LAUNCH_OPTIONS": launch_options(sections.browser),
    }


def run_proxy(crawler: Crawler, config: Config) -> str | None:
    """The proxy endpoint of the crawler's run, drawn once per process runtime among ``anti_detection.proxy``'s
    (:class:`~topicstreams.crawl.runtime.Runtime`): every engine of a run shares one exit. None when proxies are off."""
    proxy = config.sections.anti_detection.proxy
    if not proxy.enabled:
        return None
    proxies = tuple(proxy.proxies)
    return Runtime.of(crawler).shared((RUN_PROXY, proxies), lambda: random.choice(proxies))


class TopicstreamsAddon:
    """Loads the configuration (defaults, TOPICSTREAMS_CONFIG, environment) into the crawler's settings, and enables
    the components every crawl needs: the extensions that come first (:mod:`topicstreams.extensions.profile_lock`,
    :mod:`topicstreams.extensions.schema_upgrade`) and the two middlewares (:mod:`topicstreams.middlewares`).

    Raises :class:`~topicstreams.config.loading.ConfigError` on a bad configuration; the project's ``crawl`` and
    ``crawlall`` commands validate before any crawler is made, so users see one ``config error:`` line.
    """

    def __init__(self, crawler: Crawler) -> None:
        self.crawler = crawler

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> TopicstreamsAddon:
        return cls(crawler)

    def update_settings(self, settings: BaseSettings) -> None:
        from topicstreams.extensions.profile_lock import ProfileLockExtension
        from topicstreams.extensions.schema_upgrade import SchemaExtension
        from topicstreams.middlewares.blocks import BlocksMiddleware
        from topicstreams.middlewares.consent_answers import ConsentMiddleware
        from topicstreams.middlewares.pacing import PacingMiddleware

        # Every crawl needs these, even when a user's EXTENSIONS or DOWNLOADER_MIDDLEWARES replaces the project's:
        # the add-on enables them, as Scrapy add-ons enable their components. First the profile held and the
        # schema in place; the pacing runs last before the download; after it, a consent wall is answered (when
        # browser.consent says so), then each page is read.
        settings.set_in_component_priority_dict("EXTENSIONS", ProfileLockExtension, 0)
        settings.set_in_component_priority_dict("EXTENSIONS", SchemaExtension, 1)
        settings.set_in_component_priority_dict("DOWNLOADER_MIDDLEWARES", BlocksMiddleware, 940)
        settings.set_in_component_priority_dict("DOWNLOADER_MIDDLEWARES", ConsentMiddleware, 945)
        settings.set_in_component_priority_dict("DOWNLOADER_MIDDLEWARES", PacingMiddleware, 950)
        config = load_config(settings)  # the command's own load, shared (through its loader, in the settings)
        settings.setdict(config_settings(config, run_proxy(self.crawler, config)), priority="addon")
        # The typed sections, with any TOPICSTREAMS_* setting that won over the add-on's in its place.
        settings.set(SECTIONS_SETTING, sections_with_settings(config, settings), priority="addon")
        sections = config.sections
        # The store's journal folder, for every crawler (derived, so no default in settings.py either).
        settings.set(
            "TOPICSTREAMS_JOURNAL_DIR",
            str(journal_folder(sections.browser.profile_dir, sections.node.id)),
            priority="addon",
        )
        engine = getattr(self.crawler.spidercls, "name", None)
        if engine in sections.engines:
            # Derived here only, with no default in settings.py: a project-priority default would win over the
            # add-on's priority. Absent on a crawler that is not an engine's.
            settings.set(
                "TOPICSTREAMS_PROFILE_PATH",
                str(profile_path(sections.browser.profile_dir, sections.node.id, engine)),
                priority="addon",
            )
            # The engine's floor: the pacing middleware keeps it; with it off, Scrapy's own delay does.
            floor = sections.scraper.pacing.floor(engine)
            settings.set("TOPICSTREAMS_MIN_INTERVAL", floor, priority="addon")
            paced = settings.getbool("TOPICSTREAMS_PACING_ENABLED")
            settings.set("DOWNLOAD_DELAY", 0 if paced else floor, priority="addon")
            # The routes the engine takes (each its own context, persona and pacing lane), with the run's proxy in
            # the default route of a configuration without ``routes``.
            every_route = configured_routes(sections, run_proxy(self.crawler, config))
            settings.set("TOPICSTREAMS_ROUTES", list(engine_routes(every_route, engine)), priority="addon")
            # Once per process, as its first engine starts: a persona whose time zone contradicts its geolocation.
            Runtime.of(self.crawler).shared(PERSONA_CHECK, lambda: warn_persona_contradictions(every_route))
