"""The messages of an engine's and a node's transitions, and when a paused engine's reminder is due. Pure.

Each function returns one :class:`~topicstreams.alerts.events.Alert` that says what happened, why (the reasons),
since when, on which node, and what to do. The health extension (:mod:`topicstreams.extensions.watch`) calls them
at the moment a state changes — one message per transition, none while a state lasts — and
:func:`reminder_due` tells it when a paused engine is to be recalled (every ``alerting.repeat`` seconds from the
pause, so a restart keeps the rhythm: it is counted from ``paused_at``, which the status row keeps).

Only names the project controls reach these messages (engines, nodes, reasons, configured canary queries); they
still go through :func:`~topicstreams.alerts.inert_text.plain`-safe formatting by the notifier for chat services, and
are escaped for e-mail.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from topicstreams.alerts.events import (
    CANARY_MISMATCH,
    COVERAGE_DROP,
    DATA_LOSS,
    DEGRADED,
    NETWORK_DOWN,
    PARSER_CRITICAL,
    PAUSED,
    RECOVERED,
    RESUMED,
    ROUTE_DOWN,
    ROUTE_RECOVERED,
    SATURATION,
    Alert,
)
from topicstreams.alerts.inert_text import duration

NO_REASON = "no single signal"


def when(moment: datetime) -> str:
    """``2026-12-02 16:40:03Z``."""
    return f"{moment:%Y-%m-%d %H:%M:%S}Z"


def _reasons(reasons: Sequence[str]) -> str:
    return ", ".join(reasons) or NO_REASON


def _resume_command(engine: str, node: str) -> str:
    return f"scrapy health resume {engine} --node {node}"


def paused(
    engine: str,
    node: str,
    score: int | None,
    reasons: Sequence[str],
    since: datetime,
    now: datetime,
    reminder: bool = False,
) -> Alert:
    """The engine was paused (or, with ``reminder``, is still paused ``alerting.repeat`` seconds later)."""
    head = (
        f"Reminder: {engine} is still paused on node {node}, for {duration((now - since).total_seconds())}"
        if reminder
        else f"{engine} is paused on node {node}"
    )
    text = (
        f"{head} (since {when(since)}).\n"
        f"Why: health {'-' if score is None else score} (critical): {_reasons(reasons)}.\n"
        f"It schedules no topic on {node} until a person looks and resumes it: `{_resume_command(engine, node)}` "
        f"(or the Resume button on /monitor). Check first what the engine serves that node: a CAPTCHA or block "
        f"page, or 429s, mean the exit IP needs a rest or a change."
    )
    title = f"topicstreams: {engine} {'still ' if reminder else ''}paused on {node}"
    return Alert(
        PAUSED,
        title,
        text,
        now,
        engine=engine,
        node=node,
        score=score,
        band="critical",
        reasons=tuple(reasons),
        details={"since": since.isoformat(), "reminder": reminder},
    )


def resumed(engine: str, node: str, since: datetime | None, now: datetime, factor: float) -> Alert:
    """A person lifted the engine's pause."""
    paused_for = f" after {duration((now - since).total_seconds())} paused" if since else ""
    text = (
        f"{engine} was resumed on node {node} at {when(now)}{paused_for}.\n"
        f"It is judged afresh from now, at the slowed pace (× {factor:g}) until its score is ok; a recovery "
        f"message follows when it is."
    )
    return Alert(
        RESUMED,
        f"topicstreams: {engine} resumed on {node}",
        text,
        now,
        engine=engine,
        node=node,
        details={"since": since.isoformat() if since else None},
    )


def recovered(engine: str, node: str, score: int | None, was: str, since: datetime | None, now: datetime) -> Alert:
    """Back to ``ok`` after ``was`` (degraded, critical or paused)."""
    lasted = f" for {duration((now - since).total_seconds())}" if since else ""
    text = (
        f"{engine} is healthy again on node {node}: health {'-' if score is None else score} (ok) at {when(now)}, "
        f"after being {was}{lasted}.\nBack to its normal pace; nothing to do."
    )
    return Alert(
        RECOVERED,
        f"topicstreams: {engine} recovered on {node}",
        text,
        now,
        engine=engine,
        node=node,
        score=score,
        band="ok",
        details={"was": was, "since": since.isoformat() if since else None},
    )


