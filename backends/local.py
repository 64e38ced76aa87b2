"""Local disk backend: os-level calls only, so it works the same on real disk and under pyfakefs.

Guarantees and what they rest on:
- atomic replace: a temp file in the target's own directory, ``fsync``, the mode copied, then
  ``os.replace`` (rename(2) is atomic within a filesystem) and an ``fsync`` of the directory;
- no-replace create: the temp file is published with ``os.link`` (link(2) fails with EEXIST instead
  of replacing), falling back to ``O_CREAT|O_EXCL`` where hard links are not supported;
- versions: ``(st_dev, st_ino, st_size, st_mtime_ns, st_ctime_ns)`` from ``lstat``, plus a content
  hash for "racy" files (modified within ``RACY_WINDOW_NS`` of the moment they were read: their
  mtime cannot prove they were not changed again within the same timestamp tick, git's rule);
- no CAS in the kernel: ``if_version``/``if_absent`` are checked immediately before the rename, so
  a writer that bypasses vfs can still slip into that window (declared in ``capabilities``);
- containment: ``resolve`` follows symlinks with ``realpath`` and refuses a target outside the root,
  and every mutation re-checks that its parent directory still resolves inside the root;
- commit lock: ``filelock.FileLock`` (``flock``, released by the kernel if the holder dies) for
  other processes, plus a per-path ``threading.Lock`` for this process, which also keeps excluding
  under pyfakefs where ``flock`` is a no-op.
"""

from __future__ import annotations

import errno
import hashlib
import os
import secrets
import stat as stat_module
import threading
import time
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import Any, ClassVar

import filelock

from backends.base import (
    TEMP_MARKER,
    Capabilities,
    EscapesRoot,
    FileInfo,
    Kind,
    NotRegular,
    PreconditionFailed,
)

#: A file modified less than this long before it was read gets its content hashed into its version.
RACY_WINDOW_NS = 2_000_000_000

_PROCESS_LOCKS: dict[str, threading.Lock] = {}
_PROCESS_LOCKS_GUARD = threading.Lock()


def _kind(mode: int) -> Kind:
    if stat_module.S_ISREG(mode):
        return "file"
    if stat_module.S_ISDIR(mode):
        return "directory"
    if stat_module.S_ISLNK(mode):
        return "symlink"
    return "other"


