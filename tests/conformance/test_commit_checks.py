"""What a commit checks, and how, on every backend: the write's own condition stands in for the
preflight check where it can (S3 If-Match, single-target commits), and the error says the same
thing either way."""

from __future__ import annotations

import pytest

import vfs
from backends.base import DeleteItem, PreconditionFailed, Vanished, WriteItem, content_digest
from tests.support.trees import snapshot_tree, write_external


def test_write_with_the_callers_digest_gives_a_checkable_version(make_workspace):
    ws = make_workspace({"a.txt": b"one"})
    backend = ws.backend
    data = b"two\n"
    info = backend.write(WriteItem("a.txt", data, digest=content_digest(data)))
    assert backend.matches("a.txt", info.version)
    assert backend.read("a.txt")[0] == data
    backend.write(WriteItem("a.txt", b"TWO\n"))  # same size, same instant: the version must still move
    assert not backend.matches("a.txt", info.version)


def test_unversioned_write_still_writes(make_workspace):
    ws = make_workspace({})
    info = ws.backend.write(WriteItem("rec.bin", b"\x00record", versioned=False))
    assert info.key == "rec.bin"
    assert ws.backend.read("rec.bin")[0] == b"\x00record"


def test_conditional_write_on_a_vanished_file_says_so(make_workspace):
    ws = make_workspace({"a.txt": b"one"})
    backend = ws.backend
    version = backend.stat("a.txt").version
    backend.delete(DeleteItem("a.txt"))
    with pytest.raises(Vanished):
        backend.write(WriteItem("a.txt", b"two", if_version=version))
    with pytest.raises(FileNotFoundError):  # Vanished is also a FileNotFoundError
        backend.delete(DeleteItem("a.txt", if_version=version))
    assert backend.stat("a.txt") is None


def test_conditional_write_on_a_changed_file_is_not_vanished(make_workspace):
    ws = make_workspace({"a.txt": b"one"})
    backend = ws.backend
    version = backend.stat("a.txt").version
    write_external(backend, "a.txt", b"theirs")
    with pytest.raises(PreconditionFailed) as info:
        backend.write(WriteItem("a.txt", b"mine", if_version=version))
    assert not isinstance(info.value, Vanished)
    assert backend.read("a.txt")[0] == b"theirs"


@pytest.mark.parametrize("files", [1, 3])
@pytest.mark.parametrize("meddling", ["deleted", "changed"])
def test_target_stale_at_commit(make_workspace, files, meddling):
    """Someone else deletes or rewrites the last target between its read and the commit."""
    tree = {f"f{i}.txt": f"old {i}".encode() for i in range(files)}
    ws = make_workspace(tree)
    m = ws.mount
    last = f"f{files - 1}.txt"
    with pytest.raises(vfs.StaleVersion) as info, ws.transaction() as tx:
        for i in range(files):
            tx.write(f"{m}/f{i}.txt", tx.read(f"{m}/f{i}.txt").data + b" new")
        if meddling == "deleted":
            ws.backend.delete(DeleteItem(last))
        else:
            write_external(ws.backend, last, b"theirs")
    assert info.value.code == "FS_STALE_VERSION"
    reason = "file no longer exists" if meddling == "deleted" else "file changed since it was read"
    assert f'"{m}/{last}": {reason}' in info.value.message
    expected = {k: v for k, v in tree.items() if k != last}
    if meddling == "changed":
        expected[last] = b"theirs"
    assert snapshot_tree(ws) == expected
    assert ws.log() == []


def test_new_file_created_by_someone_else_before_commit(make_workspace):
    ws = make_workspace({"keep.txt": b"k"})
    m = ws.mount
    with pytest.raises(vfs.StaleVersion) as info, ws.transaction() as tx:
        tx.write(f"{m}/new1.txt", b"mine 1")
        tx.write(f"{m}/new2.txt", b"mine 2")
        write_external(ws.backend, "new2.txt", b"theirs")
    assert "created by someone else meanwhile" in info.value.message
    assert snapshot_tree(ws) == {"keep.txt": b"k", "new2.txt": b"theirs"}


def test_prefetched_new_files_commit_and_are_checked(make_workspace):
    ws = make_workspace({"dir/old.txt": b"old"})
    m = ws.mount
    paths = [f"{m}/dir/new{i}.txt" for i in range(4)]
    with ws.transaction() as tx:
        tx.prefetch([*paths, f"{m}/dir/old.txt"])
        for i, path in enumerate(paths):
            tx.write(path, f"new {i}".encode())
        tx.write(f"{m}/dir/old.txt", b"OLD")
    assert snapshot_tree(ws) == {
        "dir": None,
        "dir/old.txt": b"OLD",
        **{f"dir/new{i}.txt": f"new {i}".encode() for i in range(4)},
    }


def test_prefetch_tells_directories_from_missing_files(make_workspace):
    ws = make_workspace({"dir/sub/x.txt": b"x", "dir/old.txt": b"o"})
    m = ws.mount
    with ws.transaction() as tx:
        tx.prefetch([f"{m}/dir/sub", f"{m}/dir/new1.txt", f"{m}/dir/new2.txt", f"{m}/dir/old.txt"])
        with pytest.raises(vfs.IsADirectory):
            tx.read(f"{m}/dir/sub")
        with pytest.raises(vfs.IsADirectory):
            tx.write(f"{m}/dir/sub", b"not a file")
        with pytest.raises(vfs.NotFound):
            tx.read(f"{m}/dir/new1.txt")
        tx.write(f"{m}/dir/new1.txt", b"1")
        tx.write(f"{m}/dir/new2.txt", b"2")
    assert snapshot_tree(ws) == {
        "dir": None,
        "dir/sub": None,
        "dir/sub/x.txt": b"x",
        "dir/old.txt": b"o",
        "dir/new1.txt": b"1",
        "dir/new2.txt": b"2",
    }


def test_prefetch_leaves_a_file_over_the_size_limit_to_its_read(make_workspace):
    """The limit travels with the batch (refused before its bytes are read); the read of that
    path then says it is too large, and the other prefetched files are served as usual."""
    ws = make_workspace({"big.txt": b"x" * 64, "small.txt": b"s"}, max_file_bytes=16)
    m = ws.mount
    with ws.transaction() as tx:
        tx.prefetch([f"{m}/big.txt", f"{m}/small.txt"])
        assert tx.read(f"{m}/small.txt").data == b"s"
        with pytest.raises(vfs.TooLarge):
            tx.read(f"{m}/big.txt")