def degraded(engine: str, node: str, score: int | None, reasons: Sequence[str], factor: float, now: datetime) -> Alert:
    text = (
        f"{engine} is degraded on node {node} since {when(now)}: health {'-' if score is None else score} "
        f"(degraded): {_reasons(reasons)}.\n"
        f"It slowed down by itself (pacing floor and re-scrape interval × {factor:g}) and speeds up again when "
        f"it recovers. Nothing to do yet; if it turns critical it is paused and you are told."
    )
    return Alert(
        DEGRADED,
        f"topicstreams: {engine} degraded on {node}",
        text,
        now,
        engine=engine,
        node=node,
        score=score,
        band="degraded",
        reasons=tuple(reasons),
    )


def saturation(node: str, cooling: Sequence[str], begins: bool, since: datetime | None, now: datetime) -> Alert:
    """The node's exit IP saturation begins (robust engines ``cooling`` together) or ends."""
    if begins:
        text = (
            f"Exit IP saturation suspected on node {node} since {when(now)}: robust engines cooling down "
            f"together: {', '.join(cooling)}.\n"
            f"The node's exit IP is probably at capacity: add a node with its own exit IP (or a proxy) rather "
            f"than slowing down."
        )
        title = f"topicstreams: exit IP saturation on {node}"
    else:
        lasted = f" after {duration((now - since).total_seconds())}" if since else ""
        text = f"Exit IP saturation over on node {node} at {when(now)}{lasted}: the robust engines answer again."
        title = f"topicstreams: exit IP saturation over on {node}"
    return Alert(
        SATURATION,
        title,
        text,
        now,
        node=node,
        reasons=tuple(cooling),
        details={"begins": begins, "cooling": list(cooling)},
    )


def canary_mismatch(
    engine: str, node: str, query: str, problem: str | None, now: datetime, ended: bool = False
) -> Alert:
    if ended:
        text = f"{engine}'s canary queries answer right again on node {node} ({when(now)})."
        title = f"topicstreams: {engine} canaries right again on {node}"
    else:
        text = (
            f"{engine} answered canary query {query!r} wrongly on node {node} at {when(now)}: "
            f"{problem or 'unexpected results'}.\n"
            f"The page looked normal, but it is not what a real visitor would see: the engine may be serving "
            f"this node something else (a degraded or stale index, a different country). Open the query in a "
            f"browser from the node's exit IP and compare."
        )
        title = f"topicstreams: {engine} canary mismatch on {node}"
    return Alert(
        CANARY_MISMATCH,
        title,
        text,
        now,
        engine=engine,
        node=node,
        reasons=() if ended else ("canary mismatch",),
        details={"query": query, "ended": ended},
    )


def parser_critical(
    engine: str, node: str, score: int | None, reasons: Sequence[str], now: datetime, ended: bool = False
) -> Alert:
    if ended:
        text = f"{engine}'s parser reads its result pages in full again on node {node} ({when(now)})."
        title = f"topicstreams: {engine} parser ok again on {node}"
    else:
        text = (
            f"{engine}'s parser health is critical on node {node} since {when(now)}: "
            f"{'-' if score is None else score}: {_reasons(reasons)}.\n"
            f"The engine's result markup has probably changed: its parser (topicstreams/engines/{engine}.py) needs "
            f"a fix. This is not a block: the pace stays as it is."
        )
        title = f"topicstreams: {engine} parser critical on {node}"
    return Alert(
        PARSER_CRITICAL,
        title,
        text,
        now,
        engine=engine,
        node=node,
        score=score,
        reasons=tuple(reasons),
        details={"ended": ended},
    )


def coverage_drop(
    engine: str, node: str, window: float | None, baseline: float | None, now: datetime, ended: bool = False
) -> Alert:
    def share(value: float | None) -> str:
        return "-" if value is None else f"{value:.0%}"

    if ended:
        text = (
            f"{engine} finds what the other engines find again on node {node}: coverage {share(window)} "
            f"(its normal {share(baseline)}) at {when(now)}."
        )
        title = f"topicstreams: {engine} coverage back on {node}"
    else:
        text = (
            f"{engine} stopped finding what the other engines find on node {node} ({when(now)}): coverage "
            f"{share(window)} of the articles the others found for the same topics, against its normal "
            f"{share(baseline)}, while its pages parse fine.\n"
            f"The engine is probably serving this node stale or filtered results (a soft block no status code "
            f"shows). Compare its results page for a topic with another engine's from the node's exit IP."
        )
        title = f"topicstreams: {engine} coverage drop on {node}"
    return Alert(
        COVERAGE_DROP,
        title,
        text,
        now,
        engine=engine,
        node=node,
        reasons=() if ended else ("coverage",),
        details={"window": window, "baseline": baseline, "ended": ended},
    )


