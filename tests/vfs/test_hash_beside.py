"""A commit hashes its big pre-images and post-images on other threads while it writes: the
digests must be exactly those hashed one after the other, and a journal built that way must read
back as any other."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import vfs
from vfs import txlog


def test_big_pre_images_get_the_same_digests_as_hashed_in_line() -> None:
    blobs = {0: os.urandom(txlog.HASH_BESIDE_MIN), 3: b"small", 5: os.urandom(txlog.HASH_BESIDE_MIN + 7)}
    wait = txlog.hash_beside(blobs)
    assert wait() == {index: txlog.digest(blob) for index, blob in blobs.items()}
    assert wait() == {index: txlog.digest(blob) for index, blob in blobs.items()}  # asked again: the same


def test_pieces_get_the_digest_of_their_bytes_back_to_back() -> None:
    data = os.urandom(2 * txlog.HASH_BESIDE_MIN)
    view = memoryview(data)
    pieces: list[bytes | memoryview] = [view[:1000], b"new", view[5000:]]
    assert txlog.hash_beside({2: pieces})() == {2: txlog.digest(b"".join(pieces))}


def test_small_blobs_are_hashed_in_line(monkeypatch: pytest.MonkeyPatch) -> None:
    started: list[object] = []
    import _thread

    monkeypatch.setattr(_thread, "start_new_thread", lambda *args: started.append(args))
    assert txlog.hash_beside({0: b"x" * 10})() == {0: txlog.digest(b"x" * 10)}
    assert started == []  # no thread for what is cheaper to hash in line


def test_a_failure_on_the_other_thread_is_hashed_again_by_the_waiter(monkeypatch: pytest.MonkeyPatch) -> None:
    blob = os.urandom(txlog.HASH_BESIDE_MIN)
    real = txlog.digest
    calls: list[int] = []

    def flaky(data: object) -> str:
        calls.append(1)
        if len(calls) == 1:
            raise MemoryError  # the other thread's attempt
        return real(data)  # type: ignore[arg-type]

    monkeypatch.setattr(txlog, "digest", flaky)
    assert txlog.hash_beside({0: blob})() == {0: real(blob)}
    assert len(calls) == 2


def test_a_failure_that_is_not_transient_still_reaches_the_waiter() -> None:
    wait = txlog.hash_beside({0: "text, not bytes" * txlog.HASH_BESIDE_MIN})  # type: ignore[dict-item]
    with pytest.raises(TypeError):
        wait()


def test_without_a_thread_the_waiter_hashes_in_line(monkeypatch: pytest.MonkeyPatch) -> None:
    import _thread

    def refuse(*args: object) -> None:
        raise RuntimeError("can't start new thread")

    monkeypatch.setattr(_thread, "start_new_thread", refuse)
    blob = os.urandom(txlog.HASH_BESIDE_MIN)
    assert txlog.hash_beside({1: blob})() == {1: txlog.digest(blob)}


def test_a_big_edit_journals_its_pre_image_under_its_own_digest(tmp_path: Path) -> None:
    old = os.urandom(3 * txlog.HASH_BESIDE_MIN)
    (tmp_path / "big.bin").write_bytes(old)
    (tmp_path / "other.txt").write_bytes(b"x\n")
    ws = vfs.open_workspace(str(tmp_path))
    with ws.transaction() as tx:  # two targets: a journaled commit
        tx.write("big.bin", old[::-1])
        tx.write("other.txt", b"y\n")
    ws.undo()
    assert (tmp_path / "big.bin").read_bytes() == old  # the record's digest checked out on undo
    ws.close()


class _CountingBlobs(dict[int, bytes]):
    passes = 0

    def items(self):  # type: ignore[override]
        type(self).passes += 1
        return super().items()


def test_asking_once_per_file_does_not_pass_over_every_blob_each_time() -> None:
    """The backend asks for a post-image's digest once per file written: a batch of 2,000 files
    must not walk the 2,000 blobs 2,000 times (that cost a 2,000-file patch ~0.2 s)."""
    blobs = _CountingBlobs({index: b"%d" % index for index in range(2000)})
    wait = txlog.hash_beside(blobs)
    for index in range(2000):
        assert wait()[index] == txlog.digest(b"%d" % index)
    assert _CountingBlobs.passes <= 2, _CountingBlobs.passes  # the big ones picked out, then the rest hashed


@pytest.mark.parametrize("size", [0, 1, 4095, 4096, 4097, 10_000])
def test_holds_at_least_counts_bytes_as_data_size_does(size: int) -> None:
    from array import array

    from backends.base import data_size, holds_at_least

    words = memoryview(array("I", range(512)))  # 2,048 bytes in 512 items: counted in bytes
    data: list[bytes | memoryview] = [b"ab", words, memoryview(b"x" * 2046)]
    assert data_size(data) == 4096
    assert holds_at_least(data, size) == (size <= 4096)
    assert holds_at_least(b"y" * 4096, size) == (size <= 4096)
