"""The nodes report: one entry per node id — the table ``scrapy nodes`` prints and the object ``scrapy nodes --json``
prints — in either assignment, on SQLite and PostgreSQL alike.

:func:`build_nodes_report` reads the membership rows (:func:`topicstreams.storage.node_rows.node_rows`, one per crawl
process: a node that runs several Scrapyd jobs has several), each node's ``engine_status`` rows, and in lease mode
the leases held now (:func:`topicstreams.storage.leases.leases`), and groups them by node id
(:func:`node_report`):

* a process is *live* while it has not stopped and its last heartbeat is within :func:`stale_after` (three
  ``TOPICSTREAMS_NODE_HEARTBEAT``, as for an engine's row: the same moment reads stale on every surface);
* a node is ``live`` while one of its processes is; else ``stopped`` when its last process stopped cleanly
  (SIGTERM, the end of a ``once`` run: its leases were given back), else ``stale`` — it was not heard of for
  longer than that and said no goodbye: it died, or cannot reach the database (in lease mode its leases expire and
  the other nodes take its topics);
* its heartbeat is the newest of its processes'; its engines and the topics each scraped in the last scrape
  interval are the sums over its live processes (a node that is not live shows the engines of its last processes,
  and nothing scraped); each engine's state there is its ``engine_status`` row's at the report's time
  (``running``, ``cooling``, ``paused``; a cooldown that has ended reads ``running``; ``stopped`` once its crawl
  closed, ``stale`` once its row went unwritten for three of its heartbeats), None without a row — and never a live
  state on a node that is not live (:func:`engine_state_on`): a stopped node's engines read ``stopped``, a stale
  node's ``stale`` (``stopped`` if their crawl closed before the node went silent).

:meth:`NodesReport.as_json` is ``{"nodes": [{"node", "heartbeat_at", "age_seconds", "stale", "engines",
"scraped_last_interval", …}]}`` (the contract's members first, then ``status``, ``stopped``, ``states``,
``processes``, ``version``, ``assignment``, and in lease mode ``leases``); :meth:`NodesReport.as_table` the table,
node ids through :func:`~topicstreams.reports.health_report.terminal_text` (a node id is anyone's text).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import Engine

from topicstreams.engines.states import GONE
from topicstreams.engines.states import STALE as ENGINE_STALE
from topicstreams.engines.states import STOPPED as ENGINE_STOPPED
from topicstreams.reports.health_report import NO_VALUE, engine_order, terminal_text
from topicstreams.reports.utc_times import utc_text
from topicstreams.storage import utcnow
from topicstreams.storage.engine_status import EngineStatusRow, read_statuses
from topicstreams.storage.heartbeats import STALE_HEARTBEATS as ENGINE_STALE_HEARTBEATS
from topicstreams.storage.leases import leases
from topicstreams.storage.node_rows import NodeProcessRow, node_rows

LIVE, STALE, STOPPED = "live", "stale", "stopped"
"""A node's status: a process of it beats; none does and the last said no goodbye; the last stopped cleanly."""

STALE_HEARTBEATS = ENGINE_STALE_HEARTBEATS
"""A process not heard of for this many heartbeats is no longer counted live (the same count as an engine's row)."""

COLUMNS = ("node", "status", "heartbeat", "processes", "engines", "scraped last interval", "states")
LEASES_COLUMN = "leases"
"""Lease mode's last column: the rows the node holds now, per engine."""

NO_NODES = (
    "no nodes: no crawl has run on this database yet (a crawl process writes its node's row when its first "
    "engine starts)"
)
"""What the table reads when the ``nodes`` table is empty."""


def stale_after(heartbeat: float) -> timedelta:
    """How long a process may go unheard before it is no longer live: :data:`STALE_HEARTBEATS` heartbeats."""
    return timedelta(seconds=STALE_HEARTBEATS * heartbeat)


