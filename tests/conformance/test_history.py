"""History: log, multi-level undo guarded by content, bounded retention, recovery bookkeeping."""

from __future__ import annotations

import pytest

import vfs
from tests.support.trees import snapshot_tree, write_external


def test_log_lists_transactions_newest_first(make_workspace):
    ws = make_workspace()
    m = ws.mount
    with ws.transaction(label="first") as tx:
        tx.write(f"{m}/a.txt", b"1")
    with ws.transaction(label="second") as tx:
        tx.write(f"{m}/a.txt", b"2")
        tx.write(f"{m}/b.txt", b"b")
    log = ws.log()
    assert [e.label for e in log] == ["second", "first"]
    assert [(c.path, c.action) for c in log[0].changes] == [(f"{m}/a.txt", "modify"), (f"{m}/b.txt", "add")]


def test_multi_level_undo_restores_each_state(make_workspace):
    ws = make_workspace({"a.txt": b"0", "gone.txt": b"g"})
    m = ws.mount
    states = [snapshot_tree(ws)]
    with ws.transaction(label="t1") as tx:
        tx.write(f"{m}/a.txt", b"1")
        tx.write(f"{m}/new/deep/c.txt", b"c")
    states.append(snapshot_tree(ws))
    with ws.transaction(label="t2") as tx:
        tx.delete(f"{m}/gone.txt")
        tx.move(f"{m}/a.txt", f"{m}/moved.txt")
    states.append(snapshot_tree(ws))
    with ws.transaction(label="t3") as tx:
        tx.write(f"{m}/moved.txt", b"3")
    assert ws.undo().label == "t3"
    assert snapshot_tree(ws) == states[2]
    assert ws.undo().label == "t2"
    assert snapshot_tree(ws) == states[1]
    assert ws.undo().label == "t1"
    assert snapshot_tree(ws) == states[0]
    assert ws.log() == []
    with pytest.raises(vfs.NotFound):
        ws.undo()


def test_undo_refuses_when_target_changed_since(make_workspace):
    ws = make_workspace({"a.txt": b"0"})
    ws.write_bytes(f"{ws.mount}/a.txt", b"1")
    write_external(ws.backend, "a.txt", b"someone else")
    with pytest.raises(vfs.StaleVersion) as info:
        ws.undo()
    assert "a.txt" in info.value.message
    assert snapshot_tree(ws) == {"a.txt": b"someone else"}
    assert len(ws.log()) == 1  # still undoable once the conflict is resolved


def test_undo_of_delete_refuses_when_recreated(make_workspace):
    ws = make_workspace({"a.txt": b"0"})
    with ws.transaction() as tx:
        tx.delete(f"{ws.mount}/a.txt")
    write_external(ws.backend, "a.txt", b"new")
    with pytest.raises(vfs.StaleVersion):
        ws.undo()
    assert snapshot_tree(ws) == {"a.txt": b"new"}


def test_history_is_bounded(make_workspace):
    ws = make_workspace(history_limit=3)
    for i in range(20):
        ws.write_bytes(f"{ws.mount}/f.txt", str(i).encode())
    stored = [e for e in ws.backend.list(".vfs/tx") if e.name.endswith((".done", ".record"))]
    assert 3 <= len(stored) <= 3 + ws._history._slack  # pruning trims in batches, never unbounded
    assert len(ws.log()) == 3
    for expected in (b"18", b"17", b"16"):
        ws.undo()
        assert ws.read_bytes(f"{ws.mount}/f.txt") == expected


def test_undo_with_expected_txid_refuses_a_newer_transaction(make_workspace):
    ws = make_workspace({"a.txt": b"0"})
    first = ws.write_bytes(f"{ws.mount}/a.txt", b"1").txid
    ws.write_bytes(f"{ws.mount}/a.txt", b"2")
    with pytest.raises(vfs.StaleVersion):
        ws.undo(expected_txid=first)
    assert ws.read_bytes(f"{ws.mount}/a.txt") == b"2"
    ws.undo()
    assert ws.undo(expected_txid=first).txid == first
    assert ws.read_bytes(f"{ws.mount}/a.txt") == b"0"


