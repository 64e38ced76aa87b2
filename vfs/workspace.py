"""The workspace: a backend seen through a mount point, a policy mode, transactions and history."""

from __future__ import annotations

import builtins
import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from backends.base import TEMP_MARKER, Backend, Capabilities
from vfs.errors import Exists, InvalidArgument, NotFound, SandboxDenied, TooLarge, Unsupported
from vfs.history import History
from vfs.paths import META_DIR, MODES, PathMapper
from vfs.recovery import recover
from vfs.session import ObservationPolicy, Policy, Session
from vfs.storage import Storage, connect
from vfs.text import decode_text
from vfs.transaction import Transaction
from vfs.types import UNCONDITIONAL, CommitResult, HistoryEntry, Intent, Read, RecoveryReport, Stat

DEFAULT_MOUNT = "/workspace"
DEFAULT_MAX_FILE_BYTES = 1 << 30
DEFAULT_HISTORY_LIMIT = 50
DEFAULT_LOCK_TIMEOUT = 30.0

_STOCK_POLICY = ObservationPolicy()


class Workspace:
    """A transactional view of one storage root.

    Build one with :func:`open_workspace` (from a URL) or directly from a backend instance.
    Reads outside a transaction see committed state; all changes go through
    :meth:`transaction`.
    """

    def __init__(
        self,
        backend: Backend,
        *,
        mount: str = DEFAULT_MOUNT,
        mode: str = "workspace-write",
        base_key: str = "",
        max_file_bytes: int = DEFAULT_MAX_FILE_BYTES,
        history_limit: int = DEFAULT_HISTORY_LIMIT,
        lock_timeout: float = DEFAULT_LOCK_TIMEOUT,
        recover_on_open: bool = True,
    ) -> None:
        if mode not in MODES:
            raise InvalidArgument(f"Unknown mode {mode!r}; expected one of: {', '.join(MODES)}")
        if history_limit < 1:
            raise InvalidArgument("history_limit must be at least 1 (the newest record is the commit mark)")
        self.backend = backend
        self.mode = mode
        self._mapper = PathMapper(mount, mode, base_key=base_key, unfenced=mode == "danger-full-access")
        self._storage = Storage(backend, self._mapper.to_display, mode)
        self._meta_key = self._mapper.meta_key
        self._tx_key = f"{self._meta_key}/tx"
        self._lock_key = f"{self._meta_key}/lock"
        self._meta_ready = False
        self.max_file_bytes = max_file_bytes
        self.lock_timeout = lock_timeout
        self._history = History(self, history_limit)
        self.last_recovery: RecoveryReport | None = None
        if recover_on_open and mode != "read-only":
            self.last_recovery = self.recover(only_if_needed=True)

    # -- identity -----------------------------------------------------------------------------

    @property
    def mount(self) -> str:
        return self._mapper.mount

    @property
    def capabilities(self) -> Capabilities:
        return self.backend.capabilities

    @property
    def root(self) -> str:
        return self.backend.describe()

    def __repr__(self) -> str:
        return f"Workspace({self.root!r}, mount={self.mount!r}, mode={self.mode!r})"

    def to_path(self, path: str) -> str:
        """The canonical model-facing path; ``SandboxDenied`` if it leaves the workspace."""
        return self._mapper.to_path(path)

    # -- internals used by Transaction / Session ----------------------------------------------

    def _resolve_key(self, key: str) -> str:
        if not self.backend.capabilities.symlinks:
            return key
        resolved = self._storage.resolve(key)
        base = self._mapper.base_key
        outside = base and not (resolved == base or resolved.startswith(base + "/"))
        if self._mapper.is_meta(resolved) or (outside and not self._mapper.unfenced):
            display = self._mapper.to_display(key)
            raise SandboxDenied(f"The path {display} resolves outside the workspace.", path=display, mode=self.mode)
        return resolved

    def _read_key(self, key: str) -> tuple[bytes, Any]:
        return self._storage.read(key, self.max_file_bytes)

    def _list_key(self, key: str) -> list[Stat]:
        out = []
        for info in self._storage.list(key):
            if self._mapper.is_meta(info.key) or (TEMP_MARKER in info.name and info.name.startswith(".")):
                continue
            out.append(Stat(self._mapper.to_display(info.key), info.kind, info.size, info.mode, info.version))
        return sorted(out, key=lambda s: s.path)

    def _ensure_meta(self) -> None:
        if self._meta_ready:
            return
        for key in (self._meta_key, self._tx_key):
            if self._storage.stat(key) is None:
                try:
                    self._storage.mkdir(key)
                except Exists:
                    pass  # another client created it between our stat and mkdir: just as good
        self._meta_ready = True  # vfs never removes it: checked once per workspace object

    @contextmanager
    def _commit_lock(self) -> Iterator[None]:
        self._ensure_meta()
        with self._storage.lock(self._lock_key, self.lock_timeout):
            yield

    # -- reads --------------------------------------------------------------------------------

    def stat(self, path: str) -> Stat:
        key = self._resolve_key(self._mapper.to_key(path))
        info = self._storage.stat(key)
        display = self._mapper.to_display(key)
        if info is None:
            raise NotFound(f"The path {display} does not exist.", path=display)
        return Stat(display, info.kind, info.size, info.mode, info.version)

    def exists(self, path: str) -> bool:
        key = self._resolve_key(self._mapper.to_key(path))
        return self._storage.stat(key) is not None

    def read(self, path: str) -> Read:
        key = self._resolve_key(self._mapper.to_key(path))
        data, info = self._read_key(key)
        return Read(self._mapper.to_display(key), data, info.version, info.mode)

    def read_bytes(self, path: str) -> bytes:
        return self.read(path).data

    def read_text(self, path: str) -> str:
        result = self.read(path)
        return decode_text(result.data, result.path)

    def list(self, path: str) -> list[Stat]:
        """Direct children sorted by path; the metadata folder and temp files are never shown."""
        key = self._resolve_key(self._mapper.to_key(path))
        return self._list_key(key)

    def is_current(self, path: str, version: str | None) -> bool:
        key = self._resolve_key(self._mapper.to_key(path))
        return self._storage.matches(key, version)

    # -- changes ------------------------------------------------------------------------------

    def transaction(self, *, label: str = "", undo_of: str | None = None) -> Transaction:
        return Transaction(self, label=label, undo_of=undo_of)

    def write_bytes(self, path: str, data: bytes, *, intent: Intent = UNCONDITIONAL) -> CommitResult:
        """A one-operation transaction (convenience)."""
        with self.transaction(label=f"write {path}") as tx:
            tx.write(path, data, intent=intent)
        assert tx.result is not None
        return tx.result

    def write_text(self, path: str, text: str, *, intent: Intent = UNCONDITIONAL) -> CommitResult:
        return self.write_bytes(path, text.encode("utf-8"), intent=intent)

    def session(self, policy: Policy | None = _STOCK_POLICY) -> Session:
        """A new observation session; ``policy=None`` turns the observation policy off."""
        return Session(self, policy)

    # -- history and recovery -----------------------------------------------------------------

    def log(self, limit: int = 20) -> builtins.list[HistoryEntry]:
        return self._history.log(limit)

    def undo(self, expected_txid: str | None = None) -> HistoryEntry:
        """Revert the newest transaction; with ``expected_txid``, only if it is still that one."""
        if self.mode == "read-only":
            raise SandboxDenied("Cannot undo: the workspace is read-only.", mode=self.mode)
        return self._history.undo(expected_txid)

    def recover(self, *, only_if_needed: bool = False) -> RecoveryReport:
        """Roll back interrupted commits (takes the commit lock)."""
        if only_if_needed and not self._needs_recovery():
            return RecoveryReport()
        if self.mode == "read-only":
            raise SandboxDenied("Cannot recover: the workspace is read-only.", mode=self.mode)
        with self._commit_lock():
            self.last_recovery = recover(self._storage, self._tx_key)
        return self.last_recovery

    def _needs_recovery(self) -> bool:
        try:
            names = {e.name for e in self._storage.list(self._tx_key)}
        except NotFound:
            return False
        for name in names:
            if TEMP_MARKER in name:
                return True
            if name.endswith(".journal") and name[: -len(".journal")] + ".done" not in names:
                return True
        return False

    def close(self) -> None:
        self.backend.close()

    def __enter__(self) -> Workspace:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _split_root(root: Any, storage_options: dict[str, Any] | None) -> tuple[str, dict[str, Any]]:
    options = dict(storage_options or {})
    if hasattr(root, "storage_options") and hasattr(root, "protocol"):  # a universal_pathlib UPath
        options = {**dict(root.storage_options), **options}
        protocol = root.protocol
        text = str(root)
        if protocol in ("", "file", "local") and "://" in text:
            text = text.split("://", 1)[1]
        return text, options
    if isinstance(root, os.PathLike):
        return os.fspath(root), options
    if isinstance(root, str):
        return root, options
    raise InvalidArgument(f"A workspace root must be a path or URL string, got {type(root).__name__}")


