"""The backend contract as a test suite that any backend can run, shipped with the package.

vfs trusts a backend only for what :mod:`backends.base` states; this module checks those statements
primitive by primitive (the way fsspec ships its abstract tests for filesystem implementers). It
needs pytest and is imported by tests only (``import vfs`` never loads it).

Use it from a test module::

    import pytest
    from backends.testing import BackendContract

    class TestMyBackend(BackendContract):
        @pytest.fixture
        def backend(self, tmp_path):
            backend = MyBackend(...)  # a fresh, empty root for every test
            yield backend
            backend.close()

Every test takes the ``backend`` fixture and nothing else from the caller, writes below the root it
is given, and reads only what it wrote. Tests of an optional feature skip where the backend's
:class:`~backends.base.Capabilities` (or the absence of :class:`~backends.base.BatchBackend`)
says the feature is not offered, so a skip is a declared limitation, never a silent pass.

One behaviour depends on how a backend builds versions rather than on a capability: override the
``identical_rewrite_changes_version`` fixture to return ``False`` when versions are derived from
the content (a content hash, an S3 ETag without bucket versioning). The suite then checks the weaker
promise those versions give instead: a version that still matches denotes exactly the same bytes.
"""

from __future__ import annotations

import errno
import threading
import tracemalloc
from collections.abc import Iterator
from typing import Any

import pytest

from backends.base import (
    Backend,
    BadRoot,
    BatchBackend,
    Capabilities,
    DeleteItem,
    FileInfo,
    PreconditionFailed,
    TooBig,
    Vanished,
    WriteItem,
    content_digest,
)


def _keys(infos: list[FileInfo]) -> set[str]:
    return {info.key for info in infos}


def _batch(backend: Backend) -> BatchBackend:
    if not isinstance(backend, BatchBackend):
        pytest.skip(f"{type(backend).__name__} has no batch methods (BatchBackend is optional)")
    return backend


def _real_directories(backend: Backend) -> None:
    if not backend.capabilities.real_directories:
        pytest.skip("directories are key prefixes here (Capabilities.real_directories is False)")


