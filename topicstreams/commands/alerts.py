"""``scrapy alerts test`` and ``scrapy alerts list [--since ISO] [--json]``.

``test`` sends a test message to every configured target — ``alerting.urls``, each digest's ``urls`` and
``alerting.webhook_url``, each once — on this thread (:meth:`topicstreams.alerts.delivery.Notifier.deliver_now`),
and prints one line per target, masked: ``delivered`` or ``FAILED: what the service said``. It exits 1 when one
failed, and when none is configured (naming ``alerting.urls``). The messages are recorded as alerts of event
``test``; a database that cannot be reached is said in one line and the messages go out all the same.

``list`` prints the alerts of the last 7 days (or since ``--since``, an ISO 8601 date or time, UTC unless it says
otherwise), newest first: time, event, where (``engine@node``, the topic, or the node), the message's first line,
how its delivery went; ``--json`` prints them as one object with every attempt and the ``delivery_state``
(``pending``, ``delivered``, ``failed``, ``abandoned``, ``no_target``:
:func:`topicstreams.storage.alert_log.delivery_state`). A pending alert says who has it: a live process delivering
it, or the next start of its node (its process stopped first). The message is stored text that may hold scraped
words: its control characters are dropped before it reaches the terminal.
"""

from __future__ import annotations

import json
import sys
from datetime import UTC, datetime, timedelta
from typing import Any

from scrapy.exceptions import UsageError
from sqlalchemy.exc import SQLAlchemyError

from topicstreams.alerts import inert_text as inert
from topicstreams.alerts.events import TEST, Alert
from topicstreams.cli.configured import SubcommandCommand
from topicstreams.config.secrets import mask_url
from topicstreams.config.sections import AlertingSection
from topicstreams.storage import utcnow
from topicstreams.storage.alert_log import delivery_state
from topicstreams.storage.damage_notice import damage_of
from topicstreams.storage.failures import describe

TEST_COMMAND, LIST = "test", "list"

LIST_DAYS = 7
"""``list`` without ``--since``: the alerts of this many days."""

LIST_LIMIT = 500
"""The most alerts ``list`` prints."""

FIRST_LINE_LENGTH = 120
"""The longest part of a message ``list`` prints (its first line)."""

NONE_CONFIGURED = (
    "no alert URL is configured: add one to alerting.urls in the configuration file, such as "
    "alerting: {urls: ['mailto://user:password@smtp.example.org?to=you@example.org']} "
    "(any Apprise URL: ntfy://, slack://, tgram://, json:// …)"
)


def parse_since(value: str) -> datetime:
    """``--since``: an ISO 8601 date (midnight UTC) or time (UTC unless it names its offset)."""
    try:
        moment = datetime.fromisoformat(value.strip())
    except ValueError:
        raise UsageError(
            f"--since: got {value!r}, expected an ISO 8601 date or time such as 2026-12-01 or 2026-12-01T08:00:00Z"
        ) from None
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


def configured_urls(alerting: AlertingSection) -> list[str]:
    """Every configured target, each once: ``alerting.urls``, the digests' ``urls``, ``alerting.webhook_url``."""
    urls = [*alerting.urls, *(url for each in alerting.digests for url in each.urls)]
    if alerting.webhook_url:
        urls.append(alerting.webhook_url)
    return list(dict.fromkeys(urls))


def message_for_test(node: str, at: datetime) -> Alert:
    title = "topicstreams: test message"
    lines = [
        f"This is a test message from topicstreams on node {node}, sent {at:%Y-%m-%d %H:%M} UTC.",
        "If you read it, alerts reach you here: the engine transitions chosen by alerting.events, and the "
        "digests that name this address.",
    ]
    html = "".join(f"<p>{inert.html(line)}</p>\n" for line in lines)
    return Alert(event=TEST, title=title, text=inert.plain("\n".join(lines)), html=html, at=at, node=node)


