"""Races: editor and apply_patch processes plus an external O_APPEND writer, all adding lines to one
file of one local workspace. 0 lost updates, every loser FS_STALE_VERSION, the final file equals
the serial replay of the winners. The full campaign is ``python -m benchmarks.reliability races``."""

from __future__ import annotations

import os

import pytest

from benchmarks.reliability import races

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="POSIX only")


# slow: a campaign at CI size (the fast tier, -m "not slow", leaves it to the full run)
@pytest.mark.slow
def test_processes_through_both_tools_with_an_external_writer():
    report = races.run(3, seed=5, editors=3, patchers=3, externals=1, edits=12)
    assert report.failures == [], report.render()
    assert report.trials == 3
    # the race was real: both tools both won and lost
    for kind in ("editor", "patch"):
        assert report.counts.get(f"{kind} wins", 0) > 0, report.render()
        assert report.counts.get(f"{kind} FS_STALE_VERSION", 0) > 0, report.render()


def test_replay_detects_a_lost_update():
    """The checker itself: a winner whose line is missing, or one placed after a line it never saw,
    does not replay to the final file."""
    results = {
        "editor0": [{"line": "e0-0", "code": None, "seen_last": "header"}],
        "patch1": [{"line": "p1-0", "code": None}],
    }
    assert races.replay(results, ["header", "e0-0", "p1-0"]) == ["header", "e0-0", "p1-0"]
    # e0-0 committed on a stale view (it saw "header" but p1-0 was already there): not serial
    assert races.replay(results, ["header", "p1-0", "e0-0"]) != ["header", "p1-0", "e0-0"]
    # a lost update: p1-0 won but is not in the file
    assert races.replay(results, ["header", "e0-0"]) == ["header", "e0-0"]
