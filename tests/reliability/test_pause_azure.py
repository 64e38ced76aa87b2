"""A committer SIGSTOPped inside a multi-file commit on Azure (Azurite) until its lease has
expired, while another client recovers and commits; then SIGCONTed. Slow (fresh interpreters and
a pause of two lease times per trial): a handful of trials here, the campaigns are ``python -m
benchmarks.reliability pause-azure`` (the account key at hand: every change under the lease is
fenced by a SAS that expires with it) and ``pause-azure-sas`` (a SAS token: checked before each
send only)."""

from __future__ import annotations

import pytest

from benchmarks.reliability import pause
from tests.support import azurite

pytestmark = [pytest.mark.azurite, pytest.mark.slow]


def test_paused_committer_on_azurite_breaks_no_promise() -> None:
    if not azurite.available():
        pytest.skip(azurite.MISSING)
    report = pause.run_azurite(4, seed=11)
    if report.trials != 4:
        raise RuntimeError(f"the harness stopped early:\n{report.render()}")
    assert all(report.counts[name] == 0 for name in pause.VIOLATIONS), report.render()
    assert report.failures == [], report.render()
