"""How the local backend writes a file's bytes (backends.local.publish.write_all): every layout of
pieces lands byte for byte, short writes included, in few system calls; a file with an fsync to
follow starts its writeback early, and only such a file."""

from __future__ import annotations

import os
import random
from collections.abc import Callable
from pathlib import Path

import pytest

import vfs
from backends.base import WriteData
from backends.local import publish

MiB = 1 << 20


def _layouts() -> dict[str, Callable[[], WriteData]]:
    rng = random.Random(7)
    big = rng.randbytes(5 * MiB + 12_345)
    view = memoryview(big)

    def edited() -> WriteData:  # what a 1,000-hunk edit hands the backend: spans of the old file and new text
        pieces: list[bytes | memoryview] = []
        at = 0
        for _ in range(1000):
            step = rng.randrange(1, 10_000)
            pieces.append(view[at : at + step])
            pieces.append(rng.randbytes(rng.randrange(0, 200)))
            at += step
        pieces.append(view[at:])
        return pieces

    return {
        "nothing": lambda: [],
        "empty": lambda: b"",
        "small": lambda: b"hello\n",
        "one large": lambda: big,
        "one large view": lambda: view[3:],
        "edited": edited,
        "more pieces than one writev takes": lambda: [bytes([i % 251]) * (i % 5) for i in range(3000)],
        "empty pieces": lambda: [b"", b"a", b"", view[:0], b"b", b""],
        "a view of ints": lambda: [b"<", memoryview(bytearray(range(256)) * 4).cast("I"), b">"],
        "large pieces among small": lambda: [b"x" * 10, big, b"y" * 10, view[: 2 * MiB + 1], b"z"],
    }


LAYOUTS = _layouts()


def _expected(data: WriteData) -> bytes:
    if not isinstance(data, list):
        return bytes(data)
    return b"".join(bytes(memoryview(piece).cast("B")) for piece in data)


def _written(path: Path, data: WriteData, *, flushing: bool) -> bytes:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        publish.write_all(fd, data, flushing=flushing)
    finally:
        os.close(fd)
    return path.read_bytes()


@pytest.mark.parametrize("flushing", [False, True], ids=["unflushed", "flushing"])
@pytest.mark.parametrize("layout", LAYOUTS)
def test_every_layout_lands_byte_for_byte(tmp_path: Path, layout: str, flushing: bool) -> None:
    data = LAYOUTS[layout]()
    assert _written(tmp_path / "out", data, flushing=flushing) == _expected(data)


@pytest.mark.parametrize("parts", [3, 97])
@pytest.mark.parametrize(
    "layout", ["edited", "one large", "large pieces among small", "a view of ints", "empty pieces"]
)
def test_short_writes_are_finished(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, layout: str, parts: int) -> None:
    """A write(2) or writev(2) may take fewer bytes than offered (a signal, a nearly full disk):
    the rest follows, none twice and none skipped. Here each call takes at most ~1/parts of the
    file, and never a whole piece of more than a byte."""
    data = LAYOUTS[layout]()
    most = len(_expected(data)) // parts + 1
    real_write = os.write

    def short_write(fd: int, data: bytes | memoryview) -> int:
        view = memoryview(data).cast("B")
        return real_write(fd, view[: min(most, max(1, view.nbytes - 1))])

    def short_writev(fd: int, buffers: list[bytes | memoryview]) -> int:
        joined = b"".join(bytes(memoryview(b).cast("B")) for b in buffers)
        return real_write(fd, joined[: min(most, max(1, len(joined) - 1))])

    monkeypatch.setattr(os, "write", short_write)
    monkeypatch.setattr(os, "writev", short_writev)
    monkeypatch.setattr(publish, "_kernel_handles", lambda: True)  # (the stand-ins pass the kernel's handles on)
    assert _written(tmp_path / "out", data, flushing=True) == _expected(data)


