"""FsspecBackend: the seam on any fsspec filesystem (see ``backends/fsspec_any/__init__.py``)."""

from __future__ import annotations

import contextlib
import errno
from typing import Any, ClassVar

from backends.base import (
    ROOT_MISSING,
    ROOT_NOT_A_DIRECTORY,
    BadRoot,
    Capabilities,
    DeleteItem,
    FileInfo,
    PreconditionFailed,
    TooBig,
    WriteItem,
    check_precondition,
    given_digest,
    iter_parents,
    joined,
    parent_of,
)
from backends.fsspec_any import local_disk
from backends.fsspec_any.capabilities import capabilities_for, protocol_of
from backends.fsspec_any.versions import hash_token, kind_of, strong_token
from backends.lease import HeldLocks, LockFile, process_lock


class FsspecBackend:
    name: ClassVar[str] = "fsspec"
    #: The class-level declaration is the weakest case (an unknown filesystem); each instance
    #: replaces it with what its own filesystem guarantees (local disk, memory, object store).
    capabilities: Capabilities = capabilities_for("unknown", False)

    def __init__(self, fs: Any, root: str, *, url: str | None = None, lock_ttl: float = 30.0) -> None:
        self.fs = fs
        self.protocol = protocol_of(fs)
        root = fs._strip_protocol(root) if root else root
        self.root = root.rstrip("/") if root not in ("", "/") else root
        self.url = url or f"{self.protocol}://{self.root}"
        self.lock_ttl = lock_ttl
        from fsspec.implementations.local import LocalFileSystem

        self.is_local = isinstance(fs, LocalFileSystem)
        self.hash_versions = self.is_local or self.protocol == "memory"
        self.capabilities = capabilities_for(self.protocol, self.is_local)
        self._held = HeldLocks()

    @classmethod
    def from_url(cls, url: str, storage_options: dict[str, Any]) -> FsspecBackend:
        from fsspec.core import url_to_fs

        options = dict(storage_options)
        lock_ttl = float(options.pop("vfs_lock_ttl", 30.0))
        fs, path = url_to_fs(url, **options)
        return cls(fs, path, url=url.rstrip("/"), lock_ttl=lock_ttl)

    def describe(self) -> str:
        return self.url

    def check_root(self) -> None:
        """Not a file; and where directories are real (a disk), an existing directory. An object
        store's missing bucket is left to its first request (fsspec has no one call for it)."""
        info = self._info("")
        if info is not None and kind_of(info) != "directory":
            raise BadRoot(ROOT_NOT_A_DIRECTORY)
        if info is None and self.is_local:
            raise BadRoot(ROOT_MISSING)

    # -- plumbing -----------------------------------------------------------------------------

    def _path(self, key: str) -> str:
        if not key:
            return self.root
        if self.root in ("", "/"):
            return f"{self.root}{key}"
        return f"{self.root}/{key}"

    def _key_of(self, name: str) -> str | None:
        name = self.fs._strip_protocol(name).rstrip("/")
        base = self.root.rstrip("/")
        if base and not name.startswith(base + "/"):
            return None
        return name[len(base) + 1 :] if base else name.lstrip("/")

    def _info(self, key: str) -> dict[str, Any] | None:
        path = self._path(key)
        with contextlib.suppress(Exception):
            self.fs.invalidate_cache(path)
        try:
            info: dict[str, Any] = self.fs.info(path, refresh=True)
        except FileNotFoundError:
            return None
        except NotADirectoryError:
            return None
        return info

    def _strong_token(self, info: dict[str, Any]) -> str | None:
        if self.hash_versions:
            return None
        return strong_token(info)

    def _file_info(self, key: str, info: dict[str, Any], data: bytes | None = None) -> FileInfo:
        kind = kind_of(info)
        mtime = info.get("mtime")
        if kind != "file":
            return FileInfo(key, kind, 0, None, None, float(mtime) if isinstance(mtime, int | float) else None)
        version = self._strong_token(info)
        if version is None:
            if data is None:
                data = bytes(self.fs.cat_file(self._path(key)))
            version = hash_token(data)
        size = int(info.get("size") or 0) if data is None else len(data)
        return FileInfo(key, "file", size, None, version, float(mtime) if isinstance(mtime, int | float) else None)

    def _missing(self, key: str) -> OSError:
        """Nothing at ``key``: ``NotADirectoryError`` if an ancestor is a file, as on a disk."""
        for ancestor in iter_parents(key):
            info = self._info(ancestor)
            if info is None:
                break
            if kind_of(info) != "directory":
                return NotADirectoryError(errno.ENOTDIR, "Not a directory", key)
        return FileNotFoundError(errno.ENOENT, "No such file or directory", key)

    def _require_parent(self, key: str) -> None:
        parent = parent_of(key)
        if parent == "" or not self.capabilities.real_directories:
            return
        info = self._info(parent)
        if info is None:
            raise FileNotFoundError(errno.ENOENT, "No such directory", parent)
        if kind_of(info) != "directory":
            raise NotADirectoryError(errno.ENOTDIR, "Not a directory", parent)

    # -- primitives ---------------------------------------------------------------------------

    def stat(self, key: str) -> FileInfo | None:
        info = self._info(key)
        if info is None:
            return None if key else FileInfo("", "directory")
        try:
            return self._file_info(key, info)
        except FileNotFoundError:
            return None  # deleted between info and read

    def read(self, key: str, *, limit: int | None = None) -> tuple[bytes, FileInfo]:
        """Over ``limit`` by ``info()``'s size: refused before the content is fetched."""
        path = self._path(key)
        for _ in range(5):
            info = self._info(key)
            if info is None:
                raise self._missing(key)
            if kind_of(info) == "directory":
                raise IsADirectoryError(errno.EISDIR, "Is a directory", key)
            size = int(info.get("size") or 0)
            if limit is not None and size > limit:
                raise TooBig(key, size, limit)
            data = bytes(self.fs.cat_file(path))
            if self.hash_versions:
                return data, self._file_info(key, info, data)
            after = self._info(key)
            # a strong token is only trusted if it did not change around the read
            if after is not None and self._strong_token(after) == self._strong_token(info):
                return data, self._file_info(key, after, data)
        raise OSError(errno.EAGAIN, "file kept changing while being read", key)

    def write(self, item: WriteItem) -> FileInfo:
        """``item.mode`` is ignored (no file modes through fsspec); ``durable`` only matters
        locally. The condition is checked here (no CAS in the store): see the module docstring."""
        key, if_absent = item.key, item.if_absent
        if if_absent and item.if_version is not None:
            raise ValueError("if_absent and if_version are mutually exclusive")
        if key == "":
            raise IsADirectoryError(errno.EISDIR, "Is a directory", key)
        data = bytes(joined(item.data))
        path = self._path(key)
        with process_lock("fsspec-write", self.protocol, path):
            self._require_parent(key)
            current = self.stat(key)
            if current is not None and current.kind == "directory":
                raise IsADirectoryError(errno.EISDIR, "Is a directory", key)
            check_precondition(item, current, lambda: False)
            if self.is_local:
                local_disk.publish(key, path, data, if_absent=if_absent, durable=item.durable)
            elif if_absent:
                try:
                    self.fs.pipe_file(path, data, mode="create")
                except FileExistsError:
                    raise PreconditionFailed(errno.EEXIST, "already exists", key) from None
            else:
                self.fs.pipe_file(path, data)
            if self.hash_versions or not item.versioned:
                version = hash_token(data, given_digest(item)) if item.versioned else None
                return FileInfo(key, "file", len(data), None, version)
            info = self._info(key)
            if info is None:
                raise FileNotFoundError(errno.ENOENT, "vanished right after the write", key)
            return self._file_info(key, info, data)

    def delete(self, item: DeleteItem) -> None:
        key = item.key
        path = self._path(key)
        with process_lock("fsspec-write", self.protocol, path):
            current = self.stat(key)
            if current is not None and current.kind == "directory":
                raise IsADirectoryError(errno.EISDIR, "Is a directory", key)
            check_precondition(item, current, lambda: False)
            if current is None:
                raise self._missing(key)
            self.fs.rm_file(path)

    def list(self, key: str) -> list[FileInfo]:
        info = self._info(key)
        if info is None and key:
            raise self._missing(key)
        if info is not None and kind_of(info) != "directory":
            raise NotADirectoryError(errno.ENOTDIR, "Not a directory", key)
        path = self._path(key)
        with contextlib.suppress(Exception):
            self.fs.invalidate_cache(path)
        try:
            entries = self.fs.ls(path, detail=True)
        except FileNotFoundError:
            if key:
                raise
            entries = []
        out: list[FileInfo] = []
        for entry in entries:
            child = self._key_of(str(entry["name"]))
            if not child or parent_of(child) != key:
                continue  # the directory itself, or something outside it
            kind = kind_of(entry)
            mtime = entry.get("mtime")
            out.append(
                FileInfo(
                    child,
                    kind,
                    int(entry.get("size") or 0) if kind == "file" else 0,
                    None,
                    self._strong_token(entry) if kind == "file" else None,
                    float(mtime) if isinstance(mtime, int | float) else None,
                )
            )
        return out

    def mkdir(self, key: str) -> None:
        if key == "" or self._info(key) is not None:
            raise FileExistsError(errno.EEXIST, "File exists", key)
        parent = parent_of(key)
        if parent:
            up = self._info(parent)
            if up is None:
                raise FileNotFoundError(errno.ENOENT, "No such directory", parent)
            if kind_of(up) != "directory":
                raise NotADirectoryError(errno.ENOTDIR, "Not a directory", parent)
        self.fs.mkdir(self._path(key), create_parents=False)

    def rmdir(self, key: str) -> None:
        if key == "":
            raise OSError(errno.EBUSY, "cannot remove the root", key)
        info = self._info(key)
        if info is None:
            raise FileNotFoundError(errno.ENOENT, "No such file or directory", key)
        if kind_of(info) != "directory":
            raise NotADirectoryError(errno.ENOTDIR, "Not a directory", key)
        if self.list(key):
            raise OSError(errno.ENOTEMPTY, "Directory not empty", key)
        self.fs.rmdir(self._path(key))

    def matches(self, key: str, version: str | None) -> bool:
        info = self.stat(key)
        if version is None:
            return info is None
        return info is not None and info.version == version

    def resolve(self, key: str) -> str:
        if not self.is_local:
            return key  # no symlinks through generic fsspec
        return local_disk.resolve(self.root, self._path(key), key)

    def lock(self, key: str, *, timeout: float) -> LockFile:
        # fsspec's memory store lives in this process: the in-process lock is the whole lock
        store = self if self.protocol != "memory" else None
        thread_lock = process_lock("fsspec-lock", self.protocol, self._path(key))
        return LockFile(store, key, timeout=timeout, ttl=self.lock_ttl, thread_lock=thread_lock, held=self._held)

    def close(self) -> None:
        self._held.release_all()

    # -- the lock file's store (backends.lease.PlainStore) ----------------------------------

    def lock_create(self, key: str, body: bytes) -> bool:
        self._require_parent(key)
        path = self._path(key)
        if self.is_local:
            return local_disk.create_exclusive(path, body)
        try:
            self.fs.pipe_file(path, body, mode="create")
        except FileExistsError:
            return False
        return True

    def lock_read(self, key: str) -> bytes | None:
        try:
            return bytes(self.fs.cat_file(self._path(key)))
        except FileNotFoundError:
            return None

    def lock_replace(self, key: str, body: bytes) -> None:
        self.fs.pipe_file(self._path(key), body)

    def lock_remove(self, key: str) -> None:
        with contextlib.suppress(FileNotFoundError):
            self.fs.rm_file(self._path(key))
