"""``POST /api/engines/{engine}/resume``: the one write of the web app — what ``scrapy health resume ENGINE --node
NODE`` does, for a person holding ``web.admin_token`` (:mod:`topicstreams.web.tokens`). A script sends the token as a
Bearer header and gets JSON; the monitor's form sends it as the field ``token`` and gets a page (a redirect back to
the monitor, or an error page that says what to do)."""

from __future__ import annotations

import asyncio
import logging
import math
from typing import Annotated, Any
from urllib.parse import parse_qs, urlencode

from fastapi import APIRouter, Query, Request
from fastapi.responses import JSONResponse, RedirectResponse, Response
from pydantic import BaseModel
from starlette.concurrency import run_in_threadpool

from topicstreams import ENGINES
from topicstreams.engines.states import PAUSED
from topicstreams.storage import utcnow
from topicstreams.storage.engine_status import read_status, resume
from topicstreams.web.tokens import bearer_token, client_of

logger = logging.getLogger(__name__)

MAX_FORM_BYTES = 4096
"""The largest Resume form body read."""

router = APIRouter()


class ResumeAnswer(BaseModel):
    engine: str
    node: str
    state: str


class Problem(BaseModel):
    detail: Any


class ResumeRefused(Exception):
    def __init__(self, status: int, title: str, message: str, headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.status, self.title, self.message, self.headers = status, title, message, headers or {}


def is_form(request: Request) -> bool:
    return request.headers.get("content-type", "").split(";")[0].strip().lower() == (
        "application/x-www-form-urlencoded"
    )


async def form_token(request: Request) -> str | None:
    """The ``token`` field of a urlencoded form body (the monitor's Resume form)."""
    body = b""
    async for chunk in request.stream():
        body += chunk
        if len(body) > MAX_FORM_BYTES:
            raise ResumeRefused(413, "Form too large", f"a Resume form is at most {MAX_FORM_BYTES} bytes")
    fields = parse_qs(body.decode("utf-8", "replace"), keep_blank_values=True)
    values = fields.get("token") or [None]
    return values[0] or None


async def check_resume(request: Request, engine: str, node: str | None) -> str:
    """The node to resume ``engine`` on, once the request may do it; else :class:`ResumeRefused`."""
    settings = request.app.state.settings
    if "token" in request.query_params:
        raise ResumeRefused(
            400,
            "Token in the URL",
            "the token goes in an `Authorization: Bearer` header or the "
            "form's field, never in the URL (access logs keep URLs); this request was not used",
        )
    if not settings.admin_token:
        raise ResumeRefused(
            403,
            "Resuming from the web is off",
            (
                "no admin token is configured: set `web.admin_token` in the configuration and restart `scrapy serve`, "
                f"or run `scrapy health resume {engine if engine in ENGINES else 'ENGINE'} --node NODE`"
            ),
        )
    token = bearer_token(request)
    if token is None and is_form(request):
        token = await form_token(request)
    client = client_of(request)
    attempt = request.app.state.token_check.attempt(client, token, settings.admin_token)  # in line per client
    if attempt.refused:
        logger.warning(
            "Refused to resume %r for %s: its earlier attempts are answered over the next %.0f s (too many at once)",
            engine[:64],
            client,
            attempt.wait,
        )
        raise ResumeRefused(
            429,
            "Too many attempts",
            "this client's earlier attempts are still being answered: try again later",
            {"Retry-After": str(math.ceil(attempt.wait))},
        )
    if not attempt.ok:
        logger.warning(
            "Refused to resume %r on node %r for %s: %s token (%d failure(s) in a row%s)",
            engine[:64],
            (node or "")[:64],
            client,
            "no" if token is None else "a wrong",
            attempt.failures,
            f"; answered after {attempt.wait:g} s" if attempt.wait else "",
        )
        await asyncio.sleep(attempt.wait)
        raise ResumeRefused(
            401,
            "Wrong token",
            "the admin token is missing or wrong (`web.admin_token`)",
            {"WWW-Authenticate": 'Bearer realm="topicstreams"'},
        )
    await asyncio.sleep(attempt.wait)  # its turn, behind the client's earlier attempts
    if node is None or not node.strip():
        raise ResumeRefused(400, "No node", "name the node to resume the engine on: `?node=NODE`")
    if engine not in ENGINES:
        raise ResumeRefused(404, "Unknown engine", f"no engine {engine[:64]!r}: expected one of {', '.join(ENGINES)}")
    return node.strip()


@router.post(
    "/api/engines/{engine}/resume",
    tags=["health"],
    response_model=ResumeAnswer,
    summary="Lift an engine's pause on a node (Bearer web.admin_token)",
    responses={
        400: {"model": Problem},
        401: {"model": Problem},
        403: {"model": Problem},
        404: {"model": Problem},
        409: {"model": Problem},
        429: {"model": Problem},
    },
)
async def resume_engine(
    request: Request, engine: str, node: Annotated[str | None, Query(max_length=256)] = None
) -> Response:
    from_form = is_form(request)
    try:
        node = await check_resume(request, engine, node)
        status = await run_in_threadpool(read_status, request.app.state.reader.db, engine, node)
        if status is None:
            raise ResumeRefused(404, "Unknown node", f"{engine} has no status on node {node[:64]!r}")
        if status.state != PAUSED:
            raise ResumeRefused(
                409, "Not paused", f"{engine} is not paused on node {node[:64]!r} (it is {status.state_at(utcnow())})"
            )
        writer = request.app.state.databases.of(request.app.state.settings.database_url)
        if not await run_in_threadpool(resume, writer, engine, node, utcnow()):
            raise ResumeRefused(409, "Not paused", f"{engine} is no longer paused on node {node[:64]!r}")
    except ResumeRefused as refused:
        if from_form:
            response = request.app.state.pages.error(request, refused.status, refused.title, refused.message)
            response.headers.update(refused.headers)
            return response
        return JSONResponse({"detail": refused.message}, status_code=refused.status, headers=refused.headers)
    logger.info(
        "Resumed %s on node %r from the web (for %s): it restarts at the slowed pace",
        engine,
        node[:64],
        client_of(request),
    )
    if from_form:
        return RedirectResponse(f"/monitor?{urlencode({'resumed': engine, 'node': node})}", status_code=303)
    return JSONResponse({"engine": engine, "node": node, "state": "running"})
