"""Workspace factories, one per backend flavour the suite runs on.

``FACTORIES`` maps a flavour id to a class; ``WIRING`` maps every registry name to the flavours
that test it, so adding a backend to ``backends.REGISTRY`` without test wiring fails
``tests/conformance/test_registry.py``.
"""

from __future__ import annotations

import itertools
import os
from typing import Any

import pytest

import vfs
from backends.base import Backend
from backends.local import LocalBackend
from backends.memory import MemoryBackend, MemoryStore
from tests.support.trees import populate

_counter = itertools.count()


class WorkspaceFactory:
    """Makes fresh workspaces (``factory(files)``) and more clients of the same storage
    (``factory.reopen(ws)``), the way another process or agent would see it."""

    id = "abstract"
    mount = "/workspace"

    def __init__(self, request: pytest.FixtureRequest) -> None:
        self.request = request

    def new_backend(self) -> Backend:
        raise NotImplementedError

    def same_backend(self, backend: Backend) -> Backend:
        raise NotImplementedError

    def bad_root_backend(self) -> Backend | None:
        """A backend over a root that cannot hold a workspace (missing), or None where any root can."""
        return None

    def mount_for(self, backend: Backend) -> str:
        return self.mount

    def __call__(
        self, files: dict[str, Any] | None = None, *, backend: Backend | None = None, **kw: Any
    ) -> vfs.Workspace:
        backend = backend if backend is not None else self.new_backend()
        if files:
            populate(backend, files)
        kw.setdefault("mount", self.mount_for(backend))
        return vfs.Workspace(backend, **kw)

    def reopen(self, ws: vfs.Workspace, **kw: Any) -> vfs.Workspace:
        inner = getattr(ws.backend, "inner", ws.backend)
        kw.setdefault("mount", ws.mount)
        kw.setdefault("mode", ws.mode)
        return vfs.Workspace(self.same_backend(inner), **kw)


class LocalFactory(WorkspaceFactory):
    id = "local"

    def new_backend(self) -> Backend:
        tmp = self.request.getfixturevalue("tmp_path")
        root = tmp / f"ws{next(_counter)}"
        root.mkdir()
        return LocalBackend(str(root))

    def bad_root_backend(self) -> Backend | None:
        return LocalBackend(str(self.request.getfixturevalue("tmp_path") / "missing"))

    def same_backend(self, backend: Backend) -> Backend:
        assert isinstance(backend, LocalBackend)
        return LocalBackend(backend.root, trust_ctime=backend.versions.trust_ctime, set_aside=backend.set_aside)

    def mount_for(self, backend: Backend) -> str:
        assert isinstance(backend, LocalBackend)
        return backend.root


class PyfakefsFactory(LocalFactory):
    id = "local-pyfakefs"

    def new_backend(self) -> Backend:
        self.request.getfixturevalue("fs")
        root = f"/fake/ws{next(_counter)}"
        os.makedirs(root)
        # Declared, not detected: pyfakefs moves a file's ctime whenever it is opened, and its
        # handles are not the kernel's (renameat2 through backends.local.libc must not see them).
        return LocalBackend(root, trust_ctime=False, set_aside=False)

    def bad_root_backend(self) -> Backend | None:
        self.request.getfixturevalue("fs")
        return LocalBackend("/fake/missing", trust_ctime=False, set_aside=False)


class MemoryFactory(WorkspaceFactory):
    id = "memory"

    def new_backend(self) -> Backend:
        return MemoryBackend(MemoryStore(), label=f"memory://t{next(_counter)}")

    def same_backend(self, backend: Backend) -> Backend:
        assert isinstance(backend, MemoryBackend)
        return MemoryBackend(backend.store, label=backend.label)


