"""What the fake-engine tests share: the running fakes as pytest fixtures, one way to request a page from them,
and what they add up from the request log."""

from __future__ import annotations

import urllib.error
import urllib.request

import pytest

from fake_engines import FakeEngines


def running_fakes(*engines: str):
    """A module-scoped fixture: ``engines`` served for the whole test module.

    Assign it to the fixture's name in the module, ``fakes = running_fakes("bing")``."""

    @pytest.fixture(scope="module")
    def fixture():
        with FakeEngines(engines) as running:
            yield running

    return fixture


def reset_fakes_per_test():
    """An autouse fixture: every test that uses ``fakes`` finds them reset (no script, route or request log).

    Assign it in the module next to ``fakes``, ``_clean = reset_fakes_per_test()``."""

    @pytest.fixture(autouse=True)
    def fixture(request):
        if "fakes" in request.fixturenames:
            request.getfixturevalue("fakes").reset()
        yield

    return fixture


def bytes_served(fakes: FakeEngines, engine: str | None = None, since: float = 0.0) -> int:
    """Body bytes ``engine`` (or every engine of ``fakes``) sent for the requests logged at ``time >= since``."""
    return sum(
        entry["bytes"]
        for name in ([engine] if engine else fakes.engines)
        for entry in fakes.requests(name)
        if entry["time"] >= since
    )


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


def fetch(
    url: str, *, headers: dict | None = None, data: bytes | None = None, follow: bool = True, errors: str = "strict"
) -> tuple[int, dict, str, str]:
    """(status, headers, body, final url) without raising on 4xx/5xx.

    ``data`` makes it a POST (urllib sends it as a form); ``follow=False`` makes one request and hands back a redirect
    as it came. The body is decoded as UTF-8 with ``errors``: "replace" for an image or a font."""
    opener = urllib.request.build_opener() if follow else urllib.request.build_opener(_NoRedirect)
    request = urllib.request.Request(url, data=data, headers=headers or {})
    try:
        with opener.open(request, timeout=10) as response:
            return response.status, dict(response.headers), response.read().decode("utf-8", errors), response.url
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), error.read().decode("utf-8", errors), error.url
