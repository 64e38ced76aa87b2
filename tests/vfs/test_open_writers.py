"""A file another process holds open for writing is never replaced or deleted (local disk).

A writer that opened the file before vfs's swap writes into the old inode afterwards; had vfs
dropped that inode, those bytes would be gone. The set-aside file is probed with a read lease
(refused by the kernel while anyone has the file open for writing): then it goes back and the
write is refused with FS_STALE_VERSION, and the writer's bytes land in the file."""

from __future__ import annotations

import errno
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


# -- the instant a refused file is visible: who opens it then is held, and given the right bytes --


class _Opener:
    """A thread that opens ``log.txt`` while vfs's new file stands at the name, not yet checked
    (started from inside ``_verify``), and reads it or appends to it."""

    def __init__(self, root: Path, append: bool) -> None:
        import threading

        self.root, self.append = root, append
        self.opening = threading.Event()
        self.seen: bytes | None = None
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        self.opening.set()
        if self.append:
            fd = os.open(self.root / "log.txt", os.O_WRONLY | os.O_APPEND)
            os.write(fd, b"x2\n")
            os.close(fd)
        else:
            self.seen = (self.root / "log.txt").read_bytes()

    def start_and_wait(self) -> None:
        import time

        self.thread.start()
        self.opening.wait(10)
        time.sleep(0.2)  # inside open(2) by now: held there by the lease on vfs's file


def _race(root: Path, monkeypatch: pytest.MonkeyPatch, opener: _Opener, *, sneak_in: bool) -> Exception | None:
    """vfs replaces ``log.txt``; with ``sneak_in`` an outside writer renames its own version in
    right after vfs's last look (so the check after the swap refuses); ``opener`` opens the name
    in the instant between the swap and that check."""
    from backends.local import setaside

    backend = LocalBackend(str(root))
    _, info = backend.read("log.txt")
    real_still_there, real_verify = setaside._still_there, setaside._verify

    def still_there(*args: object) -> None:
        real_still_there(*args)  # type: ignore[arg-type]
        if sneak_in:
            (root / "theirs.tmp").write_bytes(b"one\nx1\n")
            os.replace(root / "theirs.tmp", root / "log.txt")

    def verify(*args: object) -> object:
        opener.start_and_wait()
        return real_verify(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(setaside, "_still_there", still_there)
    monkeypatch.setattr(setaside, "_verify", verify)
    try:
        backend.write(WriteItem("log.txt", b"replaced\n", if_version=info.version))
    except Exception as exc:  # noqa: BLE001 - returned for the test to look at
        return exc
    finally:
        opener.thread.join(10)
    return None


def test_a_reader_in_the_instant_of_a_refused_swap_reads_what_stands_there(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A read-modify-write editor that read the refused bytes would write them back with its own
    change, losing the change that made vfs refuse (x1): it must read x1's version instead."""
    reader = _Opener(root, append=False)
    error = _race(root, monkeypatch, reader, sneak_in=True)
    assert getattr(error, "errno", None) == errno.ESTALE, error
    assert reader.seen == b"one\nx1\n"
    assert (root / "log.txt").read_bytes() == b"one\nx1\n"
    assert sorted(p.name for p in root.iterdir()) == ["log.txt"]


def test_an_appender_in_the_instant_of_a_refused_swap_loses_nothing(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    appender = _Opener(root, append=True)
    error = _race(root, monkeypatch, appender, sneak_in=True)
    assert getattr(error, "errno", None) == errno.ESTALE and "kept as" in str(error), error
    assert (root / "log.txt").read_bytes() == b"one\nx1\n"
    (kept,) = [p for p in root.iterdir() if p.name.startswith(".vfs-kept-")]
    assert kept.read_bytes() == b"one\nx1\nx2\n"  # its append, on the version that stood there


def test_a_reader_in_the_instant_of_a_swap_that_holds_reads_the_new_file(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    reader = _Opener(root, append=False)
    assert _race(root, monkeypatch, reader, sneak_in=False) is None
    assert reader.seen == b"replaced\n" == (root / "log.txt").read_bytes()
