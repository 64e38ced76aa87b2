"""Faults at random points: random transactions on random trees (local disk and memory), one
backend call failing at a random index with ENOSPC, EACCES, EIO or a timeout (a fifth of them for
good, like a dead disk). The old tree survives every failed commit, byte for byte and mode for
mode; a commit that returns left exactly the new tree; the error names the cause.
The full campaign is ``python -m benchmarks.reliability faults``."""

from __future__ import annotations

import pytest

from benchmarks.reliability import faults


# slow: a campaign at CI size (the fast tier, -m "not slow", leaves it to the full run)
@pytest.mark.slow
@pytest.mark.parametrize("seed", [1, 2])
def test_random_faults_keep_the_old_tree_and_name_the_cause(seed):
    report = faults.run(200, seed=seed)
    assert report.failures == [], report.render()
    assert report.trials >= 190
    # every kind of error and the interesting outcomes were reached
    for code in ("FS_IO_ERROR", "FS_PERMISSION_DENIED"):
        assert report.counts.get(f"raised {code}", 0) > 0, report.render()
    assert report.counts.get("said it was rolled back", 0) > 0, report.render()
    assert report.counts.get("rollback failed, recovered on reopen", 0) > 0, report.render()


def test_each_kind_maps_to_its_code_and_words():
    for kind, (factory, code, words) in faults.KINDS.items():
        from vfs.storage import translate

        err = translate(factory("write", 1), "/workspace/a.txt", "write", "workspace-write")
        assert err.code == code, kind
        assert words.lower() in err.message.lower(), (kind, err.message)
