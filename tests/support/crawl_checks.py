"""What the crawl tests share: their configuration, and what they read back from a run (the engine's arrivals
and their gaps, stats from the log, rows)."""

from __future__ import annotations

import importlib
import itertools
import json
import sqlite3
from collections.abc import Iterable
from pathlib import Path

from fake_engines import FakeEngines
from tests.support.project import write_config
from topicstreams import ENGINES
from topicstreams import settings as project_settings
from topicstreams.engines.news_urls import normalize_url

FLOAT_ROUNDING = 1e-9
"""What a difference of two monotonic readings may lose to floating point; the floor itself is held exactly."""

FAST_COOLDOWN = {"initial": 0.05, "factor": 1, "max": 0.05}
"""A bench short enough for a test to gather a window of blocks in seconds (the floor still holds)."""


def crawl_config(
    folder: Path,
    fakes: FakeEngines,
    *,
    floor: float,
    engines=("google",),
    scraper: dict | None = None,
    filename: str = "config.yml",
    **sections,
) -> Path:
    """``folder/config.yml`` for a crawl of the fake ``engines`` (the others disabled) on node ``node-a``, into
    ``news.db``, with pacing floor ``floor`` and no jitter, on the fixed schedule (the tests' short intervals are the
    fixed schedule's: the adaptive one visits a topic at most every ``scraper.adaptive.min_interval``); ``scraper``
    adds to the scraper section, ``sections`` are other top-level sections (``health``, ``canaries``, …)."""
    return write_config(
        folder,
        {
            "database": {"url": "sqlite:///news.db"},
            "node": {"id": "node-a"},
            "engines": {
                name: {
                    "base_url": fakes.base_url(name) if name in fakes.engines else "http://127.0.0.1:9",
                    "enabled": name in engines,
                }
                for name in ENGINES
            },
            "scraper": {
                "schedule": "fixed",
                "pacing": {"default_min_interval": floor, "jitter_ratio": 0.0},
                **(scraper or {}),
            },
            "browser": {"profile_dir": "profiles"},
            **sections,
        },
        filename,
    )


def expected_urls(engine: str, *topics: str, pages: int = 1) -> set[str]:
    """The clean URLs a correct crawl of the fake ``engine`` stores for ``topics``, from their first ``pages``
    pages."""
    fake = importlib.import_module(f"fake_engines.{engine}")
    return {
        normalize_url(url) for topic in topics for page in range(pages) for url in fake.expected_articles(topic, page)
    }


def topics(count: int) -> str:
    """``count`` topic names for ``-a topics=``: t00, t01, …"""
    return ",".join(f"t{i:02d}" for i in range(count))


def gaps(entries: list[dict]) -> list[float]:
    """The seconds between consecutive entries of a fake engine's request log."""
    return differences(entry["time"] for entry in entries)


def differences(times: Iterable[float]) -> list[float]:
    """The seconds between consecutive moments of ``times``."""
    return [later - earlier for earlier, later in itertools.pairwise(times)]


def recording(folder: Path) -> tuple[str, ...]:
    """``-s`` arguments that make a crawl write each classified response (with the moment it left, as pacing saw
    it) to ``classified.jsonl`` in ``folder``: :class:`tests.support.classification_recorder.ClassificationRecorder`
    beside the project's extensions."""
    extensions = {**project_settings.EXTENSIONS, "tests.support.classification_recorder.ClassificationRecorder": 0}
    return (
        "-s",
        f"EXTENSIONS={json.dumps(extensions)}",
        "-s",
        f"TEST_CLASSIFICATIONS_FILE={folder / 'classified.jsonl'}",
    )


def classified(folder: Path) -> list[dict]:
    """The responses a crawl run with :func:`recording` classified, in order."""
    path = folder / "classified.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def sent_gaps(folder: Path, engine: str = "google") -> list[float]:
    """The seconds between consecutive requests to ``engine`` as the crawl saw them leave (its own monotonic
    clock: the moment the browser reported each navigation leaving), from a run with :func:`recording`.

    Pacing holds its floor between these moments exactly; the fake engine's arrivals differ from them by Chromium's
    varying delay in putting each navigation on the wire, so a bound on the arrivals' gaps would hold only by
    chance."""
    return differences(
        sorted(c["sent_at"] for c in classified(folder) if c["engine"] == engine and c["sent_at"] is not None)
    )


STATS_DUMP = ("-s", "TOPICSTREAMS_STATS_DUMP_LEVEL=INFO")
"""The options that bring back Scrapy's closing stats dump per engine at INFO in ``crawlall`` (which says one summary
line instead and dumps at DEBUG): for a test that reads a stat with :func:`stat_text`."""


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
