"""``scrapy nodes [--json]`` as users run it (topicstreams/commands/nodes.py), on real SQLite files and on the suite's
PostgreSQL: the ``nodes`` rows written by the storage's own ``join``/``beat``/``stop`` at chosen times, one line per
node id however many processes, stale and stopped nodes, scraped counts, engine states, hostile node ids, the
leases of lease mode, an empty table, and a database without the schema."""

from __future__ import annotations

import json
import re
from datetime import timedelta
from pathlib import Path

import pytest

from tests.support.project import write_config
from topicstreams.engines.states import COOLING, PAUSED
from topicstreams.storage import leases as schedule
from topicstreams.storage import node_rows as membership
from topicstreams.storage import upgrade, utcnow
from topicstreams.storage.damage_notice import damage_message
from topicstreams.storage.engine_status import save_status
from topicstreams.storage.topics import add_topics

CONTRACT_KEYS = ["node", "heartbeat_at", "age_seconds", "stale", "engines", "scraped_last_interval"]
ISO_Z = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$")
HOSTILE = "evil\x1b]0;owned\x07\x1b[2J\r\nrow\u202eab"


@pytest.fixture(params=["sqlite", "postgresql"])
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A fresh database with the schema: an SQLite file, then a PostgreSQL database of the suite's server."""
    url = f"sqlite:///{tmp_path / 'nodes.db'}" if request.param == "sqlite" else request.getfixturevalue("postgres_url")
    upgrade(url)
    return url


def env_for(folder: Path, url: str, **scraper) -> dict[str, str]:
    config = write_config(
        folder, {"database": {"url": url}, "node": {"id": "node-a"}, **({"scraper": scraper} if scraper else {})}
    )
    return {"TOPICSTREAMS_CONFIG": str(config)}


def cells(line: str) -> list[str]:
    return re.split(r" {2,}", line.strip())


def run_nodes(scrapy_cmd, env, *args: str):
    result = scrapy_cmd("nodes", *args, env=env)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Traceback" not in result.stderr
    return result


def write_cluster(databases, url: str) -> None:
    """node-a: two Scrapyd jobs beating now; node-b: died 10 minutes ago; node-c: stopped cleanly 5 minutes ago."""
    db = databases.of(url)
    now = utcnow()
    membership.join(
        db,
        node="node-a",
        process="job-1",
        engines=["google", "bing"],
        version="0.1.0",
        assignment="shard",
        now=now - timedelta(minutes=30),
    )
    membership.beat(
        db,
        node="node-a",
        process="job-1",
        engines=["google", "bing"],
        scraped={"google": 7, "bing": 3},
        now=now - timedelta(seconds=4),
    )
    membership.join(
        db,
        node="node-a",
        process="job-2",
        engines=["yahoo"],
        version="0.1.0",
        assignment="shard",
        now=now - timedelta(minutes=2),
    )
    membership.beat(
        db,
        node="node-a",
        process="job-2",
        engines=["yahoo", "google"],
        scraped={"yahoo": 5, "google": 1},
        now=now - timedelta(seconds=9),
    )
    membership.join(
        db,
        node="node-b",
        process="job-3",
        engines=["brave"],
        version="0.1.0",
        assignment="shard",
        now=now - timedelta(hours=1),
    )
    membership.beat(
        db, node="node-b", process="job-3", engines=["brave"], scraped={"brave": 6}, now=now - timedelta(minutes=10)
    )
    membership.join(
        db,
        node="node-c",
        process="job-4",
        engines=["bing"],
        version="0.1.0",
        assignment="shard",
        now=now - timedelta(hours=2),
    )
    membership.stop(db, node="node-c", process="job-4", scraped={"bing": 2}, now=now - timedelta(minutes=5))
    save_status(db, "google", "node-a", state=COOLING, cooling_until=now + timedelta(minutes=10))
    save_status(db, "bing", "node-a", state=PAUSED, paused_at=now - timedelta(minutes=1))
    save_status(db, "yahoo", "node-a", state=COOLING, cooling_until=now - timedelta(seconds=30))  # ended: running
    save_status(db, "brave", "node-b", state=None)


