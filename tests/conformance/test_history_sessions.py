"""Undo and rewind per session (conversation), on every backend: a session takes back its own
changes while other sessions' later commits stay, unless they touched the same files."""

from __future__ import annotations

import pytest

import vfs
from tests.support.trees import snapshot_tree

START = {"a.txt": b"A1\n", "b.txt": b"B1\n", "c.txt": b"C1\n"}


def _write(ws: vfs.Workspace, name: str, data: bytes, session: str) -> str:
    with ws.transaction(label=f"{session} writes {name}", session=session) as tx:
        tx.write(f"{ws.mount}/{name}", data)
    assert tx.result is not None and tx.result.txid is not None
    return tx.result.txid


def test_commits_record_their_session_and_log_filters_by_it(make_workspace):
    ws = make_workspace(START)
    mine = _write(ws, "a.txt", b"A2\n", "alice")
    _write(ws, "b.txt", b"B2\n", "bob")
    plain = ws.write_bytes(f"{ws.mount}/c.txt", b"C2\n").txid
    assert [(e.txid, e.session) for e in ws.log()][::2] == [(plain, None), (mine, "alice")]
    assert [e.txid for e in ws.log(session="alice")] == [mine]
    again = make_workspace.reopen(ws)  # read back from the records, not from memory
    assert [e.session for e in again.log()] == [None, "bob", "alice"]


def test_undo_of_a_session_skips_other_sessions_later_commits(make_workspace):
    ws = make_workspace(START)
    _write(ws, "a.txt", b"A2\n", "alice")
    _write(ws, "b.txt", b"B2\n", "bob")
    undone = ws.undo(session="alice")
    assert undone.session == "alice" and undone.label == "alice writes a.txt"
    tree = snapshot_tree(ws)
    assert tree["a.txt"] == b"A1\n" and tree["b.txt"] == b"B2\n"  # bob's change stays
    assert [e.session for e in ws.log()] == ["bob"]
    with pytest.raises(vfs.NotFound):
        ws.redo(session="bob")  # bob undid nothing
    ws.redo(session="alice")
    assert snapshot_tree(ws)["a.txt"] == b"A2\n"
    with pytest.raises(vfs.NotFound):
        ws.undo(session="carol")


def test_undo_of_a_session_is_refused_naming_who_touched_the_file(make_workspace):
    ws = make_workspace(START)
    _write(ws, "a.txt", b"A2\n", "alice")
    later = _write(ws, "a.txt", b"A3\n", "bob")
    tree = snapshot_tree(ws)
    with pytest.raises(vfs.StaleVersion) as info:
        ws.undo(session="alice")
    message = info.value.message
    assert f"{ws.mount}/a.txt" in message and later in message and "session bob" in message
    assert snapshot_tree(ws) == tree  # nothing changed
    ws.undo(session="bob")  # once bob's change is undone, alice's can go too
    ws.undo(session="alice")
    assert snapshot_tree(ws)["a.txt"] == b"A1\n"


def test_rewind_of_one_session_keeps_the_others(make_workspace):
    ws = make_workspace(START)
    ws.checkpoint("start")
    _write(ws, "a.txt", b"A2\n", "alice")
    _write(ws, "b.txt", b"B2\n", "bob")
    _write(ws, "c.txt", b"C2\n", "alice")
    preview = ws.rewind("start", session="alice", dry_run=True)
    assert {c.path for c in preview.changes} == {f"{ws.mount}/a.txt", f"{ws.mount}/c.txt"}
    plan = ws.rewind("start", session="alice")
    assert [e.label for e in plan.reverted] == ["alice writes c.txt", "alice writes a.txt"]
    assert {k: v for k, v in snapshot_tree(ws).items() if k in START} == {**START, "b.txt": b"B2\n"}
    _write(ws, "b.txt", b"B3\n", "alice")
    with pytest.raises(vfs.StaleVersion) as info:
        ws.rewind("start", session="bob")
    assert "b.txt" in info.value.message and "session alice" in info.value.message


