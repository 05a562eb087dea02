"""Scaling out as the README tells it: two Scrapyd nodes, each its own ``node.id`` and topic shard (0/2, 1/2), one
PostgreSQL store. Both nodes run google and bing at the same time, against the fake engines, on a fresh database:
every topic is scraped once per engine, every article stored once, with all its topic events and attributions."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from sqlalchemy import create_engine, text

from tests.support.crawl_checks import expected_urls
from tests.support.fakes_http import reset_fakes_per_test, running_fakes
from tests.support.project import write_config
from tests.support.scrapyd_node import ScrapydNode, log_problems, project_copy
from topicstreams import ENGINES
from topicstreams.crawl.supply import in_shard

pytestmark = pytest.mark.timeout(400)

fakes = running_fakes("google", "bing")
_clean = reset_fakes_per_test()

CRAWLED = ("google", "bing")
TOPICS = [f"scale {i}" for i in range(8)]
NODES = {"node-a": "0/2", "node-b": "1/2"}


def node_config(folder: Path, fakes, database_url: str, node: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    return write_config(
        folder,
        {
            "database": {"url": database_url},
            "topics": TOPICS,
            "node": {"id": node},
            "engines": {
                name: {
                    "base_url": fakes.base_url(name) if name in CRAWLED else "http://127.0.0.1:9",
                    "enabled": name in CRAWLED,
                }
                for name in ENGINES
            },
            "scraper": {
                "schedule": "fixed",
                "shard": NODES[node],
                "pacing": {"default_min_interval": 0.3, "jitter_ratio": 0.0},
            },
            "browser": {"profile_dir": str(folder / "profiles")},
        },
    )


def query_rows(url: str, sql: str) -> list[tuple]:
    engine = create_engine(url)
    try:
        with engine.connect() as conn:
            return [tuple(row) for row in conn.execute(text(sql))]
    finally:
        engine.dispose()


def test_two_scrapyd_nodes_split_the_topics_and_store_each_article_once_in_one_postgresql(
    tmp_path, fakes, postgres_url, scrapy_cmd
):
    shards = {node: [t for t in TOPICS if in_shard(t, shard)] for node, shard in NODES.items()}
    assert all(shards.values())  # both nodes have work: the split is real

    with ScrapydNode(tmp_path, "node-a") as node_a, ScrapydNode(tmp_path, "node-b") as node_b:
        nodes = {"node-a": node_a, "node-b": node_b}
        project = project_copy(tmp_path)
        configs = {}
        for name, node in nodes.items():
            node.deploy(project)
            configs[name] = node_config(tmp_path / f"{name}-config", fakes, postgres_url, name)
        # all four jobs at once, on a database no node has migrated yet
        jobs = {
            (name, engine): node.schedule(engine, {"TOPICSTREAMS_CONFIG": str(configs[name])}, once="1")
            for name, node in nodes.items()
            for engine in CRAWLED
        }
        for (name, _engine), job in jobs.items():
            nodes[name].wait(job, timeout=300)
        logs = {key: nodes[key[0]].job_log(key[1], job) for key, job in jobs.items()}

    for (name, engine), log in logs.items():
        assert log_problems(log) == [], f"{name} {engine}:\n{log[-4000:]}"
        assert f"shard {NODES[name]}" in log
        assert f"'topicstreams/{engine}/topics_swept': {len(shards[name])}," in log, log[-3000:]

    # each topic exactly once per engine, whichever node's shard holds it
    for engine in CRAWLED:
        asked = Counter(entry["query"]["q"] for entry in fakes.requests(engine) if entry["kind"] == "results")
        assert asked == Counter(TOPICS), engine

    found = {(engine, topic): expected_urls(engine, topic) for engine in CRAWLED for topic in TOPICS}
    urls = set().union(*found.values())
    news = query_rows(postgres_url, "select url from news")
    assert len(news) == len(urls) and {url for (url,) in news} == urls
    events = query_rows(
        postgres_url,
        "select t.name, n.url from topic_news tn join topics t on t.id = tn.topic_id join news n on n.id = tn.news_id",
    )
    assert sorted(events) == sorted({(topic, url) for (_, topic), found_urls in found.items() for url in found_urls})
    attributions = query_rows(
        postgres_url,
        "select t.name, n.url, e.engine from topic_news_engines e"
        " join topics t on t.id = e.topic_id join news n on n.id = e.news_id",
    )
    assert sorted(attributions) == sorted(
        {(topic, url, engine) for (engine, topic), found_urls in found.items() for url in found_urls}
    )
    # some articles are found by both engines: one event, two attributions
    assert any(found["google", t] & found["bing", t] for t in TOPICS)

    # both nodes seeded the same list at once: each topic is in the table once, active
    assert sorted(query_rows(postgres_url, "select name, active from topics")) == [(t, True) for t in TOPICS]
    # the shared rows say which node (exit IP) they are about
    status = query_rows(postgres_url, "select node, engine from engine_status")
    assert sorted(status) == sorted((node, engine) for node in NODES for engine in CRAWLED)
    cycles = query_rows(
        postgres_url, "select node, engine, sum(topics_count) from scraper_cycles group by node, engine"
    )
    assert sorted(cycles) == sorted((node, engine, len(shards[node])) for node in NODES for engine in CRAWLED)

    # any machine with the database URL reads every node's health from it
    report = scrapy_cmd("health", "--all-nodes", "--json", env={"TOPICSTREAMS_DB_URL": postgres_url})
    assert report.returncode == 0, report.stdout + report.stderr[-3000:]
    nodes = {node["node"]: node for node in json.loads(report.stdout)["nodes"]}
    for node in NODES:
        engines = {engine["engine"]: engine for engine in nodes[node]["engines"]}
        assert set(engines) == set(CRAWLED)
        assert {engine["state"] for engine in engines.values()} == {"stopped"}  # every once job closed
        assert {engine["parser_score"] for engine in engines.values()} == {100}
        assert nodes[node]["saturation"] == {"suspected": False, "cooling": []}
