"""Atomicity under faults: fail the N-th backend call of a multi-file patch, for every N.

The patch adds a file in a new nested directory, updates one, deletes one and moves one. Whatever
call fails (a read while planning, the journal, a target write, a directory creation...), the tree
afterwards is byte for byte the tree before (contents, modes, directories), or, if the failure
came after the commit point, exactly the patched tree: never a mix.
"""

from __future__ import annotations

from typing import Any

import pytest

import vfs
from editors.apply_patch.tool import apply_patch
from tests.support.faults import FaultyBackend
from tests.support.trees import snapshot_tree

START = {
    "keep.txt": b"keep\r\n",
    "src/update.py": b"def f():\r\n    return 1\r\n",
    "delete.txt": b"bye",
    "mv/src.txt": b"moving\n",
    "mv/dst.txt": b"overwritten\n",
}

PATCH = """*** Begin Patch
*** Add File: new/nested/dir/added.txt
+added
*** Update File: src/update.py
@@ def f():
-    return 1
+    return 2
*** Delete File: delete.txt
*** Update File: mv/src.txt
*** Move to: mv/dst.txt
@@
-moving
+moved
*** End Patch
"""


def _faulty_workspace(make_workspace: Any) -> tuple[vfs.Workspace, FaultyBackend, vfs.Workspace]:
    plain = make_workspace(START)
    faulty = FaultyBackend(plain.backend)
    return plain, faulty, vfs.Workspace(faulty, mount=plain.mount)  # type: ignore[arg-type]


def test_patched_tree(make_workspace: Any) -> None:
    plain, _, ws = _faulty_workspace(make_workspace)
    apply_patch(ws, PATCH)
    tree = snapshot_tree(plain)
    assert tree["new/nested/dir/added.txt"] == b"added\n"
    assert tree["src/update.py"] == b"def f():\r\n    return 2\r\n"
    assert tree["mv/dst.txt"] == b"moved\n"
    assert "delete.txt" not in tree and "mv/src.txt" not in tree


def _failure_points(calls: list[str], exhaustive: bool) -> list[int]:
    """1-based call numbers to fail. Exhaustive: every call. Otherwise (slow stores): every call
    from the first write on, the commit lock, and the first and last of each run of reads/checks
    before it (a failing read or check can only stop the patch before anything is written)."""
    if exhaustive:
        return list(range(1, len(calls) + 1))
    first_write = calls.index("write")
    points = {first_write + 1 + i for i in range(len(calls) - first_write)}
    points.add(calls.index("lock") + 1)
    for i in range(first_write):
        if i == 0 or calls[i - 1] != calls[i] or i + 1 == first_write or calls[i + 1] != calls[i]:
            points.add(i + 1)
    return sorted(points)


# slow: one patch per backend call it makes, on every backend (a campaign)
@pytest.mark.slow
def test_every_failing_call_leaves_the_old_tree(make_workspace: Any) -> None:
    plain, faulty, ws = _faulty_workspace(make_workspace)
    before = faulty.count
    apply_patch(ws, PATCH)
    calls = faulty.calls[before:]
    new_tree = snapshot_tree(plain, modes=True)
    assert len(calls) > 10  # reads, stats, lock, journal, targets, directories, mark, pruning
    points = _failure_points(calls, exhaustive=make_workspace.id != "s3")

    outcomes = {"old": 0, "new": 0}
    outcome_at: dict[int, str] = {}
    for n in points:
        plain, faulty, ws = _faulty_workspace(make_workspace)
        old_tree = snapshot_tree(plain, modes=True)
        faulty.fail_at = faulty.count + n
        try:
            apply_patch(ws, PATCH)
        except vfs.VfsError as exc:
            assert "injected I/O error" in exc.message, (n, faulty.calls[-1], exc.message)
        assert faulty.failed, n
        after = snapshot_tree(plain, modes=True)
        committed = bool(vfs.Workspace(plain.backend, mount=plain.mount).log())
        if committed:
            assert after == new_tree, f"call {n} ({faulty.calls[-1]}) left a mixed tree after the commit point"
            outcomes["new"] += 1
            outcome_at[n] = "new"
        else:
            assert after == old_tree, f"call {n} ({faulty.calls[-1]}) changed the tree of a failed patch"
            outcomes["old"] += 1
            outcome_at[n] = "old"
        assert not vfs.Workspace(plain.backend, mount=plain.mount).pending(), n
    # From the commit lock to the commit mark (the last write: `.done`), every failure aborts the
    # patch. Outside that span a failure may be absorbed (a prefetch resolve is simply redone by
    # the read that follows; pruning after the mark is best effort): then the patch lands whole.
    lock_at = calls.index("lock") + 1
    mark_at = max(i for i, name in enumerate(calls) if name == "write") + 1
    assert all(outcome_at[n] == "old" for n in points if lock_at <= n <= mark_at), (outcome_at, calls)
    assert outcomes["old"] > len(points) // 2, outcomes


def test_failure_points_cover_the_commit_path() -> None:
    calls = ["read", "stat", "stat", "stat", "read", "lock", "matches", "matches", "write", "mkdir", "delete", "list"]
    assert _failure_points(calls, exhaustive=True) == list(range(1, 13))
    assert _failure_points(calls, exhaustive=False) == [1, 2, 4, 5, 6, 7, 8, 9, 10, 11, 12]
