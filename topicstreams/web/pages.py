"""The feed page ``GET /`` and the app's HTML error page.

Server-rendered with Jinja2 (autoescaped: every text from the database and every reflected parameter is escaped
by the template engine, never marked safe) and usable without JavaScript: the filters are a GET form, so a view
is a bookmarkable URL (``topic`` and ``engine`` repeatable, ``q``), and "Older" is a plain link carrying the keyset
cursor in ``before``. With JavaScript on, ``/static/feed.js`` polls the page itself for new entries
(``GET /?partial=1&since=ISO&<same filters>``: the entries only, rendered by the same macro as the page), shows
"N new" and inserts them when the reader asks; it also gives the keys ``j``/``k``/``o``, ``/`` and ``?``.

The page's script and style are files under ``/static`` (the Content-Security-Policy allows no inline ones).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated
from urllib.parse import urlsplit

from fastapi import FastAPI, Query, Request
from fastapi.responses import HTMLResponse, Response
from jinja2 import Environment, PackageLoader, StrictUndefined
from starlette.staticfiles import StaticFiles

from topicstreams import ENGINES
from topicstreams.storage.feed_reads import MAX_LIMIT, FeedEvent, FeedFilter, FeedReader
from topicstreams.web.formats import article_link, filter_query, iso, shown_text
from topicstreams.web.params import MAX_QUERY_LENGTH, feed_filter, parse_cursor

STATIC_DIR = Path(__file__).resolve().parent / "static"

DEFAULT_POLL_MS = 10_000
"""How often the page asks for new entries (``data-poll-ms`` on ``<body>``)."""

_BACKTICKS = re.compile(r"`([^`]+)`")


def host_of(url: str | None) -> str | None:
    try:
        return urlsplit(url).hostname if url else None
    except ValueError:
        return None


def relative(moment: datetime, now: datetime) -> str:
    """``3 hours ago`` (``in 5 minutes`` for a time ahead of *now*); ``/static/feed.js`` keeps the same steps."""
    seconds = (now - moment).total_seconds()
    ahead = seconds < 0
    seconds = abs(seconds)
    if seconds < 60:
        return "just now"
    for unit, size in (("year", 365 * 86400), ("month", 30 * 86400), ("day", 86400), ("hour", 3600), ("minute", 60)):
        if seconds >= size:
            count = int(seconds // size)
            text = f"{count} {unit}{'' if count == 1 else 's'}"
            return f"in {text}" if ahead else f"{text} ago"
    return "just now"  # pragma: no cover - the minute step catches the rest


def remaining(moment: datetime, now: datetime) -> str:
    """How long until *moment*, to follow "for": ``1 more minute``, ``3 more hours``, ``less than a minute more``."""
    seconds = (moment - now).total_seconds()
    if seconds < 60:
        return "less than a minute more"
    for unit, size in (("day", 86400), ("hour", 3600), ("minute", 60)):
        if seconds >= size:
            count = int(seconds // size)
            return f"{count} more {unit}{'' if count == 1 else 's'}"
    return "less than a minute more"  # pragma: no cover - the minute step catches the rest


@dataclass(frozen=True)
class Moment:
    """A time as the page shows it: relative, with the absolute UTC time on hover (and, for a time ahead, how long
    until then: ``remaining``)."""

    iso: str
    utc: str
    relative: str
    remaining: str = ""

    @classmethod
    def of(cls, moment: datetime, now: datetime) -> Moment:
        utc = moment.astimezone(UTC)
        ahead = remaining(utc, now) if utc > now else ""
        return cls(iso(utc, "microseconds"), utc.strftime("%Y-%m-%d %H:%M UTC"), relative(utc, now), ahead)


@dataclass(frozen=True)
class Entry:
    """One feed event as the page shows it."""

    key: str
    seen: str
    title: str
    href: str | None
    source: str | None
    snippet: str | None
    published: Moment | None
    found: Moment
    topic: str
    topic_href: str
    engines: list[tuple[str, Moment]]

    @classmethod
    def of(cls, event: FeedEvent, now: datetime) -> Entry:
        return cls(
            key=f"{event.topic_id}:{event.news_id}",
            seen=iso(event.first_seen_at, "microseconds"),
            title=shown_text(event.title) or event.url,
            href=article_link(event.url),
            source=shown_text(event.source) or host_of(event.url),
            snippet=shown_text(event.snippet),
            published=Moment.of(event.published_at, now) if event.published_at else None,
            found=Moment.of(event.first_seen_at, now),
            topic=event.topic,
            topic_href=page_url(topics=[event.topic]),
            engines=[(each.engine, Moment.of(each.first_seen_at, now)) for each in event.engines],
        )


def page_url(path: str = "/", **parts) -> str:
    query = filter_query(**parts)
    return f"{path}?{query}" if query else path


@dataclass(frozen=True)
class Removal:
    """An active filter, with the URL of the page without it."""

    kind: str
    value: str
    href: str


@dataclass
class View:
    """The filters of a request, as the page shows them (``q`` as typed, trimmed)."""

    topics: tuple[str, ...]
    engines: tuple[str, ...]
    q: str
    feed: FeedFilter
    known_topics: list[tuple[str, bool]] = field(default_factory=list)

    @classmethod
    def parse(cls, topic: Sequence[str], engine: Sequence[str], q: str | None, since: str | None = None) -> View:
        feed = feed_filter(topic, engine, q, since)
        return cls(feed.topics, feed.engines, (q or "").strip() if feed.search else "", feed)

    @property
    def filters(self) -> dict:
        return {"topics": self.topics, "engines": self.engines, "q": self.q}

    @property
    def query(self) -> str:
        return filter_query(**self.filters)

    def url(self, path: str = "/", **extra: str) -> str:
        return page_url(path, **self.filters, **extra)

    @property
    def narrowed(self) -> bool:
        return bool(self.topics or self.engines or self.q)

    @property
    def removals(self) -> list[Removal]:
        """Every active filter, each with the URL that drops it."""
        found = []
        for name in self.topics:
            found.append(
                Removal(
                    "topic",
                    name,
                    page_url(topics=[t for t in self.topics if t != name], engines=self.engines, q=self.q),
                )
            )
        for name in self.engines:
            found.append(
                Removal(
                    "engine",
                    name,
                    page_url(topics=self.topics, engines=[e for e in self.engines if e != name], q=self.q),
                )
            )
        if self.q:
            found.append(Removal("search", self.q, page_url(topics=self.topics, engines=self.engines)))
        return found

    @property
    def unknown_topics(self) -> list[str]:
        names = {name for name, _ in self.known_topics}
        return [name for name in self.topics if name not in names]

    @property
    def topic_choices(self) -> list[tuple[str, bool, bool]]:
        """``(name, active, checked)`` of every topic, and of the unknown ones asked for (to keep them)."""
        chosen = set(self.topics)
        choices = [(name, active, name in chosen) for name, active in self.known_topics]
        return choices + [(name, True, True) for name in self.unknown_topics]

    @property
    def engine_choices(self) -> list[tuple[str, bool]]:
        return [(name, name in self.engines) for name in ENGINES]

    @property
    def title(self) -> str:
        parts = [*self.topics, *self.engines] + ([f"“{self.q}”"] if self.q else [])
        return " · ".join(parts)


def _asset_version(name: str) -> str:
    """A short hash of a static file, appended to its URL so a new version is never read from a stale cache."""
    try:
        return hashlib.sha256((STATIC_DIR / name).read_bytes()).hexdigest()[:10]
    except OSError:
        return "0"


def message_parts(message: str) -> list[tuple[bool, str]]:
    """*message* cut into ``(is_code, text)`` parts: text between backticks is shown as code."""
    parts, position = [], 0
    for match in _BACKTICKS.finditer(message):
        if match.start() > position:
            parts.append((False, message[position : match.start()]))
        parts.append((True, match[1]))
        position = match.end()
    if position < len(message):
        parts.append((False, message[position:]))
    return parts


class Pages:
    """The templates, and the HTML error page the app answers with on non-API paths."""

    def __init__(self, poll_ms: int = DEFAULT_POLL_MS) -> None:
        self.env = Environment(
            loader=PackageLoader("topicstreams.web", "templates"),
            autoescape=True,
            trim_blocks=True,
            lstrip_blocks=True,
            undefined=StrictUndefined,
        )
        self.env.globals.update(
            static={
                name: f"/static/{name}?v={_asset_version(name)}"
                for name in ("feed.css", "feed.js", "favicon.svg", "monitor.css", "monitor.js", "logs.css", "logs.js")
            },
            poll_ms=poll_ms,
            max_query=MAX_QUERY_LENGTH,
        )

    def render(self, template: str, status: int = 200, **context) -> HTMLResponse:
        html = self.env.get_template(template).render(**context)
        return HTMLResponse(html, status_code=status, headers={"Cache-Control": "no-cache"})

    def error(self, request: Request, status: int, title: str, message: str) -> Response:
        return self.render("error.html", status=status, status_code=status, title=title, parts=message_parts(message))


Repeated = Annotated[list[str], Query()]
"""A repeatable query parameter (``topic``, ``engine``)."""


def feed_page(
    request: Request,
    topic: Repeated = [],  # noqa: B006 - FastAPI copies defaults
    engine: Repeated = [],  # noqa: B006
    q: str | None = None,
    before: str | None = None,
    since: str | None = None,
    partial: bool = False,
) -> Response:
    """The feed page; with ``partial``, only its entries (those first seen at or after ``since``)."""
    pages: Pages = request.app.state.pages
    reader: FeedReader = request.app.state.reader
    view = View.parse(topic, engine, q, since if partial else None)
    older = parse_cursor("before", before)
    now = datetime.now(UTC)
    if partial:
        page = reader.events(view.feed, limit=MAX_LIMIT, before=older)
        return pages.render(
            "partial.html", entries=[Entry.of(event, now) for event in page.items], more=page.next is not None
        )
    page = reader.events(view.feed, limit=request.app.state.page_size, before=older)
    view.known_topics = reader.topic_names()
    empty = None
    if not page.items:
        if older is not None:
            empty = "end"
        elif not view.known_topics:
            empty = "no-topics"
        elif not reader.has_events():
            empty = "no-events"
        else:
            empty = "no-match"
    return pages.render(
        "feed.html",
        view=view,
        entries=[Entry.of(event, now) for event in page.items],
        older_href=view.url(before=page.next.encode()) if page.next else None,
        newest_href=view.url() if older is not None else None,
        live=older is None,
        empty=empty,
        any_active=any(active for _, active in view.known_topics),
        now=iso(now, "microseconds"),
        feeds={kind: view.url(f"/feed.{kind}") for kind in ("atom", "rss", "json")},
    )


def install(app: FastAPI) -> None:
    """Mount ``/static``, add ``GET /`` and set ``app.state.pages``."""
    app.state.pages = Pages()
    app.mount("/static", StaticFiles(directory=STATIC_DIR), name="static")
    app.add_api_route("/", feed_page, methods=["GET"], include_in_schema=False, response_class=HTMLResponse)
