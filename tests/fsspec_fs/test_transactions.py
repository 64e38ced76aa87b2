"""The transactional behaviour of the vfs filesystem, on every target: what commits together,
what a conflict or an exception leaves behind, nesting, threads, and versions in info()."""

from __future__ import annotations

import threading
from typing import Any

import fsspec
import pytest

import vfs
from tests.fsspec_fs.conftest import Target


def _files(fs: Any, target: Target) -> dict[str, bytes]:
    """Every file of the workspace as a fresh client sees it (relative name -> bytes)."""
    found = fs.find(target.path)
    return {p[len(target.path) + 1 :]: fs.cat(p) for p in found}


def test_two_files_in_a_transaction_land_together(target: Target) -> None:
    fs, other = target.make_fs(), target.make_fs(private=True)
    with fs.transaction:
        fs.pipe(f"{target.path}/a.txt", b"A")
        with fs.open(f"{target.path}/sub/b.txt", "w") as f:
            f.write("B")
        assert fs.cat(f"{target.path}/sub/b.txt") == b"B"  # read-your-writes inside
        assert _files(other, target) == {}  # nothing visible to anyone else yet
    assert _files(other, target) == {"a.txt": b"A", "sub/b.txt": b"B"}
    assert fs.transaction.result is not None
    assert sorted(c.action for c in fs.transaction.result.changes) == ["add", "add"]


def test_a_file_changed_since_this_filesystem_read_it_fails_the_commit(target: Target) -> None:
    fs, other = target.make_fs(), target.make_fs(private=True)
    fs.pipe({f"{target.path}/a.txt": b"old a", f"{target.path}/b.txt": b"old b"})
    assert fs.cat(f"{target.path}/a.txt") == b"old a"
    other.pipe(f"{target.path}/a.txt", b"theirs")
    with pytest.raises(vfs.StaleVersion), fs.transaction:
        fs.pipe(f"{target.path}/b.txt", b"new b")
        fs.pipe(f"{target.path}/a.txt", b"new a")
    assert _files(other, target) == {"a.txt": b"theirs", "b.txt": b"old b"}


def test_a_file_read_in_the_transaction_and_changed_before_commit_fails_it(target: Target) -> None:
    fs, other = target.make_fs(), target.make_fs(private=True)
    fs.pipe(f"{target.path}/in.csv", b"1,2\n")
    with pytest.raises(vfs.StaleVersion), fs.transaction:
        total = sum(int(x) for x in fs.cat(f"{target.path}/in.csv").split(b","))
        fs.pipe(f"{target.path}/out.csv", str(total).encode())
        other.pipe(f"{target.path}/in.csv", b"5,5\n")  # after our read, before our commit
    assert _files(other, target) == {"in.csv": b"5,5\n"}


def test_an_exception_in_the_block_discards_everything(target: Target) -> None:
    fs = target.make_fs()
    fs.pipe(f"{target.path}/keep.txt", b"keep")
    with pytest.raises(KeyError, match="boom"), fs.transaction:
        fs.pipe(f"{target.path}/new.txt", b"new")
        fs.rm(f"{target.path}/keep.txt")
        raise KeyError("boom")
    assert not fs.in_transaction
    assert _files(target.make_fs(private=True), target) == {"keep.txt": b"keep"}


def test_a_file_left_open_in_a_discarded_transaction_writes_nothing(target: Target) -> None:
    fs = target.make_fs()
    with pytest.raises(RuntimeError), fs.transaction:
        f = fs.open(f"{target.path}/late.txt", "wb")
        f.write(b"late")
        raise RuntimeError
    f.close()
    assert not fs.exists(f"{target.path}/late.txt")


def test_a_file_still_open_at_commit_is_part_of_it(target: Target) -> None:
    fs = target.make_fs()
    with fs.transaction:
        f = fs.open(f"{target.path}/open.txt", "wb")
        f.write(b"bytes")
    assert f.closed
    assert target.make_fs(private=True).cat(f"{target.path}/open.txt") == b"bytes"


def test_nested_blocks_commit_once_at_the_outermost_exit(target: Target) -> None:
    fs, other = target.make_fs(), target.make_fs(private=True)
    with fs.transaction:
        fs.pipe(f"{target.path}/outer.txt", b"o")
        with fs.transaction:
            fs.pipe(f"{target.path}/inner.txt", b"i")
        assert not other.exists(f"{target.path}/inner.txt")
    assert _files(other, target) == {"inner.txt": b"i", "outer.txt": b"o"}
    assert len(fs.workspace.log()) == 1


def test_an_exception_caught_between_nested_blocks_still_discards_the_transaction(target: Target) -> None:
    fs = target.make_fs()
    with pytest.raises(vfs.Aborted), fs.transaction:
        fs.pipe(f"{target.path}/outer.txt", b"o")
        try:
            with fs.transaction:
                fs.pipe(f"{target.path}/inner.txt", b"i")
                raise ValueError("inner")
        except ValueError:
            pass
    assert _files(target.make_fs(private=True), target) == {}


