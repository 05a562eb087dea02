"""The one-line verdict of a health report: the most specific true thing to say about the nodes, first.

``scrapy health`` prints it above its table, ``/monitor`` at the top of the page, the feed in its header. In order,
the first that holds is said (several nodes or engines in the same case are named together):

1. a node's network is down: ``Network down since 14:44 UTC — no engine reachable`` (``… on node-a …`` when the
   report covers several nodes);
2. an engine is paused (a person must resume it): ``google paused on node-a: challenge``;
3. an engine is critical: ``bing critical on node-a: hard_block``;
4. a node's exit IP is suspected saturated: ``Exit IP saturation suspected on node-a: bing, google cooling``;
5. an engine's crawl went silent: ``google stale on node-a: no word from its crawl since 14:50 UTC`` (the engines of
   a node together: ``google, bing stale on node-a: no word from their crawl since …``);
6. an engine is degraded or cooling: ``bing degraded on node-a: soft_block``, ``brave cooling on node-a until
   14:52 UTC``;
7. no engine is crawling: ``No crawl running: the last one stopped at 14:50 UTC`` (``… no crawl has run`` when
   no engine has a row);
8. else ``All 4 engines healthy on 1 node`` (``Both engines …``, ``google healthy …``) — or, while some have too
   few requests to be judged, ``4 engines running on 1 node; 2 of them not judged yet (too few requests)``.

:func:`exit_status` is the same judgement as monitoring plugins read it (``scrapy health``'s exit status).

Pure: it reads the report's rows and verdicts (:class:`Verdicts`); node ids pass through ``shown`` (a terminal's or a
page's escaping is the caller's).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Protocol

from topicstreams.engines.states import COOLING, GONE, PAUSED, RUNNING, STALE
from topicstreams.health.network_state import NetworkState
from topicstreams.health.saturation import Saturation
from topicstreams.health.score import CRITICAL, DEGRADED, UNKNOWN


class EngineRow(Protocol):
    """What the line reads of an engine on a node (a health report's row is one)."""

    @property
    def node(self) -> str: ...
    @property
    def engine(self) -> str: ...
    @property
    def state(self) -> str | None: ...
    @property
    def band(self) -> str: ...
    @property
    def reasons(self) -> tuple[str, ...]: ...
    @property
    def cooling_until(self) -> datetime | None: ...
    @property
    def updated_at(self) -> datetime | None: ...


EXIT_OK, EXIT_DEGRADED, EXIT_CRITICAL, EXIT_UNKNOWN = 0, 1, 2, 3
"""``scrapy health``'s exit statuses, as monitoring plugins read them: OK, WARNING, CRITICAL, UNKNOWN."""


class Verdicts(Protocol):
    """What the line reads of a health report (:class:`topicstreams.reports.health_report.HealthReport` is one)."""

    @property
    def engines(self) -> Sequence[EngineRow]: ...
    @property
    def network(self) -> Mapping[str, NetworkState]: ...
    @property
    def saturation(self) -> Mapping[str, Saturation]: ...
    @property
    def all_nodes(self) -> bool: ...


def clock(moment: datetime | None) -> str:
    """``14:44 UTC`` (a naive moment is taken as UTC)."""
    if moment is None:
        return "an unknown time"
    moment = moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)
    return moment.strftime("%H:%M UTC")


def plural(count: int, word: str) -> str:
    """``1 engine``, ``4 engines``."""
    return f"{count} {word}{'' if count == 1 else 's'}"


