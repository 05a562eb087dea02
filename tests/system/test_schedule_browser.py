"""The ``/monitor`` schedule panel in real Chromium at a laptop's and a phone's width (screenshots into
$TOPICSTREAMS_SHOTS): its rows, a hostile topic name shown as text, nothing sideways, no broken words.

A file of browser tests only: pytest-playwright keeps an event loop running in its worker once a browser test ran
(tests/conftest.py runs them last), so they are not mixed with tests that run a loop of their own."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from tests.support.feed_data import fresh_database, serving
from tests.support.page_layout import LAPTOP, PHONE, broken_words, shots_folder, sideways
from tests.support.schedule_data import HOSTILE, fill


@pytest.mark.timeout(120)
def test_the_schedule_panel_on_a_laptop_and_a_phone(page: Page, tmp_path, databases):
    shots = shots_folder(tmp_path)
    url = fresh_database(f"sqlite:///{tmp_path / 'shots.db'}")
    fill(databases.of(url))
    databases.dispose()
    dialogs: list[str] = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    with serving(url, node="n1") as app:
        for width in (LAPTOP, PHONE):
            page.set_viewport_size({"width": width, "height": 900})
            page.goto(f"{app.url}/monitor")
            panel = page.locator("section.schedule")
            expect(panel.locator("tr.schedule-row")).to_have_count(2)
            expect(panel.locator("th.topic-name").nth(1)).to_have_text(HOSTILE)
            assert sideways(page) == 0, width
            assert broken_words(page, "section.schedule") == []
            panel.scroll_into_view_if_needed()
            panel.screenshot(path=shots / f"monitor-schedule-{width}.png")
        page.goto("about:blank")
    assert dialogs == []
