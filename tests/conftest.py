"""The suite's hooks and fixtures. The shared helpers are in tests/support; its fixtures are registered here once, as
plugins (test modules never import a fixture)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.support.project import ScrapyRunner
from tests.support.soak_run import MODULE as SOAK_MODULE
from tests.support.soak_run import BackgroundSoak

pytest_plugins = ["tests.support.databases", "tests.support.alert_receivers"]


@pytest.fixture
def scrapy_cmd(tmp_path: Path) -> ScrapyRunner:
    return ScrapyRunner(tmp_path)


# ==== pytest-playwright: the project's Chromium ==============================================================
# The web app's browser tests (tests/system/test_web_browser.py) run in the Chromium the crawler uses
# (topicstreams.browser.chromium.find_executable), launched as the crawler launches it; as root there is no sandbox.


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args: dict) -> dict:
    from topicstreams.browser.chromium import find_executable

    args = {
        **browser_type_launch_args,
        "args": [
            "--no-sandbox",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-quic",
            "--no-first-run",
            "--disable-dev-shm-usage",
        ],
    }
    executable = find_executable()
    if executable:
        args["executable_path"] = executable
    return args


PLAYWRIGHT_FIXTURES = {"playwright", "browser_type", "browser", "context", "page"}


SOAK = pytest.StashKey["BackgroundSoak"]()


def in_xdist_worker() -> bool:
    """Whether this process is one of pytest-xdist's workers (``make test`` runs the suite on four)."""
    return bool(os.environ.get("PYTEST_XDIST_WORKER"))


def pytest_collection_finish(session: pytest.Session) -> None:
    """In a serial session the short soak starts as soon as it is collected, and runs beside the other tests
    (tests/support/soak_run.py). Every xdist worker collects every test, so there the soak starts with its own test,
    which is the first to run (see pytest_collection_modifyitems), on whichever worker is given it."""
    from topicstreams.browser.chromium import find_executable

    if session.config.option.collectonly or in_xdist_worker():
        return
    if any(item.nodeid.startswith(SOAK_MODULE) for item in session.items) and find_executable():
        session.config.stash[SOAK] = BackgroundSoak()


def pytest_sessionfinish(session: pytest.Session) -> None:
    soak = session.config.stash.get(SOAK, None)
    if soak is not None:
        soak.close()


@pytest.fixture(scope="session")
def background_soak(pytestconfig: pytest.Config):
    """The session's short soak (started at collection in a serial session, here on an xdist worker), or a skip when
    there is no Chromium to run it."""
    from topicstreams.browser.chromium import find_executable

    soak = pytestconfig.stash.get(SOAK, None)
    if soak is None and in_xdist_worker() and find_executable():
        soak = pytestconfig.stash[SOAK] = BackgroundSoak()
    if soak is None:
        pytest.skip("no Chromium on this machine")
    return soak


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The browser tests last; the short soak's test after them in a serial session, first on xdist's workers.

    The browser tests: pytest-playwright's sync API keeps an asyncio loop running in the main thread from its first
    test to the end of the session (its Playwright is session-scoped), and every later test that runs an event loop
    of its own (asyncio.run, a Scrapy crawler) would fail with "cannot be called from a running event loop"."""
    in_browser = [item for item in items if PLAYWRIGHT_FIXTURES & set(getattr(item, "fixturenames", ()))]
    if in_browser:
        items[:] = [item for item in items if item not in in_browser] + in_browser
    # The short soak's test reads a crawl that runs beside the others. Serial, the crawl started at collection: last,
    # the test finds it long ended instead of holding the session until it ends (it runs no event loop of its own,
    # so it may follow the browser tests). On xdist's workers the test starts the crawl itself: first, its worker
    # waits for it while the other workers go through the rest.
    soak = [item for item in items if item.nodeid.startswith(SOAK_MODULE)]
    if soak:
        rest = [item for item in items if item not in soak]
        items[:] = soak + rest if in_xdist_worker() else rest + soak


# ==== end of the pytest-playwright fixtures ==================================================================
