"""A replaced file's handle is closed on the closer thread (its blocks are freed at that close),
in line where that cannot or must not be; either way no handle is left open and the bytes are the
new ones."""

from __future__ import annotations

import _thread
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


def _replaced(tmp_path: Path, name: str, size: int = 10) -> int:
    """A read handle on a file whose name is gone, as let_go is given."""
    path = tmp_path / name
    path.write_bytes(b"x" * size)
    fd = os.open(path, os.O_RDONLY)
    path.unlink()
    return fd


@pytest.mark.parametrize("size", [10, 3 << 20])
def test_a_replaced_file_is_closed_on_the_closer_thread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, size: int
) -> None:
    closed_by: list[int] = []
    real = publish._close_quietly

    def recording(fd: int) -> None:
        closed_by.append(_thread.get_ident())
        real(fd)

    monkeypatch.setattr(publish, "_close_quietly", recording)
    fd = _replaced(tmp_path, "f", size)
    publish.let_go(fd)
    assert _wait_closed(fd)
    assert closed_by and closed_by[0] != _thread.get_ident(), "closed in line"


def test_many_handles_are_all_closed_by_one_thread(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    closed_by: set[int] = set()
    real = publish._close_quietly

    def recording(fd: int) -> None:
        closed_by.add(_thread.get_ident())
        real(fd)

    monkeypatch.setattr(publish, "_close_quietly", recording)
    fds = [_replaced(tmp_path, f"f{i}") for i in range(500)]
    for fd in fds:
        publish.let_go(fd)
    assert all(_wait_closed(fd) for fd in fds)
    assert len(closed_by) == 1 and _thread.get_ident() not in closed_by, closed_by


def test_a_handle_put_while_the_closer_is_awake_is_closed(tmp_path: Path) -> None:
    """An interrupt between a put's append and its wake-up (or a put racing the closer) leaves
    nothing asleep: the next put wakes the closer, which takes both."""
    pending = publish._Pending()
    first, second, third = (_replaced(tmp_path, name) for name in "abc")
    pending.fds.append(first)  # appended, never woken for (a put cut short)
    pending.put(second)
    pending.put(third)  # a second wake-up while the first is not taken yet: no error
    assert [pending.take(), pending.take(), pending.take()] == [first, second, third]
    assert pending.fds == []
    for fd in (first, second, third):
        publish._close_quietly(fd)


def test_past_the_pending_bound_a_handle_is_closed_in_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    stuck = publish._Pending()  # a closer that takes nothing: every handle given to it waits
    monkeypatch.setattr(publish, "_CLOSER", stuck)
    waiting = [_replaced(tmp_path, f"w{i}") for i in range(publish.LET_GO_PENDING_MAX)]
    try:
        for fd in waiting:
            publish.let_go(fd)
        assert stuck.fds == waiting and not any(_closed(fd) for fd in waiting)
        over = _replaced(tmp_path, "over")
        publish.let_go(over)
        assert _closed(over)
        assert len(stuck.fds) == publish.LET_GO_PENDING_MAX
    finally:
        for fd in waiting:
            publish._close_quietly(fd)


def test_without_a_thread_it_closes_in_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(function: object, args: tuple[object, ...]) -> int:
        raise RuntimeError("can't start new thread")

    monkeypatch.setattr(publish, "_CLOSER", None)
    monkeypatch.setattr(_thread, "start_new_thread", refuse)
    fd = _replaced(tmp_path, "f")
    publish.let_go(fd)
    assert _closed(fd)
    assert publish._CLOSER is None  # (tried again at the next handle)


def test_a_stand_in_os_closes_in_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(publish, "_kernel_handles", lambda: False)
    stuck = publish._Pending()
    monkeypatch.setattr(publish, "_CLOSER", stuck)
    fd = _replaced(tmp_path, "f")
    publish.let_go(fd)
    assert _closed(fd) and not stuck.fds


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # (3.12+: fork of a process with threads)
def test_a_forked_child_closes_what_its_parent_had_queued(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    stuck = publish._Pending()
    monkeypatch.setattr(publish, "_CLOSER", stuck)
    fd = _replaced(tmp_path, "f")
    publish.let_go(fd)
    assert stuck.fds == [fd]
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: its copy of the handle is closed, and a closer of its own is made
        try:
            answer = b"closed" if _closed(fd) and publish._CLOSER is None else b"open"
            os.write(write, answer)
        finally:
            os._exit(0)
    os.close(write)
    try:
        answer = os.read(read, 16)
    finally:
        os.close(read)
        os.waitpid(pid, 0)
        publish._close_quietly(fd)
    assert answer == b"closed"


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="needs /proc/self/fd")
@pytest.mark.parametrize(("files", "size"), [(1, 1 << 20), (300, 100)])
def test_replacing_files_leaves_no_handle_open(tmp_path: Path, files: int, size: int) -> None:
    for i in range(files):
        (tmp_path / f"f{i}.txt").write_bytes(b"a" * size)
    ws = vfs.open_workspace(str(tmp_path))
    before = _open_fds()
    new = [f"{i}".encode() * size for i in range(files)]
    with ws.transaction() as tx:
        for i in range(files):
            tx.write(str(tmp_path / f"f{i}.txt"), new[i])
    assert [(tmp_path / f"f{i}.txt").read_bytes() for i in range(files)] == new
    deadline = time.monotonic() + 10
    while _open_fds() - before and time.monotonic() < deadline:
        time.sleep(0.005)
    assert not (_open_fds() - before), _open_fds() - before
