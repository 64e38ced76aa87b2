"""Races on Azurite: editor and apply_patch processes, each with its own workspace on the same
``az://container/ws``, plus an external SDK client doing If-Match read-modify-write, all adding
lines to one file. 0 lost updates, every loser FS_STALE_VERSION, the final file equals the serial
replay of the winners. The full campaign is ``python -m benchmarks.reliability races-azure``."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from benchmarks.reliability import races_azure
from tests.support import azurite

# slow: a campaign at CI size (processes racing on Azurite, ~9 s idle); the fast tier keeps the local
# races (tests/reliability/test_races_external.py) and Azure's store-enforced conditions (tests/azure)
pytestmark = [pytest.mark.azurite, pytest.mark.slow]


@pytest.fixture(scope="module")
def azurite_ep() -> Iterator[Any]:
    if not azurite.available():
        pytest.skip(azurite.MISSING)
    with azurite.azurite_endpoint() as ep:
        yield ep


def test_processes_through_both_tools_with_an_external_writer_on_azurite(azurite_ep: Any) -> None:
    rounds, edits = 2, 5
    report = races_azure.run(rounds, seed=5, editors=2, patchers=2, externals=1, edits=edits, endpoint=azurite_ep)
    assert report.failures == [], report.render()
    assert report.trials == rounds
    outcomes = [n for name, n in report.counts.items() if not name.startswith("external 412")]  # retries
    assert sum(outcomes) == rounds * 5 * edits, report.render()  # each edit won or lost, nothing else
    assert report.counts.get("external wins") == rounds * edits, report.render()
    # the race was real: both tools won, and vfs refused stale edits
    assert report.counts.get("editor wins", 0) > 0 and report.counts.get("patch wins", 0) > 0, report.render()
    losses = report.counts.get("editor FS_STALE_VERSION", 0) + report.counts.get("patch FS_STALE_VERSION", 0)
    assert losses > 0, report.render()
