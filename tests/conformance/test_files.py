"""Backend-agnostic behaviour of reads, writes and transactions: runs on every backend."""

from __future__ import annotations

import pytest

import vfs
from backends.base import WriteItem
from tests.support.trees import snapshot_tree, write_external


def test_read_write_roundtrip_and_listing(make_workspace):
    ws = make_workspace({"a.txt": b"alpha\n", "dir/b.txt": b"beta", "dir/sub": None})
    m = ws.mount
    assert ws.read_bytes(f"{m}/a.txt") == b"alpha\n"
    assert ws.read_text(f"{m}/dir/b.txt") == "beta"
    assert [s.name for s in ws.list(m)] == ["a.txt", "dir"]
    assert [(s.name, s.kind) for s in ws.list(f"{m}/dir")] == [("b.txt", "file"), ("sub", "directory")]
    assert ws.stat(f"{m}/a.txt").size == 6
    assert ws.exists(f"{m}/dir/sub") and not ws.exists(f"{m}/nope")


def test_multi_file_transaction_commits_everything(make_workspace):
    ws = make_workspace({"keep.txt": b"k", "old.txt": b"o", "mv.txt": b"m"})
    m = ws.mount
    with ws.transaction(label="many") as tx:
        tx.write(f"{m}/new/deep/file.txt", b"new")
        tx.write(f"{m}/keep.txt", b"k2")
        tx.delete(f"{m}/old.txt")
        tx.move(f"{m}/mv.txt", f"{m}/moved/mv.txt")
        tx.mkdir(f"{m}/empty")
    assert snapshot_tree(ws) == {
        "empty": None,
        "keep.txt": b"k2",
        "moved": None,
        "moved/mv.txt": b"m",
        "new": None,
        "new/deep": None,
        "new/deep/file.txt": b"new",
    }
    actions = {c.path.removeprefix(m + "/"): c.action for c in tx.result.changes}
    assert actions == {
        "new/deep/file.txt": "add",
        "keep.txt": "modify",
        "old.txt": "delete",
        "moved/mv.txt": "add",
        "mv.txt": "delete",
        "empty": "mkdir",
    }


def test_read_your_writes_and_isolation(make_workspace):
    ws = make_workspace({"a.txt": b"1"})
    m = ws.mount
    with ws.transaction() as tx:
        tx.write(f"{m}/a.txt", b"2")
        tx.write(f"{m}/b.txt", b"3")
        assert tx.read_bytes(f"{m}/a.txt") == b"2"
        assert tx.exists(f"{m}/b.txt")
        assert [s.name for s in tx.list(m)] == ["a.txt", "b.txt"]
        # nothing is visible outside before commit
        assert ws.read_bytes(f"{m}/a.txt") == b"1"
        assert not ws.exists(f"{m}/b.txt")
        tx.delete(f"{m}/b.txt")
        assert not tx.exists(f"{m}/b.txt")
    assert snapshot_tree(ws) == {"a.txt": b"2"}


def test_write_of_pieces_stores_them_back_to_back(make_workspace):
    """A large edit passes its kept spans as views of the bytes it read: stored as one content,
    read back joined, sized by their bytes; a view of a mutable buffer is copied when written."""
    ws = make_workspace({"a.txt": b"old\n"})
    m = ws.mount
    kept = b"head\nmiddle\ntail\n"
    buffer = bytearray(b"new\n")
    with ws.transaction() as tx:
        tx.write(f"{m}/a.txt", [memoryview(kept)[:5], b"NEW\n", memoryview(buffer), memoryview(kept)[12:]])
        buffer[:] = b"XXX\n"  # written already: a later change of the caller's buffer is not seen
        assert tx.stat(f"{m}/a.txt").size == 18
        tx.write(f"{m}/b.txt", [b"one ", memoryview(b"two")])
        assert tx.read_bytes(f"{m}/b.txt") == b"one two"
    assert ws.read_bytes(f"{m}/a.txt") == b"head\nNEW\nnew\ntail\n"
    assert ws.read_bytes(f"{m}/b.txt") == b"one two"
    with pytest.raises(TypeError), ws.transaction() as tx:
        tx.write(f"{m}/c.txt", ["text"])  # type: ignore[list-item]
    assert not ws.exists(f"{m}/c.txt")


