"""Smoke test of the benchmark runner: every workload once, at tiny size. No timing assertions.

It checks that the runner still works end to end: inputs are generated, every available tool
(ours, and the peers where installed) runs and produces the reference bytes, missing peers are
reported as missing, and the table, JSON and plot are written.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks import install, runner, workloads
from benchmarks.context import Context
from benchmarks.core import run_workload
from tests.support import s3_servers


# slow: every workload end to end, several through subprocesses and S3
@pytest.mark.slow
@pytest.mark.parametrize("name", [n for n in workloads.WORKLOADS if workloads.load(n) is not None])
def test_each_workload_runs_once_at_tiny_size(name: str, tmp_path: Path) -> None:
    module = workloads.load(name)
    assert module is not None
    if name == "s3" and not s3_servers.weed_available():
        pytest.skip(s3_servers.WEED_MISSING)  # the missing path: test_s3_without_seaweedfs_is_reported_missing
    workload = module.build(Context(tmp_path, "tiny"))
    if name == "s3":  # SeaweedFS is installed: a server that does not start is a failure, not "missing"
        assert all(s.available for s in workload.series), [s.missing for s in workload.series]
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


def test_s3_without_seaweedfs_is_reported_missing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    module = workloads.load("s3")
    if module is None:
        pytest.skip("benchmarks/workloads/s3.py is not present")
    monkeypatch.setattr(s3_servers, "weed_available", lambda: False)
    workload = module.build(Context(tmp_path, "tiny"))
    assert workload.series and all(s.missing == s3_servers.WEED_MISSING for s in workload.series)
    result = run_workload(workload, reps=1, warmup=0, log=lambda _: None)
    assert result.error is None and all(not sr.samples for sr in result.series.values())
    assert result.targets and all(t.status == "missing" and t.reason for t in result.targets)


def test_runner_writes_table_json_and_reports_missing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(s3_servers, "weed_available", lambda: False)  # s3 reported missing (and no server)
    code = runner.main(["--tiny", "-w", "transaction,s3", "--out", str(tmp_path)])
    assert code == 0
    out = capsys.readouterr().out
    assert "durable 1-file commit <= 1.5x a bare durable write" in out
    document = json.loads((tmp_path / "latest.json").read_text())
    names = [w["name"] for w in document["workloads"]]
    assert names == ["transaction", "s3"]
    if workloads.load("s3") is None:
        assert document["workloads"][1]["missing"]
    else:
        assert all(s["missing"] == s3_servers.WEED_MISSING for s in document["workloads"][1]["series"])
    assert "missing" in out
    series = document["workloads"][0]["series"]
    assert {s["key"] for s in series} == {"ours.1", "bare.1", "fsync.1", "record.1", "ours.4", "bare.4"}
    assert all(s["summary"]["n"] == 1 for s in series)
    assert (tmp_path / "latest.md").read_text() in out
    assert not [p for p in tmp_path.iterdir() if p.name.startswith("work-")]  # scratch files removed
    # a smoke run makes no install: its processes run the runner's interpreter, and the report says so
    assert document["config"]["processes"] == install.DEVELOPMENT
    assert f"Our processes (and the bare interpreter beside them) run {install.DEVELOPMENT}." in out


@pytest.mark.parametrize("size", [0, 5, (1 << 20) - 1, 3 * (1 << 20) + 5])
def test_the_bare_durable_write_lands_byte_for_byte(tmp_path: Path, size: int) -> None:
    """The baseline the floors are made of writes a large file in slices (starting its writeback
    between them): every byte lands once, in order, and no temp file is left."""
    from benchmarks.workloads.transaction import durable_write

    data = bytes(i % 251 for i in range(size))
    target = tmp_path / "f.bin"
    target.write_bytes(b"old")
    durable_write(str(target), data)
    assert target.read_bytes() == data
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f.bin"]
