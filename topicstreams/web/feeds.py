"""Feeds for readers: ``GET /feed.atom`` (Atom 1.0), ``/feed.rss`` (RSS 2.0) and ``/feed.json`` (JSON Feed 1.1).

Each is the newest ``web.page_size`` events under the page's filters (``topic`` and ``engine`` repeatable, ``q``),
newest first. Atom and RSS are built with feedgen, the JSON Feed as a plain dict.

* **Entry ids** are ``urn:topicstreams:news:<news_id>:topic:<percent-encoded topic>``: an event is one article
  for one topic, so the id is made of exactly that pair and nothing that changes (not the host, not the filters,
  not the engines): the same in every format, across requests and after new events land.
* **Engines**: every engine that found the event (whatever the ``engine`` filter), as Atom/RSS categories in the
  scheme (RSS ``domain``) ``urn:topicstreams:engine``, beside one category for the topic in
  ``urn:topicstreams:topic``; in the JSON Feed as the ``_topicstreams`` extension object.
* **Hostile text**: every string that goes into the XML loses the characters XML 1.0 does not allow (C0 controls
  but tab, newline and carriage return; lone surrogates; U+FFFE, U+FFFF), which lxml would refuse, and the
  bidirectional embeddings, overrides and isolates (U+202A–U+202E, U+2066–U+2069) with which a title would read
  other than it is (the crawl stores none; an older version's rows may hold some); the JSON Feed gets the same
  strings, so every format says the same. The feeds' text is plain text (a reader lays it out in its own
  elements), so there is nothing to put ``dir="auto"`` on but the RSS description, which stays the escaped text
  readers expect: with no bidirectional control left, no text can reorder what a reader shows around it. Markup
  in a title or snippet is text, never markup: Atom text constructs are ``type="text"``; the RSS ``description``
  (HTML by convention) is HTML-escaped before the XML escaping, so a reader shows ``<img …>`` as those characters;
  the JSON Feed uses ``content_text``. An article URL is a link only when it is an absolute http or https URL (a
  ``javascript:`` URL never is).
* **Conditional requests**: every answer carries ``ETag`` and ``Last-Modified``; a matching ``If-None-Match``
  (weak comparison, RFC 9110 §13.1.2), or, when there is none, an ``If-Modified-Since`` at or after
  ``Last-Modified``, gets 304 with no body. The ETag is a strong one: a SHA-256 of everything the body is made
  of — the format, its self and alternate URLs (host and filters), and of each entry every field rendered (its
  key, title, URL, source, snippet, times and every engine with its time) — worked out before rendering, so a
  304 costs one query and no XML. The body is a deterministic function of those inputs (no "now" in it: the
  feed's ``updated``/``lastBuildDate`` is its newest entry's change), so the same ETag means the same bytes, and
  a new event, a new engine on an event (even one stored late with an older time) or any other change of an
  entry changes it. ``Last-Modified`` is the newest entry's change (``FeedEvent.last_change``), to the second
  (HTTP dates have no finer resolution: two changes within one second, or a batch committed after a later one,
  cannot be told apart by it; the ETag can, which is why ``If-None-Match`` wins).
"""

from __future__ import annotations

import hashlib
import html
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import format_datetime, parsedate_to_datetime
from typing import Annotated
from urllib.parse import quote

from fastapi import APIRouter, Query, Request
from fastapi.responses import Response
from feedgen.feed import FeedGenerator

from topicstreams.storage.feed_reads import FeedEvent, FeedFilter
from topicstreams.web.formats import article_link, filter_query, iso, shown_text
from topicstreams.web.params import feed_filter

FEED_FORMAT = "2"
"""Part of every ETag: raise it when the rendering changes, so that readers fetch the new bytes."""

NAME = "topicstreams"
DESCRIPTION = "News articles found by search engines for the followed topics, newest first."
TOPIC_SCHEME = "urn:topicstreams:topic"
ENGINE_SCHEME = "urn:topicstreams:engine"
UNTITLED = "(untitled)"
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
"""The ``updated`` and ``Last-Modified`` of a feed without entries."""

MEDIA_TYPES = {
    "atom": "application/atom+xml; charset=utf-8",
    "rss": "application/rss+xml; charset=utf-8",
    "json": "application/feed+json; charset=utf-8",
}
CACHE_CONTROL = "no-cache"
"""Caches may keep a feed but must ask again each time (a conditional request: 304 while nothing changed)."""

