"""A replaced big file's handle is closed on another thread (its blocks are freed at that close),
a small one's at once; either way no handle is left open and the bytes are the new ones."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

import vfs
from backends.local import publish


def _closed(fd: int) -> bool:
    try:
        os.fstat(fd)
    except OSError:
        return True
    return False


def _wait_closed(fd: int) -> bool:
    deadline = time.monotonic() + 10
    while not _closed(fd):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.005)
    return True


def _open_fds() -> set[str]:
    return set(os.listdir("/proc/self/fd"))


def test_a_small_replaced_file_is_closed_at_once(tmp_path: Path) -> None:
    path = tmp_path / "small"
    path.write_bytes(b"x" * 10)
    fd = os.open(path, os.O_RDONLY)
    publish.let_go(fd, 10)
    assert _closed(fd)


def test_a_big_replaced_file_is_closed_on_another_thread(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import _thread

    started: list[object] = []
    real = _thread.start_new_thread

    def recording(function: object, args: tuple[object, ...]) -> int:
        started.append(function)
        return real(function, args)  # type: ignore[arg-type]

    monkeypatch.setattr(_thread, "start_new_thread", recording)
    path = tmp_path / "big"
    path.write_bytes(b"x" * publish.LET_GO_BESIDE_MIN)
    fd = os.open(path, os.O_RDONLY)
    path.unlink()
    publish.let_go(fd, publish.LET_GO_BESIDE_MIN)
    assert started, "closed in line"
    assert _wait_closed(fd)


def test_without_a_thread_it_closes_in_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import _thread

    def refuse(function: object, args: tuple[object, ...]) -> int:
        raise RuntimeError("can't start new thread")

    monkeypatch.setattr(_thread, "start_new_thread", refuse)
    path = tmp_path / "big"
    path.write_bytes(b"x" * publish.LET_GO_BESIDE_MIN)
    fd = os.open(path, os.O_RDONLY)
    publish.let_go(fd, publish.LET_GO_BESIDE_MIN)
    assert _closed(fd)


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="needs /proc/self/fd")
def test_replacing_a_big_file_leaves_no_handle_open(tmp_path: Path) -> None:
    target = tmp_path / "big.txt"
    target.write_bytes(b"a\n" * (publish.LET_GO_BESIDE_MIN // 2 + 10))
    ws = vfs.open_workspace(str(tmp_path))
    before = _open_fds()
    new = b"b\n" * (publish.LET_GO_BESIDE_MIN // 2 + 20)
    with ws.transaction() as tx:
        tx.write(str(target), new)
    assert target.read_bytes() == new
    deadline = time.monotonic() + 10
    while _open_fds() - before and time.monotonic() < deadline:
        time.sleep(0.005)
    assert not (_open_fds() - before), _open_fds() - before
