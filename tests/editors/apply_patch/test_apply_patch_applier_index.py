"""The applier's index of the patch's own files answers as the scan of the overlay it replaces."""

from __future__ import annotations

import random
import time

from editors.apply_patch.applier import _Files

PATHS = ["a", "a/", "a/b", "a/b/", "a/b/c", "a//b", "b", "b/c", "/", "", "/a", "/a/b", "c/d/e", "c/d", "a/b/c/d", "x/y"]


def test_implied_agrees_with_a_scan_of_the_overlay() -> None:
    rng = random.Random(11)
    for _ in range(3000):
        files = _Files(lambda key: None)
        for _ in range(rng.randint(1, 8)):
            key = rng.choice(PATHS)
            files.before.setdefault(key, None)  # as if read: set() then changes the overlay only
            files.set(key, key, rng.choice([b"x", b"", None]))
            for probe in PATHS:
                assert files._implied(probe) == files._implied_in_order(probe), (files.overlay, probe)


def test_many_files_plan_in_linear_time() -> None:
    from editors.apply_patch.applier import plan_patch
    from editors.apply_patch.parser import parse_patch

    patch = (
        "*** Begin Patch\n" + "".join(f"*** Add File: d{i % 50}/f{i}.txt\n+x\n" for i in range(5000)) + "*** End Patch"
    )
    parsed = parse_patch(patch)
    start = time.process_time()
    plan = plan_patch(parsed, lambda key: None)
    assert time.process_time() - start < 1.0  # ~0.05 s; a scan of the overlay per file took ~5 s
    assert len(plan.added) == 5000
