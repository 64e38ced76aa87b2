"""The one place where backend exceptions become vfs errors.

Every backend call made by vfs goes through :class:`Storage`, which names the model-facing path in
the message and picks the stable code. Nothing else in vfs catches backend exceptions.
"""

from __future__ import annotations

import builtins
import errno
from collections.abc import Callable, Sequence

from backends import open_backend
from backends.base import (
    Backend,
    BadRoot,
    BatchBackend,
    BeingWritten,
    DeleteItem,
    EscapesRoot,
    FileInfo,
    HardLinked,
    NotRegular,
    PreconditionFailed,
    TooBig,
    Vanished,
    WriteItem,
    is_temp_name,
)
from vfs.errors import (
    Exists,
    HardLinkRefused,
    InvalidArgument,
    IOFailure,
    IsADirectory,
    NotADirectory,
    NotFound,
    NotRegularFile,
    PermissionDenied,
    SandboxDenied,
    StaleVersion,
    TooLarge,
    Unsupported,
    VfsError,
    WorkspaceRootInvalid,
)

TYPE_CHECKING = False  # typing's constant, without importing typing at run time (see backends/values.py)
if TYPE_CHECKING:
    from typing import Any, TypeVar

    T = TypeVar("T")


def translate(exc: BaseException, path: str, action: str, mode: str) -> VfsError:
    """Map a backend exception to a :class:`VfsError` naming ``path``."""
    if isinstance(exc, VfsError):
        return exc
    if isinstance(exc, PreconditionFailed):
        return _conflict(exc, path, action)
    if isinstance(exc, EscapesRoot):
        return SandboxDenied(f"The path {path} resolves outside the workspace.", path=path, mode=mode)
    for kind, make in _BY_KIND:  # the seam's own subclasses come before the builtins they extend
        if isinstance(exc, kind):
            return make(exc, path, action)
    if isinstance(exc, OSError):
        return _os_error(exc, path, action)
    detail = str(exc) or type(exc).__name__
    return IOFailure(f"Cannot {action} {path}: {type(exc).__name__}: {detail}", path=path)


def _conflict(exc: PreconditionFailed, path: str, action: str) -> VfsError:
    if exc.errno == errno.EEXIST:
        return StaleVersion(f'cannot write "{path}": it was created by someone else meanwhile', path=path)
    if isinstance(exc, Vanished):
        return StaleVersion(f'cannot {action} "{path}": file no longer exists', path=path)
    if isinstance(exc, BeingWritten):
        return StaleVersion(
            f'cannot {action} "{path}": another process has it open for writing (a replace now would'
            " lose what it writes next); try again once it is closed",
            path=path,
        )
    return StaleVersion(f'cannot {action} "{path}": file changed since it was read', path=path)


def _too_big(exc: BaseException, path: str, action: str) -> VfsError:
    assert isinstance(exc, TooBig)
    return TooLarge(f"The file {path} is {exc.size} bytes, over the limit of {exc.limit} bytes.", path=path)


def _hard_linked(exc: BaseException, path: str, action: str) -> VfsError:
    return HardLinkRefused(
        f"Cannot {action} {path}: it has other names (hard links) that a replace would leave with the"
        " old bytes. Edit it through one of them with another tool, or break the link first.",
        path=path,
    )


def _os_error(exc: OSError, path: str, action: str) -> VfsError:
    if exc.errno == errno.EFBIG:
        return TooLarge(f"Cannot {action} {path}: file too large.", path=path)
    if exc.errno == errno.ENOSPC:
        return IOFailure(f"Cannot {action} {path}: no space left on the device.", path=path)
    detail = exc.strerror or str(exc) or type(exc).__name__
    return IOFailure(f"Cannot {action} {path}: {detail}", path=path)


_Make = Callable[[BaseException, str, str], VfsError]
_BY_KIND: tuple[tuple[type[BaseException], _Make], ...] = (
    (NotRegular, lambda e, p, a: NotRegularFile(f"The path {p} is not a regular file.", path=p)),
    (TooBig, _too_big),
    (HardLinked, _hard_linked),
    (FileNotFoundError, lambda e, p, a: NotFound(f"The path {p} does not exist.", path=p)),
    (FileExistsError, lambda e, p, a: Exists(f"The path {p} already exists.", path=p)),
    (IsADirectoryError, lambda e, p, a: IsADirectory(f"The path {p} is a directory.", path=p)),
    (NotADirectoryError, lambda e, p, a: NotADirectory(f"A parent of {p} is not a directory.", path=p)),
    (PermissionError, lambda e, p, a: PermissionDenied(f"Permission denied: cannot {a} {p}.", path=p)),
    (TimeoutError, lambda e, p, a: IOFailure(f"Timed out trying to {a} {p}: {e}", path=p)),
)


