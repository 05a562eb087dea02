"""News digests (``alerting.digests``): their periods in UTC, and a digest rendered as an alert (pure).

Periods. A digest ``every: hour`` ends a period at the top of each hour; ``day`` at ``at`` (``"HH:MM"``) every day;
``week`` at ``at`` (``"mon HH:MM"`` … ``"sun HH:MM"``) every week — all UTC. :func:`last_boundary` is the latest
end of a period at or before a moment: a digest whose last one covered events up to an earlier moment is due, and
covers everything since (a period missed while no crawl ran is part of the next digest, one message for the gap).
``as_it_happens`` has no periods: a crawl process sends what it stored within a minute as one batch.

Rendering (:func:`render_digest`, :func:`render_batch`): one :class:`~topicstreams.alerts.events.Alert` (event
``digest``, ``urls`` the digest's own or None for ``alerting.urls``) titled like
``topicstreams digest "NAME": 12 new articles (hour to 14:00 UTC)``, with a plain text body for chat services
(every scraped part through :func:`~topicstreams.alerts.inert_text.plain`: mass mentions neutralised) and an HTML body
for e-mail (every scraped part escaped; a link only where :func:`~topicstreams.alerts.inert_text.http_link` accepts the
URL: ``http`` or ``https``). Each item: its title, source, link, topic and every engine that found it, newest
first; past ``max_items``, "… and N more".
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime, time, timedelta
from typing import Any, Protocol

from topicstreams.alerts.events import DIGEST, Alert
from topicstreams.alerts.inert_text import html, http_link, plain

AS_IT_HAPPENS, HOUR, DAY, WEEK = "as_it_happens", "hour", "day", "week"
SCHEDULED = (HOUR, DAY, WEEK)
"""The digests sent per period (claimed in ``digest_states``)."""

WEEKDAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")

LENGTH = {HOUR: timedelta(hours=1), DAY: timedelta(days=1), WEEK: timedelta(weeks=1)}
"""A period's length."""


class Sighting(Protocol):
    engine: str


class DigestItem(Protocol):
    """What a digest shows of a feed event (:class:`topicstreams.storage.feed_reads.FeedEvent` is one)."""

    title: str
    source: str | None
    url: str
    topic: str

    @property
    def engines(self) -> Sequence[Sighting]: ...


def _utc(now: datetime) -> datetime:
    if now.tzinfo is None:
        raise ValueError("a digest's clock is an aware datetime (UTC)")
    return now.astimezone(UTC)


def _time_of_day(at: str) -> time:
    hours, minutes = at.strip().split(":")
    return time(int(hours), int(minutes), tzinfo=UTC)


def last_boundary(every: str, at: str | None, now: datetime) -> datetime:
    """The latest end of a period of a digest ``every`` hour / day / week (``at`` as in the configuration) at or
    before ``now`` (aware, any time zone; the result is UTC)."""
    now = _utc(now)
    if every == HOUR:
        return now.replace(minute=0, second=0, microsecond=0)
    if every == DAY:
        moment = datetime.combine(now.date(), _time_of_day(at or "00:00"))
        return moment if moment <= now else moment - LENGTH[DAY]
    if every == WEEK:
        day, time_of_day = (at or "mon 00:00").strip().lower().split()
        moment = datetime.combine(now.date(), _time_of_day(time_of_day))
        moment -= timedelta(days=(now.weekday() - WEEKDAYS.index(day)) % 7)
        return moment if moment <= now else moment - LENGTH[WEEK]
    raise ValueError(f"a digest every {every!r} has no periods (one of {', '.join(SCHEDULED)})")


def next_boundary(every: str, at: str | None, now: datetime) -> datetime:
    """The first end of a period after ``now``."""
    return last_boundary(every, at, now) + LENGTH[every]


def period_label(every: str, start: datetime, end: datetime) -> str:
    """How the title names the period ``(start, end]``: ``hour to 14:00 UTC``, ``day to Wed 2 Dec 08:00 UTC``,
    ``week to Mon 7 Dec 08:00 UTC``; a longer one (periods missed while no crawl ran) ``2 Dec 11:00 to 3 Dec 14:00
    UTC``; an as-it-happens batch ``as it happens, to 14:02 UTC``."""
    start, end = _utc(start), _utc(end)
    if every == AS_IT_HAPPENS:
        return f"as it happens, to {end:%H:%M} UTC"
    if end - start <= LENGTH[every]:
        if every == HOUR:
            return f"hour to {end:%H:%M} UTC"
        return f"{every} to {end:%a} {end.day} {end:%b %H:%M} UTC"
    if start.date() == end.date():
        return f"{start:%H:%M} to {end:%H:%M} UTC"
    return f"{start.day} {start:%b %H:%M} to {end.day} {end:%b %H:%M} UTC"


def _articles(count: int) -> str:
    return f"{count} new article" + ("" if count == 1 else "s")


def _engines(item: DigestItem) -> list[str]:
    return list(dict.fromkeys(sighting.engine for sighting in item.engines))


def render_digest(
    digest: Mapping[str, Any], items: Sequence[DigestItem], total: int, start: datetime, end: datetime, at: datetime
) -> Alert:
    """The message of digest ``digest`` (an ``alerting.digests`` entry) for the period ``(start, end]``: ``items``
    (newest first, at most ``max_items``) of ``total`` events."""
    name = digest["name"]
    label = period_label(digest["every"], start, end)
    headline = f"{_articles(total)} ({label})"
    title = f'topicstreams digest "{plain(name)}": {headline}'
    more = total - len(items)

    lines: list[str] = []  # the title travels apart (a chat message's heading, an e-mail's subject)
    blocks = ["<ul>"]
    for item in items:
        source = f" — {plain(item.source)}" if item.source else ""
        link = http_link(item.url)
        engines = ", ".join(_engines(item))
        lines.append(f"• {plain(item.title or item.url)}{source}")
        if link:
            lines.append(f"  {link}")
        lines.append(f"  topic: {plain(item.topic)} · found by: {engines}")
        shown = html(item.title or item.url)
        heading = f'<a href="{html(link)}">{shown}</a>' if link else shown
        blocks.append(
            f"<li>{heading}"
            + (f" — {html(item.source)}" if item.source else "")
            + f"<br><small>topic: {html(item.topic)} · found by: {html(engines)}</small></li>"
        )
    blocks.append("</ul>")
    if more > 0:
        lines += ["", f"… and {more} more"]
        blocks.append(f"<p>… and {more} more</p>")
    return Alert(
        event=DIGEST,
        title=title,
        text="\n".join(lines),
        html="\n".join(blocks),
        at=at,
        details={
            "digest": name,
            "every": digest["every"],
            "from": _utc(start).isoformat(),
            "to": _utc(end).isoformat(),
            "count": total,
            "shown": len(items),
        },
        urls=tuple(digest.get("urls") or ()) or None,
    )


def render_batch(
    digest: Mapping[str, Any], items: Sequence[DigestItem], total: int, start: datetime, end: datetime, at: datetime
) -> Alert:
    """An as-it-happens digest's batch: the events stored from ``start`` to ``end``, rendered as a digest is."""
    return render_digest({**digest, "every": AS_IT_HAPPENS}, items, total, start, end, at)
