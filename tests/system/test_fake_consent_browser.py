"""The fake engines' consent walls from outside: ``python -m fake_engines serve --consent``, and the whole
answer in real Chromium through the consent host, kept by a persistent profile across a restart."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
from urllib.parse import parse_qsl, urlsplit

import pytest

from tests.support.fakes_http import fetch, reset_fakes_per_test, running_fakes
from tests.unit.test_fake_consent import (
    CHROMIUM,
    COOKIES,
    CSS_BUTTONS,
    ENGINES,
    ITEMS_IN_HTML,
    REPO,
    RESULT_ITEMS,
    RESULTS_PATHS,
    SECOND,
    results_url,
)

fakes = running_fakes(*ENGINES)
_clean = reset_fakes_per_test()


# -- the command line -----------------------------------------------------------------------------------


def test_serve_with_consent_walls():
    with subprocess.Popen(
        [
            sys.executable,
            "-m",
            "fake_engines",
            "serve",
            "--engines",
            "google,bing",
            "--consent",
            "redirect:local",
            "--consent",
            "bing=wall",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        cwd=REPO,
    ) as proc:
        try:
            lines = [proc.stdout.readline() for _ in range(5)]
            bases = dict(re.findall(r"^\s+(google|bing):\n\s+base_url: (\S+)$", "".join(lines), re.MULTILINE))
            status, headers, _, _ = fetch(bases["google"] + RESULTS_PATHS["google"], follow=False)
            assert status == 302 and dict(parse_qsl(urlsplit(headers["Location"]).query))["hl"] == "de"
            status, _, body, _ = fetch(bases["bing"] + RESULTS_PATHS["bing"], follow=False)
            assert status == 200 and 'id="bnp_btn_reject"' in body and '<html lang="en"' in body
        finally:
            proc.terminate()
            proc.wait(timeout=10)
    bad = subprocess.run(
        [sys.executable, "-m", "fake_engines", "serve", "--engines", "bing", "--consent", "wall:de"],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=30,
        check=False,
    )
    assert bad.returncode == 2 and "en, fr" in bad.stderr


# -- real Chromium -----------------------------------------------------------------------------------------


def test_reject_in_chromium_through_the_consent_host(fakes, tmp_path):
    sync_api = pytest.importorskip("playwright.sync_api")
    if not os.path.exists(CHROMIUM):
        pytest.skip("no Chromium at " + CHROMIUM)
    from topicstreams.browser.chromium import CHROMIUM_ARGS

    for engine in ENGINES:
        fakes.consent(engine, "redirect", SECOND[engine])
        # nothing listens on ::1: Chromium, which tries localhost's ::1 first, has to fall back to 127.0.0.1
        with pytest.raises(OSError):
            socket.create_connection(("::1", fakes.port(engine)), timeout=2).close()
    left = []

    def loopback_only(route):
        if urlsplit(route.request.url).hostname in ("127.0.0.1", "localhost"):
            route.continue_()
        else:
            left.append(route.request.url)
            route.abort()

    def launch(pw):
        context = pw.chromium.launch_persistent_context(
            str(tmp_path / "profile"), executable_path=CHROMIUM, headless=True, args=list(CHROMIUM_ARGS)
        )
        context.route("**/*", loopback_only)
        return context, context.pages[0] if context.pages else context.new_page()

    with sync_api.sync_playwright() as pw:
        context, page = launch(pw)
        try:
            for engine in ENGINES:
                url = results_url(fakes, engine)
                page.goto(url, wait_until="domcontentloaded")
                assert urlsplit(page.url).hostname == "localhost" and page.locator(RESULT_ITEMS[engine]).count() == 0
                assert page.locator("html").get_attribute("lang").startswith(SECOND[engine])
                with page.expect_navigation(wait_until="domcontentloaded", timeout=10_000):
                    page.locator(CSS_BUTTONS[engine]).first.click(timeout=5_000)
                assert page.url == url and page.locator(RESULT_ITEMS[engine]).count() >= ITEMS_IN_HTML[engine]
                log = fakes.requests(engine)
                saves = [e for e in log if e["step"] == "consent_saved"]
                assert [(e["consent_choice"], e["host"], e["method"]) for e in saves] == [
                    ("reject", "localhost", "POST")
                ]
                assert [(e["consent_choice"], e["cookie_set"]) for e in log if e["step"] == "consent_set"] == [
                    ("reject", COOKIES[engine])
                ]
                results = fakes.results_requests(engine)
                assert [(e["step"], e["consent_cookie"]) for e in results] == [
                    ("consent_redirect", False),
                    ("results", True),
                ]
                cookie = {c["name"]: c for c in context.cookies(fakes.base_url(engine))}[COOKIES[engine]]
                assert cookie["domain"] == "127.0.0.1" and cookie["expires"] > 0  # persistent, on the results host
                page.goto(url, wait_until="domcontentloaded")  # no wall the second time
                assert page.url == url and fakes.results_requests(engine)[-1]["step"] == "results"
        finally:
            context.close()
        # the choice outlives the browser: the same profile, started again, meets no wall
        context, page = launch(pw)
        try:
            for engine in ENGINES:
                fakes.clear_log(engine)
                page.goto(results_url(fakes, engine), wait_until="domcontentloaded")
                assert page.url == results_url(fakes, engine)
                assert page.locator(RESULT_ITEMS[engine]).count() >= ITEMS_IN_HTML[engine]
                assert [(e["step"], e["consent_cookie"]) for e in fakes.results_requests(engine)] == [("results", True)]
        finally:
            context.close()
    assert all(urlsplit(url).hostname.endswith(".invalid") for url in left), left
