"""The report of the benchmark runner on synthetic workloads (no tools, no timing): counts, absolute
bounds, scaled bounds, the repetitions a workload asks for, and where series go in the plot."""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from benchmarks import report, workloads
from benchmarks.context import Context
from benchmarks.core import Series, Target, Workload, WorkloadResult, repetitions, run_workload
from tests.support import s3_servers


def _values(*values: float) -> Callable[[], float]:
    cycle: Iterator[float] = itertools.cycle(values)
    return lambda: next(cycle)


def _meta(reps: int = 3, warmup: int = 0) -> dict[str, Any]:
    machine = {
        "cpu": "test cpu",
        "cores": 2,
        "memory_gib": 1.0,
        "os": "Linux",
        "python": "CPython 3",
        "filesystem": "ext4",
        "load_average_at_start": [0.0, 0.0, 0.0],
        "load_average_at_end": [0.0, 0.0, 0.0],
        "commit": "abc1234",
        "date": "2026-12-02 00:00 UTC",
        "peers": {"codex": "missing: test"},
    }
    config = {"profile": "tiny", "reps": reps, "warmup": warmup, "command": "python -m benchmarks --tiny"}
    return {"machine": machine, "config": config}


def _requests_workload(*, per_file: tuple[float, ...] = (8.12,), **kw: Any) -> Workload:
    series = [
        Series("pre.1", "commit, 1 file", "ours", _values(0.2)),
        Series("pre.100", "commit, 100 files", "ours", _values(0.6)),
        Series(
            "requests.100", "S3 requests per file", "ours", _values(*per_file), unit="count", quantity="requests/file"
        ),
    ]
    targets = [
        Target("<= 4 S3 requests per file", "requests.100", 4.0),
        Target("<= 10 S3 requests per file", "requests.100", 10.0),
        Target("100 files <= 5x 1 file", "pre.100", 5.0, denominator="pre.1"),
    ]
    return Workload("s3", "S3 commits", {"files": 100}, series, targets, **kw)


def _run(workload: Workload, reps: int = 3, **kw: Any) -> WorkloadResult:
    return run_workload(workload, reps=reps, warmup=0, sync=False, log=lambda _: None, **kw)


def _row(lines: list[str], label: str) -> list[str]:
    (row,) = [line for line in lines if f"| {label} |" in line]
    return [cell.strip() for cell in row.strip("|").split("|")]


def test_counts_are_plain_numbers() -> None:
    assert report.fmt_value(8.12, "count", "requests/file") == "8.12 requests/file"
    assert report.fmt_value(812.0, "count", "requests") == "812 requests"
    assert report.fmt_value(1024.0, "count") == "1,024"
    assert report.fmt_value(3.5, "count") == "3.50"
    assert report.fmt_count(8.0, 8.5) == "8.00" and report.fmt_count(8.0, 9.0) == "8"  # a range: one precision
    assert report.fmt_value(8.12, "s") == "8.12 s"  # seconds unchanged


