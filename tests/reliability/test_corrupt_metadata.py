"""Corrupt metadata at random: truncated and flipped journals and decisions, then recover, log,
undo, read and commit. No traceback, no wrong bytes, nothing outside the root.
The full campaign is ``python -m benchmarks.reliability corrupt`` (10,000 mutations)."""

from __future__ import annotations

import pytest

from benchmarks.reliability import corrupt


def test_random_corruptions_are_caught_on_memory():
    report = corrupt.run(300, seed=3, kinds=("memory",))
    assert report.failures == [], report.render()
    assert report.trials == 300
    # the interesting outcomes were all reached
    assert report.counts.get("recover ok", 0) > 0, report.render()
    assert report.counts.get("read FS_RECOVERY_NEEDED", 0) > 0, report.render()
    assert report.counts.get("log FS_CORRUPT_METADATA", 0) + report.counts.get("undo FS_CORRUPT_METADATA", 0) > 0


@pytest.mark.slow  # the same campaign as on memory (the fast tier's twin), on local disk
def test_random_corruptions_are_caught_on_local_disk():
    report = corrupt.run(60, seed=4, kinds=("local",))
    assert report.failures == [], report.render()
    assert report.trials == 60
