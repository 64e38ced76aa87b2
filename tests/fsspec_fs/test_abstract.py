"""fsspec's own abstract test suite (fsspec.tests.abstract: copy, get, put, open, pipe, and the
two mv tests) against the vfs filesystem, on every target (memory, local folder, S3 on moto)."""

from __future__ import annotations

import posixpath
from typing import Any

import pytest
from fsspec.tests.abstract import AbstractFixtures
from fsspec.tests.abstract.copy import AbstractCopyTests
from fsspec.tests.abstract.get import AbstractGetTests
from fsspec.tests.abstract.open import AbstractOpenTests
from fsspec.tests.abstract.pipe import AbstractPipeTests
from fsspec.tests.abstract.put import AbstractPutTests

from tests.fsspec_fs.conftest import Target


class VfsFixtures(AbstractFixtures):
    @pytest.fixture
    def fs(self, target: Target) -> Any:
        return target.make_fs()

    @pytest.fixture
    def fs_path(self, target: Target) -> str:
        return target.path

    @pytest.fixture
    def fs_join(self) -> Any:
        return posixpath.join  # target paths are POSIX on every target, local included

    @pytest.fixture
    def supports_empty_directories(self) -> bool:
        # A folder made by mkdir stays, empty, on every target: vfs's S3 backend writes a marker
        # object for it (a folder made only as a parent of files goes with its last file).
        return True


class TestCopy(VfsFixtures, AbstractCopyTests):
    pass


class TestGet(VfsFixtures, AbstractGetTests):
    pass


class TestPut(VfsFixtures, AbstractPutTests):
    pass


class TestOpen(VfsFixtures, AbstractOpenTests):
    pass


class TestPipe(VfsFixtures, AbstractPipeTests):
    pass


class TestMv:
    """fsspec.tests.abstract.mv's two tests are written for fsspec's LocalFileSystem (they take
    ``tmpdir``, not ``fs``); here they are ported to this filesystem."""

    @pytest.mark.skip(
        reason="does not apply: fsspec's local mv refuses a destination in a missing folder; vfs creates"
        " missing parent folders on every target (as object stores and auto_mkdir=True do): see"
        " test_move_into_a_missing_folder_creates_it"
    )
    def test_move_raises_error_with_tmpdir(self) -> None:
        raise AssertionError("skipped")

    def test_move_into_a_missing_folder_creates_it(self, target: Target) -> None:
        fs = target.make_fs()
        fs.pipe(f"{target.path}/source_file.txt", b"content")
        fs.mv(f"{target.path}/source_file.txt", f"{target.path}/non_existent_directory/destination_file.txt")
        assert fs.cat(f"{target.path}/non_existent_directory/destination_file.txt") == b"content"
        assert not fs.exists(f"{target.path}/source_file.txt")

    @pytest.mark.parametrize("recursive", [True, False])
    def test_move_raises_error_with_tmpdir_permission(self, target: Target, recursive: bool) -> None:
        # The port: a place this filesystem may not write is a read-only workspace (chmod 0o555
        # does not stop root, and means nothing on S3 or in memory).
        target.make_fs().pipe(f"{target.path}/source_file.txt", b"content")
        readonly = target.make_fs(private=True, workspace_options={"mode": "read-only"})
        destination = f"{target.path}/protected_directory/destination_file.txt"
        with pytest.raises(PermissionError):
            readonly.mv(f"{target.path}/source_file.txt", destination, recursive=recursive)
        assert not readonly.exists(destination)
        assert readonly.cat(f"{target.path}/source_file.txt") == b"content"
