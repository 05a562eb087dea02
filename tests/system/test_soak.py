"""A short soak (``benchmarks/soak.py``): a minute of ``scrapy crawlall`` on the four fake engines, its process
tree sampled every 3 s. It runs beside the other tests (tests/support/soak_run.py), from the session's start; this
test, run last, reads what it measured. The sampler must really measure (the cadence, Chromium and
the driver in the tree, PSS, fds, a database that grows), and crawlall's memory must stay under 1 GiB."""

from __future__ import annotations

import pytest

from tests.support.soak_run import EVERY, MINUTES, WARMUP
from topicstreams import ENGINES

pytestmark = pytest.mark.timeout(300)

MiB = 2**20


@pytest.fixture(scope="module")
def soak(background_soak) -> dict:
    """What the session's soak measured (it started when the session was collected, see tests/support/soak_run.py)."""
    returncode, data, out = background_soak.result(timeout=280)
    assert returncode == 0, out[-6000:]
    assert data is not None, out[-6000:]
    data["stdout"] = out
    return data


def test_a_short_soak_measures_the_crawl_and_stays_under_1_gib(soak):
    samples, summary = soak["samples"], soak["summary"]
    assert soak["failure"] is None and not soak["interrupted"]

    # the cadence: one sample every EVERY s from the crawl's start, to the end of its MINUTES
    assert len(samples) == MINUTES * 60 // EVERY + 1, [s["elapsed"] for s in samples]
    for index, sample in enumerate(samples):
        assert sample["elapsed"] == pytest.approx(index * EVERY, abs=2), [s["elapsed"] for s in samples]

    # the whole tree: scrapy, the Playwright driver and Chromium's processes
    steady = [s for s in samples if s["elapsed"] >= WARMUP]
    assert len(steady) == summary["steady_samples"] >= 15
    for sample in steady:
        kinds = sample["processes_by_kind"]
        assert sample["processes"] > 3 and sample["processes"] == sum(kinds.values()), sample
        # one driver and one browser for the four engines, and at least one renderer at every moment
        assert kinds.get("scrapy") == 1 and kinds.get("driver") == 1 and kinds.get("browser") == 1, kinds
        assert kinds.get("renderer", 0) >= 1, kinds
        assert sample["memory_kind"] == "PSS", sample  # Linux: every process's smaps are ours to read
        assert 150 * MiB < sample["memory"] < 16 * 1024 * MiB, sample
        assert sample["memory"] == sum(sample["memory_by_kind"].values())
        assert sample["memory_by_kind"]["browser"] > 0 and sample["memory_by_kind"]["renderer"] > 0
        assert sample["fds"] > 0 and sample["fds"] == sum(sample["fds_by_kind"].values())

    # a renderer per engine's context while all four have a page open (a tab closed between two topics may leave
    # one engine without a renderer at the moment of a sample, so not in every sample)
    renderers = [s["processes_by_kind"].get("renderer", 0) for s in steady]
    assert max(renderers) >= len(ENGINES), renderers

    # the crawl stored news and the database grew while it ran
    assert steady[-1]["db_bytes"] > steady[0]["db_bytes"] > 0
    assert summary["news_rows"] > 0 and summary["db_bytes_end"] == samples[-1]["db_bytes"]
    for engine in ENGINES:
        pages = summary["pages"][engine]
        assert pages["requests"] >= 5 and pages["ok"] == pages["requests"], summary["pages"]

    # the summary's figures, and the report that prints them
    assert summary["steady_mib"] > 150 and summary["growth_mib_h"] is not None
    assert summary["peak_mib"] == pytest.approx(max(s["memory"] for s in samples) / MiB)
    assert summary["processes_max"] >= summary["processes_end"] > 3
    assert set(summary["targets"]) == {"steady PSS <= 700 MiB", "growth <= 5 %/h", "no fd growth"}
    out = soak["stdout"]
    assert out.count("\n") > len(samples) and "summary (" in out and "\ntargets:\n" in out
    assert "crawl stopped: exit code 0 after SIGINT" in out, out[-3000:]

    print(
        f"soak {MINUTES} min: peak PSS {summary['peak_mib']:.0f} MiB, steady {summary['steady_mib']:.0f} MiB, "
        f"{summary['processes_max']} processes at most, {summary['fds_end']} fds at the end"
    )
    # crawlall's memory: under 1 GiB (four Chromiums of their own, one per engine, took about twice that)
    assert summary["peak_mib"] < 1024, f"peak PSS {summary['peak_mib']:.0f} MiB:\n{out[-4000:]}"