def verdict_line(report: Verdicts, shown: Callable[[str], str] = str) -> str:
    """The report's one-line verdict (see the module)."""
    several = report.all_nodes or len({row.node for row in report.engines}) > 1

    def where(node: str) -> str:
        return f" on {shown(node)}" if several else ""

    down = sorted((node, state) for node, state in report.network.items() if state.down)
    if down:
        return "; ".join(
            f"Network down{where(node)} since {clock(state.since)} — no engine reachable" for node, state in down
        )
    rows = [row for row in report.engines if row.state is not None]
    live = [row for row in rows if row.state not in GONE]
    for case, pick in (
        ("paused", lambda row: row.state == PAUSED),
        ("critical", lambda row: row.band == CRITICAL and row.state in (RUNNING, COOLING)),
    ):
        picked = [row for row in live if pick(row)]
        if picked:
            return "; ".join(f"{row.engine} {case}{where(row.node)}{reasons(row)}" for row in picked)
    saturated = sorted((node, verdict) for node, verdict in report.saturation.items() if verdict.suspected)
    if saturated:
        return "; ".join(
            f"Exit IP saturation suspected{where(node)}: {', '.join(verdict.cooling)} cooling"
            for node, verdict in saturated
        )
    stale: dict[str, list[EngineRow]] = {}
    for row in rows:
        if row.state == STALE:
            stale.setdefault(row.node, []).append(row)
    if stale:
        return "; ".join(silent(group, where(node)) for node, group in stale.items())
    troubled = [row for row in live if row.band == DEGRADED or row.state == COOLING]
    if troubled:
        return "; ".join(trouble(row, where(row.node)) for row in troubled)
    if not live:
        if not rows:
            return "No crawl running: no crawl has run on this database yet"
        last = max((row.updated_at for row in rows if row.updated_at is not None), default=None)
        return f"No crawl running: the last one stopped at {clock(last)}"
    return healthy(live)


def silent(group: Sequence[EngineRow], where: str) -> str:
    """``google stale on node-a: no word from its crawl since 14:50 UTC`` (``google, bing stale …: no word from their
    crawl since`` the newest word of any of them)."""
    last = max((row.updated_at for row in group if row.updated_at is not None), default=None)
    whose = "its" if len(group) == 1 else "their"
    return f"{', '.join(row.engine for row in group)} stale{where}: no word from {whose} crawl since {clock(last)}"


def reasons(row: EngineRow) -> str:
    return f": {', '.join(row.reasons)}" if row.reasons else ""


def trouble(row: EngineRow, where: str) -> str:
    if row.state == COOLING:
        until = f" until {clock(row.cooling_until)}" if row.cooling_until is not None else ""
        return f"{row.engine} cooling{where}{until}{reasons(row)}"
    return f"{row.engine} degraded{where}{reasons(row)}"


def healthy(live: Sequence[EngineRow]) -> str:
    """Every live engine running and none in trouble: healthy, or some not judged yet."""
    nodes = plural(len({row.node for row in live}), "node")
    unjudged = sum(1 for row in live if row.band == UNKNOWN)
    if unjudged == 0:
        if len(live) == 1:
            return f"{live[0].engine} healthy on {nodes}"
        every = "Both engines" if len(live) == 2 else f"All {len(live)} engines"
        return f"{every} healthy on {nodes}"
    if unjudged == len(live):
        return f"{plural(len(live), 'engine')} running on {nodes}; none judged yet (too few requests)"
    return f"{plural(len(live), 'engine')} running on {nodes}; {unjudged} of them not judged yet (too few requests)"


def exit_status(reports: Iterable[EngineRow], network: Mapping[str, NetworkState] | None = None) -> int:
    """2 when an engine is ``critical`` or ``paused`` or a node's network is down; else 3 when an engine is
    ``stale`` (its process went silent: its health is not known); else 1 when one is ``degraded``; else 0
    (``stopped`` and ``unknown`` engines count as 0)."""
    if any(state.down for state in (network or {}).values()):
        return EXIT_CRITICAL
    worst = EXIT_OK
    for report in reports:
        if report.state == PAUSED or (report.band == CRITICAL and report.state not in GONE):
            return EXIT_CRITICAL
        if report.state == STALE:
            worst = EXIT_UNKNOWN
        elif report.band == DEGRADED and report.state not in GONE and worst != EXIT_UNKNOWN:
            worst = EXIT_DEGRADED
    return worst
