"""`scrapy demo` (what `make demo` runs): the fake engines, its own database, what was stored."""

import re
import sqlite3

import pytest


@pytest.mark.timeout(120)
def test_demo_stores_articles_from_the_fake_engines_into_its_own_database(scrapy_cmd, tmp_path):
    (tmp_path / "topicstreams.db").write_bytes(b"")  # a user's database beside it must stay untouched
    result = scrapy_cmd("demo", "--seconds", "12", timeout=100)
    assert result.returncode == 0, result.stderr[-3000:]
    stored = re.search(r"^demo: (\d+) articles stored in (.+)$", result.stdout, re.M)
    assert stored, result.stdout[-2000:]
    count, path = int(stored[1]), stored[2]
    assert path == str(tmp_path / ".topicstreams" / "demo" / "demo.db")
    with sqlite3.connect(path) as conn:
        assert conn.execute("select count(*) from topic_news").fetchone()[0] == count > 0
        topics = {row[0] for row in conn.execute("select name from topics where active")}
        engines = {row[0] for row in conn.execute("select distinct engine from topic_news_engines")}
    assert topics == {"artificial intelligence", "climate change", "electric vehicles"}
    assert len(engines) >= 2 and engines <= {"google", "bing", "yahoo", "brave"}  # all four run at once
    assert "== artificial intelligence" in result.stdout
    assert re.search(r"\[(google|bing|yahoo|brave)(,(google|bing|yahoo|brave))*\] ", result.stdout)
    assert (tmp_path / "topicstreams.db").read_bytes() == b""
