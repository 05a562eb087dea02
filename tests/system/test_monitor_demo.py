"""``/monitor`` of the demo, in the tests' own Chromium: every engine the demo crawls has its row on the demo's node,
running, with a score band, latency and errors coloured, and its charts; the page refreshes itself. The README's
screenshot (``docs/monitor.png``) is this test's: run it with ``TOPICSTREAMS_DOCS_SCREENSHOT=1`` to take it anew."""

from __future__ import annotations

import os
import re
import shutil
import signal
import sys
import time

import pytest
from playwright.sync_api import Page, expect

from tests.support.project import REPO
from tests.system.test_demo import kill_tree, start
from topicstreams.commands.demo import available_engines

pytestmark = pytest.mark.timeout(180)

SCREENSHOT = REPO / "docs" / "monitor.png"


def test_the_demo_monitor_shows_every_engine_running_and_refreshes_itself(scrapy_cmd, page: Page, tmp_path):
    log = tmp_path / "demo.log"
    demo, out = start([sys.executable, "-m", "scrapy", "demo", "--seconds", "45"], tmp_path, scrapy_cmd.env, log)
    try:
        url = out.wait_for(r"^demo: open (http://127\.0\.0\.1:\d+/) to read the feed$", timeout=40)[1]
        page.set_viewport_size({"width": 1440, "height": 900})
        engines = available_engines()
        deadline = time.monotonic() + 120
        while True:
            # Until every engine has answered (its latency is known: a row is written when the crawl opens, before
            # any page) and a cycle of every engine has been accounted (the demo's interval is 20 s; a cycle that
            # ends before the first page counts nothing, and is drawn all the same).
            page.goto(f"{url}monitor")
            drawn = page.locator(".engine-charts svg path.s-entries").count()
            answered = page.locator("tr.engine-row td.latency:not(.level-unknown)").count()
            if (drawn >= len(engines) and answered >= len(engines)) or time.monotonic() > deadline:
                break
            time.sleep(2)
        rows = page.locator("tr.engine-row")
        expect(rows).to_have_count(len(engines))
        for engine in engines:
            row = page.locator(f'tr.engine-row[data-engine="{engine}"]')
            expect(row).to_have_attribute("data-state", re.compile("running|cooling"))
            expect(row.locator("td.latency")).to_have_class(re.compile(r"\blevel-(good|warning|critical)\b"))
            expect(page.locator(f'.engine-charts[data-engine="{engine}"] svg path.s-entries')).to_have_count(1)
        expect(page.locator("li.route")).to_have_count(len(engines))  # the demo is one node
        # The page refreshes itself: its live part is swapped in again within 15 s.
        expect(page.locator("#live")).to_have_attribute("data-refreshed", re.compile(r"^\d+$"), timeout=20_000)
        shot = tmp_path / "monitor.png"
        page.screenshot(path=shot, full_page=True)
        assert shot.stat().st_size > 10_000
        if os.environ.get("TOPICSTREAMS_DOCS_SCREENSHOT"):
            shutil.copyfile(shot, SCREENSHOT)
        demo.send_signal(signal.SIGINT)
        demo.wait(timeout=60)
    finally:
        kill_tree(demo)
