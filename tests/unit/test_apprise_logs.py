"""What Apprise and its HTTP client log while a thread delivers: caught for the attempt in that thread, kept out of
the log, passed as usual in other threads; the filters belong to their AppriseLogs (on the loggers while it is open,
off once it is closed)."""

from __future__ import annotations

import logging
import threading

from topicstreams.alerts.apprise_logs import HUSHED_LOGGERS, AppriseLogs
from topicstreams.config.apprise_urls import QUIET_LOGGER


def filters_of(logs: AppriseLogs) -> list[bool]:
    """Whether each logger (Apprise's, then the HTTP client's) holds one of ``logs``' filters."""
    names = (QUIET_LOGGER, *HUSHED_LOGGERS)
    return [any(found in (logs._words, logs._hushed) for found in logging.getLogger(name).filters) for name in names]


def test_what_apprise_says_while_delivering_is_kept_for_the_attempt_and_out_of_the_log(caplog):
    caplog.set_level(logging.DEBUG)
    logs = AppriseLogs()
    try:
        with logs.said() as said:
            logging.getLogger(QUIET_LOGGER).warning("Failed to send to https://hooks.example/SECRET")
            logging.getLogger(QUIET_LOGGER).debug("a debug line")
            logging.getLogger("urllib3.connectionpool").debug("GET /token/SECRET?key=SECRET")
        assert said == ["Failed to send to https://hooks.example/SECRET"]
        assert "SECRET" not in caplog.text

        logging.getLogger(QUIET_LOGGER).warning("outside a delivery")
        assert "outside a delivery" in caplog.text
    finally:
        logs.close()


def test_another_threads_lines_pass_while_one_thread_delivers(caplog):
    caplog.set_level(logging.DEBUG)
    logs = AppriseLogs()
    try:
        with logs.said() as said:
            other = threading.Thread(target=lambda: logging.getLogger("urllib3.connection").debug("other thread"))
            other.start()
            other.join()
        assert said == []
        assert "other thread" in caplog.text
    finally:
        logs.close()


def test_the_filters_are_on_the_loggers_while_open_and_off_once_closed():
    logs = AppriseLogs()
    assert all(filters_of(logs))
    logs.close()
    assert not any(filters_of(logs))
    with logs.said():  # a delivery after the close puts them back while it needs them
        assert all(filters_of(logs))
    assert all(filters_of(logs))
    logs.close()
    assert not any(filters_of(logs))


def test_a_close_during_a_delivery_waits_for_its_end():
    logs = AppriseLogs()
    with logs.said():
        logs.close()
        assert all(filters_of(logs))
    assert not any(filters_of(logs))
