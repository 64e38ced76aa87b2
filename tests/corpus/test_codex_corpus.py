"""Codex's 25 apply_patch scenarios, through our tool, on every backend.

Each scenario: ``input/`` (absent = empty), ``patch.txt``, ``expected/`` (the final tree, files and
directories, byte for byte). Failure scenarios must also fail with Codex's message. 015 is
inverted: Codex keeps the file added before the failing hunk; ours is atomic.
"""

from __future__ import annotations

from typing import Any

import pytest

from editors.apply_patch.errors import ApplyPatchError
from editors.apply_patch.tool import apply_patch
from tests.corpus.codex_scenarios import CORPUS, FAILURES, INVERTED, SCENARIOS, failure_text, read_tree
from tests.support.trees import snapshot_tree


def test_corpus_is_intact() -> None:
    assert len(SCENARIOS) == 25
    assert (CORPUS / "LICENSE").is_file() and (CORPUS / "NOTICE").is_file()
    # the CRLF / lone-CR bytes survived the copy and git
    assert read_tree(CORPUS / "024_preserves_mixed_line_endings" / "input") == {
        "lines.txt": b"one\r\ntwo\rthree\nfour\r\n"
    }
    assert set(FAILURES) <= set(SCENARIOS)


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_scenario(make_workspace: Any, scenario: str) -> None:
    directory = CORPUS / scenario
    # Read everything first: under pyfakefs the real disk disappears once the workspace exists.
    start = read_tree(directory / "input")
    codex_expected = read_tree(directory / "expected")
    patch = (directory / "patch.txt").read_bytes().decode("utf-8")
    ws = make_workspace(start)

    if scenario in FAILURES:
        with pytest.raises(ApplyPatchError) as info:
            apply_patch(ws, patch)
        assert info.value.cli_message == failure_text(scenario, ws.mount)
    else:
        result = apply_patch(ws, patch)
        assert result.summary.startswith("Success. Updated the following files:\n")

    if scenario in INVERTED:
        assert codex_expected != start  # Codex keeps the partial change; we invert it
        assert snapshot_tree(ws) == start
    else:
        assert snapshot_tree(ws) == codex_expected
