"""One Chromium per process, shared by every engine crawler in it; one browser context per engine.

scrapy-playwright makes a download handler per crawler and URL scheme, and by default each one starts its own
Playwright driver and its own browser: a ``crawlall`` of four engines ran eight drivers and four Chromiums. With
``PLAYWRIGHT_BROWSER_PROVIDER`` set to :class:`SharedBrowserProvider` (the project's settings do; the command that
runs the crawlers hands them the process's :class:`SharedBrowsers`), every handler of the process gets the same ones,
through scrapy-playwright's own extension point for where browsers come from:

* **one driver**: the first handler to start starts the process's Playwright driver (with
  :data:`~topicstreams.browser.chromium.DRIVER_NODE_OPTIONS`); the last to close stops it;
* **one browser**: launched for the first page with ``PLAYWRIGHT_LAUNCH_OPTIONS``. Handlers see it through a
  :class:`BrowserView`, whose ``close()`` leaves the browser to the others. If Chromium dies, its ``disconnected``
  event reaches every handler, which drops its contexts; the next page of each engine asks for a browser again, and
  the first ask launches a new one, which the others then get;
* **one context per engine**, with its own cookies and storage (Chromium never puts two contexts' pages in one
  renderer process, so a renderer that crashes or hangs takes one engine's tab with it, not the others'). One browser
  has one user-data folder, so an engine's state lives in its context's *storage state*: a context asked for with
  ``storage_state`` set to a file path (``<profile>/storage_state.json``) starts from that file when it exists, and
  a :class:`StateKeeper` writes it back when its cookies change (looked at after each page, at most every
  :data:`SAVE_GAP` seconds) and when the context closes.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from playwright._impl._errors import TargetClosedError  # not re-exported; scrapy-playwright imports it from here too
from playwright.async_api import Browser, BrowserContext, Page, Playwright, async_playwright
from scrapy.exceptions import NotSupported

from topicstreams.browser.chromium import DRIVER_NODE_OPTIONS

logger = logging.getLogger(__name__)

SAVE_GAP = 5.0
"""Seconds between two looks at an engine's cookies while its tab navigates (each look is one call to the driver)."""


class _Shared:
    """The process's driver and browser for one browser type and set of launch options, and who uses them."""

    def __init__(
        self, browser_type: str, launch_options: dict[str, Any], forget: Callable[[], None] = lambda: None
    ) -> None:
        self.browser_type = browser_type
        self.launch_options = launch_options
        self.forget = forget
        """Called when the last user has closed it: its registry lets it go."""
        self.users = 0
        self.manager: Any = None
        self.playwright: Playwright | None = None
        self.browser: Browser | None = None
        self.launches = 0
        self.lock = asyncio.Lock()

    async def acquire(self) -> None:
        async with self.lock:
            self.users += 1
            if self.playwright is None:
                self.manager = async_playwright()
                with driver_environment():
                    self.playwright = await self.manager.start()

    async def connected_browser(self) -> Browser:
        """The shared browser, launched first if there is none (or the last one died)."""
        async with self.lock:
            if self.playwright is None:
                raise RuntimeError("the shared Playwright driver is not started")
            if self.browser is None or not self.browser.is_connected():
                browser_type = getattr(self.playwright, self.browser_type)
                started = time.monotonic()
                self.browser = await browser_type.launch(**self.launch_options)
                self.launches += 1
                self.browser.on("disconnected", self._disconnected)
                self.browser.on("error", listener_failed)
                logger.info(
                    "%s %s launched in %.1f s, shared by every engine of this process%s",
                    self.browser_type.capitalize(),
                    self.browser.version,
                    time.monotonic() - started,
                    "" if self.launches == 1 else f" (launch {self.launches}: the previous one died)",
                )
            return self.browser

    def _disconnected(self, browser: Browser) -> None:
        if browser is self.browser:
            self.browser = None
            if self.users:
                logger.warning(
                    "the shared %s went away (it crashed or was killed): every engine's tab and context "
                    "went with it; a new browser starts for the next page",
                    self.browser_type,
                )

    async def release(self) -> None:
        async with self.lock:
            self.users -= 1
            if self.users > 0:
                return
            browser, self.browser = self.browser, None
            manager, self.manager, self.playwright = self.manager, None, None
        if browser is not None and browser.is_connected():
            await browser.close()
        if manager is not None:
            await manager.__aexit__(None, None, None)
        self.forget()


@contextmanager
def driver_environment() -> Iterator[None]:
    """The environment the Playwright driver starts in: :data:`~topicstreams.browser.chromium.DRIVER_NODE_OPTIONS` as
    ``NODE_OPTIONS`` unless the user has set some (the driver is a Node program started with this process's
    environment); this process's own environment is left as it was."""
    if "NODE_OPTIONS" in os.environ:
        yield
        return
    os.environ["NODE_OPTIONS"] = DRIVER_NODE_OPTIONS
    try:
        yield
    finally:
        os.environ.pop("NODE_OPTIONS", None)