class BackendContract:
    """The contract of :class:`backends.base.Backend` (and :class:`BatchBackend` where offered).

    Subclass it as ``Test...`` and override the ``backend`` fixture; see the module docstring."""

    @pytest.fixture
    def backend(self) -> Iterator[Backend]:
        """A fresh backend over an empty root; override it (and close the backend afterwards)."""
        raise NotImplementedError("override the `backend` fixture to return a fresh, empty backend")
        yield  # pragma: no cover - a generator, like the fixtures that override it

    @pytest.fixture
    def identical_rewrite_changes_version(self) -> bool:
        """Whether rewriting identical bytes gives a new version (see the module docstring)."""
        return True

    # -- identity -----------------------------------------------------------------------------

    @pytest.fixture
    def bad_root(self) -> Iterator[Backend | None]:
        """A backend over a root that cannot hold a workspace (a missing directory, bucket or
        container), or None where every root can (memory). Override it to check the refusal."""
        yield None

    def test_a_fresh_root_passes_check_root(self, backend: Backend) -> None:
        backend.check_root()  # raises BadRoot (or anything) if the fresh root were refused
        backend.write(WriteItem("a.txt", b"a"))
        backend.check_root()  # a root holding files is still one
        assert backend.read("a.txt")[0] == b"a"

    def test_a_bad_root_is_refused_by_check_root(self, bad_root: Backend | None) -> None:
        if bad_root is None:
            pytest.skip("every root can hold a workspace here (override the `bad_root` fixture otherwise)")
        with pytest.raises(BadRoot) as caught:
            bad_root.check_root()
        # said of the root as the caller gave it (vfs fills it in): FS_BAD_ROOT's one message
        assert "{root}" in caught.value.sentence
        assert caught.value.said_of("ROOT") != caught.value.sentence

    def test_declares_the_protocol(self, backend: Backend) -> None:
        assert isinstance(backend, Backend)
        assert isinstance(backend.capabilities, Capabilities)
        assert isinstance(backend.name, str) and backend.name
        assert isinstance(backend.describe(), str) and backend.describe()

    # -- stat / read / write ------------------------------------------------------------------

    def test_a_fresh_root_is_an_empty_directory(self, backend: Backend) -> None:
        root = backend.stat("")
        assert root is not None and root.kind == "directory"
        assert backend.list("") == []
        assert backend.stat("a.txt") is None

    def test_write_then_stat_and_read_describe_the_same_bytes(self, backend: Backend) -> None:
        written = backend.write(WriteItem("a.txt", b"alpha\n"))
        assert written.key == "a.txt" and written.kind == "file" and written.size == 6
        assert written.version is not None
        seen = backend.stat("a.txt")
        assert seen is not None and (seen.kind, seen.size, seen.version) == ("file", 6, written.version)
        data, info = backend.read("a.txt")
        assert data == b"alpha\n"
        assert (info.key, info.size, info.version) == ("a.txt", 6, written.version)

    def test_write_accepts_pieces_stored_back_to_back(self, backend: Backend) -> None:
        # vfs's journal records are a header plus pre-images it already holds, passed as a list
        info = backend.write(WriteItem("rec.bin", [b"head|", b"", b"body"]))
        assert info.size == 9
        assert backend.read("rec.bin")[0] == b"head|body"

    def test_empty_file(self, backend: Backend) -> None:
        backend.write(WriteItem("empty", b""))
        assert backend.read("empty", limit=0)[0] == b""
        seen = backend.stat("empty")
        assert seen is not None and seen.kind == "file" and seen.size == 0

    def test_read_of_a_missing_file_is_file_not_found(self, backend: Backend) -> None:
        with pytest.raises(FileNotFoundError):
            backend.read("missing.txt")

    def test_read_of_a_directory_is_refused(self, backend: Backend) -> None:
        _real_directories(backend)
        backend.mkdir("d")
        with pytest.raises(IsADirectoryError):
            backend.read("d")

    def test_replace_changes_bytes_and_version(self, backend: Backend) -> None:
        first = backend.write(WriteItem("a.txt", b"one"))
        # same size, most likely the same clock tick: a version made of size and mtime would not move
        second = backend.write(WriteItem("a.txt", b"two"))
        assert second.version != first.version
        data, info = backend.read("a.txt")
        assert (data, info.version) == (b"two", second.version)
        assert not backend.matches("a.txt", first.version)
        assert backend.matches("a.txt", second.version)

    def test_identical_rewrite(self, backend: Backend, identical_rewrite_changes_version: bool) -> None:
        first = backend.write(WriteItem("a.txt", b"same"))
        second = backend.write(WriteItem("a.txt", b"same"))
        if identical_rewrite_changes_version:
            # vfs tells "someone rewrote this file" from "nothing happened" by the version alone
            assert second.version != first.version
            assert not backend.matches("a.txt", first.version)
        else:
            # content-derived versions: still matching is right, because it names the same bytes
            assert second.version == first.version
            assert backend.matches("a.txt", first.version)
        assert backend.read("a.txt")[0] == b"same"

    def test_unversioned_write_still_writes(self, backend: Backend) -> None:
        # versioned=False only allows the backend to skip computing the returned version
        info = backend.write(WriteItem("rec.bin", b"\x00record", versioned=False))
        assert info.key == "rec.bin"
        data, read_info = backend.read("rec.bin")
        assert data == b"\x00record" and read_info.version is not None

    def test_digest_hint_is_accepted_and_gives_a_checkable_version(self, backend: Backend) -> None:
        data = b"hashed once\n"
        info = backend.write(WriteItem("a.txt", data, digest=content_digest(data)))
        assert backend.read("a.txt")[0] == data
        assert backend.matches("a.txt", info.version)
        backend.write(WriteItem("a.txt", b"HASHED ONCE\n"))
        assert not backend.matches("a.txt", info.version)

    def test_a_backend_that_sends_ahead_has_both_halves(self, backend: Backend) -> None:
        """``Capabilities.sends_ahead`` promises ``write_ahead`` and ``drop_ahead``. Under the
        commit lock (where a commit sends its journal ahead), bytes sent ahead are seen by no one
        until the write completes them; dropped, they leave nothing; written, they land."""
        if not backend.capabilities.sends_ahead:
            assert not callable(getattr(backend, "write_ahead", None)), "write_ahead but not declared"
            return
        sender: Any = backend  # (the two methods are optional: not in the Backend protocol)
        with backend.lock("meta/lock", timeout=5):
            dropped = WriteItem("ahead-dropped.bin", b"d" * (1 << 16), if_absent=True)
            sender.write_ahead(dropped)
            assert backend.stat(dropped.key) is None  # sent ahead is not written
            sender.drop_ahead(dropped.key)
            kept = WriteItem("ahead-kept.bin", b"k" * (1 << 16), if_absent=True)
            sender.write_ahead(kept)
            assert backend.stat(kept.key) is None
            backend.write(kept)
            assert backend.read(kept.key)[0] == kept.data
        assert backend.stat(dropped.key) is None

    def test_digest_hint_may_be_a_callable_still_computing_it(self, backend: Backend) -> None:
        data = b"hashed beside the write\n"
        asked: list[str] = []

        def later() -> str:
            asked.append(content_digest(data))
            return asked[-1]

        info = backend.write(WriteItem("b.txt", data, digest=later))
        assert len(asked) <= 1 and backend.read("b.txt")[0] == data
        assert backend.matches("b.txt", info.version)
        backend.write(WriteItem("b.txt", b"HASHED BESIDE THE WRITE\n"))
        assert not backend.matches("b.txt", info.version)

    def test_non_durable_write_and_delete_are_accepted(self, backend: Backend) -> None:
        # durable=False may skip the flush; the change itself must still happen, atomically
        info = backend.write(WriteItem("h.bin", b"history", durable=False))
        assert backend.read("h.bin")[0] == b"history"
        assert backend.matches("h.bin", info.version)
        backend.delete(DeleteItem("h.bin", durable=False))
        assert backend.stat("h.bin") is None

    def test_write_needs_its_parent_directory(self, backend: Backend) -> None:
        _real_directories(backend)
        with pytest.raises(FileNotFoundError):
            backend.write(WriteItem("no/such/dir.txt", b"x"))
        assert backend.stat("no") is None
        backend.write(WriteItem("f", b"file"))
        with pytest.raises(NotADirectoryError):
            backend.write(WriteItem("f/child.txt", b"x"))
        assert backend.read("f")[0] == b"file"

    def test_write_onto_a_directory_is_refused(self, backend: Backend) -> None:
        _real_directories(backend)
        backend.mkdir("d")
        with pytest.raises(IsADirectoryError):
            backend.write(WriteItem("d", b"x"))
        seen = backend.stat("d")
        assert seen is not None and seen.kind == "directory"

    # -- size limit ---------------------------------------------------------------------------

    def test_read_within_the_limit(self, backend: Backend) -> None:
        backend.write(WriteItem("a.txt", b"12345"))
        assert backend.read("a.txt", limit=5)[0] == b"12345"

    def test_read_over_the_limit_is_too_big(self, backend: Backend) -> None:
        backend.write(WriteItem("a.txt", b"123456"))
        with pytest.raises(TooBig) as info:
            backend.read("a.txt", limit=5)
        assert (info.value.size, info.value.limit, info.value.errno) == (6, 5, errno.EFBIG)

    def test_too_big_is_refused_before_reading(self, backend: Backend) -> None:
        """A 6 GiB file must cost a stat, not 6 GiB of memory: allocations during the refused
        read stay far below the file's size (a backend that reads first allocates all of it, and
        so does one whose size check is a ``stat`` that hashes the content for the version).
        Every allocation of the process counts, so a wiring whose store server runs inside the
        test process (an in-process S3 server) has to leave this test out."""
        size = 4 << 20
        backend.write(WriteItem("big.bin", b"x" * size))
        was_tracing = tracemalloc.is_tracing()
        if not was_tracing:
            tracemalloc.start()
        tracemalloc.reset_peak()
        try:
            with pytest.raises(TooBig):
                backend.read("big.bin", limit=1024)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            if not was_tracing:
                tracemalloc.stop()
        assert peak < size // 2, f"{peak} bytes allocated to refuse a {size}-byte file"

    # -- delete -------------------------------------------------------------------------------

    def test_delete_removes_the_file_and_nothing_else(self, backend: Backend) -> None:
        backend.write(WriteItem("a.txt", b"a"))
        backend.write(WriteItem("b.txt", b"b"))
        backend.delete(DeleteItem("a.txt"))
        assert backend.stat("a.txt") is None
        assert _keys(backend.list("")) == {"b.txt"}

    def test_delete_of_a_missing_file_is_file_not_found(self, backend: Backend) -> None:
        with pytest.raises(FileNotFoundError):
            backend.delete(DeleteItem("missing.txt"))

    def test_delete_of_a_directory_is_refused(self, backend: Backend) -> None:
        _real_directories(backend)
        backend.mkdir("d")
        with pytest.raises(IsADirectoryError):
            backend.delete(DeleteItem("d"))
        assert backend.stat("d") is not None

    # -- preconditions ------------------------------------------------------------------------

    def test_if_absent_creates_a_new_file(self, backend: Backend) -> None:
        info = backend.write(WriteItem("new.txt", b"mine", if_absent=True))
        assert backend.read("new.txt")[0] == b"mine"
        assert backend.matches("new.txt", info.version)

    def test_if_absent_on_an_existing_file_fails_with_eexist(self, backend: Backend) -> None:
        backend.write(WriteItem("a.txt", b"theirs"))
        with pytest.raises(PreconditionFailed) as info:
            backend.write(WriteItem("a.txt", b"mine", if_absent=True))
        assert info.value.errno == errno.EEXIST
        assert not isinstance(info.value, Vanished)
        assert backend.read("a.txt")[0] == b"theirs"

    def test_if_version_current_replaces(self, backend: Backend) -> None:
        first = backend.write(WriteItem("a.txt", b"one"))
        second = backend.write(WriteItem("a.txt", b"two", if_version=first.version))
        assert backend.read("a.txt")[0] == b"two"
        assert backend.matches("a.txt", second.version)

    def test_keep_replaced_keeps_the_old_bytes_or_nothing(self, backend: Backend) -> None:
        """Best effort, on any backend: the write lands as without the option, and the key asked
        for then holds exactly the replaced bytes or nothing (nothing at all without the
        capability, and after a write refused by its condition)."""
        backend.mkdir("kept")
        first = backend.write(WriteItem("a.txt", b"one" * 1000))
        stale = WriteItem("a.txt", b"never", if_version="not-a-version", keep_replaced="kept/refused")
        with pytest.raises(PreconditionFailed):
            backend.write(stale)
        second = backend.write(WriteItem("a.txt", b"two", if_version=first.version, keep_replaced="kept/one"))
        assert backend.read("a.txt")[0] == b"two"
        assert backend.matches("a.txt", second.version)
        assert backend.stat("kept/refused") is None
        kept = backend.stat("kept/one")
        if kept is not None:
            assert backend.capabilities.keeps_replaced
            assert backend.read("kept/one")[0] == b"one" * 1000
        assert _keys(backend.list("")) == {"a.txt", "kept"}

    def test_stale_if_version_fails_with_estale(self, backend: Backend) -> None:
        first = backend.write(WriteItem("a.txt", b"one"))
        backend.write(WriteItem("a.txt", b"theirs"))
        with pytest.raises(PreconditionFailed) as info:
            backend.write(WriteItem("a.txt", b"mine", if_version=first.version))
        assert info.value.errno == errno.ESTALE
        assert not isinstance(info.value, Vanished)
        assert backend.read("a.txt")[0] == b"theirs"

    def test_if_version_on_a_vanished_file_is_vanished(self, backend: Backend) -> None:
        first = backend.write(WriteItem("a.txt", b"one"))
        backend.delete(DeleteItem("a.txt"))
        with pytest.raises(Vanished) as info:
            backend.write(WriteItem("a.txt", b"mine", if_version=first.version))
        # vfs reports "file no longer exists" from this, and callers catching the builtin still work
        assert isinstance(info.value, FileNotFoundError)
        assert isinstance(info.value, PreconditionFailed)
        assert backend.stat("a.txt") is None  # a conditional replace never creates

    def test_conditional_delete(self, backend: Backend) -> None:
        first = backend.write(WriteItem("a.txt", b"one"))
        second = backend.write(WriteItem("a.txt", b"two"))
        with pytest.raises(PreconditionFailed) as info:
            backend.delete(DeleteItem("a.txt", if_version=first.version))
        assert info.value.errno == errno.ESTALE and not isinstance(info.value, Vanished)
        assert backend.read("a.txt")[0] == b"two"
        backend.delete(DeleteItem("a.txt", if_version=second.version))
        assert backend.stat("a.txt") is None
        with pytest.raises(Vanished) as gone:
            backend.delete(DeleteItem("a.txt", if_version=second.version))
        assert isinstance(gone.value, FileNotFoundError)

    # -- matches ------------------------------------------------------------------------------

    def test_matches_follows_every_change(self, backend: Backend) -> None:
        assert backend.matches("a.txt", None)  # None: still absent
        info = backend.write(WriteItem("a.txt", b"one"))
        assert not backend.matches("a.txt", None)
        assert backend.matches("a.txt", info.version)
        assert not backend.matches("b.txt", info.version)  # a version belongs to its key's bytes
        backend.delete(DeleteItem("a.txt"))
        assert not backend.matches("a.txt", info.version)
        assert backend.matches("a.txt", None)

    # -- modes --------------------------------------------------------------------------------

    def test_modes_are_stored_and_kept(self, backend: Backend) -> None:
        if not backend.capabilities.modes:
            pytest.skip("no file modes here (Capabilities.modes is False)")
        backend.write(WriteItem("run.sh", b"#!/bin/sh\n", mode=0o751))
        seen = backend.stat("run.sh")
        assert seen is not None and seen.mode == 0o751
        backend.write(WriteItem("run.sh", b"#!/bin/sh\necho\n"))  # mode None keeps the file's mode
        seen = backend.stat("run.sh")
        assert seen is not None and seen.mode == 0o751
        backend.write(WriteItem("run.sh", b"plain\n", mode=0o600))
        assert backend.read("run.sh")[1].mode == 0o600

    # -- directories --------------------------------------------------------------------------

    def test_list_gives_direct_children_only(self, backend: Backend) -> None:
        backend.mkdir("a")
        backend.mkdir("a/b")
        backend.write(WriteItem("a/b/deep.txt", b"deep"))
        backend.write(WriteItem("a/x.txt", b"xx"))
        backend.write(WriteItem("top.txt", b"t"))
        assert _keys(backend.list("")) == {"a", "top.txt"}
        children = {info.key: info for info in backend.list("a")}
        assert set(children) == {"a/b", "a/x.txt"}
        assert children["a/b"].kind == "directory"
        assert (children["a/x.txt"].kind, children["a/x.txt"].size, children["a/x.txt"].name) == ("file", 2, "x.txt")
        assert _keys(backend.list("a/b")) == {"a/b/deep.txt"}

    def test_list_follows_rewrites_deletes_and_rmdirs(self, backend: Backend) -> None:
        # what a backend indexes to list a folder without scanning everything (memory's prefix
        # index) must follow every change, at every level
        backend.mkdir("d")
        backend.mkdir("d/e")
        backend.write(WriteItem("d/e/f.txt", b"f"))
        backend.write(WriteItem("d/g.txt", b"g"))
        backend.write(WriteItem("d/g.txt", b"g2"))  # a rewrite is not a second child
        assert [info.key for info in backend.list("d/e")] == ["d/e/f.txt"]
        backend.delete(DeleteItem("d/e/f.txt"))
        assert backend.list("d/e") == []
        backend.rmdir("d/e")
        assert [info.key for info in backend.list("d")] == ["d/g.txt"]
        backend.mkdir("d/e")  # made again: listed once
        assert sorted(info.key for info in backend.list("d")) == ["d/e", "d/g.txt"]

    def test_list_errors(self, backend: Backend) -> None:
        _real_directories(backend)
        with pytest.raises(FileNotFoundError):
            backend.list("missing")
        backend.write(WriteItem("f.txt", b"f"))
        with pytest.raises(NotADirectoryError):
            backend.list("f.txt")

    def test_mkdir_and_rmdir(self, backend: Backend) -> None:
        backend.mkdir("d")
        seen = backend.stat("d")
        assert seen is not None and seen.kind == "directory"
        assert backend.list("d") == []
        assert _keys(backend.list("")) == {"d"}  # an empty directory is listed
        with pytest.raises(FileExistsError):
            backend.mkdir("d")
        backend.rmdir("d")
        assert backend.stat("d") is None
        with pytest.raises(FileNotFoundError):
            backend.rmdir("d")

    def test_rmdir_refuses_a_non_empty_directory(self, backend: Backend) -> None:
        backend.mkdir("d")
        backend.write(WriteItem("d/f.txt", b"f"))
        with pytest.raises(OSError) as info:
            backend.rmdir("d")
        assert info.value.errno == errno.ENOTEMPTY
        assert backend.read("d/f.txt")[0] == b"f"

    def test_mkdir_needs_its_parent(self, backend: Backend) -> None:
        _real_directories(backend)
        with pytest.raises(FileNotFoundError):
            backend.mkdir("no/such")
        assert backend.stat("no") is None

    # -- resolve and lock ---------------------------------------------------------------------

    def test_resolve_of_a_plain_key_is_the_key(self, backend: Backend) -> None:
        backend.mkdir("d")
        backend.write(WriteItem("d/f.txt", b"f"))
        assert backend.resolve("d/f.txt") == "d/f.txt"
        assert backend.resolve("d") == "d"

    def test_lock_is_exclusive_and_released(self, backend: Backend) -> None:
        backend.mkdir("meta")
        outcome: list[BaseException | None] = []

        def contend() -> None:
            try:
                with backend.lock("meta/lock", timeout=0.2):
                    outcome.append(None)
            except TimeoutError as exc:
                outcome.append(exc)

        with backend.lock("meta/lock", timeout=5):
            # another thread cannot get it while it is held (it gives up after its timeout)
            contender = threading.Thread(target=contend)
            contender.start()
            contender.join()
        assert len(outcome) == 1 and isinstance(outcome[0], TimeoutError)
        with backend.lock("meta/lock", timeout=5):  # released on exit
            pass

    # -- batches (optional) ---------------------------------------------------------------------

    def test_stat_many_is_aligned(self, backend: Backend) -> None:
        batch = _batch(backend)
        backend.mkdir("d")
        backend.write(WriteItem("a.txt", b"a"))
        results = batch.stat_many(["a.txt", "missing", "d"])
        assert len(results) == 3
        a, missing, d = results
        assert isinstance(a, FileInfo) and a.key == "a.txt" and a.kind == "file"
        assert missing is None
        assert isinstance(d, FileInfo) and d.kind == "directory"

    def test_read_many_reports_each_miss_in_its_slot(self, backend: Backend) -> None:
        batch = _batch(backend)
        backend.write(WriteItem("a.txt", b"a"))
        backend.write(WriteItem("b.txt", b"bb"))
        results = batch.read_many(["b.txt", "missing", "a.txt"])
        assert len(results) == 3
        b, missing, a = results
        assert isinstance(b, tuple) and b[0] == b"bb" and b[1].key == "b.txt"
        assert isinstance(missing, FileNotFoundError)
        assert isinstance(a, tuple) and a[0] == b"a" and a[1].key == "a.txt"

    def test_read_many_refuses_what_is_over_the_limit_in_its_slot(self, backend: Backend) -> None:
        batch = _batch(backend)
        backend.write(WriteItem("small.txt", b"12345"))
        backend.write(WriteItem("big.txt", b"123456"))
        small, big = batch.read_many(["small.txt", "big.txt"], limit=5)
        assert isinstance(small, tuple) and small[0] == b"12345"
        assert isinstance(big, TooBig) and (big.size, big.limit) == (6, 5)

    def test_write_many_keeps_going_past_failures(self, backend: Backend) -> None:
        batch = _batch(backend)
        old = backend.write(WriteItem("stale.txt", b"old"))
        backend.write(WriteItem("stale.txt", b"theirs"))
        backend.write(WriteItem("taken.txt", b"theirs"))
        items = [
            WriteItem("new1.txt", b"1"),
            WriteItem("taken.txt", b"mine", if_absent=True),
            WriteItem("stale.txt", b"mine", if_version=old.version),
            WriteItem("new2.txt", b"2", durable=False, digest=content_digest(b"2")),
        ]
        results: list[Any] = list(batch.write_many(items))
        assert len(results) == 4
        assert isinstance(results[0], FileInfo) and backend.matches("new1.txt", results[0].version)
        assert isinstance(results[1], PreconditionFailed) and results[1].errno == errno.EEXIST
        assert isinstance(results[2], PreconditionFailed) and results[2].errno == errno.ESTALE
        assert isinstance(results[3], FileInfo) and backend.matches("new2.txt", results[3].version)
        assert backend.read("taken.txt")[0] == b"theirs"
        assert backend.read("stale.txt")[0] == b"theirs"
        assert backend.read("new2.txt")[0] == b"2"

    def test_delete_many_keeps_going_past_failures(self, backend: Backend) -> None:
        batch = _batch(backend)
        old = backend.write(WriteItem("stale.txt", b"old"))
        backend.write(WriteItem("stale.txt", b"theirs"))
        backend.write(WriteItem("a.txt", b"a"))
        backend.write(WriteItem("b.txt", b"b"))
        results = batch.delete_many(
            [
                DeleteItem("a.txt"),
                DeleteItem("missing.txt"),
                DeleteItem("stale.txt", if_version=old.version),
                DeleteItem("b.txt", durable=False),
            ]
        )
        assert len(results) == 4
        assert results[0] is None and results[3] is None
        assert isinstance(results[1], FileNotFoundError)
        assert isinstance(results[2], PreconditionFailed) and results[2].errno == errno.ESTALE
        assert _keys(backend.list("")) == {"stale.txt"}

    def test_matches_many_is_aligned(self, backend: Backend) -> None:
        batch = _batch(backend)
        old = backend.write(WriteItem("a.txt", b"one"))
        new = backend.write(WriteItem("a.txt", b"two"))
        results = batch.matches_many(
            [("a.txt", new.version), ("a.txt", old.version), ("missing", None), ("a.txt", None)]
        )
        assert results == [True, False, True, False]