def test_nodes_groups_processes_by_node_and_marks_stale_and_stopped_nodes(
    scrapy_cmd, tmp_path, database_url, databases
):
    write_cluster(databases, database_url)
    env = env_for(tmp_path, database_url)

    lines = run_nodes(scrapy_cmd, env).stdout.splitlines()
    assert cells(lines[0]) == ["node", "status", "heartbeat", "processes", "engines", "scraped last interval", "states"]
    node_a, node_b, node_c = (cells(line) for line in lines[1:4])
    assert node_a[0] == "node-a" and node_a[1] == "live" and re.fullmatch(r"\d+s ago", node_a[2])
    assert node_a[3:] == [
        "2",
        "google, bing, yahoo",
        "google 8, bing 3, yahoo 5",
        "google cooling, bing paused, yahoo running",
    ]
    assert node_b[:2] == ["node-b", "STALE"] and node_b[2].startswith("10m")
    assert node_b[3:] == ["0", "brave", "brave 0", "brave stale"]  # no process of it runs brave: never "running"
    assert node_c[:2] == ["node-c", "stopped"] and node_c[2].startswith("5m")
    assert node_c[3:] == ["0", "bing", "bing 0", "bing -"]
    assert lines[4].startswith("STALE: node-b — not heard of for more than 45 s")
    assert len(lines) == 5

    payload = json.loads(run_nodes(scrapy_cmd, env, "--json").stdout)
    assert list(payload) == ["nodes"]
    entries = {entry["node"]: entry for entry in payload["nodes"]}
    assert list(entries) == ["node-a", "node-b", "node-c"]
    for entry in entries.values():
        assert list(entry)[:6] == CONTRACT_KEYS
        assert ISO_Z.match(entry["heartbeat_at"])
    a, b, c = entries["node-a"], entries["node-b"], entries["node-c"]
    assert a["stale"] is False and a["stopped"] is False and a["status"] == "live"
    assert 4 <= a["age_seconds"] < 60
    assert a["engines"] == ["google", "bing", "yahoo"]
    assert a["scraped_last_interval"] == {"google": 8, "bing": 3, "yahoo": 5}
    assert a["states"] == {"google": "cooling", "bing": "paused", "yahoo": "running"}
    assert sorted(process["process"] for process in a["processes"]) == ["job-1", "job-2"]
    assert a["assignment"] == "shard" and a["version"] == "0.1.0" and "leases" not in a
    assert b["stale"] is True and b["stopped"] is False and b["status"] == "stale"
    assert 600 <= b["age_seconds"] < 660 and b["scraped_last_interval"] == {"brave": 0}
    assert b["states"] == {"brave": "stale"}
    assert c["stale"] is False and c["stopped"] is True and c["status"] == "stopped"
    assert c["processes"][0]["stopped_at"] == c["heartbeat_at"]


def test_a_node_whose_process_died_and_restarted_is_live_again_with_the_new_processs_counts(
    scrapy_cmd, tmp_path, database_url, databases
):
    db = databases.of(database_url)
    now = utcnow()
    membership.join(
        db,
        node="node-a",
        process="before",
        engines=["google"],
        version="0.1.0",
        assignment="shard",
        now=now - timedelta(hours=1),
    )
    membership.beat(
        db, node="node-a", process="before", engines=["google"], scraped={"google": 40}, now=now - timedelta(minutes=20)
    )
    membership.join(
        db,
        node="node-a",
        process="after",
        engines=["google"],
        version="0.2.0",
        assignment="shard",
        now=now - timedelta(seconds=20),
    )
    membership.beat(
        db, node="node-a", process="after", engines=["google"], scraped={"google": 2}, now=now - timedelta(seconds=5)
    )
    [entry] = json.loads(run_nodes(scrapy_cmd, env_for(tmp_path, database_url), "--json").stdout)["nodes"]
    assert entry["stale"] is False and entry["scraped_last_interval"] == {"google": 2}
    assert entry["version"] == "0.2.0" and len(entry["processes"]) == 2


def test_hostile_node_ids_are_escaped_in_the_table_and_exact_in_json(scrapy_cmd, tmp_path, database_url, databases):
    db = databases.of(database_url)
    now = utcnow()
    membership.join(
        db,
        node=HOSTILE,
        process="p\x1b[1m",
        engines=["google"],
        version="0.1.0",
        assignment="shard",
        now=now - timedelta(minutes=9),
    )  # stale: named again in the line under the table
    env = env_for(tmp_path, database_url)
    result = run_nodes(scrapy_cmd, env)
    assert "\x1b" not in result.stdout and "\x07" not in result.stdout and "\u202e" not in result.stdout
    assert "\r" not in result.stdout
    lines = result.stdout.splitlines()
    assert len(lines) == 3  # header, the node, the stale line: the node id's line break did not get through
    shown = "evil\\x1b]0;owned\\x07\\x1b[2J\\r\\nrow\\u202eab"
    assert lines[1].startswith(shown + "  ") and lines[2].startswith(f"STALE: {shown} — ")
    payload = run_nodes(scrapy_cmd, env, "--json").stdout
    assert "\x1b" not in payload  # JSON's own escapes
    assert json.loads(payload)["nodes"][0]["node"] == HOSTILE


