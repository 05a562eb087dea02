"""The process's runtime: what the crawlers of one process share, in one object instead of module-level registries.

``scrapy crawlall`` runs the four engine crawlers in one process; they must share one outbox and one outage state
per database (:mod:`topicstreams.storage.outbox`, :mod:`topicstreams.storage.availability`), one schema upgrade,
one alert notifier and its delivery thread (:mod:`topicstreams.alerts.delivery`), one network watch and one
saturation watch per node, one membership row per node and process. A :class:`Runtime` holds them, each made on
first use; every component reaches it from its crawler (:meth:`Runtime.of`).

How the crawlers of a process get the same one: the command that builds the CrawlerProcess
(:class:`~topicstreams.cli.configured.ConfiguredCommand`) puts one in its settings (:meth:`Runtime.install`:
``TOPICSTREAMS_RUNTIME``, and its browsers' provider as ``PLAYWRIGHT_BROWSER_PROVIDER``); Scrapy deep-copies the
settings for each crawler, and a Runtime's copy is itself. A crawler made some other way (Scrapyd's
``scrapy crawl`` through another entry point, a test's ``get_crawler``) without one gets a fresh Runtime of its own.

Components above this layer (extensions, middlewares) keep their shared objects through :meth:`Runtime.shared`,
under a key of their own. When the last crawler that took the runtime has stopped, the runtime closes its notifiers
and disposes of the database handles it opened; the components' own closing (the outbox's flush, the delivery's,
the membership's stop row) happens before, in their ``spider_closed`` handlers, as it always did.
"""

from __future__ import annotations

import logging
import threading
import weakref
from collections.abc import Callable, Hashable, Mapping
from typing import Any, TypeVar

from scrapy import signals
from scrapy.settings import BaseSettings
from scrapy.utils.misc import load_object
from sqlalchemy import Engine

from topicstreams.alerts.delivery import Notifier
from topicstreams.alerts.network import NetworkWatch
from topicstreams.browser.provider import SharedBrowserProvider, SharedBrowsers
from topicstreams.config.route_table import DIRECT
from topicstreams.crawl.engine_state import (
    CooldownPolicy,
    EngineState,
    cooldown_policy,
    crawl_routes,
    engine_state_from,
)
from topicstreams.crawl.route_standing import RouteStanding
from topicstreams.storage.availability import Availability
from topicstreams.storage.db import Databases
from topicstreams.storage.migrate import upgrade
from topicstreams.storage.outbox import Outbox

logger = logging.getLogger(__name__)

RUNTIME_SETTING = "TOPICSTREAMS_RUNTIME"
"""The setting that carries the process's runtime to its crawlers (set by the command, never by a user)."""

CRAWLER_ATTRIBUTE = "topicstreams_runtime"
"""Where a crawler made without the setting keeps the runtime it was given."""

T = TypeVar("T")