def test_a_failed_call_that_staged_nothing_leaves_the_transaction_usable(target: Target) -> None:
    fs = target.make_fs()
    with fs.transaction:
        fs.pipe(f"{target.path}/a.txt", b"a")
        with pytest.raises(FileNotFoundError):
            fs.rm(f"{target.path}/missing.txt")
    assert fs.cat(f"{target.path}/a.txt") == b"a"


def test_start_and_end_transaction_commit_and_complete_false_discards(target: Target) -> None:
    fs = target.make_fs()
    fs.start_transaction()
    fs.pipe(f"{target.path}/kept.txt", b"k")
    fs.end_transaction()
    fs.start_transaction()
    fs.pipe(f"{target.path}/dropped.txt", b"d")
    fs.transaction.complete(commit=False)
    assert _files(target.make_fs(private=True), target) == {"kept.txt": b"k"}


def test_outside_a_transaction_each_call_is_one_commit(target: Target) -> None:
    fs = target.make_fs()
    fs.pipe({f"{target.path}/src/{n}.txt": n.encode() for n in "abc"})
    fs.cp(f"{target.path}/src", f"{target.path}/copy", recursive=True)
    fs.mv(f"{target.path}/src", f"{target.path}/moved", recursive=True)
    assert [e.label for e in fs.workspace.log()] == ["mv", "cp", "pipe"]  # newest first
    assert _files(fs, target) == {f"{d}/{n}.txt": n.encode() for d in ("copy", "moved") for n in "abc"}


def test_threads_sharing_an_instance_share_its_transaction(target: Target) -> None:
    fs = target.make_fs()
    with fs.transaction:
        workers = [threading.Thread(target=fs.pipe, args=(f"{target.path}/t{i}.txt", b"%d" % i)) for i in range(4)]
        for w in workers:
            w.start()
        for w in workers:
            w.join()
        assert not target.make_fs(private=True).exists(f"{target.path}/t0.txt")
    assert len(_files(fs, target)) == 4
    assert len(fs.workspace.log()) == 1


def test_another_thread_gets_its_own_instance_and_so_its_own_transaction(target: Target) -> None:
    fs = target.make_fs()
    seen: list[Any] = []
    with fs.transaction:
        fs.pipe(f"{target.path}/mine.txt", b"m")
        worker = threading.Thread(target=lambda: seen.append(target.make_fs()))
        worker.start()
        worker.join()
        theirs = seen[0]
        assert theirs is not fs and not theirs.in_transaction
        theirs.pipe(f"{target.path}/theirs.txt", b"t")  # its own commit, now
        assert target.make_fs(private=True).exists(f"{target.path}/theirs.txt")
        assert not target.make_fs(private=True).exists(f"{target.path}/mine.txt")


def test_info_carries_the_version_and_ukey_and_checksum_follow_it(target: Target) -> None:
    fs = target.make_fs()
    path = f"{target.path}/v.txt"
    fs.pipe(path, b"one")
    first = fs.info(path)
    assert first["version"] == fs.workspace.stat(fs._wp(path)).version
    key, checksum = fs.ukey(path), fs.checksum(path)
    assert (fs.ukey(path), fs.checksum(path)) == (key, checksum)
    target.make_fs(private=True).pipe(path, b"two")
    assert fs.info(path)["version"] != first["version"]
    assert fs.ukey(path) != key and fs.checksum(path) != checksum


def test_exclusive_create_refuses_an_existing_file(target: Target) -> None:
    fs = target.make_fs()
    path = f"{target.path}/x.txt"
    with fs.open(path, "xb") as f:
        f.write(b"first")
    with pytest.raises(FileExistsError):
        fs.open(path, "xb")
    with pytest.raises(FileExistsError):
        fs.pipe_file(path, b"second", mode="create")
    assert fs.cat(path) == b"first"


def test_append_mode_adds_to_what_is_there(target: Target) -> None:
    fs = target.make_fs()
    path = f"{target.path}/log.txt"
    fs.pipe(path, b"one\n")
    with fs.open(path, "a") as f:
        f.write("two\n")
    assert fs.cat(path) == b"one\ntwo\n"


def test_a_chained_url_joins_the_transaction_of_the_filesystem_for_its_root(target: Target) -> None:
    fs = target.make_fs()
    with fs.transaction:
        with fsspec.open(target.chained("sub/c.txt"), "w", **{target.url.split(":")[0]: target.options}) as f:
            f.write("chained")
        assert not target.make_fs(private=True).exists(f"{target.path}/sub/c.txt")
    assert fs.cat(f"{target.path}/sub/c.txt") == b"chained"


def test_listings_inside_a_transaction_show_the_folders_of_staged_files(target: Target) -> None:
    fs = target.make_fs()
    with fs.transaction:
        fs.pipe(f"{target.path}/new/deep/b.txt", b"b")
        assert fs.isdir(f"{target.path}/new/deep")
        assert fs.ls(target.path, detail=False) == [f"{target.path}/new"]
        assert fs.find(target.path) == [f"{target.path}/new/deep/b.txt"]
        fs.rm(f"{target.path}/new/deep/b.txt")
        assert not fs.exists(f"{target.path}/new")
