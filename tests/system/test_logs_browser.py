"""The logs page in real Chromium (pytest-playwright's ``page``) on the app served by a real uvicorn: hostile text
in a message or a logger name shows verbatim and runs nothing; the filter form and the "Older" link work. The page
must load nothing from another host and break no rule of the Content-Security-Policy."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from urllib.parse import parse_qs, urlsplit

import pytest
from playwright.sync_api import Page, expect

from tests.support.feed_data import fresh_database, serving
from tests.support.page_layout import PHONE, broken_words, shots_folder, sideways
from topicstreams.storage.log_records import write_rows

pytestmark = pytest.mark.timeout(120)

HOSTILE_MESSAGE = (
    "[google] <img src=x onerror=alert(1)> <script>alert('logs')</script> </pre></td><b>not bold</b> & \"quoted\""
)
HOSTILE_LOGGER = "<svg onload=alert(2)>.evil\"'"

T0 = datetime(2026, 12, 2, 9, 0, tzinfo=UTC)


class Misdeeds:
    """What the page did that it must not: dialogs opened, errors in its console or its scripts, requests to a host
    other than the app's."""

    def __init__(self, page: Page) -> None:
        self.dialogs: list[str] = []
        self.errors: list[str] = []
        self.elsewhere: list[str] = []

        def on_dialog(dialog) -> None:
            self.dialogs.append(dialog.message)
            dialog.dismiss()

        page.on("dialog", on_dialog)
        page.on("pageerror", lambda error: self.errors.append(f"page error: {error}"))
        page.on("console", lambda message: self.errors.append(message.text) if message.type == "error" else None)
        page.on(
            "request",
            lambda request: (
                None if urlsplit(request.url).hostname == "127.0.0.1" else self.elsewhere.append(request.url)
            ),
        )

    def check(self) -> None:
        assert (self.dialogs, self.errors, self.elsewhere) == ([], [], [])


@pytest.fixture
def logs_db(tmp_path, databases) -> str:
    """Twelve ordinary records, one a minute, then the hostile one (the newest)."""
    url = fresh_database(f"sqlite:///{tmp_path / 'logs.db'}")
    levels = ["WARNING", "ERROR", "INFO", "WARNING", "CRITICAL", "WARNING"]
    engines = ["google", "bing", "yahoo", "brave", None, "google"]
    rows = [
        {
            "at": T0 + timedelta(minutes=n),
            "node": "node-a" if n % 3 else "node-b",
            "engine": engines[n % 6],
            "level": levels[n % 6],
            "logger": "topicstreams.middlewares.blocks",
            "message": f"[{engines[n % 6] or 'any'}] record {n:02d}: hard_block for topic 't{n}' "
            f"(http://127.0.0.1:8000/search?q=t{n}): status 429",
        }
        for n in range(12)
    ]
    rows.append(
        {
            "at": T0 + timedelta(minutes=30),
            "node": "node-a",
            "engine": "google",
            "level": "ERROR",
            "logger": HOSTILE_LOGGER,
            "message": HOSTILE_MESSAGE,
        }
    )
    write_rows(databases.of(url), rows)
    return url


def messages(page: Page) -> list[str]:
    return page.locator("#logs tbody td.log-message").all_inner_texts()


def test_markup_in_a_message_or_a_logger_name_shows_verbatim_and_runs_nothing(logs_db, page: Page):
    watch = Misdeeds(page)
    with serving(logs_db) as app:
        page.goto(app.url + "/logs")
        first = page.locator("#logs tbody tr").first
        expect(first.locator("td.log-message")).to_have_text(HOSTILE_MESSAGE)
        expect(first.locator("td.log-logger")).to_have_text(HOSTILE_LOGGER)
        assert page.locator("#logs img, #logs script, #logs svg, #logs b").count() == 0
        assert page.locator("#logs tbody tr").count() == 13
        page.wait_for_timeout(300)  # an onerror would have fired by now
        page.set_viewport_size({"width": 1280, "height": 900})
        page.screenshot(path="/tmp/logs.png", full_page=True)
        page.goto("about:blank")
    watch.check()


def test_the_filter_form_and_the_older_link_page_through_the_records(logs_db, page: Page):
    watch = Misdeeds(page)
    with serving(logs_db, page_size=2) as app:
        page.goto(app.url + "/logs")
        page.select_option("#log-level", "WARNING")
        page.select_option("#log-engine", "google")
        with page.expect_navigation():
            page.get_by_role("button", name="Apply").click()
        assert parse_qs(urlsplit(page.url).query) == {"engine": ["google"], "level": ["WARNING"]}
        expect(page.locator("#log-level")).to_have_value("WARNING")  # the form keeps what it shows
        seen = []
        while True:
            seen += messages(page)
            assert all(row.startswith(("[google]",)) for row in messages(page))
            older = page.locator("a.older")
            if not older.count():
                break
            with page.expect_navigation():
                older.click()
            assert parse_qs(urlsplit(page.url).query)["engine"] == ["google"]
            expect(page.locator("a.newest")).to_be_visible()
        assert seen == [HOSTILE_MESSAGE] + [
            f"[google] record {n:02d}: hard_block for topic 't{n}' (http://127.0.0.1:8000/search?q=t{n}): status 429"
            for n in (11, 6, 5, 0)
        ]
        # The text box, and a filter that matches nothing.
        page.goto(app.url + "/logs")
        page.fill("#log-q", "RECORD 07")
        with page.expect_navigation():
            page.keyboard.press("Enter")
        assert messages(page) == [
            "[bing] record 07: hard_block for topic 't7' (http://127.0.0.1:8000/search?q=t7): status 429"
        ]
        page.fill("#log-node", "node-z")
        with page.expect_navigation():
            page.get_by_role("button", name="Apply").click()
        expect(page.locator("#empty")).to_contain_text("Nothing matches these filters")
        with page.expect_navigation():
            page.get_by_role("link", name="Clear filters").first.click()
        assert page.url.endswith("/logs") and page.locator("#logs tbody tr").count() == 2
        page.goto("about:blank")
    watch.check()


def test_on_a_phone_each_record_is_a_card_without_sideways_scrolling(logs_db, page: Page, tmp_path):
    """At 390 px: no sideways scrolling, every record's time, level and engine whole, the message under them at the
    card's width; a screenshot into $TOPICSTREAMS_SHOTS (else the test's folder)."""
    watch = Misdeeds(page)
    with serving(logs_db) as app:
        page.set_viewport_size({"width": PHONE, "height": 900})
        page.goto(app.url + "/logs")
        assert page.locator("#logs tbody tr").count() == 13
        assert sideways(page) == 0
        assert broken_words(page, "#logs td.log-at, #logs td.log-level, #logs td.log-engine, #logs td.log-node") == []
        card = page.locator("#logs tbody tr").nth(1)
        message, row = card.locator("td.log-message").bounding_box(), card.bounding_box()
        assert message["width"] > row["width"] * 0.85  # the message has the card's width, not a squeezed column
        page.screenshot(path=shots_folder(tmp_path) / f"logs-{PHONE}.png", full_page=True)
        page.goto("about:blank")
    watch.check()


def test_a_bad_parameter_gets_the_error_page(logs_db, page: Page):
    with serving(logs_db) as app:
        answer = page.goto(app.url + "/logs?engine=duckduckgo")
        assert answer.status == 400
        expect(page.locator(".error-page")).to_contain_text("engine")
        page.goto("about:blank")
