"""Property: on the edit replay's generated mistakes (benchmarks/replay), over seeds the
benchmark does not publish, no rule of ours makes a wrong edit: each call either writes exactly
the intended bytes or refuses and leaves every file as it was."""

from __future__ import annotations

import pytest

from benchmarks.replay import corpus, runner, tools
from tests.support.tiers import tiered

SEEDS = (101, 202, 303)
PER_CLASS = 3


@pytest.mark.parametrize("seed", tiered(SEEDS))  # one seed in the fast tier: ~4 s idle each
def test_no_wrong_edit_on_generated_mistakes(seed: int) -> None:
    attempts = corpus.generate(seed, PER_CLASS)
    patch_tool = [tool for tool in tools.ours_tools() if tool.key == "ours.apply_patch"]
    outcomes = runner.run(attempts, patch_tool, log=lambda _: None)["ours.apply_patch"]
    assert len(outcomes) == len(attempts)
    bad = [(o.attempt, o.outcome, o.message) for o in outcomes if o.outcome in ("wrong", "refused_touched")]
    assert not bad, bad
    # The rules do apply: the mistakes the replay makes are mostly recovered, not just refused.
    assert sum(o.outcome == "success" for o in outcomes) > len(outcomes) * 3 // 4
