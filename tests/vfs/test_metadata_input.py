"""Metadata is input, not trust: planted, truncated and flipped records under ``.vfs/``; the
metadata folder refused in every spelling and at any depth; an unresolved journal stops the
world; history without silent gaps."""

from __future__ import annotations

import pytest

import vfs
from backends.base import DeleteItem, WriteItem
from tests.support.faults import FaultyBackend
from tests.support.trees import snapshot_tree
from vfs.txlog import Journal, TargetRecord, digest, new_txid

TX = ".vfs/tx"


def _plant(ws: vfs.Workspace, name: str, data: bytes) -> None:
    backend = ws.backend
    for key in (".vfs", TX):
        if backend.stat(key) is None:
            backend.mkdir(key)
    backend.write(WriteItem(f"{TX}/{name}", data))


def _journal_of(key: str, before: bytes, after: bytes) -> Journal:
    target = TargetRecord(key, "file", "file", "v-any", None, digest(after), None)
    return Journal(new_txid(), "planted", 0.0, [target], pre_images={0: before})


def _interrupted_commit(ws: vfs.Workspace) -> str:
    """A real journal left by a commit cut after it changed a target (as after a crash)."""
    m = ws.mount
    with ws.transaction(label="two files") as tx:
        tx.write(f"{m}/a.txt", b"A2")
        tx.write(f"{m}/b.txt", b"B2")
    assert tx.result is not None and tx.result.txid is not None
    txid = tx.result.txid
    ws.backend.delete(DeleteItem(f"{TX}/{txid}.done"))  # the decision never landed
    with ws._ctx.commit_lock() as held:
        held.mark_dirty()  # as its holder, killed mid-commit, would have left the lock
    return txid


@pytest.mark.parametrize("key", ["../outside.txt", "/etc/passwd", "a/../../x", ".vfs/lock", "sub/.VFS/tx/x", ""])
def test_a_planted_journal_never_writes_outside_or_into_metadata(make_workspace, key):
    ws = make_workspace({"a.txt": b"mine"})
    _plant(ws, f"{new_txid()}.journal", _journal_of(key, b"evil", b"x").encode())
    before = snapshot_tree(ws)
    reopened = make_workspace.reopen(ws)
    assert reopened.unresolved  # reported, not replayed
    with pytest.raises(vfs.VfsError) as info:
        reopened.read(f"{ws.mount}/a.txt")
    assert info.value.code == "FS_RECOVERY_NEEDED"
    assert "outside the workspace" in info.value.message
    assert snapshot_tree(ws) == before


