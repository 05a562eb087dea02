"""What the crawl tests read back from a run: the engine's arrivals and their gaps, stats from the log, rows."""

from __future__ import annotations

import sqlite3
from pathlib import Path

SLACK = 0.005
"""Seconds of clock resolution between the fake server's log and the floor."""


def topics(count: int) -> str:
    """``count`` topic names for ``-a topics=``: t00, t01, …"""
    return ",".join(f"t{i:02d}" for i in range(count))


def gaps(entries: list[dict]) -> list[float]:
    """The seconds between consecutive entries of a fake engine's request log."""
    times = [entry["time"] for entry in entries]
    return [later - earlier for earlier, later in zip(times, times[1:], strict=False)]


def stat_text(stderr: str, key: str, engine: str = "google") -> str | None:
    """A ``topicstreams/<engine>/<key>`` stat as Scrapy's closing dump prints it (a repr), or None."""
    marker = f"'topicstreams/{engine}/{key}': "
    for line in stderr.splitlines():
        if marker in line:
            return line.split(marker)[1].rstrip(",}")
    return None


def stat_count(stderr: str, key: str, engine: str = "google") -> int:
    """A counter stat of the closing dump (0 when it was never counted)."""
    return int(stat_text(stderr, key, engine) or 0)


def rows(db: Path, sql: str, *args) -> list[tuple]:
    with sqlite3.connect(db) as conn:
        return conn.execute(sql, args).fetchall()
