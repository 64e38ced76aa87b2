"""FsspecBackend (the catch-all) on fsspec's own memory and local filesystems."""

from __future__ import annotations

import errno
import itertools
import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import fsspec
import fsspec.implementations.memory
import pytest

import backends
from backends.base import Backend, DeleteItem, EscapesRoot, PreconditionFailed, TooBig, WriteItem
from backends.fsspec_any import FsspecBackend

_counter = itertools.count()


@pytest.fixture(params=["memory", "local"])
def be(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[FsspecBackend]:
    if request.param == "memory":
        name = f"/fsspec-test-{os.getpid()}-{next(_counter)}"
        backend = FsspecBackend(fsspec.filesystem("memory"), name)
        yield backend
        backend.close()
        fs = fsspec.filesystem("memory")
        if fs.exists(name):
            fs.rm(name, recursive=True)
    else:
        root = tmp_path / "root"
        root.mkdir()
        backend = FsspecBackend(fsspec.filesystem("file"), str(root))
        yield backend
        backend.close()


def test_registry_maps_unknown_schemes_here(tmp_path: Path) -> None:
    mem = backends.open_backend("memory://x", {})
    assert not isinstance(mem, FsspecBackend)  # memory:// has its own backend
    assert backends.entry_for_url("gcs://bucket/p").name == "fsspec"
    # "dir" (fsspec's DirFileSystem) stands in for any other protocol: the generic code path
    other = backends.open_backend("dir://", {"path": str(tmp_path), "target_protocol": "file", "vfs_lock_ttl": 9})
    try:
        assert isinstance(other, FsspecBackend) and isinstance(other, Backend)
        assert other.lock_ttl == 9.0 and not other.hash_versions
        assert not other.capabilities.exclusive_create and not other.capabilities.cross_process_lock
        info = other.write(WriteItem("f", b"via dir://", if_absent=True))
        assert (tmp_path / "f").read_bytes() == b"via dir://"
        assert other.read("f")[1].version == info.version
        with pytest.raises(PreconditionFailed):
            other.write(WriteItem("f", b"again", if_absent=True))
        (tmp_path / "f").write_bytes(b"outside")
        assert not other.matches("f", info.version)
        other.mkdir(".vfs")
        with other.lock(".vfs/lock", timeout=1):
            assert (tmp_path / ".vfs" / "lock").exists()
        assert not (tmp_path / ".vfs" / "lock").exists()
    finally:
        other.close()


def test_roundtrip_and_versions(be: FsspecBackend) -> None:
    info = be.write(WriteItem("a.txt", b"one"))
    data, rinfo = be.read("a.txt")
    assert data == b"one" and rinfo.version == info.version
    assert be.stat("a.txt").version == info.version  # type: ignore[union-attr]
    v2 = be.write(WriteItem("a.txt", b"two")).version
    assert v2 != info.version
    assert be.matches("a.txt", v2) and not be.matches("a.txt", info.version)
    assert be.matches("missing", None) and not be.matches("a.txt", None)


def test_memory_in_place_mutation_changes_the_version() -> None:
    fs = fsspec.filesystem("memory")
    root = f"/fsspec-mut-{next(_counter)}"
    be = FsspecBackend(fs, root)
    v1 = be.write(WriteItem("f", b"original")).version
    ukey, checksum = fs.ukey(f"{root}/f"), fs.checksum(f"{root}/f")
    with fs.open(f"{root}/f", "r+b") as f:  # in place, same size: fsspec keeps ukey/checksum
        f.write(b"ORIGINAL")
    assert (fs.ukey(f"{root}/f"), fs.checksum(f"{root}/f")) == (ukey, checksum)
    assert be.read("f")[0] == b"ORIGINAL"
    assert not be.matches("f", v1)
    with pytest.raises(PreconditionFailed):
        be.write(WriteItem("f", b"mine", if_version=v1))
    fs.rm(root, recursive=True)


def test_outside_change_is_detected_before_write(be: FsspecBackend) -> None:
    v1 = be.write(WriteItem("f", b"v1")).version
    be.fs.pipe_file(be._path("f"), b"someone else")
    with pytest.raises(PreconditionFailed) as exc:
        be.write(WriteItem("f", b"mine", if_version=v1))
    assert exc.value.errno == errno.ESTALE
    assert be.read("f")[0] == b"someone else"
    with pytest.raises(PreconditionFailed):
        be.delete(DeleteItem("f", if_version=v1))
    assert be.stat("f") is not None


def test_create_conflict_and_missing(be: FsspecBackend) -> None:
    be.write(WriteItem("f", b"first", if_absent=True))
    with pytest.raises(PreconditionFailed) as exc:
        be.write(WriteItem("f", b"second", if_absent=True))
    assert exc.value.errno == errno.EEXIST
    assert be.read("f")[0] == b"first"
    with pytest.raises(PreconditionFailed):
        be.write(WriteItem("nope", b"x", if_version="h:0"))
    assert be.stat("nope") is None


def test_delete(be: FsspecBackend) -> None:
    v = be.write(WriteItem("f", b"x")).version
    be.delete(DeleteItem("f", if_version=v))
    assert be.stat("f") is None
    with pytest.raises(FileNotFoundError):
        be.delete(DeleteItem("f"))
    be.mkdir("d")
    with pytest.raises(IsADirectoryError):
        be.delete(DeleteItem("d"))


def test_directories(be: FsspecBackend) -> None:
    assert be.list("") == []
    be.mkdir("src")
    be.write(WriteItem("src/a.py", b"a"))
    be.mkdir("src/pkg")
    be.mkdir("empty")
    be.write(WriteItem("top", b"t"))
    assert {(i.key, i.kind) for i in be.list("")} == {("src", "directory"), ("empty", "directory"), ("top", "file")}
    assert {(i.key, i.kind, i.size) for i in be.list("src")} == {("src/a.py", "file", 1), ("src/pkg", "directory", 0)}
    assert be.list("empty") == []
    assert be.stat("empty").kind == "directory"  # type: ignore[union-attr]
    with pytest.raises(FileExistsError):
        be.mkdir("src")
    with pytest.raises(FileNotFoundError):
        be.mkdir("no/such")
    with pytest.raises(NotADirectoryError):
        be.mkdir("top/x")
    with pytest.raises(FileNotFoundError):
        be.write(WriteItem("no/such", b"x"))
    with pytest.raises(FileNotFoundError):
        be.list("no")
    with pytest.raises(NotADirectoryError):
        be.list("top")
    with pytest.raises(IsADirectoryError):
        be.read("src")
    with pytest.raises(IsADirectoryError):
        be.write(WriteItem("src", b"x"))
    with pytest.raises(OSError) as exc:
        be.rmdir("src")
    assert exc.value.errno == errno.ENOTEMPTY
    be.rmdir("empty")
    assert be.stat("empty") is None
    with pytest.raises(NotADirectoryError):
        be.rmdir("top")


def test_no_temp_files_left(be: FsspecBackend) -> None:
    be.write(WriteItem("f", b"1"))
    be.write(WriteItem("f", b"2"))
    with pytest.raises(PreconditionFailed):
        be.write(WriteItem("f", b"3", if_absent=True))
    assert [i.key for i in be.list("")] == ["f"]


def test_lock_excludes_threads(be: FsspecBackend) -> None:
    be.mkdir(".vfs")
    inside = 0
    peak = 0
    guard = threading.Lock()

    def worker() -> None:
        nonlocal inside, peak
        for _ in range(5):
            with be.lock(".vfs/lock", timeout=10):
                with guard:
                    inside += 1
                    peak = max(peak, inside)
                time.sleep(0.005)
                with guard:
                    inside -= 1

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert peak == 1
    assert be.stat(".vfs/lock") is None


def test_lock_timeout(be: FsspecBackend) -> None:
    be.mkdir(".vfs")
    with be.lock(".vfs/lock", timeout=1):
        result: list[BaseException | None] = []

        def other() -> None:
            try:
                with be.lock(".vfs/lock", timeout=0.2):
                    result.append(None)
            except TimeoutError as exc:
                result.append(exc)

        t = threading.Thread(target=other)
        t.start()
        t.join()
        assert len(result) == 1 and isinstance(result[0], TimeoutError)


def test_local_lock_file_of_dead_holder_is_taken_over(tmp_path: Path) -> None:
    be = FsspecBackend(fsspec.filesystem("file"), str(tmp_path), lock_ttl=0.5)
    (tmp_path / ".vfs").mkdir()
    (tmp_path / ".vfs" / "lock").write_text('{"owner": "dead", "expires_at": 0}')
    lock = be.lock(".vfs/lock", timeout=5)
    with lock:
        assert lock.took_over
        assert "dead" not in (tmp_path / ".vfs" / "lock").read_text()
    assert not (tmp_path / ".vfs" / "lock").exists()
    # a lock file that is never renewed but claims a far expiry is taken over after one ttl
    (tmp_path / ".vfs" / "lock").write_text('{"owner": "frozen", "expires_at": 1e12}')
    started = time.monotonic()
    with be.lock(".vfs/lock", timeout=5):
        assert 0.5 <= time.monotonic() - started < 4


def test_local_resolve_refuses_escaping_symlinks(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    (tmp_path / "outside").write_text("secret")
    (root / "link").symlink_to(tmp_path / "outside")
    (root / "inner").write_text("ok")
    (root / "alias").symlink_to(root / "inner")
    be = FsspecBackend(fsspec.filesystem("file"), str(root))
    with pytest.raises(EscapesRoot):
        be.resolve("link")
    assert be.resolve("alias") == "inner"
    assert be.resolve("inner") == "inner"


def test_capabilities_are_honest() -> None:
    local = FsspecBackend(fsspec.filesystem("file"), "/tmp").capabilities
    mem = FsspecBackend(fsspec.filesystem("memory"), "/x").capabilities
    assert not local.conditional_write and not mem.conditional_write
    assert local.exclusive_create and local.atomic_replace and local.cross_process_lock
    assert not mem.cross_process_lock and not mem.durable
    assert any("slip in" in n for n in local.notes + mem.notes)


def test_a_file_used_as_a_directory_is_not_a_directory(be: FsspecBackend) -> None:
    be.write(WriteItem("f", b"x"))
    with pytest.raises(NotADirectoryError):
        be.read("f/x")
    with pytest.raises(NotADirectoryError):
        be.delete(DeleteItem("f/x"))
    with pytest.raises(NotADirectoryError):
        be.list("f/x")
    assert be.stat("f/x") is None


class _CountingMemoryFS(fsspec.implementations.memory.MemoryFileSystem):  # type: ignore[misc]
    """fsspec's memory store under another protocol name, counting content fetches."""

    protocol = "countingmem"
    fetched: ClassVar[list[str]] = []

    def cat_file(self, path: str, start: int | None = None, end: int | None = None, **kw: Any) -> bytes:
        self.fetched.append(path)
        return bytes(super().cat_file(path, start, end, **kw))


def test_read_over_the_limit_is_refused_before_fetching() -> None:
    fs = _CountingMemoryFS(skip_instance_cache=True)
    root = f"/limit-{next(_counter)}"
    fs.mkdir(root)
    fs.pipe_file(f"{root}/big", b"y" * 100)
    be = FsspecBackend(fs, root)
    _CountingMemoryFS.fetched.clear()
    with pytest.raises(TooBig) as caught:
        be.read("big", limit=99)
    assert (caught.value.size, caught.value.limit) == (100, 99)
    assert _CountingMemoryFS.fetched == []
    assert be.read("big", limit=100)[0] == b"y" * 100
    fs.rm(root, recursive=True)