def _key(browser_type: str, launch_options: dict[str, Any]) -> str:
    return json.dumps([browser_type, launch_options], sort_keys=True, default=str)


class SharedBrowsers:
    """The process's drivers and browsers, one per browser type and set of launch options, made at the first ask
    and let go when their last user closes. The process's runtime keeps one
    (:class:`~topicstreams.crawl.runtime.Runtime`) and hands its :meth:`provider` to every crawler as
    ``PLAYWRIGHT_BROWSER_PROVIDER``; a copy of it (Scrapy copies the settings per crawler) is itself."""

    def __init__(self) -> None:
        self.shared: dict[str, _Shared] = {}

    def __copy__(self) -> SharedBrowsers:
        return self

    def __deepcopy__(self, memo: dict) -> SharedBrowsers:
        return self

    def of(self, browser_type: str, launch_options: dict[str, Any]) -> _Shared:
        """The shared driver and browser for these options (the handlers share the event loop: no lock needed)."""
        key = _key(browser_type, launch_options)
        if key not in self.shared:
            self.shared[key] = _Shared(browser_type, dict(launch_options), lambda: self.shared.pop(key, None))
        return self.shared[key]

    def provider(self, config: Any) -> SharedBrowserProvider:
        """scrapy-playwright's ``PLAYWRIGHT_BROWSER_PROVIDER``, called with the handler's config: a provider of
        these browsers."""
        return SharedBrowserProvider(config, self)


class SharedBrowserProvider:
    """scrapy-playwright's ``PLAYWRIGHT_BROWSER_PROVIDER``: the process's one driver and browser, for every handler.

    A remote browser (``PLAYWRIGHT_CDP_URL``, ``PLAYWRIGHT_CONNECT_URL``) and a persistent context (``user_data_dir``)
    are not supported: the first is one browser per handler by nature, the second one browser per context.
    """

    def __init__(self, config: Any, browsers: SharedBrowsers | None = None) -> None:
        if config.cdp_url or config.connect_url:
            raise NotSupported(
                "topicstreams' shared browser launches its own Chromium: unset PLAYWRIGHT_CDP_URL and "
                "PLAYWRIGHT_CONNECT_URL, or set PLAYWRIGHT_BROWSER_PROVIDER to scrapy-playwright's own"
            )
        # Without the process's browsers (a crawler made without the runtime's provider), its own.
        self.shared = (browsers or SharedBrowsers()).of(config.browser_type_name, config.launch_options)
        self.started = False

    async def start(self) -> None:
        await self.shared.acquire()
        self.started = True

    async def launch_browser(self) -> BrowserView:
        return BrowserView(await self.shared.connected_browser())

    async def launch_persistent_context(self, context_kwargs: dict) -> BrowserContext:
        raise NotSupported(
            "the shared browser has one user-data folder: an engine keeps its state as a storage "
            "state file (storage_state=PATH in playwright_context_kwargs), not a user_data_dir"
        )

    async def close(self) -> None:
        if self.started:
            self.started = False
            await self.shared.release()


class BrowserView:
    """The shared browser as one handler sees it: its contexts are its own, and closing it leaves it to the others."""

    def __init__(self, browser: Browser) -> None:
        self.browser = browser

    def __getattr__(self, name: str) -> Any:
        return getattr(self.browser, name)

    def on(self, event: str, callback: Any) -> None:
        self.browser.on(event, callback)

    def is_connected(self) -> bool:
        return self.browser.is_connected()

    async def new_context(self, **kwargs: Any) -> BrowserContext | EngineContext:
        """A context of the shared browser; ``storage_state`` given as a path is loaded when the file exists, and
        kept (:class:`StateKeeper`)."""
        state = kwargs.get("storage_state")
        if not isinstance(state, (str, os.PathLike)):
            return guard_listeners(await self.browser.new_context(**kwargs))
        path = Path(state)
        saved = read_state(path)
        kwargs["storage_state"] = saved
        context = guard_listeners(await self.browser.new_context(**kwargs))
        return EngineContext(context, StateKeeper(context, path, saved))

    async def close(self) -> None:
        """Nothing: the browser is the process's, closed when the last handler closes its provider."""


def guard_listeners(context: BrowserContext) -> BrowserContext:
    """``context``, its pages to come and the browser itself (see :meth:`_Shared.connected_browser`) log the errors of
    their asynchronous event listeners here (:func:`listener_failed`).

    Left to Playwright, such an error is kept on the connection to the driver, and raised by the next call to the
    driver, whatever object makes it. The process has one connection, shared by every engine. Suppose
    scrapy-playwright's response listener is still waiting for the headers of a page that has just closed. One
    engine's renewed tab would then fail another engine's next page. An ``error`` listener takes the error instead.
    """
    context.on("error", listener_failed)
    context.on("page", lambda page: page.on("error", listener_failed))
    return context