def test_single_file_history_is_one_record_unless_its_pre_image_is_large(make_workspace):
    from vfs.txlog import RECORD_INLINE_MAX

    big = b"x" * (RECORD_INLINE_MAX + 1)
    ws = make_workspace({"small.txt": b"s0", "big.txt": big})
    m = ws.mount
    ws.write_bytes(f"{m}/small.txt", b"s1")
    ws.write_bytes(f"{m}/big.txt", b"b1")
    small, large = reversed([e.txid for e in ws.log()])
    names = {e.name for e in ws.backend.list(".vfs/tx")}
    assert f"{small}.record" in names
    assert not {f"{small}.journal", f"{small}.done", f"{small}.pre"} & names
    if f"{large}.pre" in names:  # the replaced file itself kept as the pre-image (local disk)
        assert ws.capabilities.keeps_replaced
        assert f"{large}.record" in names
        assert not {f"{large}.journal", f"{large}.done"} & names
    else:
        assert make_workspace.id != "local"  # (the set-aside swap always keeps it there)
        assert {f"{large}.journal", f"{large}.done"} <= names
        assert f"{large}.record" not in names
    ws.undo()
    ws.undo()
    assert snapshot_tree(ws) == {"small.txt": b"s0", "big.txt": big}


def test_history_written_as_journal_and_decision_still_reads(make_workspace):
    """A single-file commit's history written as a journal + decision pair (as vfs wrote it before
    one-file records) is listed, undone and pruned as before."""
    from backends.base import DeleteItem

    ws = make_workspace({"a.txt": b"A0"}, history_limit=2)
    m = ws.mount
    for k in (1, 2):
        ws.write_bytes(f"{m}/a.txt", f"A{k}".encode())
    log = ws.txlog
    for entry in ws.log():
        journal, done = log.read_journal(entry.txid), log.read_done(entry.txid)
        ws.backend.delete(DeleteItem(log.record_key(entry.txid)))
        ws.backend.write(log.journal_item(journal, durable=False))
        ws.backend.write(log.done_item(done, durable=False))
    reopened = make_workspace.reopen(ws, history_limit=2)
    assert [e.label for e in reopened.log()] == [f"write {m}/a.txt"] * 2
    reopened.undo()
    assert snapshot_tree(reopened) == {"a.txt": b"A1"}
    for k in range(3, 40):  # pruning forgets the old pairs and the new records alike
        reopened.write_bytes(f"{m}/a.txt", f"A{k}".encode())
    names = [e.name for e in reopened.backend.list(".vfs/tx")]
    assert len(names) <= 2 + 1 + reopened._history._slack  # the records kept, an undo's pair
    assert not [n for n in names if n.endswith(".journal") and n.replace(".journal", ".done") not in names]


def test_pruning_reads_back_only_the_decisions_another_client_wrote(make_workspace, monkeypatch):
    ws = make_workspace({"a.txt": b"0"}, history_limit=2)
    other = make_workspace.reopen(ws, history_limit=2)
    m = ws.mount
    theirs = {other.write_bytes(f"{m}/b{k}.txt", b"theirs").txid for k in range(3)}
    backend = ws._ctx.storage.backend
    read_back: list[str] = []
    for name in ("read", "read_many"):
        real = getattr(backend, name, None)
        if real is None:
            continue

        def counting(arg, *args, _real=real, **kwargs):
            keys = [arg] if isinstance(arg, str) else list(arg)
            read_back.extend(k for k in keys if k.startswith(".vfs/tx/"))
            return _real(arg, *args, **kwargs)

        monkeypatch.setattr(backend, name, counting)
    for k in range(40):
        ws.write_bytes(f"{m}/a.txt", str(k).encode())
    assert {k.rsplit("/", 1)[-1].split(".")[0] for k in read_back} == theirs  # not one of its own 40
    assert [e.label for e in ws.log()] == [f"write {m}/a.txt"] * 2
