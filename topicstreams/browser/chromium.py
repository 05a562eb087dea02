"""The browser: which Chromium to run, its launch options and each engine's context options, what a page may load.

``python -m topicstreams.browser.chromium ensure`` (run by ``make setup``) makes sure a browser is there, in this
order: ``browser.executable_path`` from the config; a Chromium headless shell already on the machine;
Debian's ``chromium-headless-shell`` through apt-get when running as root; Playwright's own download.
"""

from __future__ import annotations

import fcntl
import os
import random
import shutil
import subprocess
import sys
from pathlib import Path
from typing import IO, Any
from urllib.parse import urlsplit

from topicstreams.config.route_table import DIRECT, default_route
from topicstreams.config.sections import AntiDetectionSection, BrowserSection, RouteSection

KNOWN_EXECUTABLES = (
    "/usr/lib/chromium/chromium-headless-shell",
    "/usr/bin/chromium-headless-shell",
    "/usr/lib/chromium/chromium",
    "/usr/bin/chromium",
    "/usr/bin/chromium-browser",
    "/usr/bin/google-chrome",
)
"""Chromium builds looked for on the machine, headless shells (about twice as light) first."""

HEADLESS_INPUT_SETTINGS = "primaryHoverType=2,availableHoverTypes=2,primaryPointerType=4,availablePointerTypes=4"
"""The Blink settings Playwright gives a headless Chromium: a mouse that hovers, as on a desktop."""

CHROMIUM_ARGS = (
    # A crawler's browser talks to the engine and nothing else: no background fetches, updates, sync or QUIC.
    # (The headless shell has none of the first four switches; a full Chromium, see KNOWN_EXECUTABLES, does.)
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-quic",
    "--no-first-run",
    # What the parser never needs is not even asked for: Blink neither loads images nor web fonts (cheaper than
    # aborting each request in the route handler, which still costs a round trip through the driver; measured:
    # without them a browser of four engines takes 50 and 5-14 MiB more, and images cost a fifth of the speed).
    # Chromium keeps only the last --blink-settings, so Playwright's own headless ones are repeated here: without
    # them pages would see no hover and no fine pointer, unlike any desktop browser.
    f"--blink-settings={HEADLESS_INPUT_SETTINGS},imagesEnabled=false",
    "--disable-remote-fonts",
)
"""The project's Chromium switches, on top of Playwright's own (which already disable extensions, the back-forward
cache, /dev/shm, renderer backgrounding and audio). Each memory flag tried and left out is in README "Browser"."""

DRIVER_NODE_OPTIONS = "--max-semi-space-size=1"
"""Node's options for the Playwright driver (``NODE_OPTIONS`` when it starts, unless set already): a young generation
of 1 MiB keeps the driver's memory about 26 MiB lower (measured: 127 -> 101 MiB), at no cost in speed that showed."""

ABORTED_RESOURCE_TYPES = frozenset({"image", "font", "media", "imageset", "texttrack", "object"})
"""Resource types the parser never needs."""


class BrowserNotFound(RuntimeError):
    pass


class ProfileInUse(RuntimeError):
    """Another process is crawling the same engine with the same profile."""


def find_executable(configured: str = "") -> str | None:
    """The Chromium to launch: the configured path, else a known one on the machine, else None.

    None means "Playwright's own download", which Playwright finds by itself.
    """
    if configured:
        path = Path(configured).expanduser()
        if not (path.is_file() and os.access(path, os.X_OK)):
            raise BrowserNotFound(f"browser.executable_path {configured!r} is not an executable file")
        return str(path)
    for candidate in KNOWN_EXECUTABLES:
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    return None


def _playwright_chromium_installed() -> bool:
    try:
        from playwright.sync_api import sync_playwright

        with sync_playwright() as p:
            return Path(p.chromium.executable_path).exists()
    except Exception:
        return False


def ensure_browser(configured: str = "", out: IO[str] = sys.stdout) -> str:
    """Find or install a browser; return a description of the one that will be used."""
    found = find_executable(configured)
    if found:
        print(f"browser: {found}", file=out)
        return found
    if os.geteuid() == 0 and shutil.which("apt-get"):
        print("browser: installing Debian's chromium-headless-shell", file=out)
        env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
        install = ["apt-get", "install", "-y", "-q", "chromium-headless-shell"]
        if subprocess.run(install, env=env, check=False).returncode != 0:
            subprocess.run(["apt-get", "update", "-q"], env=env, check=False)
            subprocess.run(install, env=env, check=False)
        found = find_executable()
        if found:
            print(f"browser: {found}", file=out)
            return found
    if _playwright_chromium_installed():
        print("browser: Playwright's own Chromium", file=out)
        return "playwright"
    print("browser: trying Playwright's own download", file=out)
    result = subprocess.run([sys.executable, "-m", "playwright", "install", "chromium-headless-shell"], check=False)
    if result.returncode == 0 and _playwright_chromium_installed():
        return "playwright"
    raise BrowserNotFound("no Chromium found or installable: set browser.executable_path in the config")