def test_no_node_yet_says_no_crawl_has_run(scrapy_cmd, tmp_path, database_url):
    env = env_for(tmp_path, database_url)
    result = run_nodes(scrapy_cmd, env)
    assert result.stdout.strip() == (
        "no nodes: no crawl has run on this database yet (a crawl process writes its "
        "node's row when its first engine starts)"
    )
    assert json.loads(run_nodes(scrapy_cmd, env, "--json").stdout) == {"nodes": []}


def test_a_database_without_the_schema_gets_it_and_has_no_node_yet(scrapy_cmd, tmp_path):
    url = f"sqlite:///{tmp_path / 'never-migrated.db'}"  # no file yet: no schema at all
    assert json.loads(run_nodes(scrapy_cmd, env_for(tmp_path, url), "--json").stdout) == {"nodes": []}


def test_a_database_that_cannot_hold_the_schema_is_one_line_naming_scrapy_db_upgrade(scrapy_cmd, tmp_path):
    broken = tmp_path / "broken.db"
    broken.write_bytes(b"this is not an SQLite database at all" * 100)
    for args in ((), ("--json",)):
        result = scrapy_cmd("nodes", *args, env=env_for(tmp_path, f"sqlite:///{broken}"))
        assert result.returncode == 1
        assert result.stdout == ""
        [line] = result.stderr.strip().splitlines()
        # A garbage file is a damaged database file (issue 33): named as such, not as a schema to upgrade.
        assert line == damage_message(f"sqlite:///{broken}", "file is not a database")


def test_positional_arguments_are_a_usage_error(scrapy_cmd, tmp_path):
    result = scrapy_cmd("nodes", "list", env=env_for(tmp_path, f"sqlite:///{tmp_path / 'n.db'}"))
    assert result.returncode == 2
    assert "nodes takes no positional arguments" in result.stderr
    assert not (tmp_path / "n.db").exists()  # refused before the database was touched


def test_lease_mode_shows_the_leases_each_node_holds_now(scrapy_cmd, tmp_path, postgres_url, databases):
    upgrade(postgres_url)
    db = databases.of(postgres_url)
    now = utcnow()
    add_topics(db, [f"topic {number}" for number in range(6)])
    for engine in ("google", "bing"):
        schedule.reconcile(db, engine, 60, now=now - timedelta(minutes=5))  # every slot due already
    held_a = schedule.claim(db, "google", "node-a", 120, limit=3) + schedule.claim(db, "bing", "node-a", 120, limit=1)
    held_b = schedule.claim(db, "google", "node-b", 120, limit=2)
    expired = schedule.claim(db, "bing", "node-b", 120, limit=2, now=now - timedelta(minutes=3))  # long expired
    assert (len(held_a), len(held_b), len(expired)) == (4, 2, 2)
    for node in ("node-a", "node-b"):
        membership.join(
            db,
            node=node,
            process=f"{node}-job",
            engines=["google", "bing"],
            version="0.1.0",
            assignment="lease",
            now=now - timedelta(seconds=10),
        )
    membership.join(
        db,
        node="node-idle",
        process="idle-job",
        engines=["google"],
        version="0.1.0",
        assignment="lease",
        now=now - timedelta(minutes=20),
    )
    env = env_for(tmp_path, postgres_url, assignment="lease")

    lines = run_nodes(scrapy_cmd, env).stdout.splitlines()
    assert cells(lines[0])[-1] == "leases"
    assert [cells(line)[0] for line in lines[1:4]] == ["node-a", "node-b", "node-idle"]
    assert cells(lines[1])[-1] == "google 3, bing 1"
    assert cells(lines[2])[-1] == "google 2"  # its bing leases expired: not held any more
    assert cells(lines[3])[-1] == "-"
    assert lines[4].startswith("STALE: node-idle") and "their leases expire" in lines[4]

    entries = {entry["node"]: entry for entry in json.loads(run_nodes(scrapy_cmd, env, "--json").stdout)["nodes"]}
    assert entries["node-a"]["leases"] == {"google": 3, "bing": 1}
    assert entries["node-b"]["leases"] == {"google": 2}
    assert entries["node-idle"]["leases"] == {} and entries["node-idle"]["stale"] is True
    assert entries["node-a"]["assignment"] == "lease"

    # the same database read by a node in shard mode: no leases column, no leases member
    shard_env = env_for(tmp_path, postgres_url)
    assert "leases" not in cells(run_nodes(scrapy_cmd, shard_env).stdout.splitlines()[0])
    assert all(
        "leases" not in entry for entry in json.loads(run_nodes(scrapy_cmd, shard_env, "--json").stdout)["nodes"]
    )
