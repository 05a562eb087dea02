"""A terminal a person can read: two minutes of ``make run`` offline (tests/support/log_run.py, run beside the other
tests from the session's start; this test, run last, reads what it printed) come to at most 40 lines, start with the
feed's URL and say it again once the crawl has started, tell each engine's cooldown once, and end with one summary
of the whole crawl; Scrapy's component lists, its per-minute stats lines and its stats dumps are not among them."""

from __future__ import annotations

import re

import pytest

from topicstreams import ENGINES

pytestmark = pytest.mark.timeout(330)

MAX_LINES = 40
STAMPED = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:,\d+)? \[(?P<logger>[^\]]+)\] (?P<level>[A-Z]+): ")


@pytest.fixture(scope="module")
def run(background_log_run) -> tuple[str, str]:
    """(the run's output, the feed's URL), once it has ended (it started with the session)."""
    returncode, out, url = background_log_run.result(timeout=300)
    assert returncode == 0, out[-6000:]
    return out, url


def test_two_minutes_of_make_run_offline_stay_within_40_lines(run):
    out, url = run
    lines = out.splitlines()
    print(f"make run offline, two minutes: {len(lines)} lines")
    assert len(lines) <= MAX_LINES, out
    info = [line for line in lines if (m := STAMPED.match(line)) and m["level"] == "INFO"]
    assert info and len(info) < len(lines)  # stamped INFO lines, WARNINGs among the rest

    # the URL first, and again below the crawl's start line, where the eye is then
    banner = f"topicstreams: open {url} to read the feed"
    assert lines[0] == banner
    started = next(n for n, line in enumerate(lines) if "crawl started: " in line)
    assert lines[started + 1] == f"topicstreams: the crawl has started; open {url} to read the feed", out
    assert all(f"{engine} spider starting (continuous" in out for engine in ENGINES)

    # what went down to DEBUG, per crawler and per minute
    for hidden in ("Enabled extensions", "Overridden settings", "Crawled 0 pages", "Dumping Scrapy stats", "Versions"):
        assert hidden not in out, hidden
    # each engine's cooldown once, its failure in the same line; no line of a topic's failure besides
    for engine in ENGINES:
        first = [line for line in lines if f"WARNING: [{engine}] hard_block for topic " in line]
        assert first and "; cooling down for 60 s (1 in a row)" in first[0], out
    # once the node's network is judged down, that one WARNING speaks for every engine's failed retries
    down = next(n for n, line in enumerate(lines) if "every engine fails to connect" in line)
    assert not [line for line in lines[down:] if "WARNING: [" in line and " hard_block for topic " in line], out
    assert " failed: hard_block" not in out and "one probe goes" not in out
    # at the end, one summary of the whole crawl, counted in words
    ended = [line for line in lines if "crawl ended (shutdown) after " in line]
    assert len(ended) == 1, out
    for engine in ENGINES:
        assert re.search(rf"\b{engine} \d+ requests? \(0 ok\), 0 entries, 0 new events\b", ended[0]), ended
