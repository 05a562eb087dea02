"""The soak benchmark's figures (``benchmarks/soak.py``) on synthetic samples, and its sampler on this process."""

from __future__ import annotations

import os
import statistics
import subprocess
import sys

import pytest

from benchmarks.soak import (
    MiB,
    Sample,
    db_size,
    kind_column,
    process_kind,
    report,
    sample_tree,
    slope,
    summarize,
    table_header,
    table_line,
)


def series(memory_mib, every: float = 15.0, fds=None, db_bytes=None) -> list[Sample]:
    """Samples every ``every`` s from 0 with the given PSS (MiB), fds and database sizes."""
    fds = fds or [100] * len(memory_mib)
    db_bytes = db_bytes or [0] * len(memory_mib)
    return [
        Sample(
            elapsed=i * every,
            memory=int(m * MiB),
            processes=10,
            fds=f,
            db_bytes=d,
            memory_by_kind={"browser": int(m * MiB)},
        )
        for i, (m, f, d) in enumerate(zip(memory_mib, fds, db_bytes, strict=True))
    ]


def test_slope_of_a_flat_series_is_zero_and_of_a_line_its_rate():
    assert slope([0, 1, 2, 3], [5, 5, 5, 5]) == pytest.approx(0)
    assert slope([0, 1, 2, 3], [1, 3, 5, 7]) == pytest.approx(2)
    assert slope([0, 1, 2, 3, 4], [0, 2, 0, 2, 0]) == pytest.approx(0)  # noise about a flat line
    assert slope([1], [1]) is None and slope([], []) is None
    assert slope([2, 2], [1, 5]) is None  # no spread in x
    with pytest.raises(ValueError):
        slope([0, 1], [1])


def test_a_flat_series_has_no_growth_and_meets_every_target():
    summary = summarize(series([600.0] * 41), warmup=120)
    assert summary.samples == 41 and summary.steady_samples == 33  # 120 s … 600 s
    assert summary.steady_mib == pytest.approx(600)
    assert summary.growth_mib_h == pytest.approx(0, abs=1e-6)
    assert summary.growth_pct_h == pytest.approx(0, abs=1e-6)
    assert summary.fds_start == summary.fds_end == 100 and summary.fds_slope_h == pytest.approx(0, abs=1e-9)
    assert summary.steady_by_kind == {"browser": pytest.approx(600)}
    assert summary.targets == {"steady PSS <= 700 MiB": True, "growth <= 5 %/h": True, "no fd growth": True}


def test_a_series_rising_10_mib_per_15_s_grows_2400_mib_an_hour():
    memory = [500.0 + 10 * i for i in range(41)]
    summary = summarize(series(memory), warmup=120)
    assert summary.growth_mib_h == pytest.approx(2400)
    assert summary.growth_by_kind["browser"] == pytest.approx(2400)
    assert summary.steady_mib == pytest.approx(statistics.median(memory[8:])) == 740  # 580 … 900 MiB
    assert summary.growth_pct_h == pytest.approx(100 * 2400 / 740)
    assert summary.peak_mib == pytest.approx(900) and summary.peak_at == 600
    assert summary.targets == {"steady PSS <= 700 MiB": False, "growth <= 5 %/h": False, "no fd growth": True}


def test_the_warm_up_is_left_out_of_the_steady_figures():
    # a big start-up that settles: the warm-up's samples count for the peak only
    memory = [50, 900, 1200, 800] + [650.0] * 20
    summary = summarize(series(memory, every=30), warmup=120)
    assert summary.steady_mib == pytest.approx(650)
    assert summary.growth_mib_h == pytest.approx(0, abs=1e-6)
    assert summary.peak_mib == pytest.approx(1200) and summary.peak_at == 60
    assert summary.targets["steady PSS <= 700 MiB"] is True


def test_fd_growth_and_a_large_steady_pss_are_not_met():
    fds = [200 + 3 * i for i in range(41)]  # 3 more every 15 s: 720 an hour, 96 over the steady 8 min
    summary = summarize(series([800.0] * 41, fds=fds), warmup=120)
    assert summary.fds_start == 224 and summary.fds_end == 320
    assert summary.fds_slope_h == pytest.approx(720)
    assert summary.fds_added == pytest.approx(96)
    assert summary.targets == {"steady PSS <= 700 MiB": False, "growth <= 5 %/h": True, "no fd growth": False}
    # a few fds up and down about a level is no growth
    noisy = summarize(series([600.0] * 41, fds=[300 + (i % 3) for i in range(41)]), warmup=120)
    assert noisy.targets["no fd growth"] is True


