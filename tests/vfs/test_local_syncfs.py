"""Large durable batches on local disk are flushed with ``syncfs`` (one per filesystem) instead of
one ``fsync`` per file: counted, and checked to keep every promise of a batch (each file's bytes
flushed before its rename, a failing item not stopping the others, nothing left behind when the
flush itself fails)."""

from __future__ import annotations

import errno
import os
from collections.abc import Iterable
from pathlib import Path

import pytest

import backends.local.syncfs as syncfs
import vfs
from backends.base import WriteItem
from backends.local import LocalBackend

pytestmark = pytest.mark.skipif(not syncfs.available(), reason="syncfs(2) with error reporting (Linux >= 5.8)")

FILES = 40  # over syncfs.BATCH_MIN, over 4 folders


def _names() -> list[str]:
    return [f"d{i % 4}/f{i:02d}.txt" for i in range(FILES)]


def _tree(root: Path) -> None:
    for name in _names():
        (root / name).parent.mkdir(exist_ok=True)
        (root / name).write_bytes(b"old " + name.encode())


def _count(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    counts = {"fsync": 0, "syncfs": 0}
    real_fsync, real_sync_all = os.fsync, syncfs.sync_all

    def fsync(fd: int) -> None:
        counts["fsync"] += 1
        real_fsync(fd)

    def sync_all(fds: Iterable[int]) -> None:
        counts["syncfs"] += 1
        real_sync_all(fds)

    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(syncfs, "sync_all", sync_all)
    return counts


def test_a_large_commit_flushes_its_files_with_syncfs_and_lands_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _tree(tmp_path)
    ws = vfs.open_workspace(str(tmp_path))
    counts = _count(monkeypatch)
    with ws.transaction() as tx:
        for name in _names():
            tx.write(str(tmp_path / name), b"new " + name.encode())
    assert all((tmp_path / n).read_bytes() == b"new " + n.encode() for n in _names())
    # the journal and its folder, the decision and its folder, .vfs/ and .vfs/tx/ made by this first
    # commit: the 40 files themselves by syncfs
    assert counts["fsync"] <= 6, counts
    assert counts["syncfs"] == 2, counts  # the files before their renames, the 4 folders after
    assert not [p for p in tmp_path.rglob(".vfs-tmp-*")]
    ws.undo()
    assert all((tmp_path / n).read_bytes() == b"old " + n.encode() for n in _names())


def test_in_chunks_every_file_lands(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _tree(tmp_path)
    monkeypatch.setattr(syncfs, "_open_budget", lambda: 16)
    counts = _count(monkeypatch)
    backend = LocalBackend(str(tmp_path))
    results = backend.write_many([WriteItem(n, b"chunked " + n.encode()) for n in _names()])
    assert not [r for r in results if isinstance(r, BaseException)]
    assert all((tmp_path / n).read_bytes() == b"chunked " + n.encode() for n in _names())
    assert counts["syncfs"] == 3 + 1, counts  # 40 files in chunks of 16, then the folders


def test_a_stale_item_is_refused_and_the_others_land(tmp_path: Path) -> None:
    _tree(tmp_path)
    backend = LocalBackend(str(tmp_path))
    names = _names()
    versions = {n: backend.stat(n).version for n in names}  # type: ignore[union-attr]
    (tmp_path / names[7]).write_bytes(b"someone else's, meanwhile")
    os.utime(tmp_path / names[7], ns=(1, 1))  # a different version for sure
    results = backend.write_many([WriteItem(n, b"new", if_version=versions[n]) for n in names])
    refused = [n for n, r in zip(names, results, strict=True) if isinstance(r, BaseException)]
    assert refused == [names[7]]
    assert (tmp_path / names[7]).read_bytes() == b"someone else's, meanwhile"
    assert all((tmp_path / n).read_bytes() == b"new" for n in names if n != names[7])
    assert not [p for p in tmp_path.rglob(".vfs-tmp-*")]


def test_a_failed_flush_fails_every_staged_item_and_changes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _tree(tmp_path)
    calls: list[int] = []
    real = syncfs.sync_all

    def failing_once(fds: Iterable[int]) -> None:  # the files' flush fails, the folders' works
        calls.append(1)
        if len(calls) == 1:
            raise OSError(errno.EIO, "Input/output error")
        real(fds)

    monkeypatch.setattr(syncfs, "sync_all", failing_once)
    backend = LocalBackend(str(tmp_path))
    results = backend.write_many([WriteItem(n, b"never") for n in _names()])
    assert all(isinstance(r, OSError) and r.errno == errno.EIO for r in results)
    assert all((tmp_path / n).read_bytes() == b"old " + n.encode() for n in _names())
    assert not [p for p in tmp_path.rglob(".vfs-tmp-*")]


def test_a_failed_flush_rolls_the_commit_back(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _tree(tmp_path)
    ws = vfs.open_workspace(str(tmp_path))

    def failing(fds: Iterable[int]) -> None:
        raise OSError(errno.EIO, "Input/output error")

    monkeypatch.setattr(syncfs, "sync_all", failing)
    with pytest.raises(vfs.VfsError) as info, ws.transaction() as tx:
        for name in _names():
            tx.write(str(tmp_path / name), b"never")
    assert "rolled back" in info.value.message
    assert all((tmp_path / n).read_bytes() == b"old " + n.encode() for n in _names())
