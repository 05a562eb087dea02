"""The process's one browser, in real Chromium: every provider gets the same browser and driver, a handler closing
its view leaves it to the others, a browser that dies is launched again for the next ask, and an engine's context
keeps its cookies in its storage-state file across contexts (as across runs)."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import signal
from pathlib import Path
from types import SimpleNamespace

import psutil
import pytest

from topicstreams.browser.chromium import CHROMIUM_ARGS, DRIVER_NODE_OPTIONS, find_executable
from topicstreams.browser.provider import SharedBrowserProvider, SharedBrowsers

pytestmark = [pytest.mark.timeout(120), pytest.mark.skipif(not find_executable(), reason="no Chromium on this machine")]


def config(**launch):
    options = {"executable_path": find_executable(), "headless": True, "args": list(CHROMIUM_ARGS), **launch}
    return SimpleNamespace(cdp_url=None, connect_url=None, browser_type_name="chromium", launch_options=options)


def browser_processes() -> list[psutil.Process]:
    """Chromium browser processes (no ``--type=``) under this process."""
    found = []
    for proc in psutil.Process().children(recursive=True):
        try:
            cmdline = proc.cmdline()
        except psutil.Error:
            continue
        if cmdline and "chrom" in os.path.basename(cmdline[0]) and not any(a.startswith("--type=") for a in cmdline):
            found.append(proc)
    return found


def drivers() -> list[psutil.Process]:
    return [p for p in psutil.Process().children(recursive=True) if "node" in p.name()]


def test_every_provider_shares_one_driver_and_one_browser_which_outlives_all_but_the_last():
    async def scenario():
        browsers = SharedBrowsers()  # the process's
        first, second = browsers.provider(config()), browsers.provider(config())
        await first.start()
        await second.start()
        view_a, view_b = await first.launch_browser(), await second.launch_browser()
        assert view_a.browser is view_b.browser
        assert len(browser_processes()) == 1 and len(drivers()) == 1
        context = await view_a.new_context()
        await view_a.close()  # a handler closing its browser leaves it to the other
        await first.close()
        assert view_b.is_connected()
        page = await (await view_b.new_context()).new_page()
        await page.set_content("<p>still here</p>")
        assert await page.text_content("p") == "still here"
        await context.close()
        await second.close()  # the last one: the browser and the driver go
        assert not view_b.is_connected()
        assert browsers.shared == {}

    asyncio.run(scenario())
    assert browser_processes() == [] and drivers() == []


def test_a_browser_that_dies_is_launched_again_for_the_next_ask(caplog):
    async def scenario():
        provider = SharedBrowserProvider(config())
        await provider.start()
        view = await provider.launch_browser()
        disconnected = asyncio.Event()
        view.on("disconnected", lambda _browser: disconnected.set())  # what each handler listens to
        [browser] = browser_processes()
        os.kill(browser.pid, signal.SIGKILL)
        await asyncio.wait_for(disconnected.wait(), 20)
        again = await provider.launch_browser()
        assert again.browser is not view.browser and again.is_connected()
        page = await (await again.new_context()).new_page()
        await page.set_content("<p>new browser</p>")
        assert await page.text_content("p") == "new browser"
        assert [p.pid for p in browser_processes()] != [browser.pid]
        await provider.close()

    with caplog.at_level(logging.INFO, logger="topicstreams.browser.provider"):
        asyncio.run(scenario())
    assert "the shared chromium went away (it crashed or was killed)" in caplog.text
    assert "(launch 2: the previous one died)" in caplog.text


def test_an_engines_context_keeps_its_cookies_in_its_file_and_starts_from_it(tmp_path):
    path = tmp_path / "google" / "storage_state.json"

    async def scenario():
        provider = SharedBrowserProvider(config())
        await provider.start()
        view = await provider.launch_browser()
        context = await view.new_context(storage_state=str(path))  # no file yet: a fresh context
        assert await context.cookies() == []
        await context.add_cookies([{"name": "SOCS", "value": "CAI", "url": "http://127.0.0.1:9/"}])
        other = await view.new_context(storage_state=str(tmp_path / "bing" / "storage_state.json"))
        assert await other.cookies() == []  # contexts never share cookies
        await context.close()  # saves first
        await other.close()
        saved = json.loads(path.read_text())
        assert [(c["name"], c["value"]) for c in saved["cookies"]] == [("SOCS", "CAI")]
        again = await view.new_context(storage_state=str(path))
        assert [(c["name"], c["value"]) for c in await again.cookies()] == [("SOCS", "CAI")]
        await again.close()
        await provider.close()

    asyncio.run(scenario())
    assert json.loads((tmp_path / "bing" / "storage_state.json").read_text())["cookies"] == []


def test_the_driver_starts_with_its_node_options_and_this_process_keeps_its_environment(monkeypatch):
    monkeypatch.delenv("NODE_OPTIONS", raising=False)

    async def scenario():
        provider = SharedBrowserProvider(config())
        await provider.start()
        [driver] = drivers()
        environment = dict(
            line.split("=", 1) for line in Path(f"/proc/{driver.pid}/environ").read_text().split("\0") if "=" in line
        )
        await provider.close()
        return environment

    assert asyncio.run(scenario())["NODE_OPTIONS"] == DRIVER_NODE_OPTIONS
    assert "NODE_OPTIONS" not in os.environ


def test_pages_see_a_desktop_pointer_and_load_no_images():
    async def scenario():
        provider = SharedBrowserProvider(config())
        await provider.start()
        page = await (await (await provider.launch_browser()).new_context()).new_page()
        pointer = await page.evaluate("[matchMedia('(hover: hover)').matches, matchMedia('(pointer: fine)').matches]")
        await page.set_content(
            '<img id="i" src="data:image/gif;base64,R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7">'
        )
        loaded = await page.evaluate(
            "new Promise(r => setTimeout(() => r(document.getElementById('i').naturalWidth), 300))"
        )
        await provider.close()
        return pointer, loaded

    pointer, image_width = asyncio.run(scenario())
    assert pointer == [True, True]  # Playwright's headless input settings, kept beside the project's own
    assert image_width == 0  # --blink-settings imagesEnabled=false: Blink never loads an image


def test_a_failing_event_listener_of_one_engines_page_fails_no_call_of_another_engine(caplog, tmp_path):
    async def scenario():
        provider = SharedBrowserProvider(config())
        await provider.start()
        view = await provider.launch_browser()
        google = await view.new_context(storage_state=str(tmp_path / "google.json"))
        bing = await view.new_context()
        google_page, bing_page = await google.new_page(), await bing.new_page()

        async def closes_under_a_listener(_page):  # as scrapy-playwright's response listener, as the tab goes
            raise RuntimeError("listener of a tab that closed")

        google_page.on("domcontentloaded", closes_under_a_listener)
        await google_page.set_content("<p>google</p>")
        await asyncio.sleep(0.2)  # the listener has failed
        # The driver connection is the process's: unguarded, the error would be raised by this call of bing's.
        await bing_page.set_content("<p>bing</p>")
        text = await bing_page.text_content("p")
        await google.close()
        await provider.close()
        return text

    with caplog.at_level(logging.DEBUG, logger="topicstreams.browser.provider"):
        assert asyncio.run(scenario()) == "bing"
    failed = [r for r in caplog.records if "an event listener of the browser failed" in r.getMessage()]
    assert len(failed) == 1 and failed[0].levelno == logging.WARNING
    assert "RuntimeError: listener of a tab that closed" in failed[0].getMessage()
