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
- commit lock: ``flock(2)`` on a lock file (released by the kernel if the holder dies; through
  ``filelock.FileLock`` where there is no ``fcntl``) for other processes, plus a per-path
  ``threading.Lock`` for this process, which also keeps excluding under pyfakefs where ``flock``
  is a no-op.
"""

from __future__ import annotations

import errno
import os
import stat as stat_module
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from typing import Any, ClassVar, TypeVar

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

from backends.base import (
    TEMP_MARKER,
    Capabilities,
    DeleteItem,
    EscapesRoot,
    FileInfo,
    Kind,
    NotRegular,
    PreconditionFailed,
    Vanished,
    WriteData,
    WriteItem,
    content_digest,
    joined,
)

#: A file modified less than this long before it was read gets its content hashed into its version.
RACY_WINDOW_NS = 2_000_000_000

#: Directory handles a batch keeps open at once (well under the usual limit of 1,024 descriptors).
BATCH_OPEN_DIRECTORIES = 64

T = TypeVar("T")

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


def _attempt(call: Callable[..., T], *args: Any) -> T | BaseException:
    """One item of a batch: its result, or the backend error it raised (reported in its slot)."""
    try:
        return call(*args)
    except OSError as exc:
        return exc


def _umask() -> int:
    current = os.umask(0)
    os.umask(current)
    return current


_DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0)


class _Dir:
    """A directory that mutations act in: through an open handle (``dir_fd``) when the platform
    has one, else by path (pyfakefs)."""

    def __init__(self, path: str, fd: int | None) -> None:
        self.path = path
        self.fd = fd

    def join(self, name: str) -> str:
        return os.path.join(self.path, name)

    def _at(self, name: str) -> tuple[str, dict[str, Any]]:
        return (name, {"dir_fd": self.fd}) if self.fd is not None else (self.join(name), {})

    def lstat(self, name: str) -> os.stat_result:
        target, kw = self._at(name)
        return os.stat(target, follow_symlinks=False, **kw)

    def open(self, name: str, flags: int, mode: int) -> int:
        target, kw = self._at(name)
        return os.open(target, flags, mode, **kw)

    def unlink(self, name: str) -> None:
        target, kw = self._at(name)
        os.unlink(target, **kw)

    def mkdir(self, name: str) -> None:
        target, kw = self._at(name)
        os.mkdir(target, 0o777, **kw)

    def rmdir(self, name: str) -> None:
        target, kw = self._at(name)
        os.rmdir(target, **kw)

    def replace(self, src: str, dst: str) -> None:
        if self.fd is None:
            os.replace(self.join(src), self.join(dst))
        else:
            os.replace(src, dst, src_dir_fd=self.fd, dst_dir_fd=self.fd)

    def link(self, src: str, dst: str) -> None:
        if self.fd is None:
            os.link(self.join(src), self.join(dst))
        else:
            os.link(src, dst, src_dir_fd=self.fd, dst_dir_fd=self.fd, follow_symlinks=False)

    def close(self) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None


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

    def _check_parent(self, key: str) -> _Dir:
        """The parent directory of ``key``, reached without following any symlink.

        Runs right before every mutation, and the mutation then acts through the returned
        directory handle (``dir_fd``), so a symlink swapped into the path afterwards cannot
        redirect it: the handle still names the directory that was checked. vfs resolves keys
        before it mutates them, so a symlink met here was swapped in: ``EscapesRoot``.
        (Under pyfakefs, which lacks ``dir_fd``, the check is by path, just before the call.)
        """
        parent_rel = key.rsplit("/", 1)[0] if "/" in key else ""
        parts = parent_rel.split("/") if parent_rel else []
        path = os.path.join(self.root, parent_rel) if parent_rel else self.root
        if _fake_os():
            return _Dir(self._check_parent_by_path(key, parts), None)
        fd = os.open(self.root, _DIR_FLAGS)
        try:
            for part in parts:
                try:
                    child = os.open(part, _DIR_FLAGS | os.O_NOFOLLOW, dir_fd=fd)
                except OSError as exc:
                    # O_NOFOLLOW|O_DIRECTORY on a symlink fails with ELOOP or ENOTDIR
                    if exc.errno in (errno.ELOOP, errno.ENOTDIR) and stat_module.S_ISLNK(
                        os.stat(part, dir_fd=fd, follow_symlinks=False).st_mode
                    ):
                        raise EscapesRoot(errno.EACCES, f"{key}: a symlink appeared in its path", key) from exc
                    raise
                os.close(fd)
                fd = child
        except BaseException:
            os.close(fd)
            raise
        return _Dir(path, fd)

    def _check_parent_by_path(self, key: str, parts: list[str]) -> str:
        path = self.root
        for part in parts:
            path = os.path.join(path, part)
            try:
                is_link = stat_module.S_ISLNK(os.lstat(path).st_mode)
            except FileNotFoundError:
                break  # the operation itself will fail with FileNotFoundError
            if is_link:
                real = os.path.realpath(os.path.join(self.root, *parts))
                if not self._inside(real):
                    raise EscapesRoot(errno.EACCES, f"{key} resolves outside the workspace root", key)
                return real
        return os.path.join(self.root, *parts) if parts else self.root

    def _sync_dir(self, directory: _Dir) -> None:
        if not self.fsync:
            return
        fd = directory.fd if directory.fd is not None else os.open(directory.path, os.O_RDONLY)
        try:
            os.fsync(fd)
        except OSError as exc:  # some filesystems refuse fsync on a directory; data is still synced
            if exc.errno not in (errno.EINVAL, errno.EBADF, errno.ENOTSUP):
                raise
        finally:
            if directory.fd is None:
                os.close(fd)

    def _info(self, key: str, st: os.stat_result, version: str | None) -> FileInfo:
        return FileInfo(key, _kind(st.st_mode), st.st_size, stat_module.S_IMODE(st.st_mode), version, st.st_mtime)

    def _version_of(
        self, path: str, st: os.stat_result, data: bytes | None, now_ns: int, digest: str | None = None
    ) -> str:
        part = _stat_part(st)
        if not _is_racy(st, now_ns):
            return part
        if digest is not None:
            return f"{part}#{digest}"
        if data is None:
            with open(path, "rb") as handle:
                data = handle.read()
        return f"{part}#{content_digest(data)}"

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
            # One read of the whole size (+1 to see the end): the bytes come back as one object,
            # not chunks joined into a second copy (5 ms on a 5 MB file). More only if it grew.
            chunks = [os.read(fd, st.st_size + 1)]
            while chunks[-1]:
                chunks.append(os.read(fd, 1 << 20))
            data = chunks[0] if len(chunks) == 2 else b"".join(chunks)
            st_after = os.fstat(fd)
        finally:
            os.close(fd)
        if _stat_part(st_after) != _stat_part(st):
            # Changed while we read it: the bytes may be a mix. Hash what we got so the version
            # can never vouch for content it did not see.
            return data, self._info(key, st_after, f"{_stat_part(st_after)}#{content_digest(data)}")
        return data, self._info(key, st, self._version_of(path, st, data, now_ns))

    def write(
        self,
        key: str,
        data: WriteData,
        *,
        mode: int | None = None,
        if_version: str | None = None,
        if_absent: bool = False,
        durable: bool = True,
        digest: str | None = None,
        versioned: bool = True,
    ) -> FileInfo:
        sync = self.fsync and durable
        directory = self._check_parent(key)
        try:
            st = self._write_in(directory, key, data, mode, if_version, if_absent, sync)
            if sync:
                self._sync_dir(directory)
            return self._written_info(directory, key, st, data, digest, versioned)
        finally:
            directory.close()

    def _written_info(
        self, directory: _Dir, key: str, st: os.stat_result, data: WriteData, digest: str | None, versioned: bool
    ) -> FileInfo:
        # The version of the bytes just written: stat-only once the racy window has passed
        # (never, right after a write), else with their hash: the caller's, if it has one.
        if not versioned:
            return self._info(key, st, None)
        now_ns = time.time_ns()
        path = directory.join(os.path.basename(key))
        return self._info(key, st, self._version_of(path, st, joined(data), now_ns, digest))

    def _write_in(
        self,
        directory: _Dir,
        key: str,
        data: WriteData,
        mode: int | None,
        if_version: str | None,
        if_absent: bool,
        sync: bool,
    ) -> os.stat_result:
        """Publish ``data`` at ``key`` inside ``directory`` (the file flushed first when ``sync``;
        the directory entry is the caller's to flush); the new file's ``lstat``."""
        name = os.path.basename(key)
        try:
            st: os.stat_result | None = directory.lstat(name)
        except FileNotFoundError:
            st = None
        if st is not None and stat_module.S_ISDIR(st.st_mode):
            raise IsADirectoryError(errno.EISDIR, "Is a directory", key)
        if mode is None:
            mode = stat_module.S_IMODE(st.st_mode) if st is not None else (0o666 & ~self._umask)
        tmp = f".{name}{TEMP_MARKER}{os.urandom(4).hex()}"
        fd = directory.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            try:
                for piece in data if isinstance(data, list) else (data,):
                    view = memoryview(piece)
                    while view:
                        view = view[os.write(fd, view) :]
                os.fchmod(fd, mode)
                if sync:
                    os.fsync(fd)
            finally:
                os.close(fd)
            if if_absent:
                self._publish_exclusive(directory, tmp, name, key)
            else:
                if if_version is not None and not self.matches(key, if_version):
                    raise self._stale(directory, name, key)
                if directory.fd is None:
                    self._check_parent_by_path(key, key.split("/")[:-1])  # a symlink swapped in since
                directory.replace(tmp, name)
        except BaseException:
            try:
                directory.unlink(tmp)
            except FileNotFoundError:
                pass
            raise
        return directory.lstat(name)

    def _publish_exclusive(self, directory: _Dir, tmp: str, name: str, key: str) -> None:
        try:
            directory.link(tmp, name)
        except FileExistsError as exc:
            raise PreconditionFailed(errno.EEXIST, "already exists", key) from exc
        except OSError as exc:
            if exc.errno not in (errno.EPERM, errno.EOPNOTSUPP, errno.ENOTSUP, errno.EMLINK, errno.ENOSYS):
                raise
            # No hard links here: claim the name exclusively, then rename over our own claim.
            try:
                os.close(directory.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
            except FileExistsError as exc2:
                raise PreconditionFailed(errno.EEXIST, "already exists", key) from exc2
            directory.replace(tmp, name)
            return
        directory.unlink(tmp)

    def delete(self, key: str, *, if_version: str | None = None, durable: bool = True) -> None:
        directory = self._check_parent(key)
        try:
            self._delete_in(directory, key, if_version)
            if durable:
                self._sync_dir(directory)
        finally:
            directory.close()

    def _delete_in(self, directory: _Dir, key: str, if_version: str | None) -> None:
        name = os.path.basename(key)
        try:
            st = directory.lstat(name)
        except FileNotFoundError:
            if if_version is None:
                raise
            raise self._stale(directory, name, key) from None
        if stat_module.S_ISDIR(st.st_mode):
            raise IsADirectoryError(errno.EISDIR, "Is a directory", key)
        if if_version is not None and not self.matches(key, if_version):
            raise self._stale(directory, name, key)
        directory.unlink(name)

    @staticmethod
    def _stale(directory: _Dir, name: str, key: str) -> PreconditionFailed:
        try:
            directory.lstat(name)
        except FileNotFoundError:
            return Vanished(errno.ENOENT, "no longer exists", key)
        return PreconditionFailed(errno.ESTALE, "changed since it was read", key)

    # -- batches (BatchBackend): loops, but each directory is opened, checked and flushed once ------

    def stat_many(self, keys: Sequence[str]) -> list[FileInfo | BaseException | None]:
        return [_attempt(self.stat, k) for k in keys]

    def read_many(self, keys: Sequence[str]) -> list[tuple[bytes, FileInfo] | BaseException]:
        return [_attempt(self.read, k) for k in keys]

    def matches_many(self, items: Sequence[tuple[str, str | None]]) -> list[bool | BaseException]:
        return [_attempt(self.matches, k, v) for k, v in items]

    def write_many(self, items: Sequence[WriteItem]) -> list[FileInfo | BaseException]:
        """Each file written as by ``write`` (flushed before its rename); each directory's entries
        flushed with one ``fsync`` after the last rename in it, before this returns. A failing item
        does not stop the others (the caller rolls back what landed)."""
        results: list[FileInfo | BaseException] = []
        with self._directories() as directory_of:
            for item in items:
                try:
                    sync = self.fsync and item.durable
                    directory = directory_of(item.key, sync)
                    st = self._write_in(
                        directory, item.key, item.data, item.mode, item.if_version, item.if_absent, sync
                    )
                    info = self._written_info(directory, item.key, st, item.data, item.digest, item.versioned)
                    results.append(info)
                except OSError as exc:
                    results.append(exc)
        return results

    def delete_many(self, items: Sequence[DeleteItem]) -> list[BaseException | None]:
        results: list[BaseException | None] = []
        with self._directories() as directory_of:
            for item in items:
                try:
                    self._delete_in(directory_of(item.key, True), item.key, item.if_version)
                    results.append(None)
                except OSError as exc:
                    results.append(exc)
        return results

    @contextmanager
    def _directories(self) -> Iterator[Callable[[str, bool], _Dir]]:
        """Parent directories of a batch, each reached (and checked) once while it stays open;
        on a clean exit the ones a durable item used are flushed, one ``fsync`` each. At most
        ``BATCH_OPEN_DIRECTORIES`` stay open (a commit may touch thousands of folders): the
        least recently used one is flushed (if it must be) and closed to make room, and flushed
        again at the end if the batch comes back to it, so every durable rename is followed by a
        flush of its folder."""
        opened: dict[str, _Dir] = {}  # insertion order = least recently used first
        to_flush: set[str] = set()

        def release(parent: str, directory: _Dir) -> None:
            try:
                if parent in to_flush:
                    self._sync_dir(directory)
                    to_flush.discard(parent)
            finally:
                directory.close()

        def directory_of(key: str, durable: bool = True) -> _Dir:
            parent = key.rsplit("/", 1)[0] if "/" in key else ""
            directory = opened.pop(parent, None)
            if directory is None:
                if len(opened) >= BATCH_OPEN_DIRECTORIES:
                    oldest = next(iter(opened))
                    release(oldest, opened.pop(oldest))
                directory = self._check_parent(key)
            opened[parent] = directory
            if durable:
                to_flush.add(parent)
            return directory

        try:
            yield directory_of
            for parent, directory in opened.items():
                if parent in to_flush:
                    self._sync_dir(directory)
        finally:
            for directory in opened.values():
                directory.close()

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
        try:
            directory.mkdir(os.path.basename(key))
            self._sync_dir(directory)
        finally:
            directory.close()

    def rmdir(self, key: str) -> None:
        directory = self._check_parent(key)
        try:
            directory.rmdir(os.path.basename(key))
            self._sync_dir(directory)
        finally:
            directory.close()

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
        return content_digest(data) == digest

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
        if fcntl is not None and not _fake_os():
            with _flock(path, deadline, timeout):
                yield
        else:
            with _filelock(path, deadline, timeout):
                yield
    finally:
        thread_lock.release()


@contextmanager
def _flock(path: str, deadline: float, timeout: float) -> Iterator[None]:
    """``flock(2)`` on the lock file: exclusive across processes, released by the kernel when the
    holder dies. Called directly rather than through filelock, whose fork-safety bookkeeping
    costs about a millisecond per acquire: as much as the durable write a commit protects."""
    assert fcntl is not None
    flags = os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(path, flags, 0o666)
    except FileNotFoundError:  # its folder was removed behind an open workspace's back
        os.makedirs(os.path.dirname(path), exist_ok=True)
        fd = os.open(path, flags, 0o666)
    try:
        delay = 0.001
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise TimeoutError(f"could not acquire the commit lock {path} within {timeout} s") from None
                time.sleep(min(delay, remaining))
                delay = min(delay * 2, 0.05)
        try:
            yield
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


@contextmanager
def _filelock(path: str, deadline: float, timeout: float) -> Iterator[None]:
    """The portable lock (no ``fcntl``: Windows; or a fake filesystem, where it is a no-op and
    the per-path thread lock is what excludes)."""
    import filelock  # only a commit needs it; keeps reads and `vfs` start-up light

    file_lock = filelock.FileLock(path, timeout=max(0.0, deadline - time.monotonic()), is_singleton=False)
    try:
        file_lock.acquire()
    except filelock.Timeout as exc:
        raise TimeoutError(f"could not acquire the commit lock {path} within {timeout} s") from exc
    try:
        yield
    finally:
        file_lock.release()