def listener_failed(error: BaseException) -> None:
    """An asynchronous event listener of the browser, a context or a page raised ``error``."""
    if isinstance(error, TargetClosedError):
        # The page, context or browser closed under a listener still at work: a renewed tab, a dead browser.
        logger.debug("an event listener outlived its page: %s", error)
    else:
        logger.warning(
            "an event listener of the browser failed (%s: %s); the crawl goes on", type(error).__name__, error
        )


def read_state(path: Path) -> dict | None:
    """The storage state saved at ``path``; None when there is none yet, or it cannot be read (with a WARNING)."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except OSError as exc:
        logger.warning("cannot read the browser state %s (%s): this engine starts with no cookies", path, exc)
        return None
    try:
        state = json.loads(text)
    except ValueError as exc:
        logger.warning("the browser state %s is not valid JSON (%s): this engine starts with no cookies", path, exc)
        return None
    if not (
        isinstance(state, dict)
        and isinstance(state.get("cookies", []), list)
        and isinstance(state.get("origins", []), list)
    ):
        logger.warning(
            "the browser state %s is not a storage state (cookies and origins): this engine starts with no cookies",
            path,
        )
        return None
    return {"cookies": state.get("cookies", []), "origins": state.get("origins", [])}


def _cookie_keys(cookies: list[dict]) -> frozenset:
    """What makes two cookie jars different for keeping: each cookie's name, domain, path and value (an expiry that
    moves on each response does not count)."""
    return frozenset((c.get("name"), c.get("domain"), c.get("path"), c.get("value")) for c in cookies)


class StateKeeper:
    """Keeps an engine context's storage state in its file: written when its cookies change and when it closes.

    After each page of the context (``domcontentloaded``) it looks at the cookies, at most every :data:`SAVE_GAP`
    seconds; a change writes the whole storage state (cookies and each origin's local storage). The file is written
    whole and then renamed over the old one, readable by its owner only (cookies are credentials).
    """

    def __init__(self, context: BrowserContext, path: Path, saved: dict | None) -> None:
        self.context = context
        self.path = path
        self.known = _cookie_keys(saved["cookies"]) if saved else frozenset()
        self.saved_text = _text(saved) if saved else None
        self.pending: asyncio.TimerHandle | None = None
        self.task: asyncio.Task | None = None
        self.closed = False
        self.saves = 0
        context.on("page", self._watch)
        context.on("close", self._closed)

    def _watch(self, page: Page) -> None:
        page.on("domcontentloaded", lambda _page: self.changed())

    def _closed(self, _context: Any = None) -> None:
        self.closed = True
        if self.pending is not None:
            self.pending.cancel()

    def changed(self) -> None:
        """A page loaded: look at the cookies within :data:`SAVE_GAP` seconds (one look for many pages)."""
        if self.closed or self.pending is not None:
            return
        self.pending = asyncio.get_running_loop().call_later(SAVE_GAP, self._look)

    def _look(self) -> None:
        self.pending = None
        if not self.closed and (self.task is None or self.task.done()):
            self.task = asyncio.ensure_future(self.save_if_changed())
            self.task.add_done_callback(_quiet)

    async def save_if_changed(self) -> bool:
        """Write the state when the cookies differ from those last saved; whether it wrote."""
        cookies = await self.context.cookies()
        if _cookie_keys(cookies) == self.known:
            return False
        return await self.save()

    async def save(self) -> bool:
        """Write the context's whole storage state (when it differs from the file's); whether it wrote."""
        state = await self.context.storage_state()
        text = _text(state)
        self.known = _cookie_keys(state["cookies"])
        if text == self.saved_text:
            return False
        write_private(self.path, text)
        self.saved_text = text
        self.saves += 1
        return True

    async def close(self) -> None:
        """The last save, before the context closes (a context already gone keeps the last file)."""
        if self.pending is not None:
            self.pending.cancel()
            self.pending = None
        if self.task is not None and not self.task.done():
            await asyncio.gather(self.task, return_exceptions=True)
        try:
            await self.save()
        except Exception as exc:
            logger.debug("could not save the browser state %s at close: %s", self.path, exc)
        self.closed = True


def _text(state: dict) -> str:
    return json.dumps(
        {"cookies": state.get("cookies", []), "origins": state.get("origins", [])}, sort_keys=True, indent=1
    )


def write_private(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` whole (a temporary file renamed over it), readable and writable by the owner only."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "w", encoding="utf-8") as out:
        out.write(text)
    os.replace(temporary, path)


def _quiet(task: asyncio.Task) -> None:
    if not task.cancelled() and task.exception() is not None:
        logger.debug("could not save a browser state: %s", task.exception())


class EngineContext:
    """An engine's browser context, whose ``close()`` saves its state first; everything else is the context's."""

    def __init__(self, context: BrowserContext, keeper: StateKeeper) -> None:
        self.context = context
        self.keeper = keeper

    def __getattr__(self, name: str) -> Any:
        return getattr(self.context, name)

    async def close(self, **kwargs: Any) -> None:
        await self.keeper.close()
        await self.context.close(**kwargs)