class Runtime:
    """What the crawlers of one process share (see the module docstring). Thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self.databases = Databases()
        """The process's database handles (one pool per URL)."""
        self.browsers = SharedBrowsers()
        """The process's browser drivers and browsers (:mod:`topicstreams.browser.provider`)."""
        self._availability: dict[str, Availability] = {}
        self._outboxes: dict[str, Outbox] = {}
        self._upgraded: set[str] = set()
        self._notifiers: dict[str, Notifier] = {}
        self._network: dict[tuple[str, str], NetworkWatch] = {}
        self._routes: dict[str, RouteStanding] = {}
        self._shared: dict[Hashable, Any] = {}
        self._states: weakref.WeakKeyDictionary[Any, EngineState] = weakref.WeakKeyDictionary()
        self._crawlers: set[int] = set()

    def __copy__(self) -> Runtime:
        return self

    def __deepcopy__(self, memo: dict) -> Runtime:
        """Scrapy deep-copies the settings for each crawler: they all keep this one runtime."""
        return self

    def __repr__(self) -> str:
        return f"<Runtime {id(self):#x}>"

    # ---- reaching it ------------------------------------------------------------------------------------------
    def install(self, settings: BaseSettings) -> None:
        """Put this runtime in ``settings`` (a command's, before it makes its crawlers): ``TOPICSTREAMS_RUNTIME``,
        and, when the settings name the project's shared browser provider, this runtime's browsers' provider."""
        settings.set(RUNTIME_SETTING, self, priority="cmdline")
        provider = settings.get("PLAYWRIGHT_BROWSER_PROVIDER")
        if provider and load_object(provider) is SharedBrowserProvider:
            priority = settings.getpriority("PLAYWRIGHT_BROWSER_PROVIDER")
            settings.set("PLAYWRIGHT_BROWSER_PROVIDER", self.browsers.provider, priority=priority)

    @classmethod
    def of(cls, crawler: Any) -> Runtime:
        """The runtime of ``crawler``: its settings', or else one of its own, made at the first ask."""
        runtime = crawler.settings.get(RUNTIME_SETTING)
        if runtime is None:
            runtime = getattr(crawler, CRAWLER_ATTRIBUTE, None)
            if runtime is None:
                runtime = cls()
                setattr(crawler, CRAWLER_ATTRIBUTE, runtime)
        runtime.attach(crawler)
        return runtime

    def attach(self, crawler: Any) -> None:
        """Count ``crawler`` among the users (once): the runtime closes when the last has stopped."""
        with self._lock:
            if id(crawler) in self._crawlers:
                return
            self._crawlers.add(id(crawler))
        signal_manager = getattr(crawler, "signals", None)
        if signal_manager is not None:
            key = id(crawler)

            def stopped() -> None:
                self.detach(key)

            # Kept alive by the crawler: the signal manager holds its receivers weakly.
            crawler.topicstreams_runtime_stopped = stopped
            signal_manager.connect(stopped, signal=signals.engine_stopped)

    def detach(self, key: int) -> None:
        with self._lock:
            self._crawlers.discard(key)
            last = not self._crawlers
        if last:
            self.close()

    def close(self) -> None:
        """Take the notifiers' log filters off Apprise's loggers and dispose of the database handles (their pooled
        connections); a later use puts them back, opens them again."""
        with self._lock:
            notifiers = list(self._notifiers.values())
        for notifier in notifiers:
            notifier.close()
        self.databases.dispose()

    # ---- what it holds ----------------------------------------------------------------------------------------
    def database(self, url: str) -> Engine:
        """The process's handle of the database at ``url``."""
        return self.databases.of(url)

    def availability(self, url: str) -> Availability:
        """The process's outage state of the database at ``url``."""
        with self._lock:
            found = self._availability.get(url)
            if found is None:
                found = self._availability[url] = Availability(url)
            return found

    def outbox(self, url: str) -> Outbox:
        """The process's outbox of the database at ``url`` (its small writes, in order, off the event loop)."""
        with self._lock:
            found = self._outboxes.get(url)
            if found is None:
                found = self._outboxes[url] = Outbox(url, self.availability(url), database=self.database)
            return found

    def upgrade_once(self, url: str) -> None:
        """Bring the database at ``url`` to the latest revision, unless this process already did."""
        with self._lock:
            if url not in self._upgraded:
                upgrade(url, self.database(url))
                self._upgraded.add(url)

    def notifier(self, url: str, alerting: Mapping[str, Any], node: str, **options: Any) -> Notifier:
        """The process's notifier of the database at ``url``, made on first use (``options``: its ``attempts``,
        ``delays``, ``timeout``); later calls hand it the configuration they have."""
        with self._lock:
            found = self._notifiers.get(url)
            if found is None:
                found = self._notifiers[url] = Notifier(url, alerting, node, database=self.database, **options)
            else:
                found.configure(alerting, node)
            return found

    def network_watch(self, url: str, node: str) -> NetworkWatch:
        """The process's watch of ``node``'s network (the engine crawlers share its event loop)."""
        with self._lock:
            found = self._network.get((url, node))
            if found is None:
                found = self._network[(url, node)] = NetworkWatch(node)
            return found

    def engine_state(self, crawler: Any) -> EngineState:
        """The state of the engine ``crawler`` runs, made from its settings once; its lanes on proxied routes share
        the process's standing of each route (:meth:`route_standing`)."""
        with self._lock:
            found = self._states.get(crawler)
            if found is None:
                routes = {route.name: route for route in crawl_routes(crawler.settings)}
                cooldown = cooldown_policy(crawler.settings)

                def standing_of(name: str) -> RouteStanding | None:
                    route = routes.get(name)
                    if route is None or route.proxy == DIRECT:
                        return None
                    return self.route_standing(name, cooldown)

                found = self._states[crawler] = engine_state_from(crawler, standing_of)
            return found

    def route_standing(self, route: str, cooldown: CooldownPolicy) -> RouteStanding:
        """The process's standing of the proxied route ``route`` (every engine crawler's lanes on it share it)."""
        with self._lock:
            found = self._routes.get(route)
            if found is None:
                found = self._routes[route] = RouteStanding(route, cooldown)
            return found

    def shared(self, key: Hashable, make: Callable[[], T], keep: Callable[[T], bool] | None = None) -> T:
        """The object kept under ``key``, made by ``make()`` the first time (or again when ``keep(found)`` says the
        one kept no longer fits): how components above this layer share one object per process."""
        with self._lock:
            found = self._shared.get(key)
            if found is None or (keep is not None and not keep(found)):
                found = self._shared[key] = make()
            return found

    def forget(self, key: Hashable) -> None:
        """Drop what is kept under ``key`` (its last user closed it)."""
        with self._lock:
            self._shared.pop(key, None)