def _digest(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def _fake_os() -> bool:
    """Whether pyfakefs has patched ``os`` in this module (a test authors' fake filesystem)."""
    return type(os).__name__ == "FakeOsModule"


def _stat_part(st: os.stat_result) -> str:
    # pyfakefs moves st_ctime on every open, so there ctime would make every version stale; the
    # content hash of racy files still catches same-tick rewrites under it.
    ctime = 0 if _fake_os() else st.st_ctime_ns
    return f"{st.st_dev}:{st.st_ino}:{st.st_size}:{st.st_mtime_ns}:{ctime}"


def _is_racy(st: os.stat_result, now_ns: int) -> bool:
    return st.st_mtime_ns >= now_ns - RACY_WINDOW_NS or st.st_ctime_ns >= now_ns - RACY_WINDOW_NS


def _umask() -> int:
    current = os.umask(0)
    os.umask(current)
    return current


class LocalBackend:
    name: ClassVar[str] = "local"
    capabilities = Capabilities(
        atomic_replace=True,
        conditional_write=False,
        exclusive_create=True,
        durable=True,
        cross_process_lock=True,
        real_directories=True,
        real_mtime=True,
        modes=True,
        symlinks=True,
        notes=(
            "Versions are checked immediately before each rename; a process that writes the same "
            "file without going through vfs inside that window (microseconds) is not detected.",
            "Under pyfakefs the commit lock excludes threads of the test process only (there are "
            "no other processes in a fake filesystem).",
        ),
    )

    def __init__(self, root: str, *, fsync: bool = True) -> None:
        self.root = os.path.realpath(os.path.abspath(root))
        self.fsync = fsync
        self._umask = _umask()

    @classmethod
    def from_url(cls, url: str, storage_options: dict[str, Any]) -> LocalBackend:
        path = url
        for prefix in ("file://", "local://"):
            if url.startswith(prefix):
                path = url[len(prefix) :]
        options = dict(storage_options)
        fsync = bool(options.pop("fsync", True))
        if options:
            raise TypeError(f"unknown storage options for a local root: {', '.join(sorted(options))}")
        return cls(path or ".", fsync=fsync)

    def describe(self) -> str:
        return self.root

    # -- helpers ------------------------------------------------------------------------------

    def _path(self, key: str) -> str:
        return os.path.join(self.root, key) if key else self.root

    def _inside(self, real: str) -> bool:
        return real == self.root or real.startswith(self.root.rstrip(os.sep) + os.sep)

    def _check_parent(self, key: str) -> str:
        """The real parent directory of ``key``; raises ``EscapesRoot`` if a symlink leads out.

        Runs right before every mutation. The root itself is already a real path, so only the
        components below it are examined, and ``realpath`` runs only if one is a symlink.
        """
        parent_rel = key.rsplit("/", 1)[0] if "/" in key else ""
        path = self.root
        for part in parent_rel.split("/") if parent_rel else ():
            path = os.path.join(path, part)
            try:
                is_link = stat_module.S_ISLNK(os.lstat(path).st_mode)
            except FileNotFoundError:
                break  # the write itself will fail with FileNotFoundError
            if is_link:
                real = os.path.realpath(os.path.join(self.root, parent_rel))
                if not self._inside(real):
                    raise EscapesRoot(errno.EACCES, f"{key} resolves outside the workspace root", key)
                return real
        return os.path.join(self.root, parent_rel) if parent_rel else self.root

    def _sync_dir(self, directory: str) -> None:
        if not self.fsync:
            return
        fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        except OSError as exc:  # some filesystems refuse fsync on a directory; data is still synced
            if exc.errno not in (errno.EINVAL, errno.EBADF, errno.ENOTSUP):
                raise
        finally:
            os.close(fd)

    def _info(self, key: str, st: os.stat_result, version: str | None) -> FileInfo:
        return FileInfo(key, _kind(st.st_mode), st.st_size, stat_module.S_IMODE(st.st_mode), version, st.st_mtime)

    def _version_of(self, path: str, st: os.stat_result, data: bytes | None, now_ns: int) -> str:
        part = _stat_part(st)
        if not _is_racy(st, now_ns):
            return part
        if data is None:
            with open(path, "rb") as handle:
                data = handle.read()
        return f"{part}#{_digest(data)}"

    # -- primitives ---------------------------------------------------------------------------

    def stat(self, key: str) -> FileInfo | None:
        path = self._path(key)
        now_ns = time.time_ns()
        try:
            st = os.lstat(path)
        except FileNotFoundError:
            return None
        except NotADirectoryError:
            return None
        version = self._version_of(path, st, None, now_ns) if stat_module.S_ISREG(st.st_mode) else None
        return self._info(key, st, version)

    def read(self, key: str) -> tuple[bytes, FileInfo]:
        path = self._path(key)
        now_ns = time.time_ns()
        # O_NONBLOCK: opening a FIFO must not hang; O_NOFOLLOW: vfs resolved symlinks already.
        if _fake_os():
            with open(path, "rb") as handle:  # pyfakefs's os.open chmods the file it opens
                st = os.fstat(handle.fileno())
                if stat_module.S_ISDIR(st.st_mode):
                    raise IsADirectoryError(errno.EISDIR, "Is a directory", path)
                data = handle.read()
            return data, self._info(key, st, self._version_of(path, st, data, now_ns))
        flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
        try:
            fd = os.open(path, flags)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise NotRegular(errno.ELOOP, "is a symlink", key) from exc
            raise
        try:
            st = os.fstat(fd)
            if stat_module.S_ISDIR(st.st_mode):
                raise IsADirectoryError(errno.EISDIR, "Is a directory", path)
            if not stat_module.S_ISREG(st.st_mode):
                raise NotRegular(errno.EINVAL, "not a regular file", key)
            chunks = []
            while True:
                chunk = os.read(fd, 1 << 20)
                if not chunk:
                    break
                chunks.append(chunk)
            data = b"".join(chunks)
            st_after = os.fstat(fd)
        finally:
            os.close(fd)
        if _stat_part(st_after) != _stat_part(st):
            # Changed while we read it: the bytes may be a mix. Hash what we got so the version
            # can never vouch for content it did not see.
            return data, self._info(key, st_after, f"{_stat_part(st_after)}#{_digest(data)}")
        return data, self._info(key, st, self._version_of(path, st, data, now_ns))

    def write(
        self,
        key: str,
        data: bytes,
        *,
        mode: int | None = None,
        if_version: str | None = None,
        if_absent: bool = False,
        durable: bool = True,
    ) -> FileInfo:
        sync = self.fsync and durable
        directory = self._check_parent(key)
        target = os.path.join(directory, os.path.basename(key))
        existing_mode: int | None = None
        try:
            st = os.lstat(target)
        except FileNotFoundError:
            st = None
        if st is not None:
            if stat_module.S_ISDIR(st.st_mode):
                raise IsADirectoryError(errno.EISDIR, "Is a directory", key)
            existing_mode = stat_module.S_IMODE(st.st_mode)
        if mode is None:
            mode = existing_mode if existing_mode is not None else (0o666 & ~self._umask)
        tmp = os.path.join(directory, f".{os.path.basename(key)}{TEMP_MARKER}{secrets.token_hex(4)}")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            try:
                view = memoryview(data)
                while view:
                    written = os.write(fd, view)
                    view = view[written:]
                os.fchmod(fd, mode)
                if sync:
                    os.fsync(fd)
            finally:
                os.close(fd)
            if if_absent:
                self._publish_exclusive(tmp, target, key)
            else:
                if if_version is not None and not self.matches(key, if_version):
                    raise PreconditionFailed(errno.ESTALE, "changed since it was read", key)
                self._check_parent(key)  # a symlink swapped in since the first check
                os.replace(tmp, target)
        except BaseException:
            try:
                os.unlink(tmp)
            except FileNotFoundError:
                pass
            raise
        if sync:
            self._sync_dir(directory)
        now_ns = time.time_ns()
        st = os.lstat(target)
        return self._info(key, st, self._version_of(target, st, data, now_ns))

    def _publish_exclusive(self, tmp: str, target: str, key: str) -> None:
        try:
            os.link(tmp, target)
        except FileExistsError as exc:
            raise PreconditionFailed(errno.EEXIST, "already exists", key) from exc
        except OSError as exc:
            if exc.errno not in (errno.EPERM, errno.EOPNOTSUPP, errno.ENOTSUP, errno.EMLINK, errno.ENOSYS):
                raise
            # No hard links here: claim the name exclusively, then rename over our own claim.
            try:
                os.close(os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
            except FileExistsError as exc2:
                raise PreconditionFailed(errno.EEXIST, "already exists", key) from exc2
            os.replace(tmp, target)
            return
        os.unlink(tmp)

    def delete(self, key: str, *, if_version: str | None = None) -> None:
        directory = self._check_parent(key)
        target = os.path.join(directory, os.path.basename(key))
        st = os.lstat(target)
        if stat_module.S_ISDIR(st.st_mode):
            raise IsADirectoryError(errno.EISDIR, "Is a directory", key)
        if if_version is not None and not self.matches(key, if_version):
            raise PreconditionFailed(errno.ESTALE, "changed since it was read", key)
        os.unlink(target)
        self._sync_dir(directory)

    def list(self, key: str) -> list[FileInfo]:
        path = self._path(key)
        st = os.lstat(path)
        if not stat_module.S_ISDIR(st.st_mode):
            raise NotADirectoryError(errno.ENOTDIR, "Not a directory", key)
        out = []
        with os.scandir(path) as entries:
            for entry in entries:
                child = f"{key}/{entry.name}" if key else entry.name
                try:
                    st_child = entry.stat(follow_symlinks=False)
                except FileNotFoundError:
                    continue
                out.append(self._info(child, st_child, None))
        return out

    def mkdir(self, key: str) -> None:
        directory = self._check_parent(key)
        os.mkdir(os.path.join(directory, os.path.basename(key)), 0o777)
        self._sync_dir(directory)

    def rmdir(self, key: str) -> None:
        directory = self._check_parent(key)
        os.rmdir(os.path.join(directory, os.path.basename(key)))
        self._sync_dir(directory)

    def matches(self, key: str, version: str | None) -> bool:
        path = self._path(key)
        try:
            st = os.lstat(path)
        except (FileNotFoundError, NotADirectoryError):
            return version is None
        if version is None or not stat_module.S_ISREG(st.st_mode):
            return False
        stat_part, _, digest = version.partition("#")
        if stat_part != _stat_part(st):
            return False
        if not digest:
            return True
        try:
            with open(path, "rb") as handle:
                data = handle.read()
        except FileNotFoundError:
            return False
        return _digest(data) == digest

    def resolve(self, key: str) -> str:
        real = os.path.realpath(self._path(key))
        if not self._inside(real):
            raise EscapesRoot(errno.EACCES, f"{key} resolves outside the workspace root", key)
        rel = os.path.relpath(real, self.root)
        return "" if rel == "." else rel.replace(os.sep, "/")

    def lock(self, key: str, *, timeout: float) -> AbstractContextManager[None]:
        return _local_lock(self._path(key), timeout)

    def close(self) -> None:
        return None


@contextmanager
def _local_lock(path: str, timeout: float) -> Iterator[None]:
    with _PROCESS_LOCKS_GUARD:
        thread_lock = _PROCESS_LOCKS.setdefault(path, threading.Lock())
    deadline = time.monotonic() + timeout
    if not thread_lock.acquire(timeout=timeout):
        raise TimeoutError(f"could not acquire the commit lock {path} within {timeout} s")
    try:
        file_lock = filelock.FileLock(path, timeout=max(0.0, deadline - time.monotonic()), is_singleton=False)
        try:
            file_lock.acquire()
        except filelock.Timeout as exc:
            raise TimeoutError(f"could not acquire the commit lock {path} within {timeout} s") from exc
        try:
            yield
        finally:
            file_lock.release()
    finally:
        thread_lock.release()