_NOT_XML = re.compile("[^\t\n\r\u0020-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
"""A character XML 1.0 does not allow."""


def xml_text(value: str | None) -> str | None:
    """*value* without the characters XML 1.0 does not allow, as the page shows it (:func:`shown_text`: no
    bidirectional controls); None stays None."""
    if value is None:
        return None
    return shown_text(_NOT_XML.sub("", str(value)))


def entry_id(event: FeedEvent) -> str:
    """The event's id in every format: its article and its topic."""
    return f"urn:topicstreams:news:{event.news_id}:topic:{quote(event.topic, safe='', errors='surrogatepass')}"


# -- what a feed is made of -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class FeedSpec:
    """One feed: its format, filters, links and entries."""

    kind: str
    title: str
    feed_id: str
    self_url: str
    page_url: str
    events: Sequence[FeedEvent]

    @property
    def updated(self) -> datetime:
        """The newest change of an entry (the epoch for a feed without entries)."""
        return max((event.last_change for event in self.events), default=EPOCH)

    def etag(self) -> str:
        """A strong ETag: a hash of everything the body is made of (see the module's docstring)."""
        digest = hashlib.sha256()
        digest.update(
            json.dumps([FEED_FORMAT, self.kind, self.title, self.feed_id, self.self_url, self.page_url]).encode()
        )
        for event in self.events:
            digest.update(b"\n")
            digest.update(
                json.dumps(
                    [
                        event.topic,
                        event.topic_id,
                        event.news_id,
                        event.url,
                        event.title,
                        event.source,
                        event.snippet,
                        _exact(event.published_at),
                        _exact(event.first_seen_at),
                        [[each.engine, _exact(each.first_seen_at)] for each in event.engines],
                    ]
                ).encode()
            )
        return f'"{digest.hexdigest()[:40]}"'

    def last_modified(self, now: datetime) -> datetime:
        """``Last-Modified``: the newest change, to the second, never later than *now*."""
        return min(self.updated, now).astimezone(UTC).replace(microsecond=0)


def _exact(moment: datetime | None) -> str | None:
    return None if moment is None else moment.astimezone(UTC).isoformat(timespec="microseconds")


def feed_spec(request: Request, kind: str, filters: FeedFilter, q: str | None) -> FeedSpec:
    reader = request.app.state.reader
    events = reader.events(filters, limit=request.app.state.page_size).items
    search = q.strip() if filters.search is not None and q else None
    query = filter_query(filters.topics, filters.engines, search or "", quote_via=quote)
    base = str(request.base_url)
    if not base.endswith("/"):
        base += "/"
    suffix = f"?{query}" if query else ""
    return FeedSpec(
        kind=kind,
        title=feed_title(filters, search),
        feed_id=f"urn:topicstreams:feed:{query}" if query else "urn:topicstreams:feed",
        self_url=f"{base}feed.{kind}{suffix}",
        page_url=f"{base}{suffix}",
        events=events,
    )


def feed_title(filters: FeedFilter, search: str | None) -> str:
    """``topicstreams``, and the filters: ``topicstreams — climate, energy · google · “solar”``."""
    parts = [", ".join(filters.topics), ", ".join(filters.engines), f"“{search}”" if search else ""]
    named = " · ".join(part for part in parts if part)
    return f"{NAME} — {named}" if named else NAME


# -- rendering ------------------------------------------------------------------------------------------------


def _generator(spec: FeedSpec, self_type: str) -> FeedGenerator:
    fg = FeedGenerator()
    fg.id(xml_text(spec.feed_id))
    fg.title(xml_text(spec.title) or NAME)
    fg.description(DESCRIPTION)
    fg.updated(spec.updated)  # also the RSS lastBuildDate: never "now", so the body is a function of its data
    fg.author(name=NAME)
    fg.generator(NAME)
    fg.link(href=xml_text(spec.self_url), rel="self", type=self_type)
    fg.link(href=xml_text(spec.page_url), rel="alternate", type="text/html")  # the last one is RSS's <link>
    return fg


def _categories(event: FeedEvent) -> list[dict]:
    topic = xml_text(event.topic) or "?"
    return [{"term": topic, "scheme": TOPIC_SCHEME, "label": topic}] + [
        {"term": xml_text(each.engine), "scheme": ENGINE_SCHEME, "label": xml_text(each.engine)}
        for each in event.engines
    ]


def render_atom(spec: FeedSpec) -> bytes:
    fg = _generator(spec, "application/atom+xml")
    for event in spec.events:
        entry = fg.add_entry(order="append")
        entry.id(entry_id(event))
        entry.title(xml_text(event.title) or UNTITLED)
        entry.updated(event.last_change)
        if event.published_at is not None:
            entry.published(event.published_at)
        link = article_link(event.url)
        snippet = xml_text(event.snippet)
        if link:
            entry.link(href=link, rel="alternate")
            if snippet:
                entry.summary(snippet, type="text")
        else:  # Atom: an entry without an alternate link has content
            entry.content(snippet or "", type="text")
        source = xml_text(event.source)
        if source:
            entry.author(name=source)
        entry.category(_categories(event))
    return fg.atom_str(pretty=False)


def render_rss(spec: FeedSpec) -> bytes:
    fg = _generator(spec, "application/rss+xml")
    fg.load_extension("dc", atom=False, rss=True)
    for event in spec.events:
        entry = fg.add_entry(order="append")
        entry.id(entry_id(event))  # the guid, isPermaLink="false"
        entry.title(xml_text(event.title) or UNTITLED)  # plain text (RSS titles are not HTML)
        entry.pubDate(event.published_at or event.first_seen_at)
        link = article_link(event.url)
        if link:
            entry.link(href=link, rel="alternate")
        snippet = xml_text(event.snippet)
        if snippet:
            entry.description(html.escape(snippet, quote=False))  # the description is HTML: markup shown as text
        source = xml_text(event.source)
        if source:
            entry.dc.dc_creator(source)
        entry.category(_categories(event))
    return fg.rss_str(pretty=False)


def render_json(spec: FeedSpec) -> bytes:
    items = []
    for event in spec.events:
        item: dict = {"id": entry_id(event)}
        link = article_link(event.url)
        if link:
            item["url"] = link
        item["title"] = xml_text(event.title) or UNTITLED
        item["content_text"] = xml_text(event.snippet) or ""
        if event.published_at is not None:
            item["date_published"] = iso(event.published_at)
        item["date_modified"] = iso(event.last_change)
        source = xml_text(event.source)
        if source:
            item["authors"] = [{"name": source}]
        item["tags"] = [xml_text(event.topic)]
        item["_topicstreams"] = {
            "topic": xml_text(event.topic),
            "news_id": event.news_id,
            "first_seen_at": iso(event.first_seen_at),
            "engines": [{"engine": each.engine, "first_seen_at": iso(each.first_seen_at)} for each in event.engines],
        }
        items.append(item)
    document = {
        "version": "https://jsonfeed.org/version/1.1",
        "title": xml_text(spec.title),
        "home_page_url": spec.page_url,
        "feed_url": spec.self_url,
        "description": DESCRIPTION,
        "authors": [{"name": NAME}],
        "items": items,
    }
    return json.dumps(document, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


RENDERERS = {"atom": render_atom, "rss": render_rss, "json": render_json}


# -- conditional requests -------------------------------------------------------------------------------------


def etag_matches(header: str, etag: str) -> bool:
    """Whether an ``If-None-Match`` value names *etag* (weak comparison) or is ``*``."""
    if header.strip() == "*":
        return True
    opaque = etag.removeprefix("W/")
    return any(candidate.strip().removeprefix("W/") == opaque for candidate in header.split(","))


def not_modified(request: Request, etag: str, last_modified: datetime) -> bool:
    """RFC 9110 §13.2.2: ``If-None-Match`` when sent, else ``If-Modified-Since``."""
    if_none_match = request.headers.get("if-none-match")
    if if_none_match is not None:
        return etag_matches(if_none_match, etag)
    if_modified_since = request.headers.get("if-modified-since")
    if not if_modified_since:
        return False
    try:
        since = parsedate_to_datetime(if_modified_since)
    except (TypeError, ValueError, IndexError, OverflowError):
        return False  # not an HTTP date: ignored (RFC 9110 §13.1.3)
    if since.tzinfo is None:
        since = since.replace(tzinfo=UTC)
    return last_modified <= since


def serve(request: Request, kind: str, topic: list[str], engine: list[str], q: str | None) -> Response:
    filters = feed_filter(topic, engine, q)
    spec = feed_spec(request, kind, filters, q)
    etag = spec.etag()
    last_modified = spec.last_modified(datetime.now(UTC))
    headers = {
        "ETag": etag,
        "Last-Modified": format_datetime(last_modified, usegmt=True),
        "Cache-Control": CACHE_CONTROL,
    }
    if not_modified(request, etag, last_modified):
        return Response(status_code=304, headers=headers)
    return Response(RENDERERS[kind](spec), media_type=MEDIA_TYPES[kind], headers=headers)


# -- the routes -----------------------------------------------------------------------------------------------

TopicParam = Annotated[list[str], Query(description="Events of this topic (repeatable: any of them)")]
EngineParam = Annotated[list[str], Query(description="Events found by this engine (repeatable: any of them)")]
SearchParam = Annotated[str | None, Query(description="Search title, snippet and source (as on the page)")]

router = APIRouter(tags=["feeds"])

_RESPONSES = {
    304: {"description": "Not modified: the ETag (or Last-Modified) the reader sent is current"},
    400: {"description": "A parameter the feed cannot use (named in `loc`)"},
}


@router.head("/feed.atom", include_in_schema=False)
@router.get("/feed.atom", summary="Atom 1.0 feed", responses=_RESPONSES, response_class=Response)
def atom(
    request: Request,
    topic: TopicParam = [],  # noqa: B006 - FastAPI copies a default list for each request
    engine: EngineParam = [],  # noqa: B006
    q: SearchParam = None,
) -> Response:
    return serve(request, "atom", topic, engine, q)


@router.head("/feed.rss", include_in_schema=False)
@router.get("/feed.rss", summary="RSS 2.0 feed", responses=_RESPONSES, response_class=Response)
def rss(
    request: Request,
    topic: TopicParam = [],  # noqa: B006
    engine: EngineParam = [],  # noqa: B006
    q: SearchParam = None,
) -> Response:
    return serve(request, "rss", topic, engine, q)


@router.head("/feed.json", include_in_schema=False)
@router.get("/feed.json", summary="JSON Feed 1.1", responses=_RESPONSES, response_class=Response)
def json_feed(
    request: Request,
    topic: TopicParam = [],  # noqa: B006
    engine: EngineParam = [],  # noqa: B006
    q: SearchParam = None,
) -> Response:
    return serve(request, "json", topic, engine, q)