__all__ = ["BackendContract"]


# -- the expiring commit lock (a compare-and-swap lease) ----------------------------------------

LEASE_KEY = ".vfs/lock"


class LeaseContract:
    """The commit lock of a backend whose lock can expire (``Capabilities.lock_can_expire``: a
    :class:`backends.lease.CasLease` on the store): exclusion, renewal, expiry, takeover, loss.

    The caller provides ``make_client``: a fixture returning ``make(same_as=None, **tuning)``,
    a backend on a fresh, empty root, or with ``same_as`` a second client of that backend's root;
    ``tuning`` names the lease options without their ``vfs_`` prefix (``lease_ttl``,
    ``clock_skew``). Planted leases are written through the backend itself, as another client's
    lease body would be."""

    @pytest.fixture
    def make_client(self) -> Any:  # pragma: no cover - provided by the caller
        raise NotImplementedError

    @staticmethod
    def body(backend: Backend) -> dict[str, Any]:
        import json

        parsed: dict[str, Any] = json.loads(backend.read(LEASE_KEY)[0])
        return parsed

    @staticmethod
    def plant(backend: Backend, body: bytes | dict[str, Any]) -> None:
        import json

        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        backend.write(WriteItem(LEASE_KEY, data))

    def test_acquire_creates_lease_and_release_removes_it(self, make_client: Any) -> None:
        import time

        be = make_client(lease_ttl=30)
        lease = be.lock(LEASE_KEY, timeout=5)
        with lease:
            body = self.body(be)
            assert body["owner"] == lease.owner
            assert float(body["expires_at"]) > time.time() + 20
            assert lease.held
        assert be.stat(LEASE_KEY) is None
        assert not lease.lost

    def test_second_client_times_out_while_lease_is_held(self, make_client: Any) -> None:
        a = make_client(lease_ttl=30)
        b = make_client(same_as=a, lease_ttl=30)
        with a.lock(LEASE_KEY, timeout=5), pytest.raises(TimeoutError), b.lock(LEASE_KEY, timeout=0.6):
            pytest.fail("acquired a lease that another client holds")
        with b.lock(LEASE_KEY, timeout=2):  # once released, the other client gets it at once
            assert b.stat(LEASE_KEY) is not None

    def test_lease_excludes_concurrent_holders(self, make_client: Any) -> None:
        import time

        first = make_client(lease_ttl=30)
        clients = [first] + [make_client(same_as=first, lease_ttl=30) for _ in range(3)]
        inside = max_inside = entries = 0
        guard = threading.Lock()
        errors: list[BaseException] = []

        def worker(be: Backend) -> None:
            nonlocal inside, max_inside, entries
            try:
                for _ in range(3):
                    with be.lock(LEASE_KEY, timeout=30):
                        with guard:
                            inside += 1
                            entries += 1
                            max_inside = max(max_inside, inside)
                        time.sleep(0.02)
                        with guard:
                            inside -= 1
            except BaseException as exc:  # noqa: BLE001 - reported below
                errors.append(exc)

        _run_threads(worker, clients)
        assert (errors, entries, max_inside) == ([], 12, 1)

    def test_renewal_keeps_a_live_lease(self, make_client: Any) -> None:
        a = make_client(lease_ttl=0.9, clock_skew=0)
        b = make_client(same_as=a, lease_ttl=0.9, clock_skew=0)
        lease = a.lock(LEASE_KEY, timeout=5)
        with lease:
            first = a.stat(LEASE_KEY)
            # held for several lease times: the renewals must keep b from taking over
            with pytest.raises(TimeoutError), b.lock(LEASE_KEY, timeout=2.5):
                pytest.fail("took over a lease that is being renewed")
            assert lease.renewals >= 3
            now = a.stat(LEASE_KEY)
            assert first is not None and now is not None and now.version != first.version
            assert self.body(a)["owner"] == lease.owner
        assert not lease.lost

    def test_expired_lease_of_a_dead_holder_is_taken_over(self, make_client: Any) -> None:
        import time

        be = make_client(lease_ttl=30, clock_skew=1)
        self.plant(be, {"owner": "dead-client", "expires_at": time.time() - 5, "ttl": 30})
        lease = be.lock(LEASE_KEY, timeout=5)
        with lease:
            assert lease.took_over
            assert self.body(be)["owner"] == lease.owner
        assert be.stat(LEASE_KEY) is None

    def test_unrenewed_lease_is_taken_over_after_ttl_without_trusting_clocks(self, make_client: Any) -> None:
        import time

        be = make_client(lease_ttl=0.8, clock_skew=0)
        # a holder whose clock says "valid for an hour" but which never renews
        self.plant(be, {"owner": "frozen", "expires_at": time.time() + 3600, "ttl": 0.8})
        started = time.monotonic()
        lease = be.lock(LEASE_KEY, timeout=10)
        with lease:
            assert time.monotonic() - started >= 0.8  # it waited a lease time of its own clock
            assert lease.took_over
            assert self.body(be)["owner"] != "frozen"

    def test_garbage_lease_is_taken_over_after_ttl(self, make_client: Any) -> None:
        be = make_client(lease_ttl=0.5)
        self.plant(be, b"not json")
        lease = be.lock(LEASE_KEY, timeout=10)
        with lease:
            assert lease.took_over

    def test_takeover_race_has_exactly_one_winner(self, make_client: Any) -> None:
        import time

        base = make_client(lease_ttl=30, clock_skew=0)
        clients = [make_client(same_as=base, lease_ttl=30, clock_skew=0) for _ in range(4)]
        self.plant(base, {"owner": "dead", "expires_at": time.time() - 60})
        barrier = threading.Barrier(len(clients))
        outcomes: list[str] = []
        holders: list[Any] = []
        guard = threading.Lock()

        def contend(be: Backend) -> None:
            lease: Any = be.lock(LEASE_KEY, timeout=0.5)
            barrier.wait()
            try:
                lease.acquire()
            except TimeoutError:
                with guard:
                    outcomes.append("timeout")
                return
            with guard:
                outcomes.append("won")
                holders.append(lease)

        _run_threads(contend, clients)
        try:
            assert sorted(outcomes) == ["timeout"] * 3 + ["won"]
            assert holders[0].took_over
            assert self.body(base)["owner"] == holders[0].owner
        finally:
            for holder in holders:
                holder.release()

    def test_stalled_holder_loses_lease_is_told_and_changes_nothing(self, make_client: Any) -> None:
        """A holder that stalled past its lease and wakes up under another's lease learns it, and
        each change it tries is refused before it is sent (the lease is checked right before each
        send attempt)."""
        from backends.lease import LeaseLost

        a = make_client(lease_ttl=0.6, clock_skew=0)
        a.write(WriteItem("f.txt", b"one"))
        b = make_client(same_as=a, lease_ttl=0.6, clock_skew=0)
        lease: Any = a.lock(LEASE_KEY, timeout=5)
        with pytest.raises(LeaseLost), lease:
            lease._stop.set()  # a stall: the renewal thread stops, the holder goes on
            lease._thread.join()
            with b.lock(LEASE_KEY, timeout=10):
                assert self.body(b)["owner"] != lease.owner
                with pytest.raises(LeaseLost):
                    a.write(WriteItem("f.txt", b"late"))
                with pytest.raises(LeaseLost):
                    a.delete(DeleteItem("f.txt"))
                assert b.read("f.txt")[0] == b"one"
                assert not lease.renew()
                assert lease.lost
        # the loser's release did not delete the new holder's lease (b released it itself); asked
        # of b, whose next request follows its own release (a backend may send a release without
        # waiting for it: another client can see the lease a moment longer, and waits it out)
        assert b.stat(LEASE_KEY) is None

    def test_close_releases_held_leases(self, make_client: Any) -> None:
        be = make_client(lease_ttl=30)
        lease: Any = be.lock(LEASE_KEY, timeout=5).acquire()
        assert be.stat(LEASE_KEY) is not None
        be.close()
        assert not lease.held
        assert make_client(same_as=be).stat(LEASE_KEY) is None


def _run_threads(target: Any, clients: list[Backend]) -> None:
    threads = [threading.Thread(target=target, args=(c,)) for c in clients]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
