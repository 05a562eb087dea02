"""``scrapy alerts test`` and ``scrapy alerts list`` as users run them (topicstreams/commands/alerts.py), against
real receivers on 127.0.0.1: every configured URL once, masked; recent alerts newest first; no secret printed."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from scrapy.exceptions import UsageError

from tests.support.alert_receivers import SMTP_PASSWORD, SMTP_USER
from tests.support.project import write_config
from topicstreams.alerts.events import Alert
from topicstreams.commands.alerts import parse_since
from topicstreams.storage import upgrade, utcnow
from topicstreams.storage.alert_log import read_recent, record_alert, record_attempt, set_delivery
from topicstreams.storage.damage_notice import damage_message

WEBHOOK_TOKEN = "W3bhook-t0ken-for-the-test"
JSON_PASSWORD = "Js0n-pa55word-for-the-test"
HEADER_TOKEN = "Header-t0ken-for-the-test"
SECRETS = (WEBHOOK_TOKEN, JSON_PASSWORD, HEADER_TOKEN, SMTP_PASSWORD)


def configure(folder: Path, alerting: dict) -> tuple[dict, str]:
    """A config in ``folder`` with ``alerting``; (the env naming it, the database URL, its schema there)."""
    url = f"sqlite:///{folder / 'news.db'}"
    upgrade(url)
    config = write_config(folder, {"database": {"url": url}, "node": {"id": "n1"}, "alerting": alerting})
    return {"TOPICSTREAMS_CONFIG": str(config)}, url


def no_secret_in(*texts: str) -> None:
    for text in texts:
        for secret in SECRETS:
            assert secret not in text, secret


def test_alerts_test_sends_to_every_configured_url_once(scrapy_cmd, tmp_path, json_receiver, smtp_receiver, databases):
    chat = json_receiver.apprise_url("/chat", user="bot", password=JSON_PASSWORD, query=f"+X-Token={HEADER_TOKEN}")
    mail = smtp_receiver.apprise_url()
    digest_only = json_receiver.apprise_url("/digest")
    env, url = configure(
        tmp_path,
        {
            "urls": [chat, mail],
            "webhook_url": json_receiver.http_url(f"/hooks/{WEBHOOK_TOKEN}"),
            "digests": [{"name": "morning", "every": "day", "at": "07:00", "urls": [digest_only, chat]}],
        },
    )

    result = scrapy_cmd("alerts", "test", env=env)
    assert result.returncode == 0, result.stdout + result.stderr
    port = json_receiver.port
    assert result.stdout.splitlines() == [
        f"json://bot:****@127.0.0.1:{port}/chat: delivered",
        f"mailto://{SMTP_USER}:****@127.0.0.1:{smtp_receiver.port}/ops%40topicstreams.example: delivered",
        f"json://127.0.0.1:{port}/digest: delivered",
        f"http://127.0.0.1:{port}/***: delivered",
    ]
    no_secret_in(result.stdout, result.stderr)

    [chat_message] = json_receiver.received("/chat")
    assert chat_message.headers["X-Token"] == HEADER_TOKEN and "test message" in chat_message.body["message"]
    assert len(json_receiver.received("/digest")) == 1
    [hook] = json_receiver.received("/hooks/")
    assert hook.body["event"] == "test" and hook.body["node"] == "n1" and hook.body["engine"] is None
    [mail_message] = smtp_receiver.received()
    assert mail_message.subject == "topicstreams: test message" and "<p>" in mail_message.part("html")

    [row] = read_recent(databases.of(url), None)
    assert row["event"] == "test" and row["delivery"] == "delivered 4/4" and len(row["deliveries"]) == 4
    no_secret_in(repr(row))


def test_alerts_test_exits_1_and_says_what_failed(scrapy_cmd, tmp_path, json_receiver, databases):
    good, down = json_receiver.apprise_url("/good"), json_receiver.apprise_url("/down")
    dead = "json://127.0.0.1:9/nobody-listens"
    env, url = configure(tmp_path, {"urls": [good, dead, down]})
    json_receiver.fail_path("/down")
    result = scrapy_cmd("alerts", "test", env=env)
    lines = result.stdout.splitlines()
    assert result.returncode == 1, result.stdout + result.stderr
    assert lines[0] == f"json://127.0.0.1:{json_receiver.port}/good: delivered"
    assert lines[1].startswith("json://127.0.0.1:9/nobody-listens: FAILED: ")
    assert len(lines[1]) > len("json://127.0.0.1:9/nobody-listens: FAILED: ") + 5  # says what went wrong
    assert lines[2].startswith(f"json://127.0.0.1:{json_receiver.port}/down: FAILED: ") and "500" in lines[2]
    assert len(lines) == 3 and "Traceback" not in result.stderr
    assert len(json_receiver.received("/down")) == 1  # one attempt: a test says how it is now
    [row] = read_recent(databases.of(url), None)
    assert row["delivery"] == (
        f"delivered 1/3; failed: json://127.0.0.1:9/nobody-listens (after 1 attempt), "
        f"json://127.0.0.1:{json_receiver.port}/down (after 1 attempt)"
    )


def test_alerts_test_without_any_url_names_alerting_urls(scrapy_cmd, tmp_path):
    env, _ = configure(tmp_path, {})
    result = scrapy_cmd("alerts", "test", env=env)
    assert result.returncode == 1
    assert result.stdout == ""
    [line] = result.stderr.strip().splitlines()
    assert "alerting.urls" in line and "mailto://" in line

    nothing = scrapy_cmd("alerts", "list", env=env)
    assert nothing.returncode == 0, nothing.stderr
    assert nothing.stdout.startswith("no alerts since ")


def seed(databases, url: str) -> dict[str, int]:
    """Alerts of the last days: a paused engine (delivered after a retry), a silent topic with scraped words,
    a network down (no target), and one of ten days ago."""
    db = databases.of(url)
    now = utcnow()
    ids = {}
    ids["old"] = record_alert(
        db,
        Alert(
            event="degraded",
            title="old",
            text="bing degraded long ago",
            engine="bing",
            node="n1",
            at=now - timedelta(days=10),
        ),
    )
    ids["paused"] = record_alert(
        db,
        Alert(
            event="paused",
            title="google paused",
            text="google paused on node n1: hard_block\nrun `scrapy health resume google`",
            engine="google",
            node="n1",
            score=30,
            band="critical",
            reasons=("hard_block",),
            at=now - timedelta(hours=5),
        ),
    )
    record_attempt(db, ids["paused"], "json://127.0.0.1:1/hook", 1, False, "HTTP 500", now - timedelta(hours=5))
    record_attempt(db, ids["paused"], "json://127.0.0.1:1/hook", 2, True, "sent", now - timedelta(hours=5))
    set_delivery(db, ids["paused"], "delivered 1/1")
    ids["silence"] = record_alert(
        db,
        Alert(
            event="silence",
            title="climate silent",
            text="no news on \x1b[31mclimate\x1b[0m for 7 hours\nsecond line",
            topic="climate",
            at=now - timedelta(hours=1),
        ),
    )
    set_delivery(db, ids["silence"], "failed: mailto://user:****@smtp.example (after 4 attempts)")
    ids["network"] = record_alert(
        db,
        Alert(
            event="network_down", title="n2 offline", text="node n2: offline", node="n2", at=now - timedelta(minutes=5)
        ),
    )
    set_delivery(db, ids["network"], "no target")
    return ids


def test_alerts_list_prints_the_last_week_newest_first(scrapy_cmd, tmp_path, databases):
    env, url = configure(tmp_path, {})
    seed(databases, url)
    result = scrapy_cmd("alerts", "list", env=env)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert len(lines) == 3, result.stdout  # the one of ten days ago is left out
    assert [line.split()[2:4] for line in lines] == [
        ["network_down", "n2"],
        ["silence", "climate"],
        ["paused", "google@n1"],
    ]
    assert lines[0].endswith("node n2: offline  [no target]")
    assert (
        "no news on [31mclimate[0m for 7 hours  [failed: mailto://user:****@smtp.example (after 4 "
        "attempts)]" in lines[1]
    )
    assert "\x1b" not in result.stdout and "second line" not in result.stdout
    assert lines[2].endswith("google paused on node n1: hard_block  [delivered 1/1]")
    assert lines[0][:20].endswith("Z") and lines[0][4] == "-"


def test_alerts_list_since_and_json(scrapy_cmd, tmp_path, databases):
    env, url = configure(tmp_path, {})
    ids = seed(databases, url)
    since = (utcnow() - timedelta(days=30)).date().isoformat()
    every = scrapy_cmd("alerts", "list", "--since", since, env=env)
    assert every.returncode == 0, every.stderr
    assert len(every.stdout.splitlines()) == 4 and "bing@n1" in every.stdout.splitlines()[-1]

    recent = scrapy_cmd("alerts", "list", "--since", (utcnow() - timedelta(hours=2)).isoformat(), "--json", env=env)
    assert recent.returncode == 0, recent.stderr
    shown = json.loads(recent.stdout)
    assert [alert["id"] for alert in shown["alerts"]] == [ids["network"], ids["silence"]]
    assert shown["alerts"][1]["topic"] == "climate" and shown["alerts"][1]["engine"] is None
    assert shown["alerts"][0]["at"].endswith("Z") and shown["since"].endswith("Z")

    paused = json.loads(scrapy_cmd("alerts", "list", "--json", env=env).stdout)["alerts"][-1]
    assert (paused["event"], paused["engine"], paused["node"], paused["score"], paused["reasons"]) == (
        "paused",
        "google",
        "n1",
        30,
        ["hard_block"],
    )
    assert [(d["attempt"], d["ok"], d["detail"]) for d in paused["deliveries"]] == [
        (1, False, "HTTP 500"),
        (2, True, "sent"),
    ]


@pytest.mark.parametrize(
    ("value", "since"),
    [
        ("2026-12-01", datetime(2026, 12, 1, tzinfo=UTC)),
        ("2026-12-01T08:30", datetime(2026, 12, 1, 8, 30, tzinfo=UTC)),
        ("2026-12-01T08:30:00Z", datetime(2026, 12, 1, 8, 30, tzinfo=UTC)),
        ("2026-12-01T10:30:00+02:00", datetime(2026, 12, 1, 8, 30, tzinfo=UTC)),
    ],
)
def test_since_takes_an_iso_date_or_time_in_utc_unless_it_says(value, since):
    assert parse_since(value) == since


@pytest.mark.parametrize("value", ["", "yesterday", "12/01/2026", "2026-13-01", "2026-12-01T25:00"])
def test_since_refuses_anything_else_naming_itself(value):
    with pytest.raises(UsageError, match=r"^--since: got .*, expected an ISO 8601 date or time"):
        parse_since(value)


def test_a_bad_since_is_a_usage_error_naming_it(scrapy_cmd, tmp_path):
    env, _ = configure(tmp_path, {})
    value = "2026-13-01"
    result = scrapy_cmd("alerts", "list", "--since", value, env=env)
    assert result.returncode == 2
    assert result.stdout == ""
    assert f": error: --since: got '{value}', expected an ISO 8601 date" in result.stderr.strip().splitlines()[-1]
    assert "Traceback" not in result.stderr


def test_alerts_list_on_a_database_that_cannot_hold_the_schema_names_scrapy_db_upgrade(scrapy_cmd, tmp_path):
    broken = tmp_path / "broken.db"
    broken.write_bytes(b"this is not an SQLite database at all" * 100)
    config = write_config(tmp_path, {"database": {"url": f"sqlite:///{broken}"}, "node": {"id": "n1"}})
    result = scrapy_cmd("alerts", "list", env={"TOPICSTREAMS_CONFIG": str(config)})
    assert result.returncode == 1
    [line] = result.stderr.strip().splitlines()
    # A garbage file is a damaged database file (issue 33): named as such, not as a schema to upgrade.
    assert line == damage_message(f"sqlite:///{broken}", "file is not a database")