def test_exception_in_block_aborts(make_workspace):
    ws = make_workspace({"a.txt": b"1"})
    with pytest.raises(RuntimeError), ws.transaction() as tx:
        tx.write(f"{ws.mount}/a.txt", b"2")
        raise RuntimeError("boom")
    assert snapshot_tree(ws) == {"a.txt": b"1"}
    with pytest.raises(vfs.Aborted):
        tx.write(f"{ws.mount}/a.txt", b"3")


def test_version_changes_whenever_content_changes(make_workspace):
    ws = make_workspace({"a.txt": b"same"})
    p = f"{ws.mount}/a.txt"
    v1 = ws.read(p).version
    other = make_workspace.reopen(ws)
    other.write_bytes(p, b"diff")
    assert not ws.is_current(p, v1)
    v2 = ws.read(p).version
    other.write_bytes(p, b"diff2")
    assert not ws.is_current(p, v2)
    assert ws.is_current(p, ws.read(p).version)
    assert ws.is_current(f"{ws.mount}/missing", None)


def test_stale_version_detected_and_nothing_written(make_workspace):
    ws = make_workspace({"a.txt": b"base", "b.txt": b"b"})
    m = ws.mount
    other = make_workspace.reopen(ws)
    with pytest.raises(vfs.StaleVersion) as info, ws.transaction() as tx:
        tx.read(f"{m}/a.txt")
        tx.write(f"{m}/b.txt", b"mine")
        other.write_bytes(f"{m}/a.txt", b"theirs")
    assert info.value.code == "FS_STALE_VERSION"
    assert "a.txt" in str(info.value)
    assert snapshot_tree(ws) == {"a.txt": b"theirs", "b.txt": b"b"}


def test_target_never_read_is_checked_against_first_touch(make_workspace):
    ws = make_workspace({"a.txt": b"base"})
    other = make_workspace.reopen(ws)
    with pytest.raises(vfs.StaleVersion), ws.transaction() as tx:
        tx.write(f"{ws.mount}/a.txt", b"blind")
        write_external(other.backend, "a.txt", b"theirs")
    assert snapshot_tree(ws) == {"a.txt": b"theirs"}


def test_create_if_absent_never_clobbers(make_workspace):
    ws = make_workspace({"exists.txt": b"x"})
    m = ws.mount
    with pytest.raises(vfs.Exists), ws.transaction() as tx:
        tx.create(f"{m}/exists.txt", b"y")
    other = make_workspace.reopen(ws)
    with pytest.raises(vfs.StaleVersion), ws.transaction() as tx:
        tx.create(f"{m}/race.txt", b"mine")
        write_external(other.backend, "race.txt", b"theirs")
    assert snapshot_tree(ws) == {"exists.txt": b"x", "race.txt": b"theirs"}


def test_replace_if_version(make_workspace):
    ws = make_workspace({"a.txt": b"1"})
    p = f"{ws.mount}/a.txt"
    v = ws.read(p).version
    ws.write_bytes(p, b"2", intent=vfs.replace_if_version(v))
    with pytest.raises(vfs.StaleVersion):
        ws.write_bytes(p, b"3", intent=vfs.replace_if_version(v))
    assert ws.read_bytes(p) == b"2"