def playwright_proxy(url: str) -> dict[str, str]:
    """A proxy URL as Playwright's ``proxy`` option (credentials apart, never in the server string)."""
    parts = urlsplit(url)
    server = f"{parts.scheme}://{parts.hostname}" + (f":{parts.port}" if parts.port else "")
    proxy = {"server": server}
    if parts.username:
        proxy["username"] = parts.username
        proxy["password"] = parts.password or ""
    return proxy


def launch_options(browser: BrowserSection) -> dict[str, Any]:
    """Options of the process's one Chromium (``PLAYWRIGHT_LAUNCH_OPTIONS``), from the configuration's ``browser``.

    ``handle_sigint`` is off: a Ctrl-C at the terminal reaches the whole process group, the Playwright driver too,
    which would otherwise kill the browser under every engine while Scrapy is stopping them gracefully; the crawl
    closes its browser itself (each engine's state saved first).
    """
    options: dict[str, Any] = {"headless": browser.headless, "args": list(CHROMIUM_ARGS), "handle_sigint": False}
    executable = find_executable(browser.executable_path)
    if executable:
        options["executable_path"] = executable
    return options


def context_options(anti: AntiDetectionSection, proxy: str | None = None) -> dict[str, Any]:
    """Options of every engine's browser context without ``routes``, from the configuration's ``anti_detection``
    (its saved state apart): those of the default route. ``proxy``: the run's endpoint among its proxies, chosen
    once by the run's owner so that every engine of a run shares one exit (None: one drawn now)."""
    if anti.proxy.enabled and proxy is None:
        proxy = random.choice(anti.proxy.proxies)
    return route_context_options(default_route(anti, proxy))


def route_context_options(route: RouteSection) -> dict[str, Any]:
    """Options of a browser context on ``route`` (its saved state apart): its proxy (credentials apart from the
    server, never in it) and its persona's values, those it leaves empty left to Chromium."""
    options: dict[str, Any] = {}
    if route.proxy != DIRECT:
        options["proxy"] = playwright_proxy(route.proxy)
    persona = route.persona
    if persona.user_agent:
        options["user_agent"] = persona.user_agent
    if persona.timezone_id:
        options["timezone_id"] = persona.timezone_id
    if persona.locale:
        options["locale"] = persona.locale
    if persona.geolocation:
        options["geolocation"] = {"latitude": persona.geolocation.latitude, "longitude": persona.geolocation.longitude}
        options["permissions"] = ["geolocation"]
    if persona.viewport:
        options["viewport"] = {"width": persona.viewport.width, "height": persona.viewport.height}
    return options


def profile_path(profile_dir: str, node_id: str, engine: str) -> Path:
    """One profile per node and engine: ``<profile_dir>/<node.id>/<engine>``."""
    return Path(profile_dir) / node_id / engine


STATE_FILE = "storage_state.json"
"""The file in an engine's profile folder that keeps its browser context's cookies and storage."""


def state_path(profile: Path) -> Path:
    """Where the engine whose profile folder is ``profile`` keeps its context's storage state."""
    return profile / STATE_FILE


class ProfileLock:
    """An exclusive lock on one profile folder, held for the life of the process that crawls with it."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._file: IO[str] | None = None

    def acquire(self) -> None:
        self.path.mkdir(parents=True, exist_ok=True)
        lock_file = open(self.path.parent / f".{self.path.name}.lock", "a+")  # noqa: SIM115
        try:
            fcntl.flock(lock_file, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            lock_file.seek(0)
            holder = lock_file.read().strip() or "another process"
            lock_file.close()
            raise ProfileInUse(
                f"the browser profile {self.path} is in use by {holder}: one process per engine and "
                "profile (stop the other crawl, or give this one another node.id or browser.profile_dir)"
            ) from None
        lock_file.seek(0)
        lock_file.truncate()
        lock_file.write(f"process {os.getpid()}\n")
        lock_file.flush()
        self._file = lock_file

    def release(self) -> None:
        if self._file is not None:
            fcntl.flock(self._file, fcntl.LOCK_UN)
            self._file.close()
            self._file = None


def should_abort_request(request: Any) -> bool:
    """scrapy-playwright's PLAYWRIGHT_ABORT_REQUEST: drop what the parser does not need.

    Images, fonts and media are never needed; neither is anything from another host than the page's own,
    except the navigation itself (which may be redirected to a consent or CAPTCHA host the classifier
    must see). A host that hangs instead of failing then never holds up a render.
    """
    if request.resource_type in ABORTED_RESOURCE_TYPES:
        return True
    if request.is_navigation_request():
        return False
    try:
        page_url = request.frame.page.url
    except Exception:
        return True
    page_host = urlsplit(page_url).hostname
    return bool(page_host) and urlsplit(request.url).hostname != page_host


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] != ["ensure"]:
        print("usage: python -m topicstreams.browser.chromium ensure", file=sys.stderr)
        return 2
    from topicstreams.config.errors import EX_CONFIG, ConfigError
    from topicstreams.config.loading import load_config

    try:
        configured = load_config().sections.browser.executable_path
    except ConfigError as exc:
        print(f"config error: {exc}", file=sys.stderr)
        return EX_CONFIG
    try:
        ensure_browser(configured)
    except BrowserNotFound as exc:
        print(f"browser: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
