"""The monitor's pure parts: the charts' geometry, the service levels, the admin token's check and its keys in the
configuration."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from starlette.requests import Request

from topicstreams.config.errors import ConfigError
from topicstreams.config.loading import Config, merge
from topicstreams.config.packaged import load_defaults
from topicstreams.config.schema import validate
from topicstreams.web.app import ServiceLevels
from topicstreams.web.charts import Series, hour_ticks, line_chart, milliseconds, month_ticks, nice_ceiling
from topicstreams.web.monitor_rows import error_share, errors_level, latency_level
from topicstreams.web.tokens import FIRST_DELAY, MAX_DELAY, TokenCheck, bearer_token, same_token

T0 = datetime(2026, 12, 1, tzinfo=UTC).timestamp()


def test_a_missing_value_breaks_the_line_and_values_map_into_the_plot():
    chart = line_chart(
        "t",
        [Series("a", "s-a", [(T0, 0.0), (T0 + 10, 100.0), (T0 + 20, None), (T0 + 30, 50.0)])],
        T0,
        T0 + 30,
        y_max=100,
    )
    [line] = chart.lines
    commands = line.path.split(" ")
    # A gap, then a new start (the point alone after it drawn as a short stroke).
    assert [part[0] for part in commands if part[0] in "ML"] == ["M", "L", "M", "L"]
    assert line.path.startswith(f"M{chart.left:.1f} {chart.bottom:.1f}")  # 0 at the bottom left
    assert f"L{chart.left + (chart.right - chart.left) / 3:.1f} {chart.top:.1f}" in line.path  # 100 at the top
    assert line.last == "50"
    assert chart.summary == "t: a 50"


def test_a_lone_point_still_draws_and_an_empty_chart_says_so():
    lone = line_chart("t", [Series("a", "s-a", [(T0 + 5, 3.0)])], T0, T0 + 10)
    assert lone.lines[0].path.count("L") == 1 and not lone.empty
    empty = line_chart("t", [Series("a", "s-a", [(T0, None)])], T0, T0 + 10)
    assert empty.empty and empty.y_ticks == [] and empty.summary == "t: no data"
    with pytest.raises(ValueError):
        line_chart("t", [], T0, T0)


def test_axes_round_up_and_label_hours_months_and_milliseconds():
    assert [nice_ceiling(v) for v in (0, 0.7, 3, 7, 240, 2400)] == [1, 1, 5, 10, 250, 2500]
    assert [label for _, label in hour_ticks(T0 - 3600, T0 + 13 * 3600)] == ["00:00", "06:00", "12:00"]
    ticks = month_ticks(datetime(2025, 12, 2, tzinfo=UTC).timestamp(), datetime(2026, 12, 2, tzinfo=UTC).timestamp())
    assert [label for _, label in ticks] == ["Jan 26", "Apr", "Jul", "Oct"]
    assert (milliseconds(850), milliseconds(1500)) == ("850 ms", "1.5 s")
    chart = line_chart("p95", [Series("p95", "s", [(T0, 1800.0)])], T0, T0 + 1, y_format=milliseconds)
    assert [tick.label for tick in chart.y_ticks] == ["0 ms", "1 s", "2 s"]
    banded = line_chart("s", [], T0, T0 + 1, y_max=100, bands=[(0, 50, "zone-critical")])
    assert (banded.bands[0].top, banded.bands[0].height) == (
        (banded.top + banded.bottom) / 2,
        (banded.bottom - banded.top) / 2,
    )


def test_service_levels_bound_good_and_critical():
    sla = ServiceLevels()
    assert [latency_level(value, sla) for value in (None, 120, 500, 2000, 2000.5)] == [
        "unknown",
        "good",
        "warning",
        "warning",
        "critical",
    ]
    assert error_share(
        {"requests": 200, "hard_blocks": 1, "challenges": 1, "soft_blocks": 1, "errors": 1, "ok": 196}
    ) == (0.02, 4, 200)
    assert error_share({"requests": 0}) == (None, 0, 0)
    assert [errors_level(share, sla) for share in (None, 0.0, 0.005, 0.05, 0.051)] == [
        "unknown",
        "good",
        "warning",
        "warning",
        "critical",
    ]


def request_with(headers: dict[str, str]) -> Request:
    return Request({"type": "http", "headers": [(k.lower().encode(), v.encode()) for k, v in headers.items()]})


def test_the_bearer_token_is_read_from_the_header_and_compared_whole():
    assert bearer_token(request_with({"Authorization": "Bearer abc"})) == "abc"
    assert bearer_token(request_with({"Authorization": "bearer  abc "})) == "abc"
    assert bearer_token(request_with({"Authorization": "Basic abc"})) is None
    assert bearer_token(request_with({})) is None
    assert same_token("abcdefgh", "abcdefgh") and not same_token("abcdefg", "abcdefgh")
    assert not same_token("", "") and not same_token(None, "x") and not same_token("x", "")
    assert not same_token("é\udc80", "token")  # odd bytes are a wrong token, not a crash


def test_failures_in_a_row_wait_longer_each_time_and_a_success_starts_over():
    now = [0.0]
    check = TokenCheck(clock=lambda: now[0])

    def wrong(client: str) -> tuple[int, float]:
        """A wrong token from ``client`` once its earlier attempts are answered: its failures in a row, its wait."""
        attempt = check.attempt(client, "wrong", "token")
        now[0] += attempt.wait  # answered; the next attempt comes after
        return attempt.failures, attempt.wait

    waits = [wrong("a")[1] for _ in range(8)]
    assert waits[:4] == [0.0, FIRST_DELAY, 2 * FIRST_DELAY, 4 * FIRST_DELAY]
    assert waits[-1] == MAX_DELAY
    assert wrong("b") == (1, 0.0)  # another client is another count
    assert check.attempt("a", "token", "token").ok
    assert wrong("a") == (1, 0.0)
    now[0] += 10_000  # long quiet: forgotten
    assert wrong("b") == (1, 0.0)


def configured(**web) -> dict:
    return validate(merge(load_defaults(), {"web": web}))


def test_tokens_and_service_levels_are_validated_and_tokens_masked():
    assert configured()["web"]["admin_token"] == ""
    with pytest.raises(ConfigError) as short:
        configured(admin_token="short-secret")
    assert str(short.value).startswith("web.admin_token: got '***', expected") and "short-secret" not in str(
        short.value
    )
    with pytest.raises(ConfigError):
        configured(metrics_token="has a space in it, sixteen+")
    with pytest.raises(ConfigError) as order:
        configured(sla={"latency_good_ms": 800, "latency_critical_ms": 700})
    assert "web.sla.latency_critical_ms" in str(order.value)
    data = configured(admin_token="A" * 20, metrics_token="B" * 24)
    masked = Config(data).masked()
    assert (masked["web"]["admin_token"], masked["web"]["metrics_token"]) == ("***", "***")
    assert set(Config(data).secrets()) >= {"A" * 20, "B" * 24}