def test_many_pieces_take_few_system_calls(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []
    real_write, real_writev = os.write, os.writev

    def counted_write(fd: int, data: bytes | memoryview) -> int:
        calls.append(1)
        return real_write(fd, data)

    def counted_writev(fd: int, buffers: list[bytes | memoryview]) -> int:
        calls.append(len(buffers))
        return real_writev(fd, buffers)

    monkeypatch.setattr(os, "write", counted_write)
    monkeypatch.setattr(os, "writev", counted_writev)
    monkeypatch.setattr(publish, "_kernel_handles", lambda: True)  # (the stand-ins pass the kernel's handles on)
    data = LAYOUTS["edited"]()
    assert isinstance(data, list)
    assert _written(tmp_path / "out", data, flushing=False) == _expected(data)
    assert sum(calls) == len(data)  # every piece offered once
    assert len(calls) <= 8, calls  # ~5 MiB in batches of about 1 MiB, not a call per piece


class _Kicks:
    """Stands in for libc's sync_file_range: records how much of the file was down at each call."""

    def __init__(self) -> None:
        self.sizes: list[int] = []

    def __call__(self, fd: int, offset: int, length: int, flags: int) -> int:
        assert (offset, length, flags) == (0, 0, 2)  # the whole file, SYNC_FILE_RANGE_WRITE alone
        self.sizes.append(os.fstat(fd).st_size)
        return 0


@pytest.fixture
def kicks(monkeypatch: pytest.MonkeyPatch) -> _Kicks:
    """The backend's sync_file_range, replaced by a recorder for the test."""
    recorder = _Kicks()
    monkeypatch.setattr(publish, "_SYNC_FILE_RANGE", recorder)
    return recorder


@pytest.mark.parametrize("layout", ["edited", "one large", "large pieces among small"])
def test_writeback_starts_early_for_a_file_to_be_flushed(tmp_path: Path, kicks: _Kicks, layout: str) -> None:
    data = LAYOUTS[layout]()
    total = len(_expected(data))
    assert _written(tmp_path / "out", data, flushing=True) == _expected(data)
    assert len(kicks.sizes) >= total // MiB - 2, kicks.sizes  # one per MiB or so
    assert kicks.sizes == sorted(kicks.sizes)
    assert kicks.sizes[0] >= MiB  # not for the first MiB: a small file is flushed whole by the fsync
    assert kicks.sizes[-1] < total  # nor after the last batch: the fsync follows at once


@pytest.mark.parametrize("layout", ["small", "more pieces than one writev takes", "edited"])
def test_no_writeback_is_started_for_a_small_or_unflushed_file(tmp_path: Path, kicks: _Kicks, layout: str) -> None:
    data = LAYOUTS[layout]()
    small = len(_expected(data)) < MiB
    assert _written(tmp_path / "out", data, flushing=small) == _expected(data)
    assert kicks.sizes == []


@pytest.mark.parametrize("fsync", [True, False])
def test_a_commit_starts_the_writeback_of_a_large_file_only_when_durable(
    tmp_path: Path, kicks: _Kicks, fsync: bool
) -> None:
    (tmp_path / "big.bin").write_bytes(b"old\n")
    ws = vfs.open_workspace(str(tmp_path), storage_options={"fsync": fsync})
    new = random.Random(3).randbytes(3 * MiB)
    with ws.transaction() as tx:
        tx.write("big.bin", new)
    assert (tmp_path / "big.bin").read_bytes() == new
    assert (len(kicks.sizes) > 0) is fsync, kicks.sizes


def test_the_kernel_call_is_found_on_linux() -> None:
    """The hint is real where the benchmarks run: libc has sync_file_range (None elsewhere, and
    then the fsync alone does the work)."""
    if os.uname().sysname != "Linux":
        pytest.skip("sync_file_range is Linux's")
    assert publish._SYNC_FILE_RANGE is not None


def test_a_stand_in_os_gets_plain_writes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kicks: _Kicks) -> None:
    """Where ``os.write`` is not the C function (an emulated filesystem's stand-in, which has no
    writev of its own), neither writev nor the libc hint is called: each piece goes through the
    stand-in's write."""
    offered: list[int] = []
    real_write = os.write

    def stand_in_write(fd: int, data: bytes | memoryview) -> int:
        offered.append(memoryview(data).nbytes)
        return real_write(fd, data)

    def no_writev(fd: int, buffers: list[bytes | memoryview]) -> int:
        raise AssertionError("writev called with a stand-in's handle")

    monkeypatch.setattr(os, "write", stand_in_write)
    monkeypatch.setattr(os, "writev", no_writev)
    data = LAYOUTS["edited"]()
    assert isinstance(data, list)
    assert _written(tmp_path / "out", data, flushing=True) == _expected(data)
    assert kicks.sizes == []
    assert sum(offered) == len(_expected(data))
