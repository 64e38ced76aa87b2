"""Differential testing against Codex's real apply_patch binary: random files and patches, both
outcomes and the resulting trees compared byte for byte; every difference must be one of the spec's
deliberate ones. Skipped (reported) when the binary is absent (``benchmarks/install_peers.sh``).
The full run (10,000 cases) is ``python -m benchmarks.reliability differential``."""

from __future__ import annotations

import pytest

from benchmarks.reliability import differential

BINARY = differential.codex_binary()


# slow: a campaign at CI size (the fast tier, -m "not slow", leaves it to the full run)
@pytest.mark.slow
@pytest.mark.skipif(BINARY is None, reason="Codex apply_patch binary not installed (benchmarks/install_peers.sh codex)")
def test_every_difference_from_codex_is_deliberate():
    report = differential.run(150, binary=BINARY)
    assert report.trials >= 130, report.render()
    assert report.counts.get("differs: unexplained", 0) == 0, report.render()
    assert report.counts.get("same (success)", 0) + report.counts.get("same (failure)", 0) > 0


def test_classifier_names_the_deliberate_differences():
    crlf = {"a.txt": b"x\r\n"}
    assert differential.classify(crlf, "", False, False, {}, {}).startswith("atomic")
    assert differential.classify({"a.txt": b"\xef\xbb\xbfx\n"}, "", True, True, {}, {}).startswith("BOM")
    patch = "*** Begin Patch\n*** Update File: a.txt\n@@ x\n@@ y\n z\n*** End Patch"
    assert differential.classify(crlf, patch, False, True, {}, {}).startswith("consecutive")
    move = "*** Begin Patch\n*** Update File: a.txt\n*** Move to: a.txt\n@@\n-x\n+y\n*** End Patch"
    assert differential.classify(crlf, move, True, True, {}, {}).startswith("Move to")
    plain = "*** Begin Patch\n*** Update File: a.txt\n@@\n-x\n+y\n*** End Patch"
    assert differential.classify(crlf, plain, True, True, {}, {}) == "unexplained"