def connect(url: str, storage_options: dict[str, Any]) -> Backend:
    """Open the backend for ``url``; a bad option or a missing extra becomes a coded error."""
    try:
        return open_backend(url, storage_options)
    except ImportError as exc:
        raise Unsupported(f"Cannot open {url}: {exc}") from exc
    except (TypeError, ValueError) as exc:
        raise InvalidArgument(f"Cannot open {url}: {exc}") from exc
    except VfsError:
        raise
    except Exception as exc:  # the translation point for backend construction
        raise translate(exc, url, "open", "workspace-write") from exc


class HeldLock:
    """What the holder of the commit lock learns from it and tells it (see
    ``Capabilities.lock_knows_resolved``): ``fresh`` (no holder left an unresolved journal),
    ``at_once`` (the lock was free at the first asking: no one committed between the asking and
    the holding), ``left_in`` (the folder a killed holder was writing a file in without a
    journal, as its lock said: unchecked input), :meth:`mark_busy` (this holder is about to
    write a journal, or a file in a folder) and :meth:`mark_dirty` (it leaves one unresolved)."""

    def __init__(self, manager: Any, knows_resolved: bool) -> None:
        self._manager = manager if knows_resolved else None
        self.fresh = bool(getattr(self._manager, "fresh", False))
        self.at_once = bool(getattr(self._manager, "at_once", False))
        left_in = getattr(self._manager, "left_in", None)
        self.left_in: str | None = left_in if isinstance(left_in, str) else None

    def mark_dirty(self) -> None:
        if self._manager is not None:
            self._manager.mark_dirty()

    def mark_busy(self, where: str | None = None) -> None:
        """This holder is about to write a journal, or (``where``) a file in that folder without
        one: killed from now on, it leaves the lock not ``fresh``, naming the folder (a lock whose
        state says so all along needs no call: none but the local one)."""
        busy = getattr(self._manager, "mark_busy", None)
        if busy is not None:
            busy(where) if where is not None else busy()


def check_root(backend: Backend, given: str) -> None:
    """The one place a root is refused (``FS_BAD_ROOT``): the backend's own check of its root
    (:meth:`Backend.check_root`), said of the root as the caller gave it. A refused backend is
    closed (an object store's connections)."""
    try:
        backend.check_root()
    except BadRoot as exc:
        backend.close()
        raise WorkspaceRootInvalid(exc.said_of(given), path=given) from None
    except Exception as exc:
        backend.close()
        raise translate(exc, given, "open", "workspace-write") from exc


