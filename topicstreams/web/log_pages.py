"""The stored logs: ``GET /logs`` (the page) and ``GET /api/logs`` (JSON).

Both read ``scraper_logs`` through :func:`topicstreams.storage.log_reads.read_logs` on the app's read-only handle:
newest first by ``(at, id)``, keyset paging by an opaque cursor (``before``), never OFFSET, never a count. The
filters are query parameters, the same on both: ``engine`` (one of the four), ``node``, ``level`` (a minimum:
``WARNING`` shows warnings and worse; case ignored), ``q`` (a case-insensitive substring of the message; ``%`` and
``_`` are ordinary characters), ``before`` and ``limit`` (1…200, default ``web.page_size``). An empty value means
no filter (what the page's form sends). A bad value is a 400 naming the parameter (the page answers with the
app's error page instead of JSON), never a 500.

The page is server-rendered (autoescaped: a message or a logger name carrying markup shows as text) and works
without JavaScript: the filters are a GET form, "Older" a plain link carrying the cursor.

A filter the index does not serve is checked on a bounded stretch of the index per request (see
:mod:`topicstreams.storage.log_records`): a page may hold fewer than ``limit`` records and still have a ``next``.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Annotated
from urllib.parse import urlencode

from fastapi import APIRouter, Query, Request
from fastapi.responses import HTMLResponse, JSONResponse, Response
from pydantic import BaseModel

from topicstreams import ENGINES
from topicstreams.storage.feed_reads import MAX_LIMIT
from topicstreams.storage.log_reads import LEVELS, LogCursor, LogCursorError, LogEntry, LogFilter, LogPage, read_logs
from topicstreams.web.api import ERRORS
from topicstreams.web.formats import iso
from topicstreams.web.params import MAX_QUERY_LENGTH, BadParameter

MAX_NODE_LENGTH = 200
"""The longest node id accepted as a filter, in characters."""

router = APIRouter(tags=["logs"])


# ---- the parameters --------------------------------------------------------------------------------------------


def _text(parameter: str, value: str | None, longest: int) -> str | None:
    if value is None or not value.strip():
        return None
    if "\x00" in value:
        raise BadParameter(parameter, "holds a NUL character")
    if len(value) > longest:
        raise BadParameter(parameter, f"is {len(value)} characters long, at most {longest}")
    return value.strip()


def log_filter(engine: str | None, node: str | None, level: str | None, q: str | None) -> LogFilter:
    """The filters of a request; :class:`~topicstreams.web.params.BadParameter` on a value the logs cannot use."""
    name = _text("engine", engine, 32)
    if name is not None:
        name = name.lower()
        if name not in ENGINES:
            raise BadParameter("engine", f"unknown engine {name!r}: expected one of {', '.join(ENGINES)}")
    minimum = _text("level", level, 16)
    if minimum is not None:
        if minimum.upper() not in LEVELS:
            raise BadParameter("level", f"unknown level {minimum!r}: expected one of {', '.join(LEVELS)}")
        minimum = minimum.upper()
    return LogFilter(
        engine=name, node=_text("node", node, MAX_NODE_LENGTH), level=minimum, text=_text("q", q, MAX_QUERY_LENGTH)
    )


def log_cursor(before: str | None) -> LogCursor | None:
    if before is None or not before.strip():
        return None
    try:
        return LogCursor.decode(before.strip())
    except LogCursorError as exc:
        raise BadParameter("before", f"{exc}: pass the 'next' or 'cursor' value of an earlier answer") from None


def page_of(request: Request, filters: LogFilter, before: LogCursor | None, limit: int | None) -> LogPage:
    return read_logs(request.app.state.reader.db, filters, limit=limit or request.app.state.page_size, before=before)


# ---- the API ---------------------------------------------------------------------------------------------------


class LogItem(BaseModel):
    at: str
    node: str
    engine: str | None
    level: str
    logger: str
    message: str
    cursor: str


class LogsAnswer(BaseModel):
    items: list[LogItem]
    next: str | None


def entry_json(entry: LogEntry) -> dict:
    return {
        "at": iso(entry.at),
        "node": entry.node,
        "engine": entry.engine,
        "level": entry.level,
        "logger": entry.logger,
        "message": entry.message,
        "cursor": entry.cursor.encode(),
    }


EngineParam = Annotated[str | None, Query(description=f"Records about this engine: one of {', '.join(ENGINES)}")]
NodeParam = Annotated[str | None, Query(description="Records of this node (`node.id`)")]
LevelParam = Annotated[
    str | None,
    Query(
        description=(
            f"The lowest level shown: one of {', '.join(LEVELS)} (case ignored); `WARNING` shows warnings and worse"
        )
    ),
]
TextParam = Annotated[str | None, Query(description="Records whose message holds this text (case ignored)")]
BeforeParam = Annotated[str | None, Query(description="A cursor (`next`, or an item's `cursor`): older records")]
LimitParam = Annotated[int | None, Query(ge=1, le=MAX_LIMIT, description="Records per answer (default web.page_size)")]


@router.get(
    "/api/logs",
    response_model=LogsAnswer,
    responses=ERRORS,
    summary="Stored log records, newest first",
    description=(
        "The WARNING-and-above records of every crawl process and their per-window INFO lines, secrets "
        "masked. A filter other than the one an index serves is checked on a bounded stretch of records "
        "per request: an answer may hold fewer than `limit` items, or none, with a `next` to go on from."
    ),
)
def logs_api(
    request: Request,
    engine: EngineParam = None,
    node: NodeParam = None,
    level: LevelParam = None,
    q: TextParam = None,
    before: BeforeParam = None,
    limit: LimitParam = None,
) -> JSONResponse:
    page = page_of(request, log_filter(engine, node, level, q), log_cursor(before), limit)
    return JSONResponse(
        {"items": [entry_json(entry) for entry in page.items], "next": page.next.encode() if page.next else None}
    )


# ---- the page --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Row:
    """One record as the page shows it."""

    iso: str
    time: str
    day: str
    node: str
    engine: str | None
    level: str
    logger: str
    message: str

    @classmethod
    def of(cls, entry: LogEntry) -> Row:
        at = entry.at.astimezone(UTC)
        return cls(
            iso(at),
            at.strftime("%H:%M:%S"),
            at.strftime("%Y-%m-%d"),
            entry.node,
            entry.engine,
            entry.level,
            entry.logger,
            entry.message,
        )


def logs_url(filters: dict[str, str], **extra: str) -> str:
    pairs = [(key, value) for key, value in {**filters, **extra}.items() if value]
    return f"/logs?{urlencode(pairs)}" if pairs else "/logs"


@router.get("/logs", include_in_schema=False, response_class=HTMLResponse)
def logs_page(
    request: Request,
    engine: EngineParam = None,
    node: NodeParam = None,
    level: LevelParam = None,
    q: TextParam = None,
    before: BeforeParam = None,
    limit: LimitParam = None,
) -> Response:
    filters = log_filter(engine, node, level, q)
    older = log_cursor(before)
    page = page_of(request, filters, older, limit)
    shown = {
        "engine": filters.engine or "",
        "node": filters.node or "",
        "level": filters.level or "",
        "q": filters.text or "",
        "limit": str(limit) if limit else "",
    }
    narrowed = any(shown[key] for key in ("engine", "node", "level", "q"))
    empty = None
    if not page.items:
        empty = (
            "scanned"
            if page.next is not None
            else "end"
            if older is not None
            else "no-match"
            if narrowed
            else "nothing"
        )
    return request.app.state.pages.render(
        "logs.html",
        section="logs",
        rows=[Row.of(entry) for entry in page.items],
        shown=shown,
        engines=ENGINES,
        levels=LEVELS,
        narrowed=narrowed,
        empty=empty,
        older_href=logs_url(shown, before=page.next.encode()) if page.next else None,
        newest_href=logs_url(shown) if older is not None else None,
        now=datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S UTC"),
    )
