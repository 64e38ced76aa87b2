"""SIGKILL at a random instant of a multi-file commit on S3 (moto on 127.0.0.1), then reopen:
all-old or all-new, no uncommitted journal object, the dead holder's lease never blocks.
Slow (a fresh interpreter per trial, ~60 S3 requests per flip): a handful of trials here, the
campaign is ``python -m benchmarks.reliability crash-s3``."""

from __future__ import annotations

import pytest

pytest.importorskip("moto")
pytest.importorskip("s3fs")

from benchmarks.reliability import crash_s3

pytestmark = [pytest.mark.s3, pytest.mark.slow]


def test_sigkill_at_random_instants_on_s3():
    report = crash_s3.run(2, seed=3)
    assert report.failures == [], report.render()
    assert report.trials == 2
    assert report.counts.get("ended in A", 0) + report.counts.get("ended in B", 0) == 2


def test_flip_back_and_forth_on_s3():
    """Regression: removing a prefix-only "directory" whose last file the same commit deletes."""
    from benchmarks.reliability import crash
    from tests.support import s3_servers

    ep = s3_servers.shared_moto_endpoint()
    ws = crash_s3._open(f"s3://{s3_servers.make_bucket(ep, 'flip')}/ws", ep.storage_options)
    crash_s3._populate(ws)
    assert crash.flip(ws) == "B"
    assert crash.flip(ws) == "A"