def test_every_truncation_and_flip_of_a_journal_is_caught_before_use(make_workspace):
    ws = make_workspace({"a.txt": b"A1", "b.txt": b"B1"})
    txid = _interrupted_commit(ws)
    key = f"{TX}/{txid}.journal"
    good, _ = ws.backend.read(key)
    log = ws.txlog
    assert log.read_journal(txid).pre_images  # the untouched record reads
    step = max(1, len(good) // 97)
    mutations = [good[:cut] for cut in range(0, len(good), step)]
    mutations += [good[:i] + bytes([good[i] ^ 0x01]) + good[i + 1 :] for i in range(0, len(good), step)]
    for bad in mutations:
        ws.backend.write(WriteItem(key, bad))
        with pytest.raises(vfs.VfsError) as info:
            log.read_journal(txid)
        assert info.value.code == "FS_CORRUPT_METADATA", bad


def test_a_corrupt_journal_stops_the_world_and_recover_discard_resolves_it(make_workspace):
    ws = make_workspace({"a.txt": b"A1", "b.txt": b"B1"})
    txid = _interrupted_commit(ws)
    key = f"{TX}/{txid}.journal"
    data, _ = ws.backend.read(key)
    ws.backend.write(WriteItem(key, data[:-1] + bytes([data[-1] ^ 0xFF])))  # a pre-image bit flipped
    tree = snapshot_tree(ws)
    again = make_workspace.reopen(ws)
    m = ws.mount
    for call in (
        lambda: again.read(f"{m}/a.txt"),
        lambda: again.list(m),
        lambda: again.log(),
        lambda: again.write_bytes(f"{m}/c.txt", b"new"),
        lambda: again.undo(),
    ):
        with pytest.raises(vfs.VfsError) as info:
            call()
        assert info.value.code == "FS_RECOVERY_NEEDED"
        assert "vfs recover" in info.value.message
    report = again.recover()
    assert not report.clean and again.unresolved  # never written from
    assert snapshot_tree(ws) == tree
    report = again.recover(discard=[txid])
    assert report.clean and not again.unresolved
    assert again.read(f"{m}/a.txt").data == b"A2"  # left as the files were: the user looked
    assert ws.backend.stat(f".vfs/discarded/{txid}.journal") is not None


def test_a_garbled_decision_record_is_coded_not_a_traceback(make_workspace):
    ws = make_workspace({"a.txt": b"A1", "b.txt": b"B1"})
    with ws.transaction() as tx:  # two files: journal + decision
        tx.write(f"{ws.mount}/a.txt", b"A2")
        tx.write(f"{ws.mount}/b.txt", b"B2")
    (txid,) = [e.txid for e in ws.log()]
    ws.backend.write(WriteItem(f"{TX}/{txid}.done", b"VFSDONE2\nnot a digest at all\n{}"))
    with pytest.raises(vfs.VfsError) as info:
        make_workspace.reopen(ws).log()
    assert info.value.code == "FS_CORRUPT_METADATA"
    assert txid in info.value.message


def test_every_damage_to_a_single_file_record_is_coded(make_workspace):
    """A single-file commit's history is one ``.record`` (decision, then journal): any cut or
    flipped byte of it is refused by undo, and the file is never written from it; the log, which
    reads the decision only (as it reads only the ``.done`` of a pair), refuses damage there and
    otherwise lists the commit as it was."""
    ws = make_workspace({"a.txt": b"A1"})
    ws.write_bytes(f"{ws.mount}/a.txt", b"A2")
    (entry,) = ws.log()
    key = f"{TX}/{entry.txid}.record"
    good, _ = ws.backend.read(key)
    assert ws.txlog.read_journal(entry.txid).pre_images == {0: b"A1"}
    step = max(1, len(good) // 97)
    mutations = [good[:cut] for cut in range(0, len(good), step)]
    mutations += [good[:i] + bytes([good[i] ^ 0x01]) + good[i + 1 :] for i in range(0, len(good), step)]
    refused_by_log = 0
    for bad in mutations:
        ws.backend.write(WriteItem(key, bad))
        with pytest.raises(vfs.VfsError) as info:
            make_workspace.reopen(ws).undo()
        assert info.value.code == "FS_CORRUPT_METADATA", bad
        try:
            assert make_workspace.reopen(ws).log() == [entry], bad
        except vfs.VfsError as exc:
            assert exc.code == "FS_CORRUPT_METADATA", bad
            refused_by_log += 1
    assert 0 < refused_by_log < len(mutations)
    assert ws.backend.read("a.txt")[0] == b"A2"  # never written from a damaged record


@pytest.mark.parametrize(
    "path", [".vfs/x", ".VFS/x", ".Vfs/tx/a", ".vfs./x", ".vfs /x", "sub/.vfs/tx/a.journal", "a/b/.VfS"]
)
def test_the_metadata_folder_is_refused_in_every_spelling_and_depth(make_workspace, path):
    ws = make_workspace({"sub/keep.txt": b"k"})
    before = snapshot_tree(ws)
    with pytest.raises(vfs.SandboxDenied) as info:
        ws.write_bytes(f"{ws.mount}/{path}", b"planted")
    assert info.value.code == "FS_SANDBOX_DENIED"
    assert snapshot_tree(ws) == before


def test_names_that_only_look_like_metadata_are_ordinary(make_workspace):
    ws = make_workspace()
    for name in (".vfsrc", "vfs", ".vfs-notes", "x.vfs"):
        ws.write_bytes(f"{ws.mount}/{name}", b"ok")
    assert sorted(s.name for s in ws.list(ws.mount)) == [".vfs-notes", ".vfsrc", "vfs", "x.vfs"]


def test_an_interrupted_commit_is_recovered_before_the_next_commit(make_workspace):
    ws = make_workspace({"a.txt": b"A1", "b.txt": b"B1"})
    _interrupted_commit(ws)
    ws.write_bytes(f"{ws.mount}/c.txt", b"C")  # the same client: its commit recovers first
    # Where the lock can expire, the journal holds the post-images and recovery finishes it.
    finished = ws.capabilities.lock_can_expire
    expected = {"a.txt": b"A2", "b.txt": b"B2"} if finished else {"a.txt": b"A1", "b.txt": b"B1"}
    assert snapshot_tree(ws) == {**expected, "c.txt": b"C"}


def test_a_lost_history_record_is_reported_and_undo_does_not_skip_it(make_workspace):
    ws = make_workspace({"a.txt": b"A1", "b.txt": b"B1"})
    m = ws.mount
    ws.write_bytes(f"{m}/a.txt", b"A2")  # an older, unrelated commit with its record
    faulty = FaultyBackend(ws.backend)
    fws = vfs.Workspace(faulty, mount=m)
    faulty.only = ("write",)
    faulty.fail_at = faulty.count + 2  # 1: the file itself; 2: its history record
    result = fws.write_bytes(f"{m}/b.txt", b"B2")
    assert result.txid is not None
    assert result.warnings and "history record could not be written" in result.warnings[0]
    assert snapshot_tree(ws)["b.txt"] == b"B2"  # committed: the report says so and it is true
    with pytest.raises(vfs.VfsError) as info:
        make_workspace.reopen(ws).undo()
    assert info.value.code == "FS_HISTORY_GAP"
    assert snapshot_tree(ws) == {"a.txt": b"A2", "b.txt": b"B2"}


def test_an_undo_is_journaled_so_a_crash_never_half_records_it(make_workspace):
    ws = make_workspace({"a.txt": b"A1"})
    m = ws.mount
    ws.write_bytes(f"{m}/a.txt", b"A2")
    faulty = FaultyBackend(ws.backend, only=("write",))
    fws = vfs.Workspace(faulty, mount=m)
    fws.undo()
    # journal, the file, the decision: an undo is never the single-file fast path
    assert faulty.calls.count("write") >= 3
    assert snapshot_tree(ws) == {"a.txt": b"A1"}
    assert fws.log() == []
