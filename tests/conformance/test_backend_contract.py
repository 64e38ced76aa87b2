"""The shipped backend contract (``backends.testing``) run over every backend flavour the suite
knows (``tests.support.backends.FACTORIES``, through ``make_workspace``), so a backend added to the
registry and wired for the shared suites is held to the contract too."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import pytest

from backends.base import Backend, BatchBackend, DeleteItem, FileInfo, WriteItem
from backends.memory import MemoryBackend, MemoryStore
from backends.testing import BackendContract
from tests.support.backends import WorkspaceFactory

# Versions made from the content: a hash (the generic fsspec backend on memory and local disk) or
# the ETag of an unversioned S3 bucket (moto). Rewriting identical bytes keeps the version there.
CONTENT_VERSIONED = {"fsspec-local", "fsspec-memory", "s3"}


class TestEveryBackend(BackendContract):
    @pytest.fixture
    def backend(self, make_workspace: WorkspaceFactory) -> Iterator[Backend]:
        backend = make_workspace.new_backend()
        yield backend
        backend.close()

    @pytest.fixture
    def bad_root(self, make_workspace: WorkspaceFactory) -> Iterator[Backend | None]:
        backend = make_workspace.bad_root_backend()
        yield backend
        if backend is not None:
            backend.close()

    @pytest.fixture
    def identical_rewrite_changes_version(self, make_workspace: WorkspaceFactory) -> bool:
        return make_workspace.id not in CONTENT_VERSIONED

    def test_too_big_is_refused_before_reading(self, backend: Backend, make_workspace: WorkspaceFactory) -> None:
        if make_workspace.id == "s3":
            # the moto server answers from threads of this process, and the check counts every
            # allocation of the process: the server's own buffers (up to 2.5x the object, seen
            # on a HEAD) would be charged to the backend
            pytest.skip("the S3 server runs inside the test process")
        super().test_too_big_is_refused_before_reading(backend)


class LoopBatchMemory(MemoryBackend):
    """The memory backend with the optional batch methods written as the plainest loop over the
    single-item primitives: the reference reading of ``BatchBackend`` (one result per item, the
    exception in its slot). It keeps the contract's batch tests honest on a backend whose single
    primitives pass, since memory itself has no batch methods."""

    def stat_many(self, keys: Sequence[str]) -> list[FileInfo | BaseException | None]:
        return [self.stat(k) for k in keys]

    def read_many(
        self, keys: Sequence[str], *, limit: int | None = None
    ) -> list[tuple[bytes, FileInfo] | BaseException]:
        out: list[tuple[bytes, FileInfo] | BaseException] = []
        for key in keys:
            try:
                out.append(self.read(key, limit=limit))
            except OSError as exc:  # backends raise OSError subclasses only (backends.base)
                out.append(exc)
        return out

    def write_many(self, items: Sequence[WriteItem]) -> list[FileInfo | BaseException]:
        out: list[FileInfo | BaseException] = []
        for item in items:
            try:
                out.append(self.write(item))
            except OSError as exc:
                out.append(exc)
        return out

    def delete_many(self, items: Sequence[DeleteItem]) -> list[BaseException | None]:
        out: list[BaseException | None] = []
        for item in items:
            try:
                self.delete(item)
                out.append(None)
            except OSError as exc:
                out.append(exc)
        return out

    def matches_many(self, items: Sequence[tuple[str, str | None]]) -> list[bool | BaseException]:
        return [self.matches(k, v) for k, v in items]


class TestLoopBatchMemory(BackendContract):
    @pytest.fixture
    def backend(self) -> Iterator[Backend]:
        backend = LoopBatchMemory(MemoryStore(), label="memory://loop-batch")
        assert isinstance(backend, BatchBackend)  # else the batch tests would only skip
        yield backend
        backend.close()