class Storage:
    """A backend seen through vfs errors. ``display`` turns a key into the model-facing path."""

    def __init__(self, backend: Backend, display: Callable[[str], str], mode: str) -> None:
        self.backend = backend
        self.display = display
        self.mode = mode
        # Checked once: isinstance against a runtime Protocol inspects every attribute each time.
        self._batch_backend: BatchBackend | None = backend if isinstance(backend, BatchBackend) else None

    def _call(self, action: str, key: str, fn: Callable[[], T]) -> T:
        try:
            return fn()
        except Exception as exc:  # the translation point: every backend failure passes here
            raise translate(exc, self.display(key), action, self.mode) from exc

    def stat(self, key: str) -> FileInfo | None:
        return self._call("stat", key, lambda: self.backend.stat(key))

    def read(self, key: str, limit: int | None = None) -> tuple[bytes, FileInfo]:
        return self._call("read", key, lambda: self.backend.read(key, limit=limit))

    def write(self, item: WriteItem) -> FileInfo:
        return self._call("write", item.key, lambda: self.backend.write(item))

    def delete(self, item: DeleteItem) -> None:
        self._call("delete", item.key, lambda: self.backend.delete(item))

    @property
    def sends_ahead(self) -> bool:
        """Whether the backend can start sending a write's bytes before the write itself (S3:
        the parts of a multipart upload, which no one sees before the write completes them)."""
        return self.backend.capabilities.sends_ahead

    def write_ahead(self, item: WriteItem) -> bool:
        """Where :attr:`sends_ahead`, start sending ``item``'s bytes now, unwaited, for its
        :meth:`write` to complete; whether anything was started."""
        ahead = getattr(self.backend, "write_ahead", None)
        return ahead is not None and self._call("write", item.key, lambda: bool(ahead(item)))

    def drop_ahead(self, key: str) -> None:
        """Discard what :meth:`write_ahead` started for ``key`` and no write completed."""
        drop = getattr(self.backend, "drop_ahead", None)
        if drop is not None:
            self._call("write", key, lambda: drop(key))

    @staticmethod
    def is_temp_name(name: str) -> bool:
        return is_temp_name(name)

    def list(self, key: str) -> builtins.list[FileInfo]:
        return self._call("list", key, lambda: self.backend.list(key))

    def names(self, key: str) -> builtins.list[str]:
        """The names in the folder ``key``, without their stat where the backend can skip it."""
        names_of = getattr(self.backend, "list_names", None)
        if names_of is None:
            return [entry.name for entry in self.list(key)]
        return self._call("list", key, lambda: list(names_of(key)))

    def mkdir(self, key: str) -> None:
        self._call("create directory", key, lambda: self.backend.mkdir(key))

    def rmdir(self, key: str) -> None:
        self._call("remove directory", key, lambda: self.backend.rmdir(key))

    def matches(self, key: str, version: str | None) -> bool:
        return self._call("check", key, lambda: self.backend.matches(key, version))

    def resolve(self, key: str) -> str:
        return self._call("resolve", key, lambda: self.backend.resolve(key))

    # -- batches: concurrent on a BatchBackend (S3), a plain loop elsewhere ---------------------

    @property
    def batches(self) -> bool:
        return self._batch_backend is not None

    def _raise_first(self, keys: Sequence[str], results: Sequence[object], action: str) -> None:
        for key, result in zip(keys, results, strict=True):
            if isinstance(result, BaseException):
                raise translate(result, self.display(key), action, self.mode) from result

    def stat_many(self, keys: Sequence[str]) -> builtins.list[FileInfo | None]:
        if (batch := self._batch_backend) is None or len(keys) < 2:
            return [self.stat(k) for k in keys]
        results = self._call("stat", keys[0], lambda: batch.stat_many(keys))
        self._raise_first(keys, results, "stat")
        return [r for r in results if not isinstance(r, BaseException)]  # none left: raised above

    def read_many(
        self, keys: Sequence[str], limit: int | None = None
    ) -> builtins.list[tuple[bytes, FileInfo] | VfsError]:
        """Per key: the bytes and info, or the (translated) error (over ``limit``: refused before
        its bytes are read); never raises for one key."""
        if (batch := self._batch_backend) is None or len(keys) < 2:
            out: builtins.list[tuple[bytes, FileInfo] | VfsError] = []
            for key in keys:
                try:
                    out.append(self.read(key, limit))
                except VfsError as exc:
                    out.append(exc)
            return out
        results = self._call("read", keys[0], lambda: batch.read_many(keys, limit=limit))
        return [
            translate(r, self.display(k), "read", self.mode) if isinstance(r, BaseException) else r
            for k, r in zip(keys, results, strict=True)
        ]

    def matches_many(self, items: Sequence[tuple[str, str | None]]) -> builtins.list[bool]:
        if (batch := self._batch_backend) is None or len(items) < 2:
            return [self.matches(k, v) for k, v in items]
        keys = [k for k, _ in items]
        results = self._call("check", keys[0], lambda: batch.matches_many(items))
        self._raise_first(keys, results, "check")
        return [bool(r) for r in results]

    def write_many(self, items: Sequence[WriteItem]) -> builtins.list[FileInfo | VfsError]:
        """Per item: the new info or the (translated) error; a failure never stops the others
        (the caller rolls back what landed)."""
        if (batch := self._batch_backend) is None or len(items) < 2:
            done: builtins.list[FileInfo | VfsError] = []
            for i in items:
                try:
                    done.append(self.write(i))
                except VfsError as exc:
                    done.append(exc)
            return done
        results = self._call("write", items[0].key, lambda: batch.write_many(items))
        return [
            translate(r, self.display(i.key), "write", self.mode) if isinstance(r, BaseException) else r
            for i, r in zip(items, results, strict=True)
        ]

    def delete_many(self, items: Sequence[DeleteItem]) -> builtins.list[VfsError | None]:
        """Per item: ``None`` or the (translated) error; a failure never stops the others."""
        if (batch := self._batch_backend) is None or len(items) < 2:
            outcome: builtins.list[VfsError | None] = []
            for i in items:
                try:
                    self.delete(i)
                    outcome.append(None)
                except VfsError as exc:
                    outcome.append(exc)
            return outcome
        results = self._call("delete", items[0].key, lambda: batch.delete_many(items))
        return [
            translate(r, self.display(i.key), "delete", self.mode) if isinstance(r, BaseException) else None
            for i, r in zip(items, results, strict=True)
        ]

    def lock(self, key: str, timeout: float) -> Locking:
        return Locking(self, key, timeout)


class Locking:
    """:meth:`Storage.lock` as a context manager that yields the :class:`HeldLock` (a class, not
    a generator: every commit takes it)."""

    def __init__(self, storage: Storage, key: str, timeout: float) -> None:
        self._storage, self._key, self._timeout = storage, key, timeout
        self._manager: Any = None

    def __enter__(self) -> HeldLock:
        storage, key, timeout = self._storage, self._key, self._timeout
        manager = storage._call("lock", key, lambda: storage.backend.lock(key, timeout=timeout))
        storage._call("lock", key, manager.__enter__)
        self._manager = manager
        return HeldLock(manager, storage.backend.capabilities.lock_knows_resolved)

    def __exit__(self, *exc: object) -> None:
        manager, self._manager = self._manager, None
        try:
            manager.__exit__(None, None, None)
        except Exception:  # noqa: BLE001 - see below
            # A lease lost meanwhile (a pause past its expiry) is not this call's failure:
            # the commit's decision record, written once, says what happened, and the
            # lease expires by itself.
            pass
