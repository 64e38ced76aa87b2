"""SIGKILL at a random instant of a multi-file commit (not only at step boundaries), then reopen:
every trial all-old or all-new byte for byte, no uncommitted journal, temp file or held lock.

CI counts here; the full campaign (1,000+ trials) is ``python -m benchmarks.reliability crash``.
"""

from __future__ import annotations

import os
import signal

import pytest

from benchmarks.reliability import crash

pytestmark = pytest.mark.skipif(not hasattr(os, "fork") or not hasattr(signal, "SIGKILL"), reason="POSIX only")


def _check(report) -> None:
    assert report.failures == [], report.render()
    # the kills really landed inside commits, mid-way, not only between transactions
    assert report.counts.get("killed with a pending journal (inside a commit)", 0) >= report.trials // 5, (
        report.render()
    )
    assert report.counts.get("tree mixed on disk before recovery", 0) >= 1, report.render()
    assert report.counts.get("recovery rolled back", 0) >= 1, report.render()


# slow: a campaign at CI size (the fast tier, -m "not slow", leaves it to the full run)
@pytest.mark.slow
def test_sigkill_at_random_instants_forked_child(tmp_path):
    report = crash.run(100, seed=8, workdir=str(tmp_path))
    assert report.trials == 100
    _check(report)


# slow: a campaign at CI size (the fast tier, -m "not slow", leaves it to the full run)
@pytest.mark.slow
def test_sigkill_at_random_instants_fresh_interpreter(tmp_path):
    report = crash.run_exec(12, seed=9, workdir=str(tmp_path))
    assert report.trials == 12
    assert report.failures == [], report.render()
    assert report.counts.get("ended in A", 0) + report.counts.get("ended in B", 0) == 12


# slow: a campaign at CI size (the fast tier, -m "not slow", leaves it to the full run)
@pytest.mark.slow
def test_sigkill_at_random_instants_of_rewinds_and_redos(tmp_path):
    report = crash.run_history(60, seed=10, workdir=str(tmp_path))
    assert report.trials == 60
    assert report.failures == [], report.render()
    # the kills really landed inside both kinds of history at work, mid-way
    assert report.counts.get("killed inside a rewind", 0) >= 3, report.render()
    assert report.counts.get("killed inside a redo", 0) >= 3, report.render()
    assert report.counts.get("tree mixed on disk before recovery", 0) >= 1, report.render()
    assert report.counts.get("recovery rolled back", 0) >= 1, report.render()


def test_trees_differ_in_every_kind_of_change():
    """The flip really adds in new nested directories, updates, deletes and moves (with its mode)."""
    a, b = crash.TREE_A, crash.TREE_B
    assert "new/nested/deep/added.txt" in b and "new" not in a
    assert a["update.txt"] != b["update.txt"] and a["big.txt"] != b["big.txt"]
    assert "delete.txt" in a and "delete.txt" not in b
    assert a["mv/src.sh"] == b["mv/dst.sh"] and a["mv/src.sh"][1] == 0o755