def test_absolute_bound_on_a_count_table_and_json() -> None:
    result = _run(_requests_workload(per_file=(8.12, 8.0, 8.5)))
    missed, met, ratio = result.targets
    assert (missed.status, met.status, ratio.status) == ("missed", "met", "met")
    assert missed.value == pytest.approx(8.12) and (missed.low, missed.high) == (8.0, 8.5)
    assert missed.unit == "count" and missed.quantity == "requests/file"

    table = report.targets_table([result])
    assert _row(table, "<= 4 S3 requests per file") == [
        "s3",
        "<= 4 S3 requests per file",
        "8.12",
        "<= 4",
        "-",
        "8.00 - 8.50",
        "**MISSED**",
    ]
    assert _row(table, "<= 10 S3 requests per file")[2:] == ["8.12", "<= 10", "-", "8.00 - 8.50", "met"]
    assert _row(table, "100 files <= 5x 1 file")[2:] == ["3.00x", "<= 5x", "-", "3.00 - 3.00x", "met"]

    series = report.series_table(result)
    assert _row(series, "S3 requests per file")[2:5] == ["8.12 requests/file", "8.00 - 8.50 requests/file", "3"]
    assert _row(series, "commit, 100 files")[2] == "600 ms"

    document = json.loads(json.dumps(report.to_json([result], _meta())))
    (w,) = document["workloads"]
    assert (w["reps"], w["warmup"]) == (3, 0)
    by_key = {s["key"]: s for s in w["series"]}
    assert by_key["requests.100"]["unit"] == "count"
    assert by_key["requests.100"]["quantity"] == "requests/file"
    assert by_key["pre.1"]["unit"] == "s"
    target = w["targets"][0]
    assert target["kind"] == "absolute"
    assert (target["unit"], target["quantity"]) == ("count", "requests/file")
    assert target["value"] == pytest.approx(8.12) and target["bound"] == 4.0
    assert target["range"] == [8.0, 8.5] and target["status"] == "missed"
    assert w["targets"][1]["status"] == "met"
    assert w["targets"][2]["unit"] == "ratio"


def test_absolute_bound_is_inclusive_for_counts() -> None:
    result = _run(_requests_workload(per_file=(4.0,)), reps=1)
    assert result.targets[0].status == "met"
    assert _row(report.targets_table([result]), "<= 4 S3 requests per file")[2:] == ["4", "<= 4", "-", "4 - 4", "met"]


def test_a_missing_count_series_keeps_its_unit() -> None:
    workload = _requests_workload()
    for s in workload.series:
        s.missing = "weed is not installed"
    result = _run(workload)
    target = result.targets[0]
    assert target.status == "missing" and target.unit == "count" and target.reason == "weed is not installed"
    row = _row(report.targets_table([result]), "<= 4 S3 requests per file")
    assert row[2:] == ["-", "<= 4", "-", "-", "missing: weed is not installed"]  # the bound in its unit still


def test_a_raised_target_shows_its_earlier_bound_met_or_missed() -> None:
    workload = _requests_workload(per_file=(3.0, 3.0, 3.0))
    workload.targets = [
        Target("<= 2 S3 requests per file", "requests.100", 2.0, earlier=4.0),
        Target("<= 4 S3 requests per file", "requests.100", 4.0, earlier=2.5),
    ]
    table = report.targets_table([_run(workload)])
    assert _row(table, "<= 2 S3 requests per file")[3:5] == ["<= 2", "<= 4: met"]
    assert _row(table, "<= 4 S3 requests per file")[3:5] == ["<= 4", "<= 2.50: missed"]
    document = report.to_json([_run(workload)], _meta())
    assert [t["earlier_bound"] for t in document["workloads"][0]["targets"]] == [4.0, 2.5]


def test_absolute_time_and_scaled_bounds() -> None:
    series = [
        Series("cli", "vfs apply", "ours", _values(0.288)),
        Series("rss", "peak RSS", "ours", _values(323e6), unit="bytes"),
    ]
    targets = [
        Target("whole process < 0.1 s", "cli", 0.1),
        Target("peak RSS <= 3x file size", "rss", 3.0, scale=100e6, scale_label="file size"),
        Target("peak RSS <= 3x (no label)", "rss", 3.0, scale=100e6),
    ]
    result = _run(Workload("w", "w", {}, series, targets), reps=1)
    table = report.targets_table([result])
    assert _row(table, "whole process < 0.1 s")[2:] == ["288 ms", "< 100 ms", "-", "288 ms - 288 ms", "**MISSED**"]
    assert _row(table, "peak RSS <= 3x file size")[2:] == [
        "3.23x",
        "<= 3x file size",
        "-",
        "3.23 - 3.23x",
        "**MISSED**",
    ]
    assert _row(table, "peak RSS <= 3x (no label)")[3] == "<= 3x"
    targets_json = report.to_json([result], _meta())["workloads"][0]["targets"]
    assert targets_json[0]["unit"] == "s"
    assert (targets_json[1]["unit"], targets_json[1]["scale_label"]) == ("ratio", "file size")


