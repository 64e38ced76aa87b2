"""Smoke test of the benchmark runner: every workload once, at tiny size. No timing assertions.

It checks that the runner still works end to end: inputs are generated, every available tool
(ours, and the peers where installed) runs and produces the reference bytes, missing peers are
reported as missing, and the table, JSON and plot are written.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks import runner, workloads
from benchmarks.context import Context
from benchmarks.core import run_workload


@pytest.mark.parametrize("name", [n for n in workloads.WORKLOADS if workloads.load(n) is not None])
def test_each_workload_runs_once_at_tiny_size(name: str, tmp_path: Path) -> None:
    module = workloads.load(name)
    assert module is not None
    workload = module.build(Context(tmp_path, "tiny"))
    result = run_workload(workload, reps=1, warmup=0, log=lambda _: None)
    assert result.error is None
    for series in result.series.values():
        if series.series.available:
            assert len(series.samples) == 1 and series.samples[0] > 0, series.series.key
        else:
            assert series.samples == [] and series.series.missing
    for target in result.targets:
        assert target.status in ("met", "missed", "missing"), (target.target.label, target.reason)
        if target.status == "missing":
            assert target.reason


def test_runner_writes_table_json_and_reports_missing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = runner.main(["--tiny", "-w", "transaction,s3", "--out", str(tmp_path)])
    assert code == 0
    out = capsys.readouterr().out
    assert "durable 1-file commit <= 2.5x a bare durable write" in out
    document = json.loads((tmp_path / "latest.json").read_text())
    names = [w["name"] for w in document["workloads"]]
    assert names == ["transaction", "s3"]
    if workloads.load("s3") is None:
        assert document["workloads"][1]["missing"]
        assert "missing" in out
    series = document["workloads"][0]["series"]
    assert {s["key"] for s in series} == {"ours.1", "bare.1", "ours.4", "bare.4"}
    assert all(s["summary"]["n"] == 1 for s in series)
    assert (tmp_path / "latest.md").read_text() in out
    assert not [p for p in tmp_path.iterdir() if p.name.startswith("work-")]  # scratch files removed
