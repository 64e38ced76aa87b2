"""SIGKILL at a random instant of a multi-file commit on Azurite, then reopen: all-old or all-new,
no uncommitted journal, the dead holder's lease never blocks. A handful of trials here; the
campaign is ``python -m benchmarks.reliability crash-azure``."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from benchmarks.reliability import crash_azure
from tests.support import azurite

pytestmark = [pytest.mark.azurite, pytest.mark.slow]


@pytest.fixture(scope="module")
def azurite_ep() -> Iterator[Any]:
    if not azurite.available():
        pytest.skip(azurite.MISSING)
    with azurite.azurite_endpoint() as ep:
        yield ep


def test_sigkill_at_random_instants_on_azure(azurite_ep: Any) -> None:
    report = crash_azure.run(3, seed=3, endpoint=azurite_ep)
    assert report.failures == [], report.render()
    assert report.trials == 3
    assert report.counts.get("ended in A", 0) + report.counts.get("ended in B", 0) == 3
