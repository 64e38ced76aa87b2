"""Fault injection: fail the N-th backend call of a commit, for every N; the tree is all-old or
all-new, byte for byte (contents, modes, directories, no temp files left)."""

from __future__ import annotations

import pytest

import vfs
from tests.support.faults import FaultyBackend
from tests.support.trees import snapshot_tree

START = {
    "keep.txt": b"keep\r\n",
    "update.txt": b"one\ntwo\n",
    "delete.txt": b"bye",
    "mv/src.txt": b"moving",
    "mv/dst.txt": b"overwritten",
}


def _change(tx: vfs.Transaction, m: str) -> None:
    tx.read(f"{m}/keep.txt")
    tx.write(f"{m}/new/nested/dir/added.txt", b"added\n")
    tx.write(f"{m}/update.txt", b"one\nTWO\n")
    tx.delete(f"{m}/delete.txt")
    tx.move(f"{m}/mv/src.txt", f"{m}/mv/dst.txt")
    tx.mkdir(f"{m}/made/here")


def _calls_in_commit(make_workspace) -> tuple[int, dict]:
    ws = make_workspace(START)
    faulty = FaultyBackend(ws.backend)
    ws = vfs.Workspace(faulty, mount=ws.mount)
    tx = ws.transaction()
    _change(tx, ws.mount)
    before = faulty.count
    tx.commit()
    return faulty.count - before, snapshot_tree(ws, modes=True)


# slow: one commit per backend call of the transaction, on every backend (a campaign)
@pytest.mark.slow
def test_every_failing_call_leaves_old_or_new_tree(make_workspace):
    total, new_tree = _calls_in_commit(make_workspace)
    assert total > 10
    outcomes = {"old": 0, "new": 0}
    rolled_back_messages = 0
    for n in range(1, total + 1):
        ws = make_workspace(START)
        old_tree = snapshot_tree(ws, modes=True)
        faulty = FaultyBackend(ws.backend)
        fws = vfs.Workspace(faulty, mount=ws.mount)
        tx = fws.transaction()
        _change(tx, fws.mount)
        faulty.fail_at = faulty.count + n
        try:
            tx.commit()
        except vfs.VfsError as exc:
            assert exc.code == "FS_IO_ERROR", (n, exc)
            assert "injected I/O error" in exc.message, (n, exc.message)  # the cause is named
            rolled_back_messages += "rolled back" in exc.message
        after = snapshot_tree(ws, modes=True)
        if after == old_tree:
            outcomes["old"] += 1
        else:
            assert after == new_tree, f"call {n} ({faulty.calls[-1]}) left a mixed tree"
            outcomes["new"] += 1
        assert not vfs.Workspace(ws.backend, mount=ws.mount).pending()
    assert rolled_back_messages > 5  # failures after the journal say the change was undone
    assert outcomes["old"] >= total - 3  # failures after the commit mark (pruning) keep the new tree


def test_rollback_failure_is_reported_and_recovery_restores(make_workspace):
    ws = make_workspace(START)
    old_tree = snapshot_tree(ws, modes=True)
    # Count only mutations: #1 is the journal, #2 the first target; from #3 on the "disk" is
    # dead, so the rollback that follows cannot run either.
    faulty = FaultyBackend(ws.backend, only=("write", "delete", "mkdir", "rmdir"), persistent=True)
    fws = vfs.Workspace(faulty, mount=ws.mount)
    fws._ctx.ensure_meta()  # the metadata folder exists already, as in any used workspace
    faulty.fail_at = faulty.count + 3
    tx = fws.transaction()
    _change(tx, fws.mount)
    with pytest.raises(vfs.RollbackFailed) as info:
        tx.commit()
    assert info.value.code == "FS_ROLLBACK_FAILED"
    assert "vfs recover" in info.value.message
    assert "injected I/O error" in info.value.message  # the original cause is named
    assert snapshot_tree(ws, modes=True) != old_tree  # really half-applied until recovery
    healthy = vfs.Workspace(ws.backend, mount=ws.mount)  # reopening recovers
    assert healthy.last_recovery is not None and healthy.last_recovery.rolled_back
    assert snapshot_tree(ws, modes=True) == old_tree