def test_a_session_id_is_validated(make_workspace):
    ws = make_workspace(START)
    for bad in ("", "has space", "../x", "x" * 65):
        with pytest.raises(vfs.InvalidArgument):
            ws.transaction(session=bad)
        with pytest.raises(vfs.InvalidArgument):
            ws.undo(session=bad)
    assert ws.session().id != ws.session().id  # each conversation its own


def test_a_record_with_a_forged_session_is_refused(make_workspace):
    from backends.base import WriteItem

    ws = make_workspace(START)
    txid = _write(ws, "a.txt", b"A2\n", "alice")
    forged = ws.txlog.read_done(txid)
    forged.session = "../../etc"
    if ws.txlog.scan().records == {txid}:  # a single-file commit: one record holds the decision
        item = ws.txlog.record_item(ws.txlog.read_journal(txid), forged)
    else:
        item = WriteItem(ws.txlog.done_key(txid), forged.encode(), versioned=False)
    ws.backend.write(item)
    with pytest.raises(vfs.CorruptMetadata, match="session"):
        ws.undo(session="alice")


def test_each_tool_connection_undoes_its_own_newest_edit(make_workspace):
    from editors.tools import Toolset

    ws = make_workspace(START)
    m = ws.mount
    alice, bob = (Toolset(ws, config={"enable_undo": True}) for _ in range(2))
    for toolset, name in ((alice, "a.txt"), (bob, "b.txt")):
        assert not toolset.call("str_replace_editor", {"command": "view", "path": f"{m}/{name}"}).is_error
        edit = {"command": "str_replace", "path": f"{m}/{name}", "old_str": "1", "new_str": "2"}
        assert not toolset.call("str_replace_editor", edit).is_error
    undo = alice.call("str_replace_editor", {"command": "undo_edit", "path": f"{m}/a.txt"})
    assert not undo.is_error, undo.text
    tree = snapshot_tree(ws)
    assert tree["a.txt"] == b"A1\n" and tree["b.txt"] == b"B2\n"
    assert [e.session for e in ws.log()] == [bob.session.id if bob.session else None]
    refused = bob.call("str_replace_editor", {"command": "undo_edit", "path": f"{m}/a.txt"})
    assert refused.is_error and "your most recent change" in refused.text


def test_each_mcp_client_is_its_own_session(make_workspace):
    from editors.adapters.mcp import Sessions
    from editors.tools import Toolset

    ws = make_workspace(START)
    registry = Sessions(lambda: Toolset(ws, config={"enable_undo": True}))
    first, second, again = registry.get("client-1"), registry.get("client-2"), registry.get("client-1")
    assert first is again and first.session is not None and second.session is not None
    assert first.session.id != second.session.id
    patch = "*** Begin Patch\n*** Update File: c.txt\n@@\n-C1\n+C2\n*** End Patch\n"
    assert not second.call("apply_patch", patch).is_error
    assert [e.session for e in ws.log()] == [second.session.id]  # recorded on its commit


def test_vfs_undo_and_log_take_a_session(tmp_path):
    import json

    from tests.adapters.support import run_cli

    for name, data in START.items():
        (tmp_path / name).write_bytes(data)
    ws = vfs.open_workspace(str(tmp_path))
    _write(ws, "a.txt", b"A2\n", "alice")
    _write(ws, "b.txt", b"B2\n", "bob")
    root = str(tmp_path)

    def ok(*args: str) -> str:
        result = run_cli(*args, "--root", root)
        assert result.returncode == 0, result.stderr
        return result.stdout.decode()

    mine = ok("log", "--session", "alice")
    assert "alice writes a.txt  [session alice]" in mine and "bob" not in mine
    assert "Undid" in ok("undo", "--session", "alice")
    assert (tmp_path / "a.txt").read_bytes() == b"A1\n" and (tmp_path / "b.txt").read_bytes() == b"B2\n"
    assert [e["session"] for e in json.loads(ok("log", "--json"))] == ["bob"]
    refused = run_cli("undo", "--session", "bob; rm", "--root", root)
    assert refused.returncode != 0 and b"Invalid session id" in refused.stderr
