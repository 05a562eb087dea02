"""The suite's hooks and fixtures. The shared helpers are in tests/support; its fixtures are registered here once, as
plugins (test modules never import a fixture)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.support.log_run import MODULE as LOG_RUN_MODULE
from tests.support.log_run import WORKER_INPUT as LOG_RUN_INPUT
from tests.support.log_run import BackgroundLogRun, LogRunResult, selects_log_run
from tests.support.project import ScrapyRunner
from tests.support.soak_run import MODULE as SOAK_MODULE
from tests.support.soak_run import WORKER_INPUT, BackgroundSoak, SoakResult, selects_soak

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
LOG_RUN = pytest.StashKey["BackgroundLogRun"]()


def in_xdist_worker() -> bool:
    """Whether this process is one of pytest-xdist's workers (``make test`` runs the suite on four)."""
    return bool(os.environ.get("PYTEST_XDIST_WORKER"))


def pytest_collection_finish(session: pytest.Session) -> None:
    """In a serial session the short soak starts as soon as it is collected, and runs beside the other tests
    (tests/support/soak_run.py). Under xdist the controller starts it (pytest_configure_node); workers never do here."""
    from topicstreams.browser.chromium import find_executable

    if session.config.option.collectonly or in_xdist_worker():
        return
    if any(item.nodeid.startswith(SOAK_MODULE) for item in session.items) and find_executable():
        session.config.stash[SOAK] = BackgroundSoak()
    if any(item.nodeid.startswith(LOG_RUN_MODULE) for item in session.items) and find_executable():
        session.config.stash[LOG_RUN] = BackgroundLogRun()  # two minutes of make run offline (log_run.py)


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node) -> None:
    """pytest-xdist's controller, setting up a worker: the short soak starts with the first worker (when the session's
    paths hold its module and no -k/-m may leave it out), and every worker learns its folder."""
    from topicstreams.browser.chromium import find_executable

    config = node.config
    soak = config.stash.get(SOAK, None)
    whole = not (config.option.collectonly or config.option.keyword or config.option.markexpr)
    if soak is None and whole and selects_soak(list(config.args), config.invocation_params.dir) and find_executable():
        soak = config.stash[SOAK] = BackgroundSoak()
    if soak is not None:
        node.workerinput[WORKER_INPUT] = str(soak.folder)
    log_run = config.stash.get(LOG_RUN, None)
    wanted = whole and selects_log_run(list(config.args), config.invocation_params.dir)
    if log_run is None and wanted and find_executable():
        log_run = config.stash[LOG_RUN] = BackgroundLogRun()
    if log_run is not None:
        node.workerinput[LOG_RUN_INPUT] = str(log_run.folder)


def pytest_sessionfinish(session: pytest.Session) -> None:
    for key in (SOAK, LOG_RUN):
        background = session.config.stash.get(key, None)
        if background is not None:
            background.close()


@pytest.fixture(scope="session")
def background_soak(pytestconfig: pytest.Config):
    """What the session's short soak left (started at collection in a serial session, by xdist's controller as it set
    up the workers, or here on a worker whose controller did not), or a skip when there is no Chromium to run it."""
    from topicstreams.browser.chromium import find_executable

    soak = pytestconfig.stash.get(SOAK, None)
    if soak is not None:
        return soak
    folder = getattr(pytestconfig, "workerinput", {}).get(WORKER_INPUT)
    if folder:
        return SoakResult(folder)
    if in_xdist_worker() and find_executable():
        soak = pytestconfig.stash[SOAK] = BackgroundSoak()
        return soak
    pytest.skip("no Chromium on this machine")


@pytest.fixture(scope="session")
def background_log_run(pytestconfig: pytest.Config):
    """What the session's two minutes of ``make run`` offline printed (tests/support/log_run.py), started as the short
    soak is (see background_soak), or a skip when there is no Chromium to run it."""
    from topicstreams.browser.chromium import find_executable

    log_run = pytestconfig.stash.get(LOG_RUN, None)
    if log_run is not None:
        return log_run
    folder = getattr(pytestconfig, "workerinput", {}).get(LOG_RUN_INPUT)
    if folder:
        return LogRunResult(folder)
    if in_xdist_worker() and find_executable():
        log_run = pytestconfig.stash[LOG_RUN] = BackgroundLogRun()
        return log_run
    pytest.skip("no Chromium on this machine")


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The browser tests last, and the short soak's test after them.

    The browser tests: pytest-playwright's sync API keeps an asyncio loop running in the main thread from its first
    test to the end of the session (its Playwright is session-scoped), and every later test that runs an event loop
    of its own (asyncio.run, a Scrapy crawler) would fail with "cannot be called from a running event loop"."""
    in_browser = [item for item in items if PLAYWRIGHT_FIXTURES & set(getattr(item, "fixturenames", ()))]
    if in_browser:
        items[:] = [item for item in items if item not in in_browser] + in_browser
    # The short soak's test reads a crawl that started with the session (tests/support/soak_run.py) and runs beside
    # the others: last, it finds it long ended instead of holding its worker until it ends (it runs no event loop of
    # its own, so it may follow the browser tests).
    # The same for the two minutes of make run offline (tests/support/log_run.py), which take the longest: very last.
    for module in (SOAK_MODULE, LOG_RUN_MODULE):
        late = [item for item in items if item.nodeid.startswith(module)]
        if late:
            items[:] = [item for item in items if item not in late] + late


# ==== end of the pytest-playwright fixtures ==================================================================
