"""Bounds and no litter on local disk: a read over its limit costs a stat, not the bytes; no temp
file survives an exception at any point of a write (KeyboardInterrupt included); temp files are
recognised by their full name only."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import backends.local.setaside
import vfs
from backends.base import TooBig, WriteItem
from backends.local import LocalBackend, is_temp_name


class Interrupt:
    """Replaces one os-level call: runs it for real ``after`` times, then raises
    KeyboardInterrupt, either instead of the call (``before``) or right after it returned."""

    def __init__(self, real: Callable[..., Any], *, after: int = 0, before: bool = True) -> None:
        self.real, self.after, self.before, self.calls = real, after, before, 0

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        self.calls += 1
        if self.calls <= self.after:
            return self.real(*args, **kwargs)
        if self.before:
            raise KeyboardInterrupt
        self.real(*args, **kwargs)
        raise KeyboardInterrupt


def test_a_read_over_its_limit_reads_no_byte(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "big.bin").write_bytes(b"x" * 10_000)
    backend = LocalBackend(str(tmp_path))
    reads: list[int] = []
    real_read = os.read

    def counting_read(fd: int, n: int) -> bytes:
        reads.append(n)
        return real_read(fd, n)

    monkeypatch.setattr(os, "read", counting_read)
    with pytest.raises(TooBig) as info:
        backend.read("big.bin", limit=9_999)
    assert (info.value.size, info.value.limit, reads) == (10_000, 9_999, [])
    data, _ = backend.read("big.bin", limit=10_000)  # at the limit is allowed
    assert len(data) == 10_000 and reads


def test_a_workspace_read_over_its_limit_is_too_large(tmp_path: Path) -> None:
    (tmp_path / "big.txt").write_bytes(b"x" * 100)
    ws = vfs.Workspace(LocalBackend(str(tmp_path)), mount=str(tmp_path), max_file_bytes=99)
    with pytest.raises(vfs.VfsError) as info:
        ws.read_bytes(str(tmp_path / "big.txt"))
    assert info.value.code == "FS_TOO_LARGE"


# (label, what to patch, how): each interrupts a conditional replace at another point.
POINTS: dict[str, tuple[Any, str, dict[str, Any]]] = {
    "first write of the bytes": (os, "write", {}),
    "the fchmod": (os, "fchmod", {}),
    "the file fsync": (os, "fsync", {}),
    "right after the swap": (backends.local.setaside, "exchange", {"before": False}),
    "the swap itself": (backends.local.setaside, "exchange", {}),
}


@pytest.mark.parametrize("point", sorted(POINTS))
@pytest.mark.parametrize("batch", [False, True], ids=["write", "write_many"])
def test_keyboard_interrupt_mid_write_leaves_the_old_bytes_and_no_temp(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, point: str, batch: bool
) -> None:
    backend = LocalBackend(str(tmp_path))
    version = backend.write(WriteItem("a.txt", b"old\n")).version
    module, name, how = POINTS[point]
    if module is backends.local.setaside and not _has_exchange(backend):
        pytest.skip("no RENAME_EXCHANGE here")
    monkeypatch.setattr(module, name, Interrupt(getattr(module, name), **how))
    item = WriteItem("a.txt", b"new\n", if_version=version)
    with pytest.raises(KeyboardInterrupt):
        if batch:
            backend.write_many([item])
        else:
            backend.write(item)
    monkeypatch.undo()
    assert os.listdir(tmp_path) == ["a.txt"]
    assert (tmp_path / "a.txt").read_bytes() == b"old\n"


def test_keyboard_interrupt_in_a_create_leaves_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    backend = LocalBackend(str(tmp_path))
    monkeypatch.setattr(os, "link", Interrupt(os.link))
    with pytest.raises(KeyboardInterrupt):
        backend.write(WriteItem("new.txt", b"new\n", if_absent=True))
    monkeypatch.undo()
    assert os.listdir(tmp_path) == []


def _has_exchange(backend: LocalBackend) -> bool:
    directory = backend._check_parent("x")
    try:
        return backends.local.setaside.exchange_works(directory)
    finally:
        directory.close()


@pytest.mark.parametrize(
    ("name", "is_temp"),
    [
        (".vfs-tmp-" + "0123456789abcdef" * 2, True),
        (".vfs-tmp-" + "0123456789ABCDEF" * 2, False),  # upper case: not ours
        (".vfs-tmp-" + "0" * 31, False),  # too short
        (".vfs-tmp-" + "0" * 33, False),  # too long
        (".notes.vfs-tmp-1a2b3c4d", False),  # the old pattern, or a user's file
        ("draft.vfs-tmp-" + "0" * 32, False),  # merely contains the marker
        (".vfs-tmp-" + "0" * 32 + ".txt", False),
        (".vfs-kept-" + "0" * 32 + "-a.txt", False),  # kept bytes: never swept
    ],
)
def test_temp_names_are_recognised_by_the_full_name_only(name: str, is_temp: bool) -> None:
    assert is_temp_name(name) is is_temp


def test_a_write_stages_under_a_recognisable_temp_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[str] = []
    real_fsync = os.fsync

    def fsync(fd: int) -> None:
        seen.extend(n for n in os.listdir(tmp_path) if n != "a.txt")
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    LocalBackend(str(tmp_path)).write(WriteItem("a.txt", b"x"))
    assert seen and all(is_temp_name(n) for n in seen)