@pytest.mark.parametrize(
    ("setup", "op", "error"),
    [
        ({}, lambda tx, m: tx.read(f"{m}/missing"), vfs.NotFound),
        ({}, lambda tx, m: tx.delete(f"{m}/missing"), vfs.NotFound),
        ({"d": None}, lambda tx, m: tx.delete(f"{m}/d"), vfs.IsADirectory),
        ({"d": None}, lambda tx, m: tx.read(f"{m}/d"), vfs.IsADirectory),
        ({"d": None}, lambda tx, m: tx.write(f"{m}/d", b"x"), vfs.IsADirectory),
        ({"f": b"x"}, lambda tx, m: tx.write(f"{m}/f/child", b"x"), vfs.NotADirectory),
        ({"f": b"x"}, lambda tx, m: tx.list(f"{m}/f"), vfs.NotADirectory),
        ({"a": b"x", "b": b"y"}, lambda tx, m: tx.move(f"{m}/a", f"{m}/b", overwrite=False), vfs.Exists),
    ],
)
def test_errors_have_codes_and_builtin_bases(make_workspace, setup, op, error):
    ws = make_workspace(setup)
    before = snapshot_tree(ws)
    with pytest.raises(error) as info, ws.transaction() as tx:
        op(tx, ws.mount)
    assert info.value.code.startswith("FS_")
    assert snapshot_tree(ws) == before


def test_storage_errors_subclass_builtins():
    assert issubclass(vfs.NotFound, FileNotFoundError)
    assert issubclass(vfs.Exists, FileExistsError)
    assert issubclass(vfs.IsADirectory, IsADirectoryError)
    assert issubclass(vfs.NotADirectory, NotADirectoryError)
    assert issubclass(vfs.PermissionDenied, PermissionError)
    assert issubclass(vfs.SandboxDenied, PermissionError)
    codes = [cls.code for cls in vfs.errors.ALL_ERRORS]
    assert len(codes) == len(set(codes))


def test_move_overwrites_and_keeps_mode(make_workspace):
    ws = make_workspace({"src.sh": b"#!/bin/sh\n", "dst.sh": b"old"})
    m = ws.mount
    if ws.capabilities.modes:
        ws.backend.write(WriteItem("src.sh", b"#!/bin/sh\n", mode=0o755))
    with ws.transaction() as tx:
        tx.move(f"{m}/src.sh", f"{m}/dst.sh")
    assert snapshot_tree(ws) == {"dst.sh": b"#!/bin/sh\n"}
    if ws.capabilities.modes:
        assert ws.stat(f"{m}/dst.sh").mode == 0o755


def test_replace_preserves_mode(make_workspace):
    ws = make_workspace({"run.sh": b"a"})
    if not ws.capabilities.modes:
        pytest.skip("backend stores no modes")
    ws.backend.write(WriteItem("run.sh", b"a", mode=0o751))
    ws.write_bytes(f"{ws.mount}/run.sh", b"b")
    assert ws.stat(f"{ws.mount}/run.sh").mode == 0o751


def test_empty_transaction_commits_nothing(make_workspace):
    ws = make_workspace({"a": b"1"})
    with ws.transaction() as tx:
        tx.read(f"{ws.mount}/a")
    assert tx.result.txid is None and tx.result.changes == []
    assert ws.log() == []


def test_text_helpers():
    assert vfs.decode_text(b"\xef\xbb\xbfhi") == "hi"
    assert vfs.has_bom(b"\xef\xbb\xbfhi")
    assert vfs.encode_text("hi", bom=True) == b"\xef\xbb\xbfhi"
    with pytest.raises(vfs.NotText):
        vfs.decode_text(b"a\x00b", "/w/x")
    with pytest.raises(vfs.NotText) as info:
        vfs.decode_text(b"\xff\xfe", "/w/x")
    assert "/w/x" in str(info.value)
    assert vfs.dominant_newline("a\r\nb\n") == "\r\n"
    assert vfs.dominant_newline("a\rb") == "\r"
    assert vfs.dominant_newline("ab") == "\n"


def test_size_limit(make_workspace):
    ws = make_workspace({"big": b"x" * 100}, max_file_bytes=10)
    with pytest.raises(vfs.TooLarge) as info:
        ws.read(f"{ws.mount}/big")
    assert info.value.code == "FS_TOO_LARGE"
