"""Crash safety: a process SIGKILLed at each step of a commit, then the workspace reopened:
the tree is exactly all-old or all-new and no journal or temp file is left behind."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap

import pytest

import vfs
from backends.local import LocalBackend
from tests.support.tiers import tiered
from tests.support.trees import populate, snapshot_tree

START = {
    "keep.txt": b"keep\r\n",
    "update.txt": b"one\ntwo\n",
    "delete.txt": b"bye",
    "mv/src.txt": b"moving",
}

CHILD = textwrap.dedent(
    """
    import sys, vfs
    ws = vfs.open_workspace(sys.argv[1])
    m = ws.mount
    with ws.transaction(label="crashme") as tx:
        tx.write(f"{m}/new/nested/added.txt", b"added\\n")
        tx.write(f"{m}/update.txt", b"one\\nTWO\\n")
        tx.delete(f"{m}/delete.txt")
        tx.move(f"{m}/mv/src.txt", f"{m}/mv/dst.txt")
    print("committed")
    """
)

# Local disk applies a commit's files as one batch (writes, then deletes); SIGKILLs at random
# instants inside the batch are the business of tests/reliability/test_crash_random.py.
STEPS_OLD = ["locked", "journaled", "applied-writes", "before-mark"]
STEPS_NEW = ["marked", "pruned"]


def _run_child(root: str, step: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "VFS_TEST_CRASH_AT": step, "PYTHONPATH": os.getcwd()}
    return subprocess.run([sys.executable, "-c", CHILD, root], env=env, capture_output=True, text=True, timeout=60)


@pytest.fixture
def reference_new_tree(tmp_path):
    root = tmp_path / "reference"
    root.mkdir()
    populate(LocalBackend(str(root)), START)
    result = _run_child(str(root), "")
    assert result.returncode == 0, result.stderr
    return snapshot_tree(vfs.open_workspace(str(root)), modes=True)


@pytest.mark.parametrize("step", STEPS_OLD + STEPS_NEW)
def test_sigkill_at_each_commit_step(tmp_path, step, reference_new_tree):
    root = tmp_path / "ws"
    root.mkdir()
    populate(LocalBackend(str(root)), START)
    old_tree = snapshot_tree(vfs.open_workspace(str(root)), modes=True)
    result = _run_child(str(root), step)
    assert result.returncode == -signal.SIGKILL, (result.returncode, result.stderr)
    assert "committed" not in result.stdout
    ws = vfs.open_workspace(str(root))  # opening runs recovery
    after = snapshot_tree(ws, modes=True)
    expected = old_tree if step in STEPS_OLD else reference_new_tree
    assert after == expected
    assert not ws.pending()
    leftovers = [n for n in os.listdir(root / ".vfs" / "tx") if not n.endswith((".journal", ".done"))]
    assert leftovers == []
    if step in STEPS_OLD:
        assert ws.log() == []
    else:
        assert [e.label for e in ws.log()] == ["crashme"]


def test_vfs_recover_cli_rolls_back(tmp_path):
    root = tmp_path / "ws"
    root.mkdir()
    populate(LocalBackend(str(root)), START)
    old_tree = snapshot_tree(vfs.open_workspace(str(root)), modes=True)
    assert _run_child(str(root), "applied-writes").returncode == -signal.SIGKILL
    ws = vfs.Workspace(LocalBackend(str(root)), mount=str(root), recover_on_open=False)
    assert ws.pending()
    env = {**os.environ, "PYTHONPATH": os.getcwd()}
    result = subprocess.run(
        [sys.executable, "-m", "editors.cli", "recover", "--root", str(root)], env=env, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr
    assert "rolled back 1" in result.stdout
    assert snapshot_tree(ws, modes=True) == old_tree


SINGLE = textwrap.dedent(
    """
    import sys, vfs
    ws = vfs.open_workspace(sys.argv[1])
    with ws.transaction(label="one file") as tx:
        tx.write("update.txt", b"one\\nTWO\\n")
    print("committed")
    """
)


@pytest.mark.parametrize(
    ("step", "landed"),
    [("locked", False), ("journaled", False), ("applied-0", True), ("before-mark", True), ("marked", True)],
)
def test_single_file_commit_is_atomic_without_a_journal(tmp_path, step, landed):
    """One target, no directory to create: the rename is the commit point; its history record
    is written afterwards and a crash can only cost that record, never the change."""
    root = tmp_path / "ws"
    root.mkdir()
    populate(LocalBackend(str(root)), START)
    old_tree = snapshot_tree(vfs.open_workspace(str(root)))
    env = {**os.environ, "VFS_TEST_CRASH_AT": step, "PYTHONPATH": os.getcwd()}
    result = subprocess.run([sys.executable, "-c", SINGLE, str(root)], env=env, capture_output=True, text=True)
    assert result.returncode == -signal.SIGKILL
    ws = vfs.open_workspace(str(root))
    expected = {**old_tree, "update.txt": b"one\nTWO\n"} if landed else old_tree
    assert snapshot_tree(ws) == expected
    assert not ws.pending()
    assert [e.label for e in ws.log()] == (["one file"] if step == "marked" else [])


UNDO_CHILD = textwrap.dedent(
    """
    import sys, vfs
    ws = vfs.open_workspace(sys.argv[1])
    ws.undo()
    print("undone")
    """
)


@pytest.mark.parametrize("step", ["locked", "journaled", "applied-writes", "before-mark", "marked"])
def test_sigkill_at_each_step_of_an_undo_keeps_history_consistent(tmp_path, step):
    """An undo is a journaled commit: killed anywhere, the next undo (after recovery) goes on."""
    root = str(tmp_path)
    ws = vfs.open_workspace(root)
    m = ws.mount
    ws.write_bytes(f"{m}/a.txt", b"A1")  # older commit
    ws.write_bytes(f"{m}/b.txt", b"B1")
    ws.write_bytes(f"{m}/b.txt", b"B2")  # the one undone (a single-file commit)
    env = {**os.environ, "VFS_TEST_CRASH_AT": step, "PYTHONPATH": os.getcwd()}
    result = subprocess.run(
        [sys.executable, "-c", UNDO_CHILD, root], env=env, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == -signal.SIGKILL, (result.returncode, result.stderr)
    again = vfs.open_workspace(root)  # recovery
    b = again.read(f"{m}/b.txt").data
    labels = [e.label for e in again.log()]
    if b == b"B2":  # the undo rolled back: the undone commit is still the newest
        assert len(labels) == 3
    else:  # the undo landed: it is gone from the log
        assert b == b"B1" and len(labels) == 2
    while again.log():  # every later undo works, all the way back
        again.undo()
    assert snapshot_tree(again) == {}


HISTORY_CHILD = textwrap.dedent(
    """
    import sys, vfs
    ws = vfs.open_workspace(sys.argv[1])
    ws.rewind("start") if sys.argv[2] == "rewind" else ws.redo()
    print("done")
    """
)


@pytest.mark.parametrize("step", STEPS_OLD + STEPS_NEW)
@pytest.mark.parametrize("verb", tiered(["rewind", "redo"]))  # a redo is a rewind: the full suite
def test_sigkill_at_each_step_of_a_rewind_or_redo_leaves_all_old_or_all_new(tmp_path, step, verb):
    """A rewind and a redo are journaled transactions over every file: killed at any step, the
    reopened tree is the one before or the one after, and history goes on from there."""
    root = str(tmp_path)
    populate(LocalBackend(root), START)
    ws = vfs.open_workspace(root)
    start_tree = snapshot_tree(ws, modes=True)
    ws.checkpoint("start")
    assert _run_child(root, "").returncode == 0  # the multi-file commit the rewind reverts
    changed_tree = snapshot_tree(ws, modes=True)
    if verb == "redo":
        ws.rewind("start")
    before, after = (changed_tree, start_tree) if verb == "rewind" else (start_tree, changed_tree)
    env = {**os.environ, "VFS_TEST_CRASH_AT": step, "PYTHONPATH": os.getcwd()}
    result = subprocess.run(
        [sys.executable, "-c", HISTORY_CHILD, root, verb], env=env, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == -signal.SIGKILL, (result.returncode, result.stderr)
    again = vfs.open_workspace(root)  # recovery
    state = snapshot_tree(again, modes=True)
    assert state == (after if step in STEPS_NEW else before)
    assert not again.pending()
    # history goes on from whichever state recovery left: the other way round works
    if state == changed_tree:
        again.rewind("start")
        assert snapshot_tree(again, modes=True) == start_tree
    else:
        again.redo()
        assert snapshot_tree(again, modes=True) == changed_tree
