"""A file another process holds open for writing is never replaced or deleted (local disk).

A writer that opened the file before vfs's swap writes into the old inode afterwards; had vfs
dropped that inode, those bytes would be gone. The set-aside file is probed with a read lease
(refused by the kernel while anyone has the file open for writing): then it goes back and the
write is refused with FS_STALE_VERSION, and the writer's bytes land in the file."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import vfs
from backends.base import BeingWritten, DeleteItem, WriteItem
from backends.local import LocalBackend
from backends.local.setaside import exchange_works


def _needs_set_aside(root: Path) -> None:
    backend = LocalBackend(str(root))
    directory = backend._check_parent("x")
    try:
        if not exchange_works(directory):
            pytest.skip("this filesystem cannot swap names (renameat2 RENAME_EXCHANGE)")
    finally:
        directory.close()


@pytest.fixture
def root(tmp_path: Path) -> Path:
    _needs_set_aside(tmp_path)
    (tmp_path / "log.txt").write_bytes(b"one\n")
    return tmp_path


def test_a_replace_is_refused_while_the_file_is_open_for_writing(root: Path) -> None:
    backend = LocalBackend(str(root))
    _, info = backend.read("log.txt")
    appender = os.open(root / "log.txt", os.O_WRONLY | os.O_APPEND)
    try:
        with pytest.raises(BeingWritten):
            backend.write(WriteItem("log.txt", b"replaced\n", if_version=info.version))
        os.write(appender, b"two\n")  # after vfs's attempt: must land in the file everyone sees
    finally:
        os.close(appender)
    assert (root / "log.txt").read_bytes() == b"one\ntwo\n"
    assert sorted(p.name for p in root.iterdir()) == ["log.txt"]  # nothing left aside or kept


def test_a_delete_is_refused_while_the_file_is_open_for_writing(root: Path) -> None:
    backend = LocalBackend(str(root))
    _, info = backend.read("log.txt")
    appender = os.open(root / "log.txt", os.O_WRONLY | os.O_APPEND)
    try:
        with pytest.raises(BeingWritten):
            backend.delete(DeleteItem("log.txt", if_version=info.version))
        os.write(appender, b"two\n")
    finally:
        os.close(appender)
    assert (root / "log.txt").read_bytes() == b"one\ntwo\n"
    assert sorted(p.name for p in root.iterdir()) == ["log.txt"]


def test_the_edit_goes_through_once_the_writer_closed(root: Path) -> None:
    backend = LocalBackend(str(root))
    _, info = backend.read("log.txt")
    os.close(os.open(root / "log.txt", os.O_RDONLY))  # a reader is no obstacle
    backend.write(WriteItem("log.txt", b"replaced\n", if_version=info.version))
    assert (root / "log.txt").read_bytes() == b"replaced\n"


def test_a_transaction_reports_it_and_changes_nothing(root: Path) -> None:
    (root / "other.txt").write_bytes(b"other\n")
    ws = vfs.Workspace(LocalBackend(str(root)))
    m = ws.mount
    appender = os.open(root / "log.txt", os.O_WRONLY | os.O_APPEND)
    try:
        with pytest.raises(vfs.StaleVersion) as info, ws.transaction() as tx:
            tx.write(f"{m}/other.txt", b"changed\n")
            tx.write(f"{m}/log.txt", tx.read(f"{m}/log.txt").data + b"mine\n")
        os.write(appender, b"two\n")
    finally:
        os.close(appender)
    assert "open for writing" in info.value.message
    assert (root / "log.txt").read_bytes() == b"one\ntwo\n"
    assert (root / "other.txt").read_bytes() == b"other\n"  # the whole transaction rolled back


def test_a_write_handle_on_another_file_is_no_obstacle(root: Path) -> None:
    """The probe is on the file's own inode: another file held open for writing changes nothing."""
    backend = LocalBackend(str(root))
    (root / "b.txt").write_bytes(b"b")
    other = os.open(root / "b.txt", os.O_WRONLY)
    try:
        _, info = backend.read("log.txt")
        backend.write(WriteItem("log.txt", b"replaced\n", if_version=info.version))
    finally:
        os.close(other)
    assert (root / "log.txt").read_bytes() == b"replaced\n"



def test_a_writer_that_opens_in_the_instant_before_the_swap_is_caught_after_it(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The probe before the swap cannot see a writer that opens right after it; the probe of the
    set-aside file does, and the old file goes back before that writer's bytes arrive."""
    from backends.local import setaside

    backend = LocalBackend(str(root))
    _, info = backend.read("log.txt")
    handles: list[int] = []
    real_exchange = setaside.exchange

    def open_then_swap(directory: object, a: str, b: str) -> None:
        if not handles and b == "log.txt":
            handles.append(os.open(root / "log.txt", os.O_WRONLY | os.O_APPEND))
        real_exchange(directory, a, b)  # type: ignore[arg-type]

    monkeypatch.setattr(setaside, "exchange", open_then_swap)
    try:
        with pytest.raises(BeingWritten):
            backend.write(WriteItem("log.txt", b"replaced\n", if_version=info.version))
        os.write(handles[0], b"two\n")
    finally:
        for fd in handles:
            os.close(fd)
    assert (root / "log.txt").read_bytes() == b"one\ntwo\n"
    assert sorted(p.name for p in root.iterdir()) == ["log.txt"]
