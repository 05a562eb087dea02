"""The JSON API: ``GET /api/feed`` and ``GET /api/topics`` (each topic with its schedule per engine:
:mod:`topicstreams.reports.schedule_words`).

In the manner of Miniflux's API: filters as query parameters (``topic`` and ``engine`` repeatable), keyset paging
with opaque cursors (``before``: older than it; ``after``: newer than it), never OFFSET.
"""

from __future__ import annotations

from collections.abc import Iterable
from enum import Enum
from typing import Annotated

from fastapi import APIRouter, Query, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel

from topicstreams import ENGINES
from topicstreams.reports.schedule_words import engines_json, rows_by_topic
from topicstreams.storage.feed_reads import MAX_LIMIT, FeedEvent, FeedReader, TopicSummary
from topicstreams.storage.topic_rates import TopicRateRow, read_topic_rates
from topicstreams.web.formats import iso
from topicstreams.web.params import MAX_QUERY_LENGTH, cursors, feed_filter

EngineName = Enum("EngineName", {name: name for name in ENGINES}, type=str)
"""The engines, as the schema's enum."""


def event_json(event: FeedEvent) -> dict:
    return {
        "topic": event.topic,
        "news_id": event.news_id,
        "url": event.url,
        "title": event.title,
        "source": event.source,
        "snippet": event.snippet,
        "published_at": iso(event.published_at),
        "first_seen_at": iso(event.first_seen_at),
        "engines": [{"engine": each.engine, "first_seen_at": iso(each.first_seen_at)} for each in event.engines],
        "cursor": event.cursor.encode(),
    }


def topic_json(topic: TopicSummary, rates: Iterable[TopicRateRow] = ()) -> dict:
    return {
        "name": topic.name,
        "active": topic.active,
        "events": topic.events,
        "last_event_at": iso(topic.last_event_at),
        "engines": engines_json(rates, iso),
    }


# -- the schema (documentation only: the views build their JSON directly) ------------------------------------


class EngineSighting(BaseModel):
    engine: str
    first_seen_at: str


class FeedItem(BaseModel):
    topic: str
    news_id: str
    url: str
    title: str
    source: str | None
    snippet: str | None
    published_at: str | None
    first_seen_at: str
    engines: list[EngineSighting]
    cursor: str


class FeedAnswer(BaseModel):
    items: list[FeedItem]
    next: str | None


class EngineSchedule(BaseModel):
    rate_per_hour: float | None
    interval_seconds: float | None
    next_due_at: str | None


class TopicItem(BaseModel):
    name: str
    active: bool
    events: int
    last_event_at: str | None
    engines: dict[str, EngineSchedule]


class ErrorItem(BaseModel):
    loc: list[str]
    msg: str
    type: str


class ErrorAnswer(BaseModel):
    detail: list[ErrorItem] | str


ERRORS = {
    400: {"model": ErrorAnswer, "description": "A parameter the feed cannot use (named in `loc`)"},
    503: {"model": ErrorAnswer, "description": "No readable database, or no schema: run `scrapy db upgrade`"},
}

TopicParam = Annotated[list[str], Query(description="Events of this topic (repeatable: any of them)")]
EngineParam = Annotated[list[EngineName], Query(description="Events found by this engine (repeatable: any of them)")]
SearchParam = Annotated[
    str | None,
    Query(
        max_length=MAX_QUERY_LENGTH,
        description=('Search title, snippet and source: words ANDed, a "quoted phrase"; case and accents ignored'),
    ),
]

router = APIRouter(prefix="/api", tags=["feed"])


def reader(request: Request) -> FeedReader:
    return request.app.state.reader


@router.get("/feed", response_model=FeedAnswer, responses=ERRORS, summary="Feed events, newest first")
def feed(
    request: Request,
    topic: TopicParam = [],  # noqa: B006 - FastAPI copies defaults
    engine: EngineParam = [],  # noqa: B006
    q: SearchParam = None,
    since: Annotated[str | None, Query(description="Only events first seen at or after this ISO 8601 time")] = None,
    before: Annotated[str | None, Query(description="A cursor (`next`, or an item's `cursor`): older events")] = None,
    after: Annotated[
        str | None,
        Query(
            description=(
                "A cursor: the events newer than it, at most `limit` (those nearest it), newest first; `next` is null"
            )
        ),
    ] = None,
    limit: Annotated[
        int | None, Query(ge=1, le=MAX_LIMIT, description="Events per answer (default web.page_size)")
    ] = None,
) -> JSONResponse:
    filters = feed_filter(topic, [each.value for each in engine], q, since)
    older, newer = cursors(before, after)
    page = reader(request).events(filters, limit=limit or request.app.state.page_size, before=older, after=newer)
    return JSONResponse(
        {"items": [event_json(event) for event in page.items], "next": page.next.encode() if page.next else None}
    )


@router.get(
    "/topics",
    response_model=list[TopicItem],
    responses=ERRORS,
    summary="Every topic, its events, and its rate and interval per engine",
)
def topics(request: Request) -> JSONResponse:
    feed = reader(request)
    rates = rows_by_topic(read_topic_rates(feed.db))
    return JSONResponse([topic_json(topic, rates.get(topic.name, [])) for topic in feed.topics()])
