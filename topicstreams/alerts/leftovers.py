"""Alerts a stopped process did not deliver, taken up by the next start of its node.

A crawl that stops waits only a few seconds for its deliveries (``TOPICSTREAMS_ALERT_STOP_WAIT``); what is still on
its way then stays in ``alerts`` with an empty ``delivery``, left for the next process of the same node
(:meth:`topicstreams.alerts.delivery.Notifier.close`); a process that died without a word leaves its hold
(``claimed_until``) to expire. The next start of the node takes each one (:func:`topicstreams.storage.alert_log.claim`)
and :func:`judge` decides what becomes of it:

* older than ``TOPICSTREAMS_ALERT_LEFTOVER_HOURS`` (:data:`LEFTOVER_HOURS`, 24 h): ``abandoned`` — a day-old
  "paused" or "network down" is news no more (``scrapy health`` and the monitor tell the state as it is now, and a
  pause that lasts is reminded every ``alerting.repeat``); a day still covers a stop overnight;
* an event ``alerting.events`` no longer names: ``abandoned``;
* else it goes to the targets it still owes (those that took it before the stop are not sent it twice), matched by
  their masked form to the URLs configured now (``alerting.urls``, the digests' ``urls``, ``alerting.webhook_url``);
  a target no longer configured is abandoned (the whole alert when none is left), and the summary says which.

The message is sent again as it was stored: title and plain text (an e-mail gets that text as HTML, the digest's own
HTML is not kept). A target may get an alert twice if the process stopped between its answer and its record.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from topicstreams.alerts.events import EVENTS, Alert
from topicstreams.alerts.targets import Target

LEFTOVER_HOURS = 24.0
"""Hours after which an alert left undelivered by a stop is abandoned instead of sent late."""

NO_LONGER_CONFIGURED = "no longer configured"


@dataclass
class Leftover:
    """What becomes of an alert taken up: ``abandoned`` (why), or ``alert`` sent to the ``targets`` not yet done."""

    alert_id: int
    alert: Alert
    targets: list[Target] = field(default_factory=list)
    """Every target of the alert: those that took it before (``ok``), those abandoned, and those to try."""
    abandoned: str = ""


def configured_targets(urls: Iterable[str], webhook: str) -> dict[str, Target]:
    """The targets configured now, by their masked form (the first URL of each form)."""
    found: dict[str, Target] = {}
    for url in dict.fromkeys(urls):
        if url:
            target = Target(url)
            found.setdefault(target.shown, target)
    if webhook:
        target = Target(webhook, webhook=True)
        found.setdefault(target.shown, target)
    return found


def hours(age: timedelta) -> str:
    return f"{age.total_seconds() / 3600:.0f} h" if age >= timedelta(hours=2) else f"{age.total_seconds() / 60:.0f} min"


def alert_of(row: Mapping[str, Any]) -> Alert:
    """The alert of a stored row, as it is sent again."""
    message = row["message"] or ""
    title = row.get("title") or (message.splitlines() or [row["event"]])[0]
    return Alert(
        event=row["event"],
        title=title,
        text=message,
        at=row["created_at"],
        engine=row["engine"],
        node=row["node"],
        topic=row["topic"],
        score=row["score"],
        band=row["band"],
        reasons=tuple(row["reasons"] or ()),
        details=dict(row["details"] or {}),
    )


def judge(
    row: Mapping[str, Any],
    *,
    node: str,
    now: datetime,
    max_age: timedelta,
    urls: Iterable[str],
    webhook: str,
    events: Collection[str],
) -> Leftover:
    """What becomes of the leftover ``row`` (:func:`topicstreams.storage.alert_log.leftovers`) at this start of
    ``node`` at ``now`` (see the module docstring)."""
    leftover = Leftover(row["id"], alert_of(row))
    age = now - row["created_at"]
    if age > max_age:
        leftover.abandoned = (
            f"abandoned: {hours(age)} old when node {node} started again (an alert left undelivered by a stop is "
            f"sent late only within {max_age.total_seconds() / 3600:g} h)"
        )
        return leftover
    if row["event"] in EVENTS and row["event"] not in events:
        leftover.abandoned = f"abandoned: alerting.events no longer names {row['event']}"
        return leftover
    configured = configured_targets(urls, webhook if row["event"] in EVENTS else "")
    for shown in row["targets"] or ():
        earlier = int(row["tried"].get(shown, 0))
        found = configured.get(shown)
        if shown in row["done"]:
            leftover.targets.append(Target("", shown=shown, ok=True, before=earlier))
        elif found is None:
            leftover.targets.append(Target("", shown=shown, before=earlier, abandoned=NO_LONGER_CONFIGURED))
        else:
            leftover.targets.append(Target(found.url, webhook=found.webhook, shown=shown, before=earlier))
    if leftover.targets and all(target.abandoned for target in leftover.targets):
        shown = ", ".join(target.shown for target in leftover.targets)
        leftover.abandoned = f"abandoned: its targets are {NO_LONGER_CONFIGURED} ({shown})"
    return leftover
