"""Checkpoints, rewind and redo: history as a product, on every backend."""

from __future__ import annotations

import pytest

import vfs
from tests.support.trees import snapshot_tree, write_external


def _files(ws: vfs.Workspace) -> dict[str, bytes]:
    return {k: v for k, v in snapshot_tree(ws).items() if v is not None}


def _agent_session(ws: vfs.Workspace) -> None:
    """Three commits: an edit, a move into a new directory, a delete plus a new file."""
    m = ws.mount
    ws.write_bytes(f"{m}/a.txt", b"A2\n")
    with ws.transaction(label="move") as tx:
        tx.move(f"{m}/b.txt", f"{m}/new/deep/b.txt")
    with ws.transaction(label="delete and add") as tx:
        tx.delete(f"{m}/c.txt")
        tx.write(f"{m}/d.txt", b"D\n")


START = {"a.txt": b"A1\n", "b.txt": b"B1\n", "c.txt": b"C1\n", "keep/k.txt": b"K\n"}


def test_rewind_to_a_checkpoint_restores_the_exact_old_tree(make_workspace):
    ws = make_workspace(START)
    before = snapshot_tree(ws)
    mark = ws.checkpoint("before-agent")
    assert mark.name == "before-agent" and [c.name for c in ws.checkpoints()] == ["before-agent"]
    _agent_session(ws)
    after = snapshot_tree(ws)
    preview = ws.rewind("before-agent", dry_run=True)
    assert snapshot_tree(ws) == after  # a dry run commits nothing
    m = ws.mount
    assert {(c.path, c.before, c.after) for c in preview.changes} == {
        (f"{m}/a.txt", b"A2\n", b"A1\n"),
        (f"{m}/b.txt", None, b"B1\n"),
        (f"{m}/new/deep/b.txt", b"B1\n", None),
        (f"{m}/c.txt", None, b"C1\n"),
        (f"{m}/d.txt", b"D\n", None),
    }
    reverted = ws.rewind("before-agent").reverted
    assert [e.label for e in reverted] == ["delete and add", "move", f"write {ws.mount}/a.txt"]
    assert preview.reverted == reverted
    assert snapshot_tree(ws) == before  # directories created by the moves are gone again
    assert ws.log() == []


def test_rewind_refuses_as_a_whole_listing_each_file_changed_outside(make_workspace):
    ws = make_workspace(START)
    ws.checkpoint("start")
    _agent_session(ws)
    write_external(ws.backend, "a.txt", b"someone else\n")
    write_external(ws.backend, "d.txt", b"edited by hand\n")
    tree = snapshot_tree(ws)
    with pytest.raises(vfs.StaleVersion) as info:
        ws.rewind("start")
    assert f"{ws.mount}/a.txt" in info.value.message and f"{ws.mount}/d.txt" in info.value.message
    assert "Nothing was changed" in info.value.message
    assert snapshot_tree(ws) == tree


def test_redo_takes_back_a_rewind_and_an_undo(make_workspace):
    ws = make_workspace(START)
    ws.checkpoint("start")
    _agent_session(ws)
    after = snapshot_tree(ws)
    ws.rewind("start")
    ws.redo()
    assert snapshot_tree(ws) == after
    assert [e.label for e in ws.log()][:1] == ["delete and add"]
    ws.undo()
    ws.redo()
    assert snapshot_tree(ws) == after
    with pytest.raises(vfs.NotFound):
        ws.redo()  # nothing left to redo


def test_a_new_commit_ends_redo(make_workspace):
    ws = make_workspace(START)
    ws.write_bytes(f"{ws.mount}/a.txt", b"A2\n")
    ws.undo()
    ws.write_bytes(f"{ws.mount}/z.txt", b"Z\n")
    with pytest.raises(vfs.NotFound):
        ws.redo()


def test_rewind_to_a_txid_and_multi_level_undo_after_it(make_workspace):
    ws = make_workspace(START)
    _agent_session(ws)
    oldest = ws.log()[-1]
    ws.rewind(oldest.txid)  # keeps that one, reverts the two after it
    assert _files(ws) == {**START, "a.txt": b"A2\n"}
    ws.undo()
    assert _files(ws) == START


def test_unknown_point_and_bad_names_are_coded_errors(make_workspace):
    ws = make_workspace(START)
    with pytest.raises(vfs.NotFound):
        ws.rewind("nope")
    for bad in ("", "../x", "a/b", ".hidden", "x" * 65):
        with pytest.raises(vfs.InvalidArgument):
            ws.checkpoint(bad)


def test_pruning_keeps_what_a_checkpoint_needs(make_workspace):
    ws = make_workspace(START, history_limit=2)
    ws.checkpoint("start")
    for i in range(12):
        ws.write_bytes(f"{ws.mount}/a.txt", f"A{i}\n".encode())
    assert ws.prune(keep=1) == []  # the checkpoint needs every record
    ws.rewind("start")
    assert _files(ws) == START


def test_pruning_without_checkpoints_says_what_it_dropped(make_workspace):
    ws = make_workspace(START)
    for i in range(4):
        ws.write_bytes(f"{ws.mount}/a.txt", f"A{i}\n".encode())
    newest = ws.log()[0].txid
    dropped = ws.prune(keep=1)
    assert len(dropped) == 3 and newest not in dropped
    assert [e.txid for e in ws.log()] == [newest]