class S3Factory(WorkspaceFactory):
    """A fresh bucket per workspace on the in-process moto server (real HTTP on 127.0.0.1)."""

    id = "s3"

    def new_backend(self) -> Backend:
        from tests.support.s3_servers import fresh_s3_backend

        return fresh_s3_backend(f"t{next(_counter)}")

    def bad_root_backend(self) -> Backend | None:
        from backends.s3 import S3Backend
        from tests.support.s3_servers import shared_moto_endpoint

        return S3Backend.from_url("s3://no-such-bucket-vfs/ws", dict(shared_moto_endpoint().storage_options))

    def same_backend(self, backend: Backend) -> Backend:
        from backends.s3 import S3Backend

        assert isinstance(backend, S3Backend)
        return S3Backend(backend.fs, backend.bucket, backend.prefix)


class AzureFactory(WorkspaceFactory):
    """A fresh container per workspace on one Azurite server for the test process (skipped, with
    the reason, when Azurite or azure-storage-blob is not installed)."""

    id = "azure"

    def new_backend(self) -> Backend:
        from tests.support import azurite

        if not azurite.available():
            pytest.skip(azurite.MISSING)
        backend: Backend = azurite.fresh_azure_backend(f"t{next(_counter)}")
        self.request.addfinalizer(backend.close)
        return backend

    def bad_root_backend(self) -> Backend | None:
        from backends.azure import AzureBackend
        from tests.support import azurite

        if not azurite.available():
            pytest.skip(azurite.MISSING)
        return AzureBackend.from_url("az://no-such-container-vfs/ws", dict(azurite.shared_endpoint().storage_options))

    def same_backend(self, backend: Backend) -> Backend:
        from backends.azure import AzureBackend

        assert isinstance(backend, AzureBackend)
        return AzureBackend(backend.container, backend.prefix, label=backend.label)


class FsspecMemoryFactory(WorkspaceFactory):
    """The catch-all backend over fsspec's own memory filesystem."""

    id = "fsspec-memory"

    def new_backend(self) -> Backend:
        import fsspec

        from backends.fsspec_any import FsspecBackend

        root = f"/vfs-conformance-{os.getpid()}-{next(_counter)}"
        self.request.addfinalizer(lambda: fsspec.filesystem("memory").rm(root, recursive=True))
        fsspec.filesystem("memory").mkdir(root)
        return FsspecBackend(fsspec.filesystem("memory"), root)

    def same_backend(self, backend: Backend) -> Backend:
        from backends.fsspec_any import FsspecBackend

        assert isinstance(backend, FsspecBackend)
        return FsspecBackend(backend.fs, backend.root)


class FsspecLocalFactory(FsspecMemoryFactory):
    """The catch-all backend over fsspec's LocalFileSystem (real disk)."""

    id = "fsspec-local"

    def new_backend(self) -> Backend:
        import fsspec

        from backends.fsspec_any import FsspecBackend

        tmp = self.request.getfixturevalue("tmp_path")
        root = tmp / f"fs{next(_counter)}"
        root.mkdir()
        return FsspecBackend(fsspec.filesystem("file"), str(root))

    def bad_root_backend(self) -> Backend | None:
        import fsspec

        from backends.fsspec_any import FsspecBackend

        return FsspecBackend(fsspec.filesystem("file"), str(self.request.getfixturevalue("tmp_path") / "missing"))


FACTORIES: dict[str, type[WorkspaceFactory]] = {
    "azure": AzureFactory,
    "fsspec-local": FsspecLocalFactory,
    "fsspec-memory": FsspecMemoryFactory,
    "local": LocalFactory,
    "local-pyfakefs": PyfakefsFactory,
    "memory": MemoryFactory,
    "s3": S3Factory,
}

# registry name -> flavour ids that run the shared suites on it
WIRING: dict[str, list[str]] = {
    "azure": ["azure"],
    "fsspec": ["fsspec-local", "fsspec-memory"],
    "local": ["local", "local-pyfakefs"],
    "memory": ["memory"],
    "s3": ["s3"],
}
