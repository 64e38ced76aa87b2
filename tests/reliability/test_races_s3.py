"""Races on SeaweedFS: editor and apply_patch processes, each with its own workspace on the same
``s3://bucket/ws``, plus an external S3 client doing If-Match read-modify-write, all adding lines
to one file. 0 lost updates, every loser FS_STALE_VERSION, the final file equals the serial replay
of the winners. The full campaign is ``python -m benchmarks.reliability races-s3``."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("s3fs")
pytest.importorskip("boto3")

from benchmarks.reliability import Report, races_s3
from tests.support import s3_servers


@pytest.fixture(scope="module")
def seaweedfs() -> Iterator[Any]:
    if not s3_servers.weed_available():
        pytest.skip(s3_servers.WEED_MISSING)
    with s3_servers.seaweedfs_endpoint() as ep:
        yield ep


@pytest.mark.seaweedfs
def test_processes_through_both_tools_with_an_external_writer_on_seaweedfs(seaweedfs):
    rounds, edits = 2, 5
    report = races_s3.run(rounds, seed=5, editors=2, patchers=2, externals=1, edits=edits, endpoint=seaweedfs)
    assert report.failures == [], report.render()
    assert report.trials == rounds
    # every edit was either committed or refused with FS_STALE_VERSION, nothing else
    outcomes = {name: n for name, n in report.counts.items() if not name.startswith("external 412")}
    assert sum(outcomes.values()) == rounds * 5 * edits, report.render()
    # every If-Match write of the external client went through (retrying on 412) and is in the file
    assert report.counts.get("external wins") == rounds * edits, report.render()
    # the race was real: both tools won, and vfs refused stale edits
    assert report.counts.get("editor wins", 0) > 0, report.render()
    assert report.counts.get("patch wins", 0) > 0, report.render()
    losses = report.counts.get("editor FS_STALE_VERSION", 0) + report.counts.get("patch FS_STALE_VERSION", 0)
    assert losses > 0, report.render()


def _check(results: dict[str, list[dict[str, Any]]], final: str) -> list[str]:
    report = Report("check")
    races_s3.check_round(report, "r", results, final.encode())
    return report.failures


def test_check_round_catches_lost_updates_and_wrong_codes():
    """The checker itself: a correct round passes; a lost external or vfs write, a refused line in
    the file, a loser with another code, or an editor line after a line it never saw, all fail."""
    results = {
        "editor0": [{"line": "e0-0", "code": None, "seen_last": "header"}],
        "patch1": [{"line": "p1-0", "code": None}, {"line": "p1-1", "code": "FS_STALE_VERSION"}],
        "external2": [{"line": "x2-0", "code": None, "retries": 1}],
    }
    assert _check(results, "header\ne0-0\np1-0\nx2-0\n") == []
    assert any("LOST UPDATE" in f and "x2-0" in f for f in _check(results, "header\ne0-0\np1-0\n"))
    assert any("LOST UPDATE" in f and "p1-0" in f for f in _check(results, "header\ne0-0\nx2-0\n"))
    assert any("refused line p1-1" in f for f in _check(results, "header\ne0-0\np1-0\np1-1\nx2-0\n"))
    assert any("follows" in f for f in _check(results, "header\np1-0\ne0-0\nx2-0\n"))
    other = {**results, "patch1": [{"line": "p1-0", "code": None}, {"line": "p1-1", "code": "FS_LOCKED"}]}
    assert any("not FS_STALE_VERSION" in f for f in _check(other, "header\ne0-0\np1-0\nx2-0\n"))
    assert any("final newline" in f for f in _check(results, "header\ne0-0\np1-0\nx2-0"))