def test_a_run_no_longer_than_its_warm_up_is_not_measured_but_still_reported():
    summary = summarize(series([300.0, 400.0, 500.0], db_bytes=[0, 4096, 8192]), warmup=120)
    assert summary.steady_samples == 0 and summary.steady_mib is None and summary.growth_mib_h is None
    assert summary.fds_start is None and summary.fds_added is None
    assert summary.peak_mib == pytest.approx(500) and summary.processes_max == 10
    assert summary.db_bytes_end == 8192
    assert set(summary.targets.values()) == {None}
    text = report(summary)
    assert "steady PSS        not measured" in text and "no fd growth: not measured" in text
    one = summarize(series([300.0, 400.0, 500.0]), warmup=30)  # a single steady sample: a level, no slope
    assert one.steady_mib == pytest.approx(500) and one.growth_mib_h is None
    with pytest.raises(ValueError):
        summarize([], warmup=0)


def test_report_lines_name_every_figure():
    summary = summarize(series([600.0 + i for i in range(20)], fds=[100] * 20, db_bytes=[2048] * 20), warmup=60)
    summary.news_rows, summary.pages = 1234, {"google": {"requests": 10, "ok": 9}}
    text = report(summary)
    for part in (
        "steady PSS",
        "MiB/h",
        "% of steady per hour",
        "peak PSS",
        "processes         10 at the end",
        "fds               100 at the start",
        "1,234 news rows",
        "google 10 (9 answered 200)",
        "steady PSS <= 700 MiB: met",
        "growth <= 5 %/h: NOT met",
        "no fd growth: met",
    ):
        assert part in text, (part, text)
    line = table_line(
        Sample(
            elapsed=45.2,
            memory=300 * MiB,
            processes=7,
            fds=88,
            db_bytes=10240,
            memory_by_kind={"scrapy": 100 * MiB, "gpu-process": 50 * MiB, "utility:NetworkService": 150 * MiB},
        )
    )
    assert line.split() == ["45s", "300.0", "100.0", "0.0", "0.0", "0.0", "50.0", "150.0", "0.0", "7", "88", "10"]
    assert len(table_header().split()) == 12 + 2  # "PSS MiB" and "db KB" are two words each


def test_sample_tree_measures_this_process_and_its_children(tmp_path):
    db = tmp_path / "news.db"
    db.write_bytes(b"x" * 4096)
    (tmp_path / "news.db-wal").write_bytes(b"x" * 1000)
    assert db_size(db) == 5096 and db_size(tmp_path / "missing.db") == 0 and db_size(None) == 0
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        sample = sample_tree(os.getpid(), elapsed=3.0, db=db)
    finally:
        child.kill()
        child.wait()
    assert sample is not None and sample.elapsed == 3.0 and sample.db_bytes == 5096
    assert sample.processes >= 2 and sample.processes_by_kind["scrapy"] == 1  # the root counts as "scrapy"
    assert sample.memory > 5 * MiB and sample.memory_kind in ("PSS", "RSS")
    assert sample.memory == sum(sample.memory_by_kind.values())
    assert sample.fds > 0 and sample.fds == sum(sample.fds_by_kind.values())
    assert sample_tree(child.pid) is None  # gone


class FakeProcess:
    def __init__(self, pid: int, *argv: str, parent: FakeProcess | None = None) -> None:
        self.pid, self.argv, self._parent = pid, list(argv), parent

    def cmdline(self) -> list[str]:
        return self.argv

    def parent(self) -> FakeProcess | None:
        return self._parent


def test_process_kinds_of_a_crawl_tree():
    chromium = "/usr/lib/chromium/chromium-headless-shell"
    root = FakeProcess(1, "/venv/bin/python", "-m", "scrapy", "crawlall")
    driver = FakeProcess(2, "/venv/lib/python3.11/site-packages/playwright/driver/node", "cli.js", "run-driver")
    browser = FakeProcess(3, chromium, "--disable-field-trial-config", "--headless", parent=driver)
    expected = {
        FakeProcess(1, "/venv/bin/python"): "scrapy",
        driver: "driver",
        browser: "browser",
        # a helper the browser has forked and not yet exec'd: the browser's command line, the browser its parent
        FakeProcess(10, chromium, "--disable-field-trial-config", "--headless", parent=browser): "other",
        FakeProcess(4, chromium, "--type=zygote", "--no-sandbox"): "renderer",
        FakeProcess(5, chromium, "--type=renderer", "--lang=en-US"): "renderer",
        FakeProcess(6, chromium, "--type=gpu-process", "--no-sandbox"): "gpu-process",
        FakeProcess(
            7, chromium, "--type=utility", "--utility-sub-type=network.mojom.NetworkService"
        ): "utility:NetworkService",
        FakeProcess(8, "/bin/sh", "-c", "true"): "sh",
        FakeProcess(9): "other",
    }
    for proc, kind in expected.items():
        assert process_kind(proc, root) == kind, proc.argv
    assert [kind_column(k) for k in ("scrapy", "gpu-process", "utility:NetworkService", "renderer", "sh")] == [
        "scrapy",
        "gpu",
        "utility",
        "renderer",
        "other",
    ]