@dataclass(frozen=True)
class NodeReport:
    """One node id as ``scrapy nodes`` shows it."""

    node: str
    status: str
    """:data:`LIVE`, :data:`STALE` or :data:`STOPPED`."""
    heartbeat_at: datetime
    """The newest heartbeat (or clean stop) of its processes."""
    age_seconds: float
    engines: list[str]
    scraped: dict[str, int]
    """Per engine, the topics its live processes scraped in the last scrape interval."""
    states: dict[str, str | None]
    """Per engine of ``engines``, its state on this node (None: no status row)."""
    processes: list[NodeProcessRow]
    """Every row of the node, newest heartbeat first."""
    live_processes: int
    version: str
    assignment: str
    leases: dict[str, int] | None = None
    """Lease mode: the rows it holds now, per engine (None: shard mode)."""

    @property
    def stale(self) -> bool:
        return self.status == STALE

    @property
    def stopped(self) -> bool:
        return self.status == STOPPED

    def as_json(self) -> dict[str, Any]:
        entry: dict[str, Any] = {
            "node": self.node,
            "heartbeat_at": utc_text(self.heartbeat_at),
            "age_seconds": self.age_seconds,
            "stale": self.stale,
            "engines": list(self.engines),
            "scraped_last_interval": dict(self.scraped),
            "status": self.status,
            "stopped": self.stopped,
            "states": dict(self.states),
            "processes": [process_json(row) for row in self.processes],
            "version": self.version,
            "assignment": self.assignment,
        }
        if self.leases is not None:
            entry["leases"] = dict(self.leases)
        return entry


def process_json(row: NodeProcessRow) -> dict[str, Any]:
    return {
        "process": row.process,
        "started_at": utc_text(row.started_at),
        "heartbeat_at": utc_text(row.heartbeat_at),
        "stopped_at": utc_text(row.stopped_at),
        "engines": list(row.engines),
        "scraped": dict(row.scraped),
        "version": row.version,
        "assignment": row.assignment,
    }


def engine_state_on(status: str, row: EngineStatusRow, now: datetime) -> str:
    """The state of ``row``'s engine at ``now`` on a node whose status is ``status``: the row's own
    (:meth:`~topicstreams.storage.engine_status.EngineStatusRow.state_at`) on a live node; on a node that is not, no
    process of it runs the engine, whatever the row last said: ``stopped`` (the node stopped cleanly, or the engine's
    crawl closed before the node went silent), else ``stale``."""
    state = row.state_at(now)
    if status == STOPPED:
        return ENGINE_STOPPED
    if status == LIVE or state in GONE:
        return state
    return ENGINE_STALE


def node_report(
    node: str,
    processes: Sequence[NodeProcessRow],
    statuses: Iterable[EngineStatusRow],
    now: datetime,
    stale_after: timedelta,
    leases: Mapping[str, int] | None = None,
) -> NodeReport:
    """The entry of ``node`` from its process rows (at least one), its ``engine_status`` rows and, in lease mode,
    its leases (see the module)."""
    ordered = sorted(processes, key=lambda row: (row.heartbeat_at, row.started_at), reverse=True)
    newest = ordered[0]
    live = [row for row in ordered if row.stopped_at is None and now - row.heartbeat_at <= stale_after]
    if live:
        status, current = LIVE, live
    else:
        status = STOPPED if newest.stopped_at is not None else STALE
        # its last processes: those heard of within a heartbeat window of the newest (Scrapyd jobs stopped together)
        current = [row for row in ordered if newest.heartbeat_at - row.heartbeat_at <= stale_after]
    engines = engine_order(engine for row in current for engine in row.engines)
    scraped: dict[str, int] = dict.fromkeys(engines, 0)
    for row in live:
        for engine, count in row.scraped.items():
            scraped[engine] = scraped.get(engine, 0) + int(count)
    states_of = {
        status_row.engine: engine_state_on(status, status_row, now)
        for status_row in statuses
        if status_row.node == node
    }
    return NodeReport(
        node=node,
        status=status,
        heartbeat_at=newest.heartbeat_at,
        age_seconds=round(max(0.0, (now - newest.heartbeat_at).total_seconds()), 1),
        engines=engines,
        scraped={engine: scraped[engine] for engine in engine_order(scraped)},
        states={engine: states_of.get(engine) for engine in engines},
        processes=ordered,
        live_processes=len(live),
        version=current[0].version,
        assignment=current[0].assignment,
        leases=None if leases is None else {engine: leases[engine] for engine in engine_order(leases)},
    )