def test_side_measurements() -> None:
    from benchmarks.core import Measured

    extra = {"cpu_s": 0.2, "server_cpu_s": 1.3, "requests": 812.0, "requests_per_file": 8.12}
    series = [Series("pre", "commit", "ours", lambda: Measured(4.0, extra))]
    result = _run(Workload("w", "w", {}, series), reps=1)
    assert _row(report.series_table(result), "commit")[5] == (
        "IQR +-0 %; CPU 200 ms, requests 812, requests per file 8.12, server CPU 1.30 s"
    )


def test_repetitions_a_workload_asks_for() -> None:
    plain = Workload("a", "a", {}, [])
    assert repetitions(plain, 7) == 7
    short = Workload("b", "b", {}, [], repeat=3)
    assert repetitions(short, 7) == 21 and repetitions(short, 7, explicit=True) == 21
    long = Workload("c", "c", {}, [], runs=3)
    assert repetitions(long, 7) == 3  # capped
    assert repetitions(long, 1) == 1  # a cap, never more than asked
    assert repetitions(long, 9, explicit=True) == 9  # --reps 9 is what the user asked for


def test_runs_cap_is_applied_and_reported() -> None:
    capped = _run(_requests_workload(runs=2), reps=7)
    assert capped.reps == 2 and all(len(sr.samples) == 2 for sr in capped.series.values())
    asked = _run(_requests_workload(runs=2), reps=4, explicit=True)
    assert asked.reps == 4 and all(len(sr.samples) == 4 for sr in asked.series.values())
    short = _run(Workload("transaction", "t", {}, [Series("x", "x", "ours", _values(0.001))], repeat=3), reps=7)
    assert short.reps == 21

    text = report.markdown([short, capped], _meta(reps=7, warmup=1))
    assert (
        "7 repetitions after 1 warm-up, alternating; repetitions per workload where they differ: "
        "transaction 21 (3x: short, noisy runs), s3 2 (at most 2: long runs)" in text
    )
    assert _row(report.series_table(capped), "S3 requests per file")[4] == "2"
    plain = report.markdown([_run(_requests_workload(), reps=7)], _meta(reps=7))
    assert "where they differ" not in plain
    assert report.to_json([capped], _meta(reps=7))["workloads"][0]["reps"] == 2


def test_count_series_get_their_own_plot_panel(tmp_path: Path) -> None:
    result = _run(_requests_workload(), reps=1)
    panels = report.panels([result])
    assert [(title, unit, [sr.series.key for sr in srs]) for title, unit, _, srs in panels] == [
        ("S3 commits", "s", ["pre.1", "pre.100"]),
        ("S3 commits: requests/file", "count", ["requests.100"]),
    ]
    pytest.importorskip("matplotlib")
    assert report.plot([result], tmp_path / "plot.png", _meta()) is None
    assert (tmp_path / "plot.png").stat().st_size > 0


def test_s3_workload_declares_counts_absolute_target_and_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    module = workloads.load("s3")
    if module is None:
        pytest.skip("benchmarks/workloads/s3.py is not present")
    monkeypatch.setattr(s3_servers, "weed_available", lambda: False)  # no server: the declarations only
    workload = module.build(Context(tmp_path, "full"))
    assert workload.runs == 3 and repetitions(workload, 7) == 3
    counts = [s for s in workload.series if s.unit == "count"]
    assert [s.key for s in counts] == ["requests.100", "requests.edit", "round_trips.edit"]
    assert [s.quantity for s in counts] == ["requests/file", "requests", "round trips"]
    per_file = [t for t in workload.targets if t.numerator == "requests.100"]
    assert len(per_file) == 1 and per_file[0].kind == "absolute" and per_file[0].bound == 4.0
    edit = {t.numerator: t.bound for t in workload.targets if t.numerator.endswith(".edit")}
    assert edit == {"requests.edit": 6.0, "round_trips.edit": 4.0}  # issue 20's bounds, absolute counts
