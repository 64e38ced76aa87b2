"""The catch-all backend: any fsspec filesystem (``gcs://``, ``az://``, ``sftp://``, ``memory://``...).

``from_url`` resolves the URL with ``fsspec.core.url_to_fs(url, **storage_options)``; tests may also
build ``FsspecBackend(fs, root)`` directly. Only fsspec primitives are used (``info``,
``cat_file``, ``pipe_file``/``open``, ``rm_file``, ``ls``, ``mkdir``, ``rmdir``), plus ``os`` calls
for the temp-file-and-rename publish when the filesystem is fsspec's ``LocalFileSystem``.

Versions (the best the filesystem offers)
    A token built from the strong identifiers in ``info()`` when there are any (``generation``,
    ``etag``, ``VersionId``, ``md5Hash``, ``crc32c``: GCS, Azure, HTTP, ...), taken after
    ``invalidate_cache`` and with ``refresh=True``; otherwise a BLAKE2b hash of the content. fsspec's
    memory store mutates files in place without changing ``ukey``/``checksum``/``created``, and the
    local store's mtime is coarse, so both always hash (``stat``/``matches`` then read the file).
    Listings carry a version only when it comes without reading the file (strong identifiers).

Conditional writes: no compare-and-swap
    ``if_version``/``if_absent`` are checked immediately before the write, under a per-path lock of
    this process. A writer that bypasses vfs (another process, another tool) can still change the
    file between that check and the write: ``Capabilities.conditional_write`` is False and the
    notes say so. Creates are exclusive where the filesystem can make them so: on local disk the
    temp file is published with ``os.link`` (fails if the target exists); elsewhere
    ``pipe_file(mode="create")`` is used, which is only as exclusive as that implementation.

Commit lock
    A :class:`backends.lease.LockFile`: the best-effort lock file (its limits are
    :data:`backends.lease.LOCK_FILE_NOTE`, repeated in the notes). This backend provides its store
    (``lock_create``: ``open(path, "xb")`` on local disk, ``pipe_file(mode="create")`` elsewhere;
    ``lock_read``/``lock_replace``/``lock_remove``). For ``memory://`` (one process by
    construction) the lock is the in-process lock only, which every lock takes first.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
from typing import Any, ClassVar

from backends.base import (
    TEMP_MARKER,
    Capabilities,
    DeleteItem,
    EscapesRoot,
    FileInfo,
    Kind,
    PreconditionFailed,
    TooBig,
    WriteItem,
    check_precondition,
    content_digest,
    iter_parents,
    joined,
    parent_of,
)
from backends.lease import LOCK_FILE_NOTE, HeldLocks, LockFile, process_lock

#: ``info()`` fields that identify one stored revision of an object, in token order.
STRONG_FIELDS = ("generation", "etag", "ETag", "e_tag", "VersionId", "version_id", "md5Hash", "crc32c")

#: Protocols whose objects are replaced atomically by a single upload (readers never see a mix).
OBJECT_STORES = frozenset({"gs", "gcs", "az", "abfs", "abfss", "adl", "oss", "r2", "wasb", "wasbs", "hf"})


def _protocol(fs: Any) -> str:
    proto = fs.protocol
    return str(proto if isinstance(proto, str) else proto[0])


def _capabilities(protocol: str, is_local: bool) -> Capabilities:
    common = (
        "No compare-and-swap: if_version/if_absent are checked right before each write under a lock "
        "of this process; a writer that bypasses vfs can slip in between the check and the write.",
    )
    if is_local:
        return Capabilities(
            atomic_replace=True,
            conditional_write=False,
            exclusive_create=True,
            durable=True,
            cross_process_lock=True,
            real_directories=True,
            real_mtime=True,
            modes=False,
            symlinks=False,
            lock_can_expire=True,
            notes=(
                *common,
                "Local disk through fsspec: temp file + fsync + rename (create: os.link); versions hash "
                "the content; file modes are not managed; resolve() refuses keys whose real path "
                "leaves the root, other symlinks are followed. Prefer the 'local' backend.",
                LOCK_FILE_NOTE,
            ),
        )
    if protocol == "memory":
        return Capabilities(
            atomic_replace=True,
            conditional_write=False,
            exclusive_create=False,
            durable=False,
            cross_process_lock=False,
            real_directories=True,
            real_mtime=False,
            modes=False,
            symlinks=False,
            notes=(
                *common,
                "fsspec's memory store lives in this process only; versions hash the content (the "
                "store mutates files in place without changing ukey/checksum). The commit lock is "
                "an in-process lock. Prefer the 'memory' backend.",
            ),
        )
    object_store = protocol in OBJECT_STORES
    return Capabilities(
        atomic_replace=object_store,
        conditional_write=False,
        exclusive_create=False,
        durable=object_store,
        cross_process_lock=False,
        real_directories=not object_store,
        real_mtime=False,
        modes=False,
        symlinks=False,
        lock_can_expire=True,
        notes=(
            *common,
            f"Generic fsspec filesystem {protocol!r}: versions use generation/ETag/md5 when info() "
            "has them, else a content hash; creates use pipe_file(mode='create'), exclusive only if "
            "the implementation makes it so.",
            LOCK_FILE_NOTE,
            "The lock object is created with pipe_file(mode='create'): exclusive only if the "
            "implementation makes it so.",
            *(["Directories are key prefixes: an empty directory may not persist."] if object_store else []),
        ),
    )


class FsspecBackend:
    name: ClassVar[str] = "fsspec"
    #: The class-level declaration is the weakest case (an unknown filesystem); each instance
    #: replaces it with what its own filesystem guarantees (local disk, memory, object store).
    capabilities: Capabilities = _capabilities("unknown", False)

    def __init__(self, fs: Any, root: str, *, url: str | None = None, lock_ttl: float = 30.0) -> None:
        self.fs = fs
        self.protocol = _protocol(fs)
        root = fs._strip_protocol(root) if root else root
        self.root = root.rstrip("/") if root not in ("", "/") else root
        self.url = url or f"{self.protocol}://{self.root}"
        self.lock_ttl = lock_ttl
        from fsspec.implementations.local import LocalFileSystem

        self.is_local = isinstance(fs, LocalFileSystem)
        self.hash_versions = self.is_local or self.protocol == "memory"
        self.capabilities = _capabilities(self.protocol, self.is_local)
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

    @staticmethod
    def _kind(info: dict[str, Any]) -> Kind:
        kind = info.get("type")
        if kind == "file":
            return "file"
        if kind == "directory":
            return "directory"
        return "other"

    def _strong_token(self, info: dict[str, Any]) -> str | None:
        if self.hash_versions:
            return None
        parts = [f"{k}={info[k]}" for k in STRONG_FIELDS if info.get(k) not in (None, "")]
        return "i:" + "|".join(parts) if parts else None

    @staticmethod
    def _hash_token(data: bytes, digest: str | None = None) -> str:
        return "h:" + (digest if digest is not None else content_digest(data))

    def _file_info(self, key: str, info: dict[str, Any], data: bytes | None = None) -> FileInfo:
        kind = self._kind(info)
        mtime = info.get("mtime")
        if kind != "file":
            return FileInfo(key, kind, 0, None, None, float(mtime) if isinstance(mtime, int | float) else None)
        version = self._strong_token(info)
        if version is None:
            if data is None:
                data = bytes(self.fs.cat_file(self._path(key)))
            version = self._hash_token(data)
        size = int(info.get("size") or 0) if data is None else len(data)
        return FileInfo(key, "file", size, None, version, float(mtime) if isinstance(mtime, int | float) else None)

    def _missing(self, key: str) -> OSError:
        """Nothing at ``key``: ``NotADirectoryError`` if an ancestor is a file, as on a disk."""
        for ancestor in iter_parents(key):
            info = self._info(ancestor)
            if info is None:
                break
            if self._kind(info) != "directory":
                return NotADirectoryError(errno.ENOTDIR, "Not a directory", key)
        return FileNotFoundError(errno.ENOENT, "No such file or directory", key)

    def _require_parent(self, key: str) -> None:
        parent = parent_of(key)
        if parent == "" or not self.capabilities.real_directories:
            return
        info = self._info(parent)
        if info is None:
            raise FileNotFoundError(errno.ENOENT, "No such directory", parent)
        if self._kind(info) != "directory":
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
            if self._kind(info) == "directory":
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
                self._write_local(key, path, data, if_absent, item.durable)
            elif if_absent:
                try:
                    self.fs.pipe_file(path, data, mode="create")
                except FileExistsError:
                    raise PreconditionFailed(errno.EEXIST, "already exists", key) from None
            else:
                self.fs.pipe_file(path, data)
            if self.hash_versions or not item.versioned:
                version = self._hash_token(data, item.digest) if item.versioned else None
                return FileInfo(key, "file", len(data), None, version)
            info = self._info(key)
            if info is None:
                raise FileNotFoundError(errno.ENOENT, "vanished right after the write", key)
            return self._file_info(key, info, data)

    def _write_local(self, key: str, path: str, data: bytes, if_absent: bool, durable: bool) -> None:
        directory, name = os.path.split(path)
        tmp = os.path.join(directory, f".{name}{TEMP_MARKER}{secrets.token_hex(4)}")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        try:
            try:
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view) :]
                if durable:
                    os.fsync(fd)
            finally:
                os.close(fd)
            if if_absent:
                try:
                    os.link(tmp, path)
                except FileExistsError:
                    raise PreconditionFailed(errno.EEXIST, "already exists", key) from None
            else:
                os.replace(tmp, path)
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)
        if not durable:
            return
        dfd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(dfd)
        finally:
            os.close(dfd)

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
        if info is not None and self._kind(info) != "directory":
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
            kind = self._kind(entry)
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
            if self._kind(up) != "directory":
                raise NotADirectoryError(errno.ENOTDIR, "Not a directory", parent)
        self.fs.mkdir(self._path(key), create_parents=False)

    def rmdir(self, key: str) -> None:
        if key == "":
            raise OSError(errno.EBUSY, "cannot remove the root", key)
        info = self._info(key)
        if info is None:
            raise FileNotFoundError(errno.ENOENT, "No such file or directory", key)
        if self._kind(info) != "directory":
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
        root = os.path.realpath(self.root)
        real = os.path.realpath(self._path(key))
        if real != root and not real.startswith(root.rstrip(os.sep) + os.sep):
            raise EscapesRoot(errno.EACCES, f"{key} resolves outside the workspace root", key)
        return os.path.relpath(real, root).replace(os.sep, "/") if real != root else ""

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
        try:
            if self.is_local:
                with open(path, "xb") as f:
                    f.write(body)
                    f.flush()
                    os.fsync(f.fileno())
            else:
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