def network_down(
    node: str,
    engines: Sequence[str],
    reasons: Sequence[str],
    since: datetime | None,
    now: datetime,
    ended: bool = False,
) -> Alert:
    if ended:
        lasted = f" after {duration((now - since).total_seconds())}" if since else ""
        text = f"The network of node {node} is back at {when(now)}{lasted}: its engines answer again."
        title = f"topicstreams: network back on {node}"
    else:
        text = (
            f"Every engine on node {node} fails to connect since {when(since or now)} ({', '.join(engines)}: "
            f"{_reasons(reasons)}).\n"
            f"That is the node's network (DNS, route, proxy), not the engines: nothing is paused for it and the "
            f"engines' scores leave these failures out. Check the node's connection and its proxy."
        )
        title = f"topicstreams: network down on {node}"
    return Alert(
        NETWORK_DOWN,
        title,
        text,
        now,
        node=node,
        reasons=tuple(reasons),
        details={"engines": list(engines), "ended": ended, "since": since.isoformat() if since else None},
    )


def route_down(node: str, route: str, reason: str, engines: Sequence[str], bench: float | None, now: datetime) -> Alert:
    """The proxied ``route`` of ``node`` failed on every engine that takes it (``reason``: its latest failure)."""
    wait = f" for {duration(bench)}" if bench else ""
    text = (
        f"Route {route} of node {node} is down since {when(now)}: it failed on every engine that takes it "
        f"({', '.join(engines)}: {reason}).\n"
        f"That is the route's proxy or the way to it, not the engines: nothing goes on it{wait}, then one probe; "
        f"the engines go on through their other routes and none of them is held responsible. Check the proxy "
        f"(`scrapy routes check`)."
    )
    return Alert(
        ROUTE_DOWN,
        f"topicstreams: route {route} down on {node}",
        text,
        now,
        node=node,
        reasons=(reason,),
        details={"route": route, "engines": list(engines), "ended": False},
    )


def route_recovered(node: str, route: str, since: datetime | None, now: datetime) -> Alert:
    """The proxied ``route`` of ``node`` answers again (its probe got an answer)."""
    lasted = f" after {duration((now - since).total_seconds())}" if since else ""
    return Alert(
        ROUTE_RECOVERED,
        f"topicstreams: route {route} back on {node}",
        f"Route {route} of node {node} answers again at {when(now)}{lasted}: every engine takes it again.",
        now,
        node=node,
        details={"route": route, "ended": True, "since": since.isoformat() if since else None},
    )


def data_loss(engine: str, node: str, items: int, why: str, recorded: str, now: datetime) -> Alert:
    """A crawl of ``engine`` on ``node`` stopped with ``items`` neither stored nor journaled (``why``); ``recorded``:
    where the loss is recorded."""
    text = (
        f"The crawl of {engine} on node {node} stopped at {when(now)} with {items} scraped item(s) neither stored "
        f"in the database nor kept in its journal: they are lost ({why}).\n"
        f"The loss is {recorded}. Free space on the journal's disk (browser.profile_dir) and check the database; "
        f"the lost articles come back only if the engine still lists them at the next scrape."
    )
    return Alert(
        DATA_LOSS,
        f"topicstreams: {items} item(s) of {engine} lost on {node}",
        text,
        now,
        engine=engine,
        node=node,
        reasons=("lost",),
        details={"items": items, "why": why},
    )


def reminder_due(paused_at: datetime, last_reminded: datetime | None, now: datetime, repeat: float) -> bool:
    """Whether a paused engine's reminder is due at ``now``: every ``repeat`` seconds counted from ``paused_at``
    (0: never), once per period — the first one ``repeat`` after the pause, none for a period already reminded."""
    if repeat <= 0:
        return False
    elapsed = (now - paused_at).total_seconds()
    periods = int(elapsed // repeat)
    if periods < 1:
        return False
    if last_reminded is None:
        return True
    return int((last_reminded - paused_at).total_seconds() // repeat) < periods
