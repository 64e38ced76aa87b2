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


def test_a_hash_begun_earlier_is_waited_for_not_hashed_again(monkeypatch: pytest.MonkeyPatch) -> None:
    big, small = os.urandom(txlog.HASH_BESIDE_MIN), b"small"
    begun = txlog.hash_begun(big)
    assert begun is not None and begun() == txlog.digest(big)
    hashed: list[int] = []
    real = txlog.digest
    monkeypatch.setattr(txlog, "digest", lambda data: hashed.append(len(data)) or real(data))
    assert txlog.hash_beside({0: big, 1: small}, {0: begun})() == {0: real(big), 1: real(small)}
    assert hashed == [len(small)]  # the big one's digest came from its earlier hashing


def test_a_small_read_begins_no_hash() -> None:
    assert txlog.hash_begun(b"x" * (txlog.HASH_BESIDE_MIN - 1)) is None


def _edit_big_file(tmp_path: Path, *, also: bool) -> tuple[bytes, bytes]:
    old = os.urandom(2 * txlog.HASH_BESIDE_MIN)
    (tmp_path / "big.bin").write_bytes(old)
    (tmp_path / "other.txt").write_bytes(b"x\n")
    ws = vfs.open_workspace(str(tmp_path))
    with ws.transaction() as tx:
        data = tx.read("big.bin").data  # read first: its pre-image's hash begins here
        tx.write("big.bin", data[:100] + b"edited" + data[100:])
        if also:  # two targets: a journaled commit, else a single-target one
            tx.write("other.txt", b"y\n")
    edited = (tmp_path / "big.bin").read_bytes()
    ws.undo()
    ws.close()
    return old, edited


@pytest.mark.parametrize("also", [False, True], ids=["single", "journaled"])
def test_a_big_file_read_then_edited_records_its_pre_image_under_its_own_digest(tmp_path: Path, also: bool) -> None:
    old, edited = _edit_big_file(tmp_path, also=also)
    assert edited == old[:100] + b"edited" + old[100:]
    assert (tmp_path / "big.bin").read_bytes() == old  # the record's digest checked out on undo


def test_at_most_a_few_reads_are_hashed_ahead_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """A transaction reading many big files starts no thread per file: past the free slots a
    read begins nothing (its pre-image is hashed at commit), and a slot frees when its thread is through."""
    import _thread

    held: list[tuple[object, ...]] = []
    monkeypatch.setattr(_thread, "start_new_thread", lambda function, args: held.append((function, args)))
    blobs = [os.urandom(txlog.HASH_BESIDE_MIN) for _ in range(txlog.HASH_BEGUN_AT_ONCE + 1)]
    begun = [txlog.hash_begun(blob) for blob in blobs]
    assert [b is not None for b in begun] == [True] * txlog.HASH_BEGUN_AT_ONCE + [False]
    function, args = held[0]
    function(*args)  # the first thread runs through: its slot is free again
    again = txlog.hash_begun(blobs[-1])
    assert again is not None
    for function, args in held[1:]:
        function(*args)  # the rest run through, their slots freed for the next tests
    assert [wait() for wait in [*begun[:-1], again] if wait is not None] == [txlog.digest(b) for b in blobs]