def iso(moment: datetime | None) -> str | None:
    if moment is None:
        return None
    return moment.astimezone(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def where(row: dict[str, Any]) -> str:
    """Where an alert happened: ``engine@node``, the topic, or the node."""
    if row["engine"]:
        return f"{row['engine']}@{row['node']}" if row["node"] else row["engine"]
    if row["topic"]:
        return inert.without_controls(row["topic"])
    return row["node"] or "-"


def first_line(message: str | None) -> str:
    lines = inert.without_controls(message or "").strip().splitlines()
    line = lines[0].replace("\t", " ") if lines else ""
    return line if len(line) <= FIRST_LINE_LENGTH else line[: FIRST_LINE_LENGTH - 1] + "…"


def delivery_shown(row: dict[str, Any], now: datetime) -> str:
    """How the alert's delivery went, in a few words: its summary, or who is to deliver it still."""
    if row["delivery"]:
        return inert.without_controls(row["delivery"])
    node = row.get("sender_node")
    if not node:
        return "not delivered yet"
    shown = inert.without_controls(node)
    held = row.get("claimed_until")
    if held is not None and held > now:
        return f"not delivered yet: on its way from a process of node {shown}"
    if held is None:
        return f"not delivered yet: left by a stop for the next start of node {shown}"
    return f"not delivered yet: its process on node {shown} stopped; the next start there delivers it"


def as_json(row: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": row["id"],
        "at": iso(row["created_at"]),
        "event": row["event"],
        "engine": row["engine"],
        "node": row["node"],
        "topic": row["topic"],
        "score": row["score"],
        "band": row["band"],
        "reasons": row["reasons"] or [],
        "message": row["message"],
        "details": row["details"],
        "delivery": row["delivery"],
        "delivery_state": delivery_state(row["delivery"]),
        "resolved_at": iso(row["resolved_at"]),
        "deliveries": [{**attempt, "at": iso(attempt["at"])} for attempt in row["deliveries"]],
    }


class Command(SubcommandCommand):
    subcommands = {
        TEST_COMMAND: "send a test message to every configured alert URL and say, per URL, whether it went through",
        LIST: "list the recent alerts, newest first (--since ISO, --json)",
    }

    def syntax(self) -> str:
        return "test | list [--since ISO] [--json]"

    def short_desc(self) -> str:
        return "Send a test alert to every configured URL, or list the recent alerts"

    def add_options(self, parser) -> None:
        super().add_options(parser)
        parser.add_argument(
            "--since",
            metavar="ISO",
            help=f"with list: the alerts since this ISO 8601 date or time (default: {LIST_DAYS} days ago)",
        )
        parser.add_argument("--json", action="store_true", help="with list: print the alerts as one JSON object")

    def check_arguments(self, args: list[str], opts) -> None:
        """Refuse arguments that can never run, before the configuration is read."""
        super().check_arguments(args, opts)  # the sub-command, and no positional argument
        opts.since_at = None
        if args[0] == TEST_COMMAND and (opts.since is not None or opts.json):
            raise UsageError("--since and --json go with list, not with test")
        if opts.since is not None:
            opts.since_at = parse_since(opts.since)

    def do_test(self, config, args, opts) -> int:
        from topicstreams.alerts.delivery import Notifier

        sections = config.sections
        urls = configured_urls(sections.alerting)
        if not urls:
            print(NONE_CONFIGURED, file=sys.stderr)
            return 1
        database_url = sections.database.url
        record = True
        try:
            self.database(config)
        except SQLAlchemyError as exc:
            record = False
            damage = damage_of(database_url, exc)
            print(
                f"the test messages are not recorded: {damage}"
                if damage
                else f"the test messages are not recorded: the database {mask_url(database_url)} cannot be reached "
                f"({describe(exc)})",
                file=sys.stderr,
            )
        node = sections.node.id
        notifier = Notifier(  # the alerts read a mapping
            database_url, config.get("alerting"), node, record=record, database=self.runtime.database
        )
        try:
            results = notifier.deliver_now(message_for_test(node, utcnow()), urls, attempts=1)
        finally:
            notifier.close()
        for shown, ok, detail in results:
            print(f"{shown}: delivered" if ok else f"{shown}: FAILED: {detail}")
        return 0 if all(ok for _, ok, _ in results) else 1

    def do_list(self, config, args, opts) -> int:
        from topicstreams.storage.alert_log import read_recent

        now = utcnow()
        since = opts.since_at or now - timedelta(days=LIST_DAYS)
        try:
            rows = read_recent(self.database(config), since, limit=LIST_LIMIT)
        except SQLAlchemyError as exc:
            print(
                damage_of(config.sections.database.url, exc)
                or f"cannot read the alerts from the database {mask_url(config.sections.database.url)}: "
                f"{describe(exc)} (run `scrapy db upgrade` once it can be reached)",
                file=sys.stderr,
            )
            return 1
        if opts.json:
            print(json.dumps({"since": iso(since), "alerts": [as_json(row) for row in rows]}))
            return 0
        if not rows:
            print(f"no alerts since {iso(since)}")
            return 0
        table = [
            (
                f"{row['created_at'].astimezone(UTC):%Y-%m-%d %H:%M:%S}Z",
                row["event"],
                where(row),
                first_line(row["message"]),
                delivery_shown(row, now),
            )
            for row in rows
        ]
        widths = [max(len(cells[column]) for cells in table) for column in range(3)]
        for cells in table:
            print(
                "  ".join(
                    [
                        *(cell.ljust(width) for cell, width in zip(cells[:3], widths, strict=False)),
                        cells[3],
                        f"[{cells[4]}]",
                    ]
                )
            )
        if len(rows) == LIST_LIMIT:
            print(f"(the newest {LIST_LIMIT} shown: see older ones with --since)", file=sys.stderr)
        return 0