def age_text(seconds: float) -> str:
    """``12s ago``, ``3m05s ago``, ``2h05m ago``, ``3d04h ago``."""
    whole = int(seconds)
    if whole < 60:
        return f"{whole}s ago"
    if whole < 3600:
        return f"{whole // 60}m{whole % 60:02d}s ago"
    if whole < 86400:
        return f"{whole // 3600}h{whole % 3600 // 60:02d}m ago"
    return f"{whole // 86400}d{whole % 86400 // 3600:02d}h ago"


def counts_text(counts: Mapping[str, Any]) -> str:
    """``google 12, bing 9``; ``-`` for none."""
    return (
        ", ".join(
            f"{terminal_text(engine, 24)} {terminal_text(str(value), 24) if value is not None else NO_VALUE}"
            for engine, value in counts.items()
        )
        or NO_VALUE
    )


@dataclass(frozen=True)
class NodesReport:
    """Every node of the database at ``now``."""

    nodes: list[NodeReport]
    now: datetime
    stale_after: timedelta
    lease_mode: bool = False

    def as_json(self) -> dict[str, Any]:
        """The object ``scrapy nodes --json`` prints."""
        return {"nodes": [node.as_json() for node in self.nodes]}

    def as_table(self) -> str:
        """A header, one line per node, columns left-aligned two spaces apart, then what ``stale`` means when a node
        is; :data:`NO_NODES` when there is none."""
        if not self.nodes:
            return NO_NODES
        header = [*COLUMNS, *([LEASES_COLUMN] if self.lease_mode else [])]
        lines = [header]
        for node in self.nodes:
            cells = [
                terminal_text(node.node),
                node.status.upper() if node.stale else node.status,
                age_text(node.age_seconds),
                str(node.live_processes),
                ", ".join(terminal_text(engine, 24) for engine in node.engines) or NO_VALUE,
                counts_text(node.scraped),
                counts_text(node.states),
            ]
            if self.lease_mode:
                cells.append(counts_text(node.leases or {}))
            lines.append(cells)
        widths = [max(len(line[column]) for line in lines) for column in range(len(header))]
        table = [
            "  ".join(cell.ljust(width) for cell, width in zip(line, widths, strict=True)).rstrip() for line in lines
        ]
        stale = [node for node in self.nodes if node.stale]
        if stale:
            table.append(
                f"STALE: {', '.join(terminal_text(node.node) for node in stale)} — not heard of for more "
                f"than {self.stale_after.total_seconds():g} s and never said goodbye: died, or cannot reach "
                f"the database"
                + (" (their leases expire and the other nodes take their topics)" if self.lease_mode else "")
            )
        return "\n".join(table)


def build_nodes_report(
    db: Engine, *, heartbeat: float, lease_mode: bool = False, now: datetime | None = None
) -> NodesReport:
    """Every node of ``db`` at ``now`` (the present by default): ``heartbeat`` is ``TOPICSTREAMS_NODE_HEARTBEAT``
    (seconds), ``lease_mode`` reads the leases held now too (PostgreSQL: lease mode's shared schedule)."""
    now = now or utcnow()
    window = stale_after(heartbeat)
    by_node: dict[str, list[NodeProcessRow]] = {}
    for row in node_rows(db):
        by_node.setdefault(row.node, []).append(row)
    if not by_node:
        return NodesReport([], now, window, lease_mode)
    statuses = read_statuses(db)
    held: dict[str, dict[str, int]] = {}
    if lease_mode:
        held = leases(db)
    return NodesReport(
        [
            node_report(node, rows, statuses, now, window, held.get(node, {}) if lease_mode else None)
            for node, rows in sorted(by_node.items())
        ],
        now,
        window,
        lease_mode,
    )