def open_workspace(
    root: Any,
    *,
    mode: str = "workspace-write",
    mount: str | None = None,
    storage_options: dict[str, Any] | None = None,
    **options: Any,
) -> Workspace:
    """Open a workspace on a local path, ``file://``, ``memory://name``, ``s3://bucket/prefix``,
    any fsspec URL, or a UPath. See :class:`Workspace` for ``options``."""
    if mode not in MODES:
        raise InvalidArgument(f"Unknown mode {mode!r}; expected one of: {', '.join(MODES)}")
    url, opts = _split_root(root, storage_options)
    backend = connect(url, opts)
    is_local = backend.name == "local"
    if mode == "danger-full-access":
        if not is_local:
            raise Unsupported("danger-full-access is only available on local disk.")
        from backends.local import LocalBackend  # local only, by definition of the mode

        real_root = backend.describe()
        unfenced = LocalBackend("/", fsync=getattr(backend, "fsync", True))
        return Workspace(unfenced, mount=mount or real_root, mode=mode, base_key=real_root.strip("/"), **options)
    if mount is None:
        mount = backend.describe() if is_local else DEFAULT_MOUNT
    return Workspace(backend, mount=mount, mode=mode, **options)


__all__ = ["DEFAULT_MOUNT", "META_DIR", "Workspace", "open_workspace"]
